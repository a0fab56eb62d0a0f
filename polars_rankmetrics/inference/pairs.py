"""Every pair of models compared, metric by metric, on the samples every model holds.

The pairs are unordered and each is given once: (A, B) with A before B in the models' sorted
order (:func:`.samples.sample_groups`). The paired tests (:data:`.paired.TESTS`) run on each
pair as :func:`.paired.paired` runs them on a model and its baseline, and ``correction`` applies
over every (pair, metric) row; the tests built for many systems (:data:`MANY_TESTS`:
:mod:`.tukey`, :mod:`.randomized_tukey`) read every model at once, are family-wise over the
pairs of one metric by construction, and ``correction`` applies over the metrics only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Any

import numpy as np
import polars as pl

from polars_rankmetrics.inference import randomized_tukey, resampling, tukey
from polars_rankmetrics.inference.corrections import adjusted
from polars_rankmetrics.inference.paired import (
    CompareOptions,
    describe,
    differences,
    pair_numbers,
)
from polars_rankmetrics.inference.samples import arrays, means
from polars_rankmetrics.inference.units import (
    Draws,
    UnitSums,
    check_same_samples,
    check_unit_test,
    compared_units,
    unit_numbers,
    unit_table,
)
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.registry import MetricKey

# The stream of the shared bootstrap draws under the seed (apart from the pairs' streams).
_INTERVAL_STREAM = 1 << 20
# The tests that read every model at once (family-wise over the pairs of one metric).
MANY_TESTS = ("tukey_hsd", "randomized_tukey")
PAIR_COLUMNS = (
    "metric", "value", "other_value", "delta", "delta_lo", "delta_hi", "p_value", "p_adjusted",
    "effect_size", "wins", "ties", "losses",
)  # fmt: skip
_FLOATS = (
    "value", "other_value", "delta", "delta_lo", "delta_hi", "p_value", "p_adjusted",
    "effect_size",
)  # fmt: skip


def other(column: str) -> str:
    """The name of model B's column ``column`` of ``by`` in a table of pairs."""
    return f"{column}_other"


def default_correction(test: str) -> str | None:
    """The correction ``correction="auto"`` stands for: None for the tests of
    :data:`MANY_TESTS` (family-wise over the pairs already), Holm's for the others."""
    return None if test in MANY_TESTS else "holm"


def shared(
    groups: dict[tuple[Any, ...], pl.DataFrame], cols: Columns, drop: bool
) -> dict[tuple[Any, ...], pl.DataFrame]:
    """Each model's rows of the samples every model holds, sorted by sample. Without ``drop``
    a sample that some model lacks is refused, naming it, a model that holds it and one that
    does not. Tables of the same samples in the same order (the usual case) are returned as
    they are."""
    s = cols.sample
    frames = list(groups.values())
    first = frames[0][s]
    if first.is_sorted() and all(f[s].equals(first) for f in frames[1:]):
        return groups
    common = frames[0].select(s)
    for frame in frames[1:]:
        common = common.join(frame.select(s), on=s, how="semi", nulls_equal=True)
    if not drop:
        by = list(cols.by)
        for model, frame in groups.items():
            extra = frame.join(common, on=s, how="anti", nulls_equal=True)
            if not extra.height:
                continue
            example = extra[s].sort()[0]
            lacking = next(
                m for m, f in groups.items() if not f[s].is_in([example], nulls_equal=True).any()
            )
            raise ValueError(
                f"the models do not hold the same samples: {s}={example!r} of "
                f"{describe(model, by)} is missing from {describe(lacking, by)} "
                f"({common.height} samples are shared by all {len(groups)} models); pass "
                "on_missing='drop' to compare them on the samples they share"
            )
    return {
        model: frame.join(common, on=s, how="semi", nulls_equal=True).sort(s)
        for model, frame in groups.items()
    }


