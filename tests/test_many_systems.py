"""Many systems, one verdict: compare(baseline=None), Tukey's HSD (two-way, and Carterette's
randomized one), effect sizes, the compact letter display and the leaderboard.

The references are written here from the formulas: the two-way ANOVA's residual variance and
scipy's ``studentized_range``, a loop of independent row shuffles for the randomized test (a
Monte Carlo tolerance), Holm's step-down, mean(d) / sd(d), and brute force over the letters.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from scipy import stats

import polars_rankmetrics as rm
from polars_rankmetrics.inference import randomized_tukey as randomized_module
from polars_rankmetrics.inference import shuffles, studentized
from polars_rankmetrics.inference.letters import compact_letters
from polars_rankmetrics.inference.randomized_tukey import randomized_tukey
from polars_rankmetrics.inference.tukey import tukey_hsd
from polars_rankmetrics.metrics.registry import parse_keys

LRAP = parse_keys(["lrap"])[0]


def systems(n_samples: int, leans: list[float], *, n_labels: int = 6, seed: int = 0):
    """Models scoring the same samples, model i's scores leaning ``leans[i]`` towards the
    truth (equal leans: exchangeable models)."""
    rng = np.random.default_rng(seed)
    truth = rng.random((n_samples, n_labels)) < 0.3
    truth[:, 0] = True
    parts = []
    for i, lean in enumerate(leans):
        score = np.round(rng.random((n_samples, n_labels)) + lean * truth, 2)
        model = rm.from_dense(truth.astype(int), score).with_columns(model=pl.lit(f"m{i}"))
        parts.append(model)
    return pl.concat(parts)


def per_sample_matrix(df: pl.DataFrame, key: str) -> np.ndarray:
    """Samples x models (sorted): the per-sample values of ``key``."""
    rows = rm.evaluate(df, [key], by="model", per_sample=True)
    wide = rows.pivot(on="model", index="sample", values=key).sort("sample")
    return wide.select(sorted(c for c in wide.columns if c != "sample")).to_numpy()


def frames(x: np.ndarray) -> dict[tuple[str], pl.DataFrame]:
    """The per-sample tables (lrap and its weight) of the models of samples x models ``x``."""
    return {
        (f"m{j}",): pl.DataFrame(
            {"sample": np.arange(x.shape[0]), "lrap": x[:, j], "lrap/w": np.ones(x.shape[0])}
        )
        for j in range(x.shape[1])
    }


def reference_tukey(x: np.ndarray, level: float = 0.95):
    """Per pair (a, b), a < b: p, the interval and ES_E, from the two-way ANOVA written out."""
    n, m = x.shape
    grand = x.mean()
    rows, cols = x.mean(axis=1), x.mean(axis=0)
    sse = sum((x[i, j] - rows[i] - cols[j] + grand) ** 2 for i in range(n) for j in range(m))
    df = (m - 1) * (n - 1)
    v_e = sse / df
    crit = stats.studentized_range.ppf(level, m, df) * math.sqrt(v_e / n)
    out = {}
    for a, b in itertools.combinations(range(m), 2):
        delta = cols[a] - cols[b]
        q = abs(delta) / math.sqrt(v_e / n)
        out[a, b] = (
            stats.studentized_range.sf(q, m, df), delta - crit, delta + crit,
            delta / math.sqrt(v_e),
        )  # fmt: skip
    return out


def reference_randomized(x: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """The permuted ranges, each row shuffled on its own by numpy's permutation."""
    rng = np.random.default_rng(seed)
    out = np.empty(resamples)
    for r in range(resamples):
        shuffled = np.array([rng.permutation(row) for row in x])
        means = shuffled.mean(axis=0)
        out[r] = means.max() - means.min()
    return out


