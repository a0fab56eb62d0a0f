"""Confidence intervals and paired comparisons: p-values against scipy and exact enumeration,
corrections by hand, intervals that shrink and cover, the same numbers on every engine path."""

from __future__ import annotations

import itertools
import json
import math
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from scipy import stats

import polars_rankmetrics as rm
from polars_rankmetrics.inference import resampling
from polars_rankmetrics.inference.corrections import adjusted
from polars_rankmetrics.inference.paired import paired_t_p_value

EXAMPLE = "data/example.parquet"


def stacked(first, second):
    """The paired table of two models' values and weights (samples x keys each), as
    ``resampling.paired_table`` builds it from the per-sample columns."""
    pairs = (first, second)
    return resampling.paired_table(
        first[0].shape[0], first[0].shape[1],
        lambda model, key: (pairs[model][0][:, key], pairs[model][1][:, key]),
    )  # fmt: skip


@pytest.fixture(scope="module")
def example() -> pl.DataFrame:
    return pl.read_parquet(EXAMPLE)


def two_models(n_samples: int, n_labels: int = 6, *, seed: int = 0, gap: float = 0.0):
    """Two models scoring the same samples; the candidate's scores lean ``gap`` towards the
    truth (0: exchangeable models, the null)."""
    rng = np.random.default_rng(seed)
    truth = rng.random((n_samples, n_labels)) < 0.3
    parts = []
    for model, lean in (("baseline", 0.0), ("candidate", gap)):
        score = np.round(rng.random((n_samples, n_labels)) + lean * truth, 2)
        parts.append(rm.from_dense(truth.astype(int), score).with_columns(model=pl.lit(model)))
    return pl.concat(parts)


def per_sample(df: pl.DataFrame, key: str, keys=None) -> tuple[np.ndarray, np.ndarray]:
    """The candidate's and the baseline's per-sample values of ``key`` (evaluated with
    ``keys``, as compare() evaluates them: the same plan, the same bits)."""
    rows = rm.evaluate(df, keys or [key], by="model", per_sample=True).sort("sample")
    base = rows.filter(model="baseline")[key].to_numpy()
    return rows.filter(model="candidate")[key].to_numpy(), base


