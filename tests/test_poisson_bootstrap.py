"""bootstrap="poisson": intervals and paired tests drawn by hashed units of samples.

Checked against slow references that follow the documented definition sample by sample (each
sample drawn its unit's count, flipped with its unit), for the merge of unit tables of any
split of the samples, for the same numbers on every engine path and row order, and by
simulation: the intervals of both bootstraps cover a known mean at their level, and the
permutation p-values are uniform under the null.
"""

from __future__ import annotations

import doctest
import hashlib
import json
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from scipy import stats

import polars_rankmetrics as rm
from polars_rankmetrics.inference import hashing, units
from polars_rankmetrics.inference.intervals import intervals
from polars_rankmetrics.inference.paired import CompareOptions, paired
from polars_rankmetrics.inference.units import (
    paired_by_units,
    unit_groups,
    unit_intervals,
    unit_paired,
    unit_table,
    unit_tables,
)
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.parameters import parameters
from polars_rankmetrics.metrics.registry import parse_keys

EXAMPLE = "data/example.parquet"
BY = Columns(by=("group",))
BY_TYPES = {"group": pl.Int64}
MODELS = Columns(by=("model",))
MODEL_TYPES = {"model": pl.String}


# References: the documented definition, one sample at a time.


def unit_of(sample: object) -> int:
    """A sample's unit from the md5 of its id's text (hashlib, not the package)."""
    digest = hashlib.md5(str(sample).encode()).hexdigest()
    return ((int(digest[:8], 16) // 2) * 2**31 + int(digest[8:16], 16) // 2) % 4096


def reference_means(counts: np.ndarray, ids, v: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Per replicate (a row of counts, every unit), the weighted mean of the defined values,
    each sample drawn its unit's count; NaN where the replicate draws no weight."""
    drawn = counts[:, [unit_of(i) for i in ids]].astype(np.float64)
    defined = ~np.isnan(v)
    num = (drawn[:, defined] * (w * v)[defined]).sum(axis=1)
    den = (drawn[:, defined] * w[defined]).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan)


def reference_interval(ids, v, w, *, n_boot, seed, level, nan_if_undefined=False):
    """The Poisson percentile interval of a weighted mean, sample by sample."""
    defined = ~np.isnan(v)
    total = w[defined].sum()
    estimate = (w * v)[defined].sum() / total if total > 0 else math.nan
    if nan_if_undefined and not defined.all():
        estimate = math.nan
    replicates = reference_means(hashing.poisson_counts(seed, n_boot), ids, v, w)
    kept = replicates[~np.isnan(replicates)]
    if math.isnan(estimate) or not kept.size:
        return estimate, math.nan, math.nan
    alpha = (1 - level) / 2
    return estimate, float(np.quantile(kept, alpha)), float(np.quantile(kept, 1 - alpha))


def rows(ids, columns: dict[str, tuple[np.ndarray, np.ndarray]], **constant) -> pl.DataFrame:
    """Per-sample rows as the driver hands them: the sample column, then each key's value and
    its weight (``key/w``, 0 where the value is undefined)."""
    data: dict[str, object] = {name: value for name, value in constant.items()}
    data["sample"] = list(ids)
    for key, (v, w) in columns.items():
        data[key] = v
        data[f"{key}/w"] = np.where(np.isnan(v), 0.0, w)
    return pl.DataFrame(data)


def nan_equal(got, expected, rtol=1e-12):
    np.testing.assert_allclose(np.asarray(got, float), np.asarray(expected, float), rtol=rtol)


# The unit table.


def test_the_unit_tables_example_runs():
    assert doctest.testmod(units, raise_on_error=True).attempted >= 1


def test_a_unit_table_sums_its_samples_by_the_md5_of_their_ids():
    ids = list(range(50)) + ["x", "y"]
    ids = [str(i) for i in ids]
    rng = np.random.default_rng(3)
    v = rng.random(len(ids))
    v[[3, 7]] = np.nan
    w = rng.choice([0.0, 1.0, 2.5], len(ids))
    table = unit_table(rows(ids, {"lrap": (v, w)}), "sample", parse_keys(["lrap"]))
    assert table.columns == ["rm_unit", "lrap", "lrap/w", "lrap/x", "samples"]
    assert table.schema["rm_unit"] == pl.Int64 and table["rm_unit"].is_sorted()
    for row in table.iter_rows(named=True):
        inside = [j for j, i in enumerate(ids) if unit_of(i) == row["rm_unit"]]
        defined = [j for j in inside if not np.isnan(v[j])]
        assert row["samples"] == len(inside)
        assert row["lrap"] == pytest.approx(sum(w[j] * v[j] for j in defined), rel=1e-12)
        assert row["lrap/w"] == pytest.approx(sum(w[j] for j in defined), rel=1e-12)
        assert row["lrap/x"] == len(inside) - len(defined)
    assert table["samples"].sum() == len(ids)


def test_a_unit_outside_the_units_is_refused():
    table = pl.DataFrame({"rm_unit": [3, 4096], "lrap": [1.0, 0.5], "lrap/w": [1.0, 1.0]})
    with pytest.raises(ValueError, match=r"rm_unit must be in \[0, 4096\), found 4096"):
        units.UnitSums.of(table, parse_keys(["lrap"]))


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 40),
    parts=st.integers(1, 4),
    seed=st.integers(0, 2**32),
    method=st.sampled_from(["percentile", "bca"]),
)
def test_unit_tables_of_disjoint_parts_add_up_to_the_whole(n, parts, seed, method):
    rng = np.random.default_rng(seed)
    keys = parse_keys(["lrap", "roc_auc_samples", "lwlrap"])
    ids = rng.choice(10_000, n, replace=False)
    columns = {}
    for key in map(str, keys):
        v = rng.random(n)
        v[rng.random(n) < 0.15] = np.nan
        columns[key] = (v, rng.choice([0.0, 1.0, 2.0, 3.0], n))
    whole = rows(ids, columns, group=1)
    part = rng.integers(0, parts, n)
    tables = [
        unit_table(whole.filter(pl.Series(part == p)), "sample", keys).with_columns(
            group=pl.lit(1, dtype=pl.Int64)
        )
        for p in range(parts)
    ]
    merged, types = unit_groups(pl.concat(tables), BY)
    options = {"level": 0.9, "n_boot": 60, "seed": seed, "method": method}
    options["context"] = parameters()
    got = unit_intervals(merged, types, BY, keys, **options)
    shuffled = whole.sample(fraction=1.0, shuffle=True, seed=seed % 1000)
    # A table of rows in any order is the same, bit for bit.
    assert_frame_equal(unit_table(shuffled, "sample", keys), unit_table(whole, "sample", keys))
    expected = unit_intervals(unit_tables([((1,), whole)], "sample", keys), BY_TYPES, BY, keys,
                              **options)  # fmt: skip
    assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-12)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 30), seed=st.integers(0, 2**31), weighted=st.booleans())