def pairs_frame(
    rows: list[dict[str, Any]],
    by_types: dict[str, Any],
    correction: str | None,
    *,
    over_metrics: bool,
) -> pl.DataFrame:
    """The table of pairs from its rows (every column but ``p_adjusted``), which the
    ``correction`` of their p-values adds: over every row, or with ``over_metrics`` over the
    rows of each pair (its metrics) only."""
    p = np.array([r["p_value"] for r in rows], dtype=np.float64)
    if over_metrics:
        q = np.full(len(rows), np.nan)
        pair_of: dict[tuple[Any, ...], list[int]] = {}
        for i, row in enumerate(rows):
            pair = tuple(v for name, v in row.items() if name not in PAIR_COLUMNS)
            pair_of.setdefault(pair, []).append(i)
        for members in pair_of.values():
            q[members] = adjusted(p[members], correction)
    else:
        q = adjusted(p, correction)
    for row, value in zip(rows, q, strict=True):
        row["p_adjusted"] = float(value)
    schema: dict[str, Any] = dict(by_types) | {other(b): t for b, t in by_types.items()}
    schema |= {"metric": pl.String} | dict.fromkeys(_FLOATS, pl.Float64)
    schema |= dict.fromkeys(("wins", "ties", "losses"), pl.Int64)
    frame = pl.DataFrame(rows, schema=schema, orient="row")
    return frame.select(*by_types, *(other(b) for b in by_types), *PAIR_COLUMNS)


def _rows(
    names: list[tuple[Any, ...]], by: Sequence[str], keys: Sequence[MetricKey],
    numbers: Callable[[int, int], Sequence[dict[str, Any]]],
) -> list[dict[str, Any]]:  # fmt: skip
    """The rows of every pair (i, j), i before j, of the models ``names`` and key: both
    models' ``by`` values, the key, and the key's numbers of ``numbers(i, j)`` (a dict per key,
    in the keys' order; ``baseline_value`` is named ``other_value``)."""
    rows = []
    for i, j in combinations(range(len(names)), 2):
        named = dict(zip(by, names[i], strict=True)) | {
            other(c): v for c, v in zip(by, names[j], strict=True)
        }
        for key, found in zip(keys, numbers(i, j), strict=True):
            rows.append(named | {"metric": str(key)} | {
                ("other_value" if n == "baseline_value" else n): v for n, v in found.items()
            })  # fmt: skip
    return rows


def _many_frame(
    found: tukey.PairNumbers, names: list[tuple[Any, ...]], by: Sequence[str],
    keys: Sequence[MetricKey], by_types: dict[str, Any], correction: str | None,
) -> pl.DataFrame:  # fmt: skip
    """The table of pairs of a test of :data:`MANY_TESTS` from its numbers (``found``), its
    ``correction`` over each pair's metrics."""
    rows = _rows(names, by, keys, lambda i, j: [found[names[i], names[j], key] for key in keys])
    return pairs_frame(rows, by_types, correction, over_metrics=True)


def _check_models(groups: dict[tuple[Any, ...], pl.DataFrame], by: Sequence[str]) -> None:
    """``groups``, refused unless they hold two models at least."""
    if len(groups) < 2:
        raise ValueError(
            f"comparing all pairs needs at least two models (values of by={list(by)!r}); "
            f"found {len(groups)}"
        )


def shared_intervals(
    frames: list[pl.DataFrame], keys: Sequence[MetricKey], n_boot: int, level: float, seed: int
) -> dict[tuple[int, int], tuple[np.ndarray, np.ndarray]]:
    """Per pair of models (by index, A before B), each key's paired bootstrap interval of the
    delta, from one set of ``n_boot`` resamples of the shared samples for every pair (drawn
    from ``seed``): each resample's model means are one product of its counts with every
    model's weighted values and weights, and a pair's delta their difference."""
    k = len(keys)
    columns = [arrays(frame, keys) for frame in frames]
    undefined = [np.isnan(v).any(axis=0) for v, _ in columns]
    table = np.concatenate(
        [np.concatenate([np.where(np.isnan(v), 0.0, w * np.nan_to_num(v)),
                         np.where(np.isnan(v), 0.0, w)], axis=1) for v, w in columns],
        axis=1,
    )  # fmt: skip
    rng = resampling.generator(seed, _INTERVAL_STREAM)
    blocks = [c @ table for c in resampling.bootstrap_counts(table.shape[0], n_boot, rng)]
    sums = np.concatenate(blocks) if blocks else np.empty((0, table.shape[1]))
    sums = sums.reshape(sums.shape[0], len(frames), 2 * k)
    estimate = np.stack([means(table[:, 2 * k * m : 2 * k * (m + 1)].sum(axis=0), undefined[m],
                               keys) for m in range(len(frames))])  # fmt: skip
    with np.errstate(invalid="ignore", divide="ignore"):
        replicates = sums[..., :k] / sums[..., k:]
    out = {}
    for i, j in combinations(range(len(frames)), 2):
        deltas = replicates[:, i] - replicates[:, j]
        deltas[:, np.isnan(estimate[i] - estimate[j])] = np.nan
        out[i, j] = resampling.percentile_interval(deltas, level)
    return out