def holm(p: np.ndarray) -> np.ndarray:
    order = np.argsort(p)
    m = len(p)
    out = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def test_all_pairs_columns_and_order():
    df = systems(30, [0.0, 0.2, 0.4])
    result = rm.compare(df, ["lrap", "ndcg"], by="model", baseline=None, test="t")
    assert result.columns == [
        "model", "model_other", "metric", "value", "other_value", "delta", "delta_lo",
        "delta_hi", "p_value", "p_adjusted", "effect_size", "wins", "ties", "losses",
    ]  # fmt: skip
    assert result.select("model", "model_other", "metric").rows() == [
        (a, b, k) for a, b in [("m0", "m1"), ("m0", "m2"), ("m1", "m2")] for k in ("lrap", "ndcg")
    ]
    x = per_sample_matrix(df, "lrap")
    for row in result.filter(metric="lrap").iter_rows(named=True):
        a, b = int(row["model"][1]), int(row["model_other"][1])
        d = x[:, a] - x[:, b]
        assert row["delta"] == pytest.approx(d.mean())
        assert row["p_value"] == pytest.approx(stats.ttest_rel(x[:, a], x[:, b]).pvalue)
        assert row["effect_size"] == pytest.approx(d.mean() / d.std(ddof=1))
        assert row["wins"] == np.sum(np.round(d, 12) > 0)
        # The bootstrap interval of a mean difference: about 1.96 standard errors each side.
        half = 1.96 * d.std(ddof=1) / math.sqrt(len(d))
        assert row["delta_lo"] < row["delta"] < row["delta_hi"]
        assert (row["delta_hi"] - row["delta_lo"]) / 2 == pytest.approx(half, rel=0.25)
    np.testing.assert_allclose(result["p_adjusted"], holm(result["p_value"].to_numpy()))


def test_a_baseline_comparison_gains_the_effect_size():
    df = systems(25, [0.0, 0.3])
    result = rm.compare(df, ["lrap"], by="model", baseline="m0", test="t")
    x = per_sample_matrix(df, "lrap")
    d = x[:, 1] - x[:, 0]
    assert result["effect_size"][0] == pytest.approx(d.mean() / d.std(ddof=1))


def test_tukey_hsd_against_the_two_way_anova_written_out():
    df = systems(40, [0.0, 0.1, 0.3, 0.3])
    result = rm.compare(df, ["lrap"], by="model", baseline=None, test="tukey_hsd")
    expected = reference_tukey(per_sample_matrix(df, "lrap"))
    for row in result.iter_rows(named=True):
        p, lo, hi, es = expected[int(row["model"][1]), int(row["model_other"][1])]
        assert row["p_value"] == pytest.approx(p, rel=1e-6, abs=1e-10)
        assert (row["delta_lo"], row["delta_hi"]) == pytest.approx((lo, hi), rel=1e-9)
        assert row["effect_size"] == pytest.approx(es, rel=1e-9)
    # One metric: no correction by default (the test is family-wise over the pairs).
    assert result["p_adjusted"].to_list() == result["p_value"].to_list()


def test_blocking_by_sample_finds_what_one_way_tukey_misses():
    # Samples of very different difficulty; system 1 better by a steady 0.05 on every sample.
    rng = np.random.default_rng(3)
    difficulty = rng.uniform(0.1, 0.9, 30)
    x = np.stack([difficulty, difficulty + 0.05 + rng.normal(0, 0.01, 30), difficulty], axis=1)
    two_way = tukey_hsd(frames(x), [LRAP], level=0.95)
    one_way = stats.tukey_hsd(x[:, 0], x[:, 1], x[:, 2])
    assert two_way[("m0",), ("m1",), LRAP]["p_value"] < 1e-6
    assert one_way.pvalue[0, 1] > 0.5


@settings(max_examples=12, deadline=None)
@given(n=st.integers(3, 12), seed=st.integers(0, 2**16))
def test_two_systems_tukey_hsd_is_the_paired_t_test(n, seed):
    x = np.round(np.random.default_rng(seed).random((n, 2)), 3)
    found = tukey_hsd(frames(x), [LRAP], level=0.95)[("m0",), ("m1",), LRAP]
    if np.all(x[:, 0] == x[:, 1]):
        assert found["p_value"] == 1.0
        return
    t = stats.ttest_rel(x[:, 0], x[:, 1])
    if np.isnan(t.pvalue):  # every difference equal: no variance, p = 0 for a nonzero delta
        assert found["p_value"] == 0.0
    else:
        assert found["p_value"] == pytest.approx(t.pvalue, rel=1e-6, abs=1e-9)