def test_poisson_intervals_equal_the_sample_by_sample_reference(n, seed, weighted):
    rng = np.random.default_rng(seed)
    keys = parse_keys(["lrap", "roc_auc_samples"])
    ids = [f"s{i}" for i in rng.choice(100_000, n, replace=False)]
    v = {key: rng.random(n) for key in ("lrap", "roc_auc_samples")}
    v["lrap"][rng.random(n) < 0.2] = np.nan
    v["roc_auc_samples"][rng.random(n) < 0.1] = np.nan
    w = rng.choice([0.5, 1.0, 4.0], n) if weighted else np.ones(n)
    frame = rows(ids, {key: (values, w) for key, values in v.items()})
    got = unit_intervals(unit_tables([((), frame)], "sample", keys), {}, Columns(), keys,
                         level=0.8, n_boot=200, seed=seed, method="percentile",
                         context=parameters())  # fmt: skip
    for key in ("lrap", "roc_auc_samples"):
        expected = reference_interval(ids, v[key], w, n_boot=200, seed=seed, level=0.8,
                                      nan_if_undefined=key == "roc_auc_samples")  # fmt: skip
        nan_equal(got.select(key, f"{key}_lo", f"{key}_hi").row(0), expected)


def test_a_micro_average_is_the_ratio_of_the_resampled_count_sums():
    rng = np.random.default_rng(5)
    n, seed = 40, 17
    ids = list(range(n))
    tp, fp, fn = (rng.integers(0, 4, n).astype(float) for _ in range(3))
    w = rng.choice([1.0, 2.0], n)
    frame = rows(ids, {"true_positives": (tp, w), "false_positives": (fp, w),
                       "false_negatives": (fn, w)})  # fmt: skip
    keys = parse_keys(["precision_micro", "recall_micro"])
    context = parameters(zero_division=0.0)
    got = unit_intervals(unit_tables([((), frame)], "sample", parse_keys(
        ["true_positives", "false_positives", "false_negatives"])), {}, Columns(), keys,
        level=0.9, n_boot=300, seed=seed, method="percentile", context=context)  # fmt: skip
    counts = hashing.poisson_counts(seed, 300)
    drawn = counts[:, [unit_of(i) for i in ids]].astype(np.float64)
    for key, other in (("precision_micro", fp), ("recall_micro", fn)):
        replicates = (drawn @ (w * tp)) / (drawn @ (w * (tp + other)))
        replicates = replicates[drawn @ w > 0]
        expected = (
            (w * tp).sum() / (w * (tp + other)).sum(),
            *np.quantile(replicates, [0.05, 0.95]),
        )
        nan_equal(got.select(key, f"{key}_lo", f"{key}_hi").row(0), expected)