def all_pairs(
    groups: dict[tuple[Any, ...], pl.DataFrame],
    by_types: dict[str, Any],
    cols: Columns,
    keys: Sequence[MetricKey],
    how: CompareOptions,
    *,
    by_units: bool = False,
) -> pl.DataFrame:
    """:func:`~polars_rankmetrics.compare` with ``baseline=None`` from the per-sample rows of
    each model (``groups``, by their ``by`` values in sorted order, each sorted by sample):
    every pair (A, B), A before B, and metric. ``by_units``: the draws of
    :func:`.units.paired_by_units` (``bootstrap="poisson"``)."""
    by = list(cols.by)
    _check_models(groups, by)
    models = shared(groups, cols, how.on_missing == "drop")
    names = list(models)
    if how.test in MANY_TESTS:
        many = tukey.tukey_hsd if how.test == "tukey_hsd" else randomized_tukey.randomized_tukey
        found = many(
            models, keys, n_resamples=how.n_resamples, level=how.level, seed=how.seed,
            sample=cols.sample, by_units=by_units,
        )  # fmt: skip
        return _many_frame(found, names, by, keys, by_types, how.correction)
    frames = list(models.values())
    if by_units:
        check_unit_test(how.test)
        draws = Draws.of(how)
        unit_sums = [UnitSums.of(unit_table(f, cols.sample, keys), keys) for f in frames]

        def numbers(i: int, j: int) -> list[dict[str, Any]]:
            found = compared_units(unit_sums[i], unit_sums[j], keys, draws, how.level)
            diffs = [differences(frames[i], frames[j], key)[2] for key in keys]
            return unit_numbers(found, keys, diffs)

    else:
        base_seed = resampling.entropy(how.seed)
        intervals = shared_intervals(frames, keys, how.n_boot, how.level, base_seed)

        def numbers(i: int, j: int) -> list[dict[str, Any]]:
            return pair_numbers(
                frames[i], frames[j], keys, test=how.test, n_resamples=how.n_resamples,
                n_boot=how.n_boot, level=how.level, seed=base_seed, stream=(i, j),
                interval=intervals[i, j],
            )  # fmt: skip

    rows = _rows(names, by, keys, numbers)
    return pairs_frame(rows, by_types, how.correction, over_metrics=False)


def unit_pairs(
    groups: dict[tuple[Any, ...], pl.DataFrame],
    by_types: dict[str, Any],
    cols: Columns,
    keys: Sequence[MetricKey],
    how: CompareOptions,
) -> pl.DataFrame:
    """:func:`all_pairs` from each model's unit table (``groups``: ``dict`` of
    :func:`.units.unit_groups`, from states): the draws move whole units; effect sizes,
    wins, ties and losses null (unit tables hold no sample). Every model must hold the same
    samples: a unit whose sample counts differ between two models is refused."""
    by = list(cols.by)
    _check_models(groups, by)
    names = list(groups)
    sums = [UnitSums.of(groups[n], keys) for n in names]
    for n, s in zip(names[1:], sums[1:], strict=True):
        check_same_samples(
            s, sums[0], f"{describe(n, by)} and {describe(names[0], by)}",
            "comparing all pairs by units needs the same samples in every model",
        )  # fmt: skip
    if how.test in MANY_TESTS:
        if how.test == "tukey_hsd":
            raise ValueError(
                "test='tukey_hsd' reads the per-sample values (its residual variance), which "
                "states do not hold: use test='randomized_tukey', which moves whole units"
            )
        found = randomized_tukey.by_unit_sums(
            dict(zip(names, sums, strict=True)), keys, n_resamples=how.n_resamples, level=how.level,
            seed=how.seed,
        )  # fmt: skip
        return _many_frame(found, names, by, keys, by_types, how.correction)
    check_unit_test(how.test)
    draws = Draws.of(how)

    def numbers(i: int, j: int) -> list[dict[str, Any]]:
        return unit_numbers(compared_units(sums[i], sums[j], keys, draws, how.level), keys, None)

    rows = _rows(names, by, keys, numbers)
    return pairs_frame(rows, by_types, how.correction, over_metrics=False)
