"""Paired comparisons of models on the samples they share: per model and key, the difference
of the means from the baseline's, its paired bootstrap interval, a p-value, the wins, ties and
losses, and the p-values corrected over every (model, key) row.

The tests, by name (:data:`TESTS`): ``permutation`` (Fisher's paired randomization test) and
``bootstrap`` (the paired bootstrap's p-value) resample the weighted per-sample values
(:mod:`.resampling`, every key at once); ``t`` and ``wilcoxon`` are scipy's, on one key's
unweighted per-sample values.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from polars_rankmetrics.inference import resampling
from polars_rankmetrics.inference.corrections import adjusted
from polars_rankmetrics.inference.samples import means, values, weights
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.registry import MetricKey

TESTS = ("permutation", "bootstrap", "t", "wilcoxon")
COMPARE_COLUMNS = (
    "metric", "value", "baseline_value", "delta", "delta_lo", "delta_hi", "p_value",
    "p_adjusted", "effect_size", "wins", "ties", "losses",
)  # fmt: skip
# Differences are rounded to this many decimals before they are judged: the engines sum in
# parallel, and float noise must not split a tie, or make an equal pair a win (the Wilcoxon
# test drops zeros).
_DECIMALS = 12


@dataclass(frozen=True)
class CompareOptions:
    """The options of one comparison, as :func:`~polars_rankmetrics.compare` takes them
    (checked there): the ``test`` (:data:`TESTS`, or one of :data:`.pairs.MANY_TESTS`), the
    ``correction`` of its p-values (None: none), the test's ``n_resamples``, the ``n_boot``
    replicates and the ``level`` of the delta's interval, the ``seed`` of every draw, and
    ``on_missing``: ``"error"`` refuses a sample that not every model holds, ``"drop"`` leaves
    it out."""

    test: str
    correction: str | None
    n_resamples: int
    n_boot: int
    level: float
    seed: int | None
    on_missing: str = "error"


def baseline_values(baseline: Any, by: Sequence[str]) -> tuple[Any, ...]:
    """The baseline's value of each ``by`` column, in their order: ``baseline`` as a value (one
    column), a tuple or list of one value per column, or a dict naming each column; refused,
    naming the columns and the baseline given, when its shape does not match them."""
    if isinstance(baseline, dict):
        if len(baseline) == len(by) and set(baseline) == set(by):
            return tuple(baseline[b] for b in by)
    elif isinstance(baseline, tuple | list):
        if len(baseline) == len(by):
            return tuple(baseline)
    elif len(by) == 1:
        return (baseline,)
    if len(by) == 1:
        shape = "one value (or a tuple or a dict of one)"
    else:
        shape = (
            f"{len(by)} values, one per column (a tuple or a dict; on the command line, "
            f"--baseline {','.join(['VALUE'] * len(by))})"
        )
    raise ValueError(f"by={list(by)!r} needs a baseline of {shape}, not {baseline!r}")


def typed_baseline(
    values: tuple[Any, ...], by: Sequence[str], types: Sequence[Any]
) -> tuple[Any, ...]:
    """The baseline's ``values`` of the ``by`` columns, each text given for a column of
    integers, floats or booleans (of ``types``) read as the column's type: exactly, as polars
    casts a string (``"0"``, ``"-3"``; ``"0.5"``, ``"1e-3"``), or ``"true"`` and ``"false"``;
    a text that does not read so is refused, naming the column, its type and the text."""
    return tuple(_read(v, b, t) for v, b, t in zip(values, by, types, strict=True))


def _read(value: Any, column: str, dtype: Any) -> Any:
    if not isinstance(value, str):
        return value
    if dtype == pl.Boolean:
        if value in ("true", "false"):
            return value == "true"
        expected = "true or false"
    elif dtype.is_integer() or dtype.is_float():
        try:
            return pl.Series([value], dtype=pl.String).cast(dtype, strict=True)[0]
        except pl.exceptions.InvalidOperationError:
            expected = "an integer such as '0'" if dtype.is_integer() else "a number such as '0.5'"
    else:
        return value
    raise ValueError(
        f"the baseline's {column} is the text {value!r}, which does not read as the type of "
        f"by column {column!r}, {dtype}: give {expected}"
    )


def describe(value: tuple[Any, ...], by: Sequence[str]) -> str:
    """A model's values of the ``by`` columns as an error message names them."""
    return ", ".join(f"{b}={v!r}" for b, v in zip(by, value, strict=True))