def test_bca_reads_the_estimates_leaving_out_one_unit():
    rng = np.random.default_rng(8)
    n, seed, level = 300, 4, 0.9
    ids = list(range(n))
    v, w = rng.exponential(1.0, n), np.ones(n)
    got = unit_intervals(unit_tables([((), rows(ids, {"lrap": (v, w)}))], "sample",
                                     parse_keys(["lrap"])), {}, Columns(), parse_keys(["lrap"]),
                         level=level, n_boot=500, seed=seed, method="bca",
                         context=parameters())  # fmt: skip
    # Efron's BCa by its formula, the jackknife over the units holding samples.
    estimate = v.mean()
    replicates = reference_means(hashing.poisson_counts(seed, 500), ids, v, w)
    held = sorted({unit_of(i) for i in ids})
    loo = np.array([v[[unit_of(i) != u for i in ids]].mean() for u in held])
    normal = stats.norm
    z0 = normal.ppf((np.sum(replicates < estimate) + 0.5 * np.sum(replicates == estimate)) / 500)
    spread = loo.mean() - loo
    a = np.sum(spread**3) / (6 * np.sum(spread**2) ** 1.5)
    bounds = [
        np.quantile(replicates, normal.cdf(z0 + (z0 + z) / (1 - a * (z0 + z))))
        for z in normal.ppf([(1 - level) / 2, (1 + level) / 2])
    ]
    nan_equal(got.row(0), (estimate, *bounds), rtol=1e-9)
    assert a != 0  # a skewed sample: the acceleration matters here


def test_a_group_of_a_few_samples_leaves_out_the_empty_replicates():
    # Three samples: about 5% of the replicates draw none of them.
    frame = rows(["a", "b", "c"], {"lrap": (np.array([0.2, 0.5, 0.9]), np.ones(3))})
    keys = parse_keys(["lrap"])
    got = unit_intervals(unit_tables([((), frame)], "sample", keys), {}, Columns(), keys,
                         level=0.9, n_boot=400, seed=0, method="percentile",
                         context=parameters()).row(0)  # fmt: skip
    assert got[0] == pytest.approx(1.6 / 3, rel=1e-12)
    assert 0.2 <= got[1] < got[0] < got[2] <= 0.9