@pytest.mark.parametrize("gap", [0.0, 0.05])
def test_t_and_wilcoxon_equal_scipy(gap):
    df = two_models(300, seed=2, gap=gap)
    keys = ["lrap", "ndcg@3", "hamming_loss"]
    for test, scipy_test in (("t", stats.ttest_rel), ("wilcoxon", None)):
        result = rm.compare(df, keys, by="model", test=test, correction=None)
        for key in keys:
            mine, base = per_sample(df, key, keys)
            if scipy_test is not None:
                expected = scipy_test(mine, base).pvalue
            else:
                expected = stats.wilcoxon(np.round(mine - base, 12)).pvalue
            got = result.filter(metric=key)["p_value"][0]
            assert got == pytest.approx(expected, rel=1e-9, abs=1e-300)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 0.1, 0.25, 1 / 3, 0.5, 1.0]), min_size=1, max_size=40),
    st.sampled_from(["random", "equal", "shifted"]),
    st.integers(0, 2**32 - 1),
)
def test_the_paired_t_p_value_is_scipys(a, kind, seed):
    """The written-out paired t test gives ttest_rel's p-value, all-equal differences (sd 0)
    and a single pair included."""
    a = np.array(a)
    rng = np.random.default_rng(seed)
    b = {"random": rng.choice([0.0, 0.2, 0.25, 0.5, 1.0], size=a.size), "equal": a,
         "shifted": a - 0.25}[kind]  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy's, of a zero variance
        expected = stats.ttest_rel(a, b).pvalue if a.size > 1 else math.nan
    got = paired_t_p_value(a - b)
    if math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(expected, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("n", [3, 7, 12])
def test_the_permutation_test_is_exact_for_small_samples(n):
    df = two_models(n, seed=n, gap=0.3)
    mine, base = per_sample(df, "lrap")
    d = mine - base
    observed = abs(d.mean())
    flips = np.array(list(itertools.product((1, -1), repeat=n)))
    exact = np.mean(np.abs((flips * d).mean(axis=1)) >= observed - 1e-12)
    result = rm.compare(df, ["lrap"], by="model", n_resamples=2**n)
    assert result["p_value"][0] == pytest.approx(exact, rel=1e-12)
    assert result["p_value"][0] > 0


def test_random_sign_flips_never_give_zero_and_agree_with_exact():
    df = two_models(14, seed=3, gap=2.0)
    mine, base = per_sample(df, "lrap")
    ones = np.ones_like(mine)
    pairs = (mine[:, None], ones[:, None]), (base[:, None], ones[:, None])
    table = stacked(*pairs)
    exact = resampling.sign_flip_p_values(table, 2**14, resampling.generator(0))[0]
    sampled = rm.compare(df, ["lrap"], by="model", n_resamples=5000)["p_value"][0]
    assert sampled >= 1 / 5001
    assert sampled == pytest.approx(exact, abs=3 * np.sqrt(exact * (1 - exact) / 5000) + 2e-4)


def test_the_weighted_permutation_statistic_reduces_to_the_mean_difference():
    rng = np.random.default_rng(1)
    v1, v0, w = rng.random(9), rng.random(9), rng.random(9) + 0.5
    table = stacked((v1[:, None], w[:, None]), (v0[:, None], w[:, None]))
    got = resampling.sign_flip_p_values(table, 2**9, rng)[0]
    d = w * (v1 - v0) / w.sum()
    flips = np.array(list(itertools.product((1, -1), repeat=9)))
    expected = np.mean(np.abs((flips * d).sum(axis=1)) >= abs(d.sum()) - 1e-12)
    assert got == pytest.approx(expected)


def test_the_permutation_test_swaps_weights_that_differ_between_the_models():
    """Three keys: one whose value is undefined (NaN, weight 0) for some samples of one model
    only, one with weights of its own per model, one with the same weights for both. Each sign
    pattern swaps a sample's value and weight between the models; the p-value is the share of
    patterns whose delta reaches the observed one, by brute force, exactly (2^n patterns) and
    by random patterns (float32 products)."""
    rng = np.random.default_rng(5)
    n = 10
    v1, v0 = rng.random((n, 3)), rng.random((n, 3))
    w1, w0 = np.ones((n, 3)), np.ones((n, 3))
    v1[[1, 4], 0] = np.nan  # undefined for the first model only
    w1[:, 1], w0[:, 1] = rng.integers(1, 4, n), rng.integers(1, 4, n)
    table = stacked((v1, w1), (v0, w0))
    # 2 x 3 weighted values; the weight column of ones is held once for the three keys reading it
    assert table.table.shape[1] == 6 + 4

    def delta(a, wa, b, wb):
        wa, wb = np.where(np.isnan(a), 0, wa), np.where(np.isnan(b), 0, wb)
        return (np.nansum(wa * a, 0) / wa.sum(0)) - (np.nansum(wb * b, 0) / wb.sum(0))

    observed = np.abs(delta(v1, w1, v0, w0))
    reach = np.zeros(3)
    for flips in itertools.product((False, True), repeat=n):
        swap = np.array(flips)[:, None]
        a, b = np.where(swap, v0, v1), np.where(swap, v1, v0)
        wa, wb = np.where(swap, w0, w1), np.where(swap, w1, w0)
        reach += np.abs(delta(a, wa, b, wb)) >= observed - 1e-12
    expected = reach / 2**n
    exact = resampling.sign_flip_p_values(table, 2**n, resampling.generator(0))
    np.testing.assert_allclose(exact, expected, rtol=1e-12)
    sampled = resampling.sign_flip_p_values(table, 2**n + 1, resampling.generator(1))
    np.testing.assert_allclose(sampled, expected, atol=4 * np.sqrt(0.25 / 2**n) + 2e-3)


def test_corrections_against_hand_computed_values():
    p = np.array([0.01, 0.04, 0.03, 0.005, np.nan])
    # Bonferroni: m = 4 valid p-values.
    np.testing.assert_allclose(adjusted(p, "bonferroni"), [0.04, 0.16, 0.12, 0.02, np.nan])
    # Holm, sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04 -> running max.
    np.testing.assert_allclose(adjusted(p, "holm"), [0.03, 0.06, 0.06, 0.02, np.nan])
    # Benjamini-Hochberg: p * 4 / rank: 0.02, 0.02, 0.04, 0.04 -> running min from the top.
    np.testing.assert_allclose(adjusted(p, "fdr_bh"), [0.02, 0.04, 0.04, 0.02, np.nan])
    np.testing.assert_allclose(
        adjusted(p[:4], "fdr_bh"), stats.false_discovery_control(p[:4], method="bh")
    )
    np.testing.assert_allclose(adjusted(p, None), p)
    with pytest.raises(ValueError, match=r"correction must be one of holm, bonferroni, fdr_bh"):
        adjusted(p, "sidak")


def test_compare_columns_and_delta_sign(example):
    result = rm.compare(example, ["lrap", "coverage_error"], by="model")
    assert result.columns == [
        "model", "metric", "value", "baseline_value", "delta", "delta_lo", "delta_hi",
        "p_value", "p_adjusted", "effect_size", "wins", "ties", "losses",
    ]  # fmt: skip
    means = rm.evaluate(example, ["lrap", "coverage_error"], by="model")
    for key in ("lrap", "coverage_error"):
        row = result.filter(metric=key).row(0, named=True)
        assert row["value"] == pytest.approx(means.filter(model="candidate")[key][0])
        assert row["baseline_value"] == pytest.approx(means.filter(model="baseline")[key][0])
        assert row["delta"] == pytest.approx(row["value"] - row["baseline_value"])
        assert row["delta_lo"] <= row["delta"] <= row["delta_hi"]
        mine, base = per_sample(example, key)
        better = np.round((mine - base) if key == "lrap" else (base - mine), 12)
        assert (row["wins"], row["ties"], row["losses"]) == (
            int((better > 0).sum()),
            int((better == 0).sum()),
            int((better < 0).sum()),
        )
    # coverage error is lower-is-better: the candidate improves it, the delta is negative.
    assert result.filter(metric="coverage_error")["delta"][0] < 0


def test_intervals_contain_the_estimate_and_shrink_as_one_over_root_n():
    widths = []
    for n in (200, 800):
        result = rm.evaluate(two_models(n, seed=5), ["lrap", "ndcg"], by="model", ci=0.95)
        means = rm.evaluate(two_models(n, seed=5), ["lrap", "ndcg"], by="model")
        for key in ("lrap", "ndcg"):
            assert result[key].to_list() == pytest.approx(means[key].to_list(), rel=1e-12)
            assert (result[f"{key}_lo"] <= result[key]).all()
            assert (result[key] <= result[f"{key}_hi"]).all()
        widths.append((result["lrap_hi"] - result["lrap_lo"]).to_numpy())
    ratio = widths[0] / widths[1]
    assert ((ratio > 1.6) & (ratio < 2.5)).all(), ratio


@pytest.mark.slow
def test_under_the_null_about_five_percent_are_significant():
    hits = 0
    for seed in range(200):
        df = two_models(40, 4, seed=1000 + seed)
        p = rm.compare(df, ["lrap"], by="model", n_resamples=499, seed=seed)["p_value"][0]
        hits += p < 0.05
    assert 0.02 <= hits / 200 <= 0.09, hits


def noisy_predictions(n_samples: int, rate: float, seed: int) -> pl.DataFrame:
    """Predictions wrong on each cell with probability ``rate``: the population hamming loss
    is ``rate``."""
    rng = np.random.default_rng(seed)
    truth = rng.random((n_samples, 5)) < 0.4
    wrong = rng.random((n_samples, 5)) < rate
    score = np.where(truth ^ wrong, 0.9, 0.1)
    return rm.from_dense(truth.astype(int), score)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_the_90_percent_interval_covers_the_population_value(method):
    # Truth with probability 0.4, each cell predicted wrongly with probability 0.2: hamming loss
    # 0.2; micro precision P(true and predicted) / P(predicted) = 0.32 / 0.44.
    population = {"hamming_loss": 0.2, "precision_micro": 0.32 / 0.44}
    covered = dict.fromkeys(population, 0)
    for seed in range(100):
        result = rm.evaluate(
            noisy_predictions(150, 0.2, seed), list(population), ci=0.9, n_boot=400,
            seed=seed, ci_method=method,
        )  # fmt: skip
        for key, value in population.items():
            covered[key] += result[f"{key}_lo"][0] <= value <= result[f"{key}_hi"][0]
    assert min(covered.values()) >= 80, covered


@pytest.mark.parametrize("zero_division", [0.0, 1.0, "nan"])
def test_micro_averages_are_ratios_of_the_resampled_sums(example, zero_division):
    keys = ["precision_micro", "recall_micro", "f1_micro", "fbeta_micro", "jaccard_micro"]
    options = {"by": "model", "weight": "weight", "beta": 2.0, "threshold": 0.97}
    options["zero_division"] = zero_division
    expected = rm.evaluate(example, keys, **options)
    got = rm.evaluate(example, keys, ci=0.95, n_boot=300, **options)
    for key in keys:
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-12)
        lo, hi = got[f"{key}_lo"].to_numpy(), got[f"{key}_hi"].to_numpy()
        assert ((lo <= got[key].to_numpy()) & (got[key].to_numpy() <= hi)).all(), key
    # One model predicts nothing at a threshold above every score: precision is 0/0.
    nothing = rm.evaluate(example, ["precision_micro"], ci=0.9, by="model", threshold=2.0,
                          zero_division=zero_division)  # fmt: skip
    if zero_division == "nan":
        assert nothing["precision_micro"].is_nan().all()
        assert nothing["precision_micro_lo"].is_nan().all()
    else:
        assert (nothing["precision_micro_lo"] == zero_division).all()