def aligned(
    model: pl.DataFrame, base: pl.DataFrame, cols: Columns, names: tuple[str, str], drop: bool
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The rows of the samples both tables hold, in the same (sorted) order; without ``drop``
    a sample of one table only is refused, naming one and the counts. Tables of the same
    samples in the same order (the usual case) are returned as they are."""
    s = cols.sample
    if model[s].equals(base[s]) and model[s].is_sorted():
        return model, base
    only_model = model.join(base.select(s), on=s, how="anti", nulls_equal=True)
    only_base = base.join(model.select(s), on=s, how="anti", nulls_equal=True)
    if not drop and (only_model.height or only_base.height):
        example = (only_model if only_model.height else only_base).sort(s)[s][0]
        where = names[0] if only_model.height else names[1]
        raise ValueError(
            f"{names[0]} and the baseline {names[1]} do not hold the same samples: "
            f"{only_model.height} of {model.height} samples of {names[0]} are not in the "
            f"baseline, {only_base.height} of {base.height} samples of the baseline are not in "
            f"{names[0]} (e.g. {s}={example!r}, of {where}); pass on_missing='drop' to compare "
            "them on the samples they share"
        )
    shared = model.join(base.select(s), on=s, how="semi", nulls_equal=True).sort(s)
    return shared, base.join(shared.select(s), on=s, how="semi", nulls_equal=True).sort(s)


def stacked(
    mine: pl.DataFrame, base: pl.DataFrame, keys: Sequence[MetricKey]
) -> tuple[resampling.Paired, np.ndarray]:
    """The :class:`~.resampling.Paired` table of two models' rows (the same samples in the
    same order), read a column at a time (no other copy of either table), and per model and
    key whether a value is undefined."""
    frames = (mine, base)

    def column(model: int, key: int) -> tuple[np.ndarray, np.ndarray]:
        frame = frames[model]
        return values(frame, keys[key]), weights(frame, keys[key])

    undefined = np.array([[np.isnan(values(f, key)).any() for key in keys] for f in frames])
    return resampling.paired_table(mine.height, len(keys), column), undefined


def _resampled_p_values(
    test: str, table: resampling.Paired, deltas: np.ndarray, n_resamples: int,
    rng: np.random.Generator,
) -> np.ndarray:  # fmt: skip
    """Every key's p-value of the ``permutation`` or ``bootstrap`` test, from one table."""
    if test == "permutation":
        return resampling.sign_flip_p_values(table, n_resamples, rng)
    null = resampling.bootstrap_deltas(table, n_resamples, rng)
    return resampling.bootstrap_p_values(null, deltas)


def _scipy_p_value(test: str, mine: np.ndarray, base: np.ndarray, d: np.ndarray) -> float:
    """One key's p-value of scipy's ``t`` (paired) or ``wilcoxon`` test, from the per-sample
    values both models define and their rounded differences ``d``."""
    # Imported where it is used: scipy is a large import that the other tests never need.
    from scipy import stats  # type: ignore[import-untyped]

    if test == "t":
        return paired_t_p_value(mine - base)
    return float(stats.wilcoxon(d).pvalue) if np.any(d != 0) else 1.0