# Paired comparisons.


def two_models(n: int, *, gap: float, seed: int, offset: int = 0) -> dict:
    """Per-sample rows of two models on the same samples: the values of a sample share a mean,
    the candidate's moved by ``gap``."""
    rng = np.random.default_rng(seed)
    mu = rng.normal(0, 1, n)
    ids = np.arange(n) + offset
    models = {}
    for model, lean in (("baseline", 0.0), ("candidate", gap)):
        v = mu + lean + rng.normal(0, 1, n)
        models[(model,)] = rows(ids, {"lrap": (v, np.ones(n))}, model=model)
    return models


def reference_permutation(models, flips) -> float:
    """(hits + 1) / (patterns + 1): each pattern swaps the two values of the samples of the
    units it flips."""
    a, b = models[("candidate",)]["lrap"].to_numpy(), models[("baseline",)]["lrap"].to_numpy()
    unit = np.array([unit_of(i) for i in models[("baseline",)]["sample"]])
    observed = abs(a.mean() - b.mean())
    hits = 0
    for pattern in flips:
        swap = pattern[unit]
        delta = np.where(swap, b, a).mean() - np.where(swap, a, b).mean()
        hits += abs(delta) >= observed * (1 - 1e-9)
    return (hits + 1) / (len(flips) + 1)


COMPARE = {"correction": None, "n_boot": 300, "level": 0.9, "seed": 3}


def test_the_permutation_test_flips_whole_units_as_the_reference_does():
    models = two_models(120, gap=0.2, seed=1)
    keys = parse_keys(["lrap"])
    got = paired_by_units(models, MODEL_TYPES, MODELS, keys,
                          CompareOptions(test="permutation", n_resamples=400, **COMPARE),
                          baseline=("baseline",))  # fmt: skip
    flips = hashing.sign_flips(3, 400)
    assert got["p_value"][0] == pytest.approx(reference_permutation(models, flips), rel=1e-12)
    a, b = (models[(m,)]["lrap"].to_numpy() for m in ("candidate", "baseline"))
    ids = models[("baseline",)]["sample"].to_list()
    counts = hashing.poisson_counts(3, 300)
    deltas = reference_means(counts, ids, a, np.ones(120)) - reference_means(
        counts, ids, b, np.ones(120)
    )
    row = got.row(0, named=True)
    assert row["delta"] == pytest.approx(a.mean() - b.mean(), rel=1e-12)
    nan_equal([row["delta_lo"], row["delta_hi"]], np.quantile(deltas, [0.05, 0.95]))
    d = np.round(a - b, 12)
    assert (row["wins"], row["ties"], row["losses"]) == (
        int((d > 0).sum()),
        int((d == 0).sum()),
        int((d < 0).sum()),
    )
    # The bootstrap test: the replicates of the delta centred on the observed one.
    boot = paired_by_units(models, MODEL_TYPES, MODELS, keys,
                           CompareOptions(test="bootstrap", n_resamples=300, **COMPARE),
                           baseline=("baseline",))  # fmt: skip
    observed = a.mean() - b.mean()
    hits = np.sum(np.abs(deltas - observed) >= abs(observed) * (1 - 1e-9))
    assert boot["p_value"][0] == pytest.approx((hits + 1) / 301, rel=1e-12)


def test_a_comparison_from_unit_tables_alone_gives_the_same_numbers():
    models = two_models(500, gap=0.1, seed=2)
    keys = parse_keys(["lrap"])
    how = CompareOptions(test="permutation", n_resamples=999, **COMPARE)
    from_rows = paired_by_units(models, MODEL_TYPES, MODELS, keys, how, baseline=("baseline",))
    # Each model's table summed from three partitions of its samples.
    tables = {}
    for model, frame in models.items():
        part = np.arange(frame.height) % 3
        tables[model] = pl.concat(
            [unit_table(frame.filter(pl.Series(part == p)), "sample", keys) for p in range(3)]
        )
    from_tables = unit_paired(tables, MODEL_TYPES, MODELS, keys, how, baseline=("baseline",))
    per_sample = ("effect_size", "wins", "ties", "losses")
    assert from_tables.select(per_sample).null_count().row(0) == (1, 1, 1, 1)
    assert_frame_equal(from_tables.drop(per_sample), from_rows.drop(per_sample),
                       check_exact=False, rel_tol=1e-12)  # fmt: skip