def test_the_same_seed_gives_the_same_numbers_on_every_path(engine):
    keys = ["lrap", "ndcg@3", "f1_samples", "f1_micro"]
    df = two_models(80, 5, seed=4, gap=0.2).with_columns(
        weight=(pl.col("sample") % 3 + 1).cast(pl.Float64)
    )
    options = {"by": "model", "weight": "weight"}
    expected = rm.evaluate(df, keys, ci=0.9, n_boot=200, **options)
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=7)
    got = engine.evaluate(shuffled, keys, ci=0.9, n_boot=200, **options)
    assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-9)
    compared = rm.compare(df, keys[:3], n_resamples=999, **options)
    again = engine._call(rm.compare, shuffled, keys[:3], n_resamples=999, **options)
    assert_frame_equal(again, compared, check_exact=False, rel_tol=1e-9)
    other = rm.evaluate(df, keys, ci=0.9, n_boot=200, seed=1, **options)
    assert other["lrap_lo"].to_list() != expected["lrap_lo"].to_list()


def test_compare_on_every_engine(example):
    keys = ["lrap", "mrr", "hamming_loss"]
    expected = rm.compare(example, keys, by="model", n_resamples=999)
    got = rm.compare(example, keys, by="model", n_resamples=999, engine="duckdb")
    assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-9)