@settings(max_examples=10, deadline=None)
@given(n=st.integers(2, 10), m=st.integers(2, 5), seed=st.integers(0, 2**16))
def test_tied_systems_have_p_one(n, m, seed):
    column = np.random.default_rng(seed).random(n)
    x = np.repeat(column[:, None], m, axis=1)
    found = tukey_hsd(frames(x), [LRAP], level=0.95)
    randomized = randomized_tukey(
        frames(x), [LRAP], n_resamples=99, level=0.95, seed=seed, sample="sample"
    )
    for pair in itertools.combinations(range(m), 2):
        key = ((f"m{pair[0]}",), (f"m{pair[1]}",), LRAP)
        assert found[key]["p_value"] == 1.0
        assert randomized[key]["p_value"] == 1.0


@settings(max_examples=8, deadline=None)
@given(m=st.integers(3, 6), seed=st.integers(0, 2**16))
def test_one_dominant_system_differs_from_every_other(m, seed):
    rng = np.random.default_rng(seed)
    x = rng.random((20, m)) * 0.2
    x[:, 0] += 0.7
    found = tukey_hsd(frames(x), [LRAP], level=0.95)
    randomized = randomized_tukey(
        frames(x), [LRAP], n_resamples=199, level=0.95, seed=seed, sample="sample"
    )
    for j in range(1, m):
        key = (("m0",), (f"m{j}",), LRAP)
        assert found[key]["p_value"] < 1e-6
        assert randomized[key]["p_value"] == pytest.approx(1 / 200)
        assert found[key]["delta_lo"] > 0 and randomized[key]["delta_lo"] > 0


def test_randomized_tukey_within_monte_carlo_tolerance_of_row_shuffles():
    rng = np.random.default_rng(11)
    x = rng.random((25, 4)) + np.array([0.0, 0.05, 0.12, 0.2])
    resamples = 2000
    found = randomized_tukey(
        frames(x), [LRAP], n_resamples=resamples, level=0.9, seed=5, sample="sample"
    )
    ranges = reference_randomized(x, resamples, seed=99)
    means = x.mean(axis=0)
    for a, b in itertools.combinations(range(4), 2):
        got = found[(f"m{a}",), (f"m{b}",), LRAP]
        delta = means[a] - means[b]
        p = (1 + np.sum(ranges >= abs(delta))) / (resamples + 1)
        # Two independent estimates of the same p: 4.5 standard errors of their difference.
        tolerance = 4.5 * math.sqrt(2 * p * (1 - p) / resamples) + 2 / resamples
        assert abs(got["p_value"] - p) <= tolerance, (a, b, got["p_value"], p)
        half = np.quantile(ranges, 0.9)
        assert got["delta_hi"] - delta == pytest.approx(half, abs=0.02)


def row_permutations(m: int, rows: int, seed: int) -> np.ndarray:
    """``m`` x ``rows``: the kernel's permutation of each row (counters ``0..rows-1``)."""
    key = shuffles.key(seed, 52)
    bits, starts, thresholds = shuffles.plan(m)
    order, draws = np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64)
    table = np.empty((m, rows), dtype=np.int64)
    for c in range(rows):
        shuffles.shuffle(order, draws, key, np.uint64(c), bits, starts, thresholds)
        table[:, c] = order
    return table


@pytest.mark.parametrize("m", [3, 4])
def test_each_row_is_shuffled_by_a_uniform_permutation(m):
    # Every one of the m! orders as often as any other: a chi-square test of the counts
    # against uniform at the 1e-6 level; and each column a permutation of 0..m-1.
    table = row_permutations(m, 60_000, 3)
    assert np.array_equal(
        np.sort(table, axis=0), np.broadcast_to(np.arange(m)[:, None], table.shape)
    )
    code = sum(table[i] * m**i for i in range(m))
    counts = np.unique(code, return_counts=True)[1]
    assert counts.size == math.factorial(m)
    assert stats.chisquare(counts).pvalue > 1e-6


def test_rows_of_many_models_take_draws_from_several_words_uniformly():
    # 40 models: the draws of a row come in batches from several words. Each position's model
    # and each pair of adjacent positions' models uniform (chi-square at the 1e-6 level).
    m = 40
    assert shuffles.plan(m)[1].size > 3
    table = row_permutations(m, 40_000, 5)
    assert np.array_equal(
        np.sort(table, axis=0), np.broadcast_to(np.arange(m)[:, None], table.shape)
    )
    for position in (0, 1, 17, m - 1):
        counts = np.bincount(table[position], minlength=m)
        assert stats.chisquare(counts).pvalue > 1e-6, position
    pairs = np.bincount(table[0] * m + table[m - 1], minlength=m * m)
    assert np.all(pairs[:: m + 1] == 0)  # one model never in two positions
    assert stats.chisquare(np.delete(pairs, np.arange(0, m * m, m + 1))).pvalue > 1e-6