def test_a_comparison_by_units_refuses_models_of_different_samples():
    models = two_models(50, gap=0.0, seed=4)
    keys = parse_keys(["lrap"])
    tables = {m: unit_table(f, "sample", keys) for m, f in models.items()}
    tables[("candidate",)] = unit_table(models[("candidate",)].head(49), "sample", keys)
    with pytest.raises(ValueError, match=r"model='candidate' and the baseline model='baseline' do "
                       r"not hold the same samples: unit \d+ holds 0 and 1"):  # fmt: skip
        unit_paired(tables, MODEL_TYPES, MODELS, keys,
                    CompareOptions(test="permutation", n_resamples=99, **COMPARE),
                    baseline=("baseline",))  # fmt: skip


@pytest.mark.parametrize("test", ["t", "wilcoxon"])
def test_per_sample_tests_are_refused_with_draws_by_unit(test):
    message = rf"test='{test}' is a per-sample test: with bootstrap='poisson'"
    with pytest.raises(ValueError, match=message):
        rm.compare("no-such-file.parquet", ["lrap"], test=test, bootstrap="poisson")
    with pytest.raises(ValueError, match=message):
        unit_paired({}, MODEL_TYPES, MODELS, parse_keys(["lrap"]),
                    CompareOptions(test=test, n_resamples=99, **COMPARE),
                    baseline=("baseline",))  # fmt: skip


def test_an_unknown_bootstrap_is_refused_by_name():
    message = "bootstrap must be one of multinomial, poisson, not 'exact'"
    with pytest.raises(ValueError, match=message):
        rm.evaluate("no-such-file.parquet", ["lrap"], ci=0.9, bootstrap="exact")
    with pytest.raises(ValueError, match=message):
        rm.compare("no-such-file.parquet", ["lrap"], bootstrap="exact")
    with pytest.raises(ValueError, match=message):
        rm.html_report("no-such-file.parquet", bootstrap="exact")


# Simulation: coverage of a known mean, and p-values under the null.


@pytest.mark.parametrize("bootstrap", ["multinomial", "poisson"])
def test_the_95_percent_interval_covers_a_known_mean(bootstrap):
    # Per-sample values Beta(2, 5): the population mean is 2/7.
    rng = np.random.default_rng(2026)
    n_sets, n = 400, 150
    keys = parse_keys(["lrap"])
    groups = [
        ((d,), rows(np.arange(n) + d * n, {"lrap": (rng.beta(2, 5, n), np.ones(n))}, group=d))
        for d in range(n_sets)
    ]
    options = {"level": 0.95, "n_boot": 500, "seed": 1, "method": "percentile"}
    options["context"] = parameters()
    if bootstrap == "poisson":
        found = unit_intervals(unit_tables(groups, "sample", keys), BY_TYPES, BY, keys, **options)
    else:
        found = intervals(groups, BY_TYPES, BY, keys, **options)
    covered = ((found["lrap_lo"] <= 2 / 7) & (2 / 7 <= found["lrap_hi"])).mean()
    # Three binomial standard errors.
    assert abs(covered - 0.95) <= 3 * math.sqrt(0.95 * 0.05 / n_sets), covered


def test_with_more_samples_than_units_the_interval_has_the_width_of_the_mean():
    # About ten samples a unit: the unit sums' bootstrap has the spread of the mean's.
    rng = np.random.default_rng(7)
    n = 40_000
    v = rng.exponential(1.0, n)
    keys = parse_keys(["lrap"])
    found = unit_intervals(unit_tables([((), rows(range(n), {"lrap": (v, np.ones(n))}))],
                                       "sample", keys), {}, Columns(), keys, level=0.95,
                           n_boot=2000, seed=0, method="percentile",
                           context=parameters()).row(0)  # fmt: skip
    half_width = (found[2] - found[1]) / 2
    expected = stats.norm.ppf(0.975) * v.std() / math.sqrt(n)
    assert abs(half_width / expected - 1) < 0.08, half_width / expected