def test_bca_intervals_are_near_the_percentile_ones_for_a_mean(example):
    keys = ["lrap", "ndcg@10"]
    percentile = rm.evaluate(example, keys, by="model", ci=0.95)
    bca = rm.evaluate(example, keys, by="model", ci=0.95, ci_method="bca")
    for key in keys:
        for end in ("_lo", "_hi"):
            np.testing.assert_allclose(bca[key + end], percentile[key + end], atol=0.01)
        assert (bca[f"{key}_lo"] <= bca[key]).all() and (bca[key] <= bca[f"{key}_hi"]).all()


def test_missing_samples_are_named_or_dropped(example):
    short = example.filter(~((pl.col("model") == "candidate") & (pl.col("sample") == "clip_00007")))
    with pytest.raises(
        ValueError,
        match=r"model='candidate' and the baseline model='baseline' do not hold the same samples: "
        r"0 of 1999 samples of model='candidate' are not in the baseline, 1 of 2000 samples of "
        r"the baseline are not in model='candidate' \(e.g. sample='clip_00007', of "
        r"model='baseline'\); pass on_missing='drop'",
    ):
        rm.compare(short, ["lrap"], by="model")
    dropped = rm.compare(short, ["lrap"], by="model", on_missing="drop")
    mine, base = per_sample(short.filter(pl.col("sample") != "clip_00007"), "lrap")
    assert dropped["wins"][0] + dropped["ties"][0] + dropped["losses"][0] == 1999
    assert dropped["delta"][0] == pytest.approx(mine.mean() - base.mean())