def test_wide_rows_are_shuffled_into_permutations():
    table = row_permutations(300, 40, 4)
    assert np.array_equal(
        np.sort(table, axis=0), np.broadcast_to(np.arange(300)[:, None], table.shape)
    )
    assert not np.array_equal(table[:, 0], np.arange(300))


def test_randomized_ranges_do_not_depend_on_threads_and_match_row_shuffles(monkeypatch):
    # Small chunks (7 permutations each, a group of the kernel split over chunks) on two
    # threads, then one chunk on one: the draws are the same for any threads, chunks and
    # count of permutations, and their distribution that of a loop of row shuffles.
    rng = np.random.default_rng(12)
    x = rng.random((30, 5)) + np.array([0.0, 0.03, 0.06, 0.1, 0.2])
    sums = x[:, :, None]
    monkeypatch.setattr(randomized_module, "_CHUNK", 7)
    resamples = 1000
    found = randomized_module.ranges(sums, np.ones_like(sums), resamples, 7)[:, 0]
    monkeypatch.setattr(randomized_module, "_THREADS", 1)
    monkeypatch.setattr(randomized_module, "_CHUNK", 1000)
    alone = randomized_module.ranges(sums, np.ones_like(sums), 100, 7)[:, 0]
    assert np.array_equal(found[:100], alone)
    reference = reference_randomized(x, resamples, seed=98)
    for q in (0.1, 0.5, 0.9):
        # Two independent estimates of the same quantile: at most 4.5 standard errors apart
        # in probability (the reference's fraction below the other's quantile).
        below = np.mean(reference <= np.quantile(found, q))
        assert abs(below - q) <= 4.5 * math.sqrt(2 * q * (1 - q) / resamples), q


def test_weights_and_baselines_are_refused_with_one_line_reasons():
    df = systems(10, [0.0, 0.1, 0.2]).with_columns(w=pl.lit(2.0))
    for test in ("tukey_hsd", "randomized_tukey"):
        with pytest.raises(ValueError, match=r"^test='\w+' compares unweighted means") as error:
            rm.compare(df, ["lrap"], by="model", baseline=None, test=test, weight="w")
        assert "\n" not in str(error.value)
        with pytest.raises(ValueError, match="pass baseline=None"):
            rm.compare(df, ["lrap"], by="model", baseline="m0", test=test)
    with pytest.raises(ValueError, match="weighs each sample by its positives"):
        rm.compare(df, ["lwlrap"], by="model", baseline=None, test="tukey_hsd")
    with pytest.raises(ValueError, match="at least two models"):
        rm.compare(df.filter(model="m0"), ["lrap"], by="model", baseline=None)


def test_samples_missing_for_one_model_are_named_or_dropped():
    df = systems(20, [0.0, 0.1, 0.2])
    holey = df.filter(~((pl.col("model") == "m1") & (pl.col("sample") == 7)))
    with pytest.raises(ValueError, match=r"sample=7 of model='m0' is missing from model='m1'"):
        rm.compare(holey, ["lrap"], by="model", baseline=None, test="tukey_hsd")
    dropped = rm.compare(
        holey, ["lrap"], by="model", baseline=None, test="tukey_hsd", on_missing="drop"
    )
    expected = rm.compare(df.filter(pl.col("sample") != 7), ["lrap"], by="model",
                          baseline=None, test="tukey_hsd")  # fmt: skip
    assert_frame_equal(dropped, expected)


@pytest.mark.parametrize("test", ["permutation", "t", "tukey_hsd", "randomized_tukey"])
def test_every_engine_gives_the_same_pairs(engine, test):
    df = systems(24, [0.0, 0.15, 0.3], n_labels=5, seed=2)
    options = {"by": "model", "baseline": None, "test": test, "n_resamples": 199}
    expected = rm.compare(df, ["lrap", "ndcg@3"], **options)
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=1)
    got = engine._call(rm.compare, shuffled, ["lrap", "ndcg@3"], **options)
    assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-9)