@pytest.mark.parametrize("bootstrap", ["multinomial", "poisson"])
def test_permutation_p_values_are_uniform_under_the_null_and_small_under_a_shift(bootstrap):
    keys = parse_keys(["lrap"])
    compared = paired_by_units if bootstrap == "poisson" else paired

    def p_value(n: int, gap: float, d: int) -> float:
        models = two_models(n, gap=gap, seed=d, offset=d * n)
        how = CompareOptions(test="permutation", n_resamples=499, correction=None, n_boot=1,
                             level=0.9, seed=d)  # fmt: skip
        found = compared(models, MODEL_TYPES, MODELS, keys, how, baseline=("baseline",))
        return float(found["p_value"][0])

    null = [p_value(60, 0.0, d) for d in range(200)]
    assert stats.kstest(null, "uniform").pvalue > 0.01
    shifted = [p_value(60, 1.0, 1000 + d) for d in range(20)]
    assert max(shifted) <= 0.01, shifted


# The verbs, on every engine path.


def long_table(n: int, seed: int) -> pl.DataFrame:
    """Two models' long tables over the same n samples of 5 labels, with sample weights."""
    rng = np.random.default_rng(seed)
    truth = (rng.random((n, 5)) < 0.3).astype(int)
    parts = []
    for model, lean in (("baseline", 0.0), ("candidate", 0.2)):
        score = np.round(rng.random((n, 5)) + lean * truth, 2)
        parts.append(rm.from_dense(truth, score).with_columns(model=pl.lit(model)))
    return pl.concat(parts).with_columns(weight=(pl.col("sample") % 3 + 1).cast(pl.Float64))


KEYS = ["lrap", "ndcg@3", "f1_samples", "f1_micro", "lwlrap"]


def test_poisson_intervals_are_the_same_on_every_path(engine):
    df = long_table(50, seed=4)
    options = {"by": "model", "weight": "weight", "ci": 0.9, "n_boot": 200}
    options["bootstrap"] = "poisson"
    expected = rm.evaluate(df, KEYS, **options)
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=7)
    assert_frame_equal(engine.evaluate(shuffled, KEYS, **options), expected, check_exact=False,
                       rel_tol=1e-9)  # fmt: skip
    bca = rm.evaluate(df, KEYS, **options, ci_method="bca")
    assert_frame_equal(rm.evaluate(shuffled, KEYS, **options, ci_method="bca"), bca)
    compare = {"weight": "weight", "n_resamples": 999, "bootstrap": "poisson"}
    compared = rm.compare(df, KEYS[:3], **compare)
    again = engine._call(rm.compare, shuffled, KEYS[:3], **compare)
    assert_frame_equal(again, compared, check_exact=False, rel_tol=1e-9)
    plain = rm.evaluate(df, KEYS, by="model", weight="weight")
    for key in KEYS:
        np.testing.assert_allclose(expected[key], plain[key], rtol=1e-12)
    multinomial = rm.evaluate(df, KEYS, **(options | {"bootstrap": "multinomial"}))
    assert multinomial["lrap_lo"].to_list() != expected["lrap_lo"].to_list()