def test_compare_on_a_top_k_table():
    df = two_models(60, 8, seed=11, gap=0.4)
    predictions = df.filter(pl.col("score") >= 0.5).drop("truth")
    truth = df.filter((pl.col("truth") == 1) & (pl.col("model") == "baseline")).drop(
        "score", "model"
    )
    truth = pl.concat([truth.with_columns(model=pl.lit(m)) for m in ("baseline", "candidate")])
    result = rm.compare(
        predictions, ["precision@3", "mrr", "lrap"], by="model", truth_table=truth, n_labels=8
    )
    means = rm.evaluate(
        predictions, ["precision@3", "mrr", "lrap"], by="model", truth_table=truth, n_labels=8
    )
    for key in ("precision@3", "mrr", "lrap"):
        assert result.filter(metric=key)["value"][0] == pytest.approx(
            means.filter(model="candidate")[key][0]
        )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"metrics": ["f1_macro"]},
            r"f1_macro is computed over labels, not as a mean over samples",
        ),
        ({"test": "t", "weight": "weight"}, r"test='t' compares unweighted per-sample values"),
        ({"test": "anova"}, r"test must be one of permutation, bootstrap, t, wilcoxon"),
        ({"baseline": "nobody"}, r"the baseline model='nobody' is not a value of the by column"),
        ({"ci": 1.5}, r"ci must be a confidence level in \(0, 1\)"),
        ({"n_resamples": 0}, r"n_resamples must be a positive integer"),
        ({"on_missing": "ignore"}, r"on_missing must be 'error' or 'drop'"),
    ],
)
def test_compare_refuses_what_it_cannot_answer(example, options, message):
    options = {"metrics": ["lrap"], **options}
    with pytest.raises(ValueError, match=message):
        rm.compare(example, options.pop("metrics"), by="model", **options)


def test_evaluate_refuses_intervals_it_cannot_give(example):
    for key in ("roc_auc_macro", "f1_weighted", "average_precision_micro"):
        with pytest.raises(ValueError, match=rf"{key} is computed over labels, .* f1_micro"):
            rm.evaluate(example, [key], by="model", ci=0.95)
    with pytest.raises(ValueError, match=r"not with per_sample=True"):
        rm.evaluate(example, ["lrap"], by="model", ci=0.95, per_sample=True)
    with pytest.raises(ValueError, match=r"ci_method must be one of percentile, bca"):
        rm.evaluate(example, ["lrap"], by="model", ci=0.95, ci_method="basic")