def paired_t_p_value(d: np.ndarray) -> float:
    """The two-sided p-value of the paired t test (scipy's ``ttest_rel``) of the differences
    ``d``: ``t = mean(d) / (sd(d) / sqrt(n))`` (sd with ddof 1), from Student's t with ``n - 1``
    degrees of freedom. NaN with fewer than two differences or when they are all 0; 0 when
    they are all the same other value (an infinite t). Written out, as scipy computes it:
    scipy's wrapper costs several times the test, which runs once per pair and key."""
    from scipy import special

    n = d.size
    if n < 2:
        return math.nan
    mean = float(np.mean(d))
    var = float(np.sum((d - mean) ** 2)) / (n - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.float64(mean) / np.sqrt(np.float64(var) / n)
    if math.isnan(t):
        return math.nan
    return float(2.0 * special.stdtr(n - 1, -abs(t)))  # Student's t survival function


def check_baseline(
    found: Iterable[tuple[Any, ...]], baseline: tuple[Any, ...], by: Sequence[str]
) -> tuple[Any, ...]:
    """The baseline's values of the ``by`` columns (:func:`baseline_values`), refused unless
    one of ``found`` (the models' values)."""
    models = list(found)
    if baseline not in models:
        names = ", ".join(describe(k, by) for k in models) or "none"
        raise ValueError(
            f"the baseline {describe(baseline, by)} is not a value of the by column(s) "
            f"(found: {names})"
        )
    return baseline


def differences(
    mine: pl.DataFrame, base: pl.DataFrame, key: MetricKey
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One key's per-sample values of two models' rows (the same samples in the same order)
    where both define it, and their differences rounded to :data:`_DECIMALS`."""
    v1, v0 = values(mine, key), values(base, key)
    both = ~(np.isnan(v1) | np.isnan(v0))
    return v1[both], v0[both], np.round(v1[both] - v0[both], _DECIMALS)


def tally(d: np.ndarray, key: MetricKey) -> tuple[int, int, int]:
    """The wins, ties and losses of the per-sample differences ``d`` by the key's
    direction."""
    better = d if key.metric.better == "higher" else -d
    return int(np.sum(better > 0)), int(np.sum(better == 0)), int(np.sum(better < 0))


def result_frame(
    rows: list[dict[str, Any]], by_types: dict[str, Any], correction: str | None
) -> pl.DataFrame:
    """The table of :func:`~polars_rankmetrics.compare` from its rows (the ``by`` values and
    every column of :data:`COMPARE_COLUMNS` but ``p_adjusted``, which the ``correction`` of
    their p-values adds)."""
    p_adjusted = adjusted(np.array([r["p_value"] for r in rows], dtype=np.float64), correction)
    for row, q in zip(rows, p_adjusted, strict=True):
        row["p_adjusted"] = float(q)
    schema: dict[str, Any] = dict(by_types)
    schema |= {"metric": pl.String} | dict.fromkeys(
        (
            "value",
            "baseline_value",
            "delta",
            "delta_lo",
            "delta_hi",
            "p_value",
            "p_adjusted",
            "effect_size",
        ),
        pl.Float64,
    )
    schema |= dict.fromkeys(("wins", "ties", "losses"), pl.Int64)
    frame = pl.DataFrame(rows, schema=schema, orient="row")
    return frame.select(*by_types, *COMPARE_COLUMNS)


def keyed_rows(
    model: tuple[Any, ...], by: Sequence[str], keys: Sequence[MetricKey],
    numbers: Sequence[dict[str, Any]],
) -> list[dict[str, Any]]:  # fmt: skip
    """The result rows of one model: its ``by`` values, the key and the key's ``numbers`` (a
    dict per key, in the keys' order)."""
    return [
        dict(zip(by, model, strict=True)) | {"metric": str(key)} | found
        for key, found in zip(keys, numbers, strict=True)
    ]


def effect_size(d: np.ndarray) -> float:
    """The paired standardized mean difference of per-sample differences ``d``: ``mean(d) /
    sd(d)`` (sd with ddof 1); NaN with fewer than two differences or when they are all equal
    (sd 0: no spread to scale by)."""
    if d.size < 2:
        return math.nan
    sd = float(np.std(d, ddof=1))
    return float(np.mean(d)) / sd if sd > 0 else math.nan


def pair_numbers(
    mine: pl.DataFrame,
    base: pl.DataFrame,
    keys: Sequence[MetricKey],
    *,
    test: str,
    n_resamples: int,
    n_boot: int,
    level: float,
    seed: int,
    stream: tuple[int, ...],
    interval: tuple[np.ndarray, np.ndarray] | None = None,
) -> list[dict[str, Any]]:
    """Per key, the numbers of one pair of models (their rows of the same samples in the same
    order): ``value``, ``baseline_value``, ``delta``, its paired bootstrap interval, the
    ``test``'s ``p_value``, ``effect_size`` (:func:`effect_size`), ``wins``, ``ties`` and
    ``losses``. The draws come from ``seed`` and the pair's ``stream``; ``interval``: the
    delta's bounds per key where the caller drew them (for every pair at once)."""
    table, undefined = stacked(mine, base, keys)
    sums = table.table.sum(axis=0)
    model_values = means(table.model_sums(sums, 0), undefined[0], keys)
    base_values = means(table.model_sums(sums, 1), undefined[1], keys)
    deltas = model_values - base_values
    if interval is None:
        rng = resampling.generator(seed, *stream, 0)
        replicates = resampling.bootstrap_deltas(table, n_boot, rng)
        replicates[:, np.isnan(deltas)] = math.nan
        lo, hi = resampling.percentile_interval(replicates, level)
    else:
        lo, hi = interval
    if test in ("permutation", "bootstrap"):
        rng = resampling.generator(seed, *stream, 1)
        p_values = _resampled_p_values(test, table, deltas, n_resamples, rng)
    del table
    rows: list[dict[str, Any]] = []
    for j, key in enumerate(keys):
        v1, v0, d = differences(mine, base, key)
        wins, ties, losses = tally(d, key)
        if test in ("t", "wilcoxon"):
            p = _scipy_p_value(test, v1, v0, d)
        else:
            p = float(p_values[j])
        rows.append({
            "value": float(model_values[j]), "baseline_value": float(base_values[j]),
            "delta": float(deltas[j]), "delta_lo": float(lo[j]), "delta_hi": float(hi[j]),
            "p_value": p, "effect_size": effect_size(d),
            "wins": wins, "ties": ties, "losses": losses,
        })  # fmt: skip
    return rows


def paired(
    groups: dict[tuple[Any, ...], pl.DataFrame],
    by_types: dict[str, Any],
    cols: Columns,
    keys: Sequence[MetricKey],
    how: CompareOptions,
    *,
    baseline: tuple[Any, ...],
) -> pl.DataFrame:
    """:func:`~polars_rankmetrics.compare` from the per-sample rows of each model (``groups``,
    by their ``by`` values, each sorted by sample) with the keys' weights (``key/w``)."""
    by = list(cols.by)
    base_key = check_baseline(groups, baseline, by)
    rows: list[dict[str, Any]] = []
    base_seed = resampling.entropy(how.seed)
    for m, (model_key, model) in enumerate(groups.items()):
        if model_key == base_key:
            continue
        names = (describe(model_key, by), describe(base_key, by))
        mine, base = aligned(model, groups[base_key], cols, names, how.on_missing == "drop")
        numbers = pair_numbers(
            mine, base, keys, test=how.test, n_resamples=how.n_resamples, n_boot=how.n_boot,
            level=how.level, seed=base_seed, stream=(m,),
        )  # fmt: skip
        rows += keyed_rows(model_key, by, keys, numbers)
    return result_frame(rows, by_types, how.correction)