def test_integer_ids_and_their_decimal_text_are_the_same_samples():
    df = long_table(60, seed=1)
    options = {"by": "model", "ci": 0.9, "n_boot": 200, "bootstrap": "poisson"}
    as_int = rm.evaluate(df, KEYS, **options)
    as_text = rm.evaluate(df.with_columns(pl.col("sample").cast(pl.String)), KEYS, **options)
    assert_frame_equal(as_text, as_int)
    as_uint = rm.evaluate(df.with_columns(pl.col("sample").cast(pl.UInt32)), KEYS, **options)
    assert_frame_equal(as_uint, as_int)
    # Other text is another sample: zero-padded ids fall into other units.
    padded = df.with_columns(pl.col("sample").cast(pl.String).str.zfill(6))
    assert rm.evaluate(padded, KEYS, **options)["lrap_lo"].to_list() != as_int["lrap_lo"].to_list()
    with pytest.raises(ValueError, match=r"column 'sample' \(Float64\) identifies the samples"):
        rm.evaluate(df.with_columns(pl.col("sample").cast(pl.Float64)), KEYS, **options)


def test_the_estimates_are_the_plain_means_and_nan_where_they_are():
    keys = ["lrap", "lwlrap", "roc_auc_samples", "f1_micro", "precision_samples"]
    options = {"by": "model", "zero_division": "nan"}
    one_class = r"roc_auc_samples on \d+ samples with one class only, set to NaN\."
    with pytest.warns(rm.UndefinedMetricWarning, match=one_class):
        plain = rm.evaluate(EXAMPLE, keys, **options)
    with pytest.warns(rm.UndefinedMetricWarning, match=one_class):
        found = rm.evaluate(EXAMPLE, keys, ci=0.9, n_boot=200, bootstrap="poisson", **options)
    for key in keys:
        np.testing.assert_allclose(found[key], plain[key], rtol=1e-12)
        lo, hi = found[f"{key}_lo"].to_numpy(), found[f"{key}_hi"].to_numpy()
        if plain[key].is_nan().any():
            assert np.isnan(lo).all() and np.isnan(hi).all()
        else:
            assert ((lo <= found[key].to_numpy()) & (found[key].to_numpy() <= hi)).all(), key
    assert plain["roc_auc_samples"].is_nan().all()  # one-class samples: as scikit-learn


def test_the_report_and_the_command_take_the_option(tmp_path, capsys):
    from polars_rankmetrics import cli
    from polars_rankmetrics.report.contents import SAMPLE_KEYS

    report = rm.html_report(EXAMPLE, by="model", baseline="baseline", ci=0.9, n_boot=200,
                            bootstrap="poisson")  # fmt: skip
    expected = rm.compare(EXAMPLE, list(SAMPLE_KEYS), n_boot=200, ci=0.9, bootstrap="poisson")
    assert_frame_equal(report.comparison, expected, check_exact=False, rel_tol=1e-12)
    intervals_of = rm.evaluate(EXAMPLE, list(SAMPLE_KEYS), by="model", ci=0.9, n_boot=200,
                               bootstrap="poisson")  # fmt: skip
    assert_frame_equal(report.summary.select(intervals_of.columns), intervals_of,
                       check_exact=False, rel_tol=1e-12)  # fmt: skip
    argv = ["evaluate", EXAMPLE, "--by", "model", "--metrics", "lrap", "--ci", "0.9", "--n-boot",
            "300", "--bootstrap", "poisson", "--format", "json"]  # fmt: skip
    assert cli.main(argv) == 0
    got = pl.DataFrame(json.loads(capsys.readouterr().out))
    expected = rm.evaluate(EXAMPLE, ["lrap"], by="model", ci=0.9, n_boot=300, bootstrap="poisson")
    assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-12)
    argv = ["compare", EXAMPLE, "--by", "model", "--baseline", "baseline", "--metrics", "lrap",
            "--n-resamples", "999", "--bootstrap", "poisson", "--format", "json"]  # fmt: skip
    assert cli.main(argv) == 0
    got = pl.DataFrame(json.loads(capsys.readouterr().out))
    expected = rm.compare(EXAMPLE, ["lrap"], n_resamples=999, bootstrap="poisson")
    assert_frame_equal(got, expected, check_dtypes=False, check_exact=False, rel_tol=1e-12)
    assert cli.main([*argv[:-2], "--test", "t"]) == 1
    assert "per-sample test" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main([*argv[:-2], "--bootstrap", "exact"])