def test_poisson_units_from_rows_and_from_states_agree():
    df = systems(60, [0.0, 0.1, 0.3], n_labels=5, seed=6)
    options = {"by": "model", "baseline": None, "bootstrap": "poisson", "n_resamples": 499}
    keys = ["lrap", "ndcg"]
    states = rm.state(df, keys, by="model", intervals=True)
    for test in ("permutation", "randomized_tukey"):
        rows = rm.compare(df, keys, test=test, **options)
        merged = rm.compare(states, keys, test=test, **options)
        same = ["model", "model_other", "metric", "value", "other_value", "delta", "p_value"]
        assert_frame_equal(merged.select(same), rows.select(same), check_exact=False,
                           rel_tol=1e-9)  # fmt: skip
        assert merged["effect_size"].null_count() == merged.height


def significant_pairs(n: int, bits: list[bool]) -> list[tuple[int, int]]:
    return [pair for pair, on in zip(itertools.combinations(range(n), 2), bits, strict=True) if on]


@pytest.mark.parametrize(
    ("n", "significant", "expected"),
    [
        (3, [], ["a", "a", "a"]),
        (3, [(0, 2)], ["a", "ab", "b"]),
        (3, [(0, 1), (0, 2), (1, 2)], ["a", "b", "c"]),
        (4, [(0, 2), (0, 3), (1, 3)], ["a", "ab", "bc", "c"]),
        (4, [(0, 3)], ["a", "ab", "ab", "b"]),
    ],
)
def test_letters_of_hand_cases(n, significant, expected):
    assert compact_letters(n, significant) == expected


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 7).flatmap(
    lambda n: st.tuples(st.just(n), st.lists(st.booleans(), min_size=n * (n - 1) // 2,
                                             max_size=n * (n - 1) // 2))
))  # fmt: skip
def test_two_models_share_a_letter_exactly_when_not_significant(case):
    n, bits = case
    significant = significant_pairs(n, bits)
    letters = compact_letters(n, significant)
    for a, b in itertools.combinations(range(n), 2):
        share = bool(set(letters[a]) & set(letters[b]))
        assert share == ((a, b) not in significant), (n, significant, letters)
    assert all(letters), letters


def test_the_leaderboard_letters_follow_compare_and_the_interval_evaluate():
    df = systems(40, [0.0, 0.05, 0.4, 0.45, 0.9], seed=8)
    keys = ["lrap", "coverage_error"]
    board = rm.leaderboard(df, keys, test="t", seed=3, n_boot=200)
    assert board.columns == ["model", "metric", "value", "value_lo", "value_hi", "rank", "group"]
    assert board.select("metric", "rank").rows() == sorted(board.select("metric", "rank").rows())
    pairs = rm.compare(df, keys, by="model", baseline=None, test="t")
    interval = rm.evaluate(df, keys, by="model", ci=0.95, seed=3, n_boot=200)
    for key in keys:
        rows = {r["model"]: r for r in board.filter(metric=key).iter_rows(named=True)}
        for r in interval.iter_rows(named=True):
            got = rows[r["model"]]
            # Equal to the last bits the engines' parallel sums leave free.
            assert (got["value"], got["value_lo"], got["value_hi"]) == pytest.approx(
                (r[key], r[f"{key}_lo"], r[f"{key}_hi"]), rel=1e-12
            )
        for p in pairs.filter(metric=key).iter_rows(named=True):
            share = bool(set(rows[p["model"]]["group"]) & set(rows[p["model_other"]]["group"]))
            assert share == (p["p_adjusted"] >= 0.05)
        best = max(rows.values(), key=lambda r: r["value"] * (1 if key == "lrap" else -1))
        assert best["rank"] == 1 and best["group"].startswith("a")


@pytest.mark.parametrize(("k", "df"), [(2, 1), (3, 2), (4, 57), (20, 3), (50, 2401)])
def test_the_studentized_range_is_scipys(k, df):
    q = np.array([0.05, 0.5, 2.0, 4.0, 7.0])
    expected = stats.studentized_range.sf(q, k, df)
    np.testing.assert_allclose(studentized.sf(q, k, df), expected, rtol=1e-7, atol=1e-10)
    assert studentized.ppf(0.95, k, df) == pytest.approx(
        stats.studentized_range.ppf(0.95, k, df), rel=1e-7
    )