def test_the_command_compares_in_every_format(example, tmp_path, capsys):
    from polars_rankmetrics import cli

    argv = ["compare", EXAMPLE, "--by", "model", "--baseline", "baseline", "--metrics",
            "ndcg@10,mrr,coverage_error", "--n-resamples", "999"]  # fmt: skip
    expected = rm.compare(
        example, ["ndcg@10", "mrr", "coverage_error"], by="model", n_resamples=999
    )
    assert cli.main(argv) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[0].split()[:3] == ["model", "metric", "value"]
    assert all(line.rstrip().endswith("*") for line in table.splitlines()[1:4])
    assert cli.main([*argv, "--format", "json"]) == 0
    rows = pl.DataFrame(json.loads(capsys.readouterr().out))
    assert_frame_equal(rows, expected, check_dtypes=False, check_exact=False, rel_tol=1e-12)
    assert cli.main([*argv, "-o", str(tmp_path / "c.md")]) == 0
    markdown = (tmp_path / "c.md").read_text()
    assert markdown.startswith("| model | metric | value | baseline | delta |")
    assert "| candidate | ndcg@10 * |" in markdown
    assert cli.main([*argv, "--format", "latex"]) == 0
    latex = capsys.readouterr().out
    assert r"\textbf{0.6856}$^\dagger$" in latex  # the candidate's ndcg@10: best, significant
    assert r"coverage\_error $\downarrow$" in latex and "baseline & 0.4018" in latex
    assert cli.main([*argv, "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("model,metric,value,baseline_value,delta")


def test_the_command_refuses_in_one_line(capsys):
    from polars_rankmetrics import cli

    status = cli.main(["compare", EXAMPLE, "--by", "model", "--baseline", "nobody"])
    err = capsys.readouterr().err
    assert status == 1 and err.count("\n") == 1
    assert err.startswith("rankmetrics: error: the baseline model='nobody' is not a value")


def test_the_command_adds_intervals(example, capsys):
    from polars_rankmetrics import cli

    argv = ["evaluate", EXAMPLE, "--by", "model", "--metrics", "lrap", "--ci", "0.9", "--n-boot",
            "300", "--format", "json"]  # fmt: skip
    assert cli.main(argv) == 0
    got = pl.DataFrame(json.loads(capsys.readouterr().out))
    expected = rm.evaluate(example, ["lrap"], by="model", ci=0.9, n_boot=300)
    assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-12)


def test_a_sample_without_a_value_drops_out_of_the_estimates_as_in_evaluate():
    # lwlrap has no value for a sample without positives (it weighs 0 in the mean); roc_auc of a
    # one-class sample makes the mean NaN, as scikit-learn's.
    truth = [[1, 0], [0, 0], [1, 1], [0, 1]]
    tables = [
        rm.from_dense(truth, scores).with_columns(model=pl.lit(model))
        for model, scores in (
            ("baseline", [[0.9, 0.2], [0.3, 0.7], [0.4, 0.8], [0.5, 0.1]]),
            ("candidate", [[0.2, 0.9], [0.8, 0.7], [0.4, 0.8], [0.1, 0.5]]),
        )
    ]
    df = pl.concat(tables)
    keys = ["lwlrap", "lrap", "roc_auc_samples"]
    one_class = r"roc_auc_samples on 4 samples with one class only, set to NaN\."
    with pytest.warns(rm.UndefinedMetricWarning, match=one_class):
        plain = rm.evaluate(df, keys, by="model")
    assert not math.isnan(plain["lwlrap"][0])
    with pytest.warns(rm.UndefinedMetricWarning, match=one_class):
        with_ci = rm.evaluate(df, keys, by="model", ci=0.9, n_boot=50)
    for key in keys:
        np.testing.assert_allclose(with_ci[key], plain[key], rtol=1e-12)
    with pytest.warns(rm.UndefinedMetricWarning, match=one_class):
        compared = rm.compare(df, keys, by="model").sort("metric")
    expected = plain.sort("model")
    for row in compared.iter_rows(named=True):
        np.testing.assert_allclose(row["value"], expected[row["metric"]][1], rtol=1e-12)
        np.testing.assert_allclose(row["baseline_value"], expected[row["metric"]][0], rtol=1e-12)
    assert math.isnan(compared.filter(pl.col("metric") == "roc_auc_samples")["delta"][0])
