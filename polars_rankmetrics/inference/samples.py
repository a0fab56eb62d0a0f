"""The per-sample table the statistics read, and the keys it holds.

An engine computes, in one pass over the data (whole, or in buckets under a memory budget), one
row per sample: each key's value and its weight in the mean (``key/w``). Here that table is held
once per ``by`` group, sorted by sample, and reduced to the keys' weighted means.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from polars_rankmetrics.inference import resampling
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.registry import COUNT_KEYS, MetricKey
from polars_rankmetrics.metrics.sums import undefined_as_nan, weight_column

# The _micro averages that are ratios of sums over samples (of the counts of COUNT_KEYS); the
# curve ones (average_precision_micro, roc_auc_micro) are not.
MICRO = {
    "precision_micro": "precision", "recall_micro": "recall", "f1_micro": "f1",
    "fbeta_micro": "fbeta", "jaccard_micro": "jaccard",
}  # fmt: skip

Groups = list[tuple[tuple[Any, ...], pl.DataFrame]]


def supported_keys(keys: Sequence[MetricKey], *, micro: bool = False) -> None:
    """Every key is a weighted mean over samples (what resampling samples estimates), or, with
    ``micro``, a ratio of sums over samples (the threshold ``_micro`` averages)."""
    for key in keys:
        if key.metric.reduction != "samples" and not (micro and key.name in MICRO):
            supported = "the ranking and retrieval keys, the _samples averages, hamming_loss, "
            supported += "subset_accuracy, zero_one_loss"
            if micro:
                supported += ", and " + ", ".join(MICRO)
            raise ValueError(
                f"{key} is computed over labels, not as a mean over samples: it has no "
                f"{'interval' if micro else 'paired test'} here; supported: {supported}"
            )


def per_sample_keys(keys: Sequence[MetricKey]) -> list[MetricKey]:
    """The per-sample columns an interval of ``keys`` reads: the keys averaged over samples,
    and the counts when a _micro average is asked for."""
    columns = [k for k in keys if k.metric.reduction == "samples"]
    if any(k.name in MICRO for k in keys):
        columns += [MetricKey(name) for name in COUNT_KEYS if MetricKey(name) not in columns]
    return columns


def sample_groups(
    pieces: list[pl.DataFrame], cols: Columns, keys: Sequence[MetricKey]
) -> tuple[Groups, dict[str, Any]]:
    """Each ``by`` group's per-sample rows (``pieces``: the driver's, a frame per group sorted
    by sample, undefined values as NaN), groups in order: the table resampling reads, held
    once."""
    by_types = {b: pieces[0].schema[b] for b in cols.by}
    groups = []
    while pieces:
        rows = undefined_as_nan(pieces.pop(0), keys)
        groups.append((rows.select(cols.by).row(0) if cols.by else (), rows))
    groups.sort(key=lambda group: [(v is None, v) for v in group[0]])
    return groups, by_types


def arrays(frame: pl.DataFrame, keys: Sequence[MetricKey]) -> tuple[np.ndarray, np.ndarray]:
    """Samples x keys: the per-sample values (NaN where undefined) and their weights."""
    names = [str(k) for k in keys]
    values = frame.select(pl.col(names).cast(pl.Float64).fill_null(float("nan"))).to_numpy()
    weights = frame.select(
        pl.col([weight_column(k) for k in keys]).cast(pl.Float64).fill_null(0.0)
    ).to_numpy()
    return values.reshape(frame.height, len(keys)), weights.reshape(frame.height, len(keys))


def values(frame: pl.DataFrame, key: MetricKey) -> np.ndarray:
    """One key's per-sample values (NaN where undefined)."""
    return _floats(frame.get_column(str(key)), float("nan"))


def weights(frame: pl.DataFrame, key: MetricKey) -> np.ndarray:
    """One key's per-sample weights in the mean (0 where the value is undefined)."""
    return _floats(frame.get_column(weight_column(key)), 0.0)


def _floats(column: pl.Series, missing: float) -> np.ndarray:
    """``column`` as float64, nulls as ``missing``: the cast and the fill only where needed
    (each is a query of its own, and the pairs of many models read a column many times)."""
    if column.dtype != pl.Float64:
        column = column.cast(pl.Float64)
    if column.null_count():
        column = column.fill_null(missing)
    return column.to_numpy()


def means(sums: np.ndarray, undefined: np.ndarray, keys: Sequence[MetricKey]) -> np.ndarray:
    """Each key's weighted mean from its sums of weighted values and of weights; NaN for a key
    whose undefined sample value makes it NaN."""
    k = len(keys)
    with np.errstate(invalid="ignore", divide="ignore"):
        found = np.where(sums[k:] > 0, sums[:k] / sums[k:], math.nan)
    for j, key in enumerate(keys):
        if key.metric.undefined == "nan" and undefined[j]:
            found[j] = math.nan
    return found


def array_means(values: np.ndarray, weights: np.ndarray, keys: Sequence[MetricKey]) -> np.ndarray:
    """:func:`means` of per-sample ``values`` and their ``weights`` (samples x keys)."""
    sums = resampling.weighted_sums(values, weights)
    return means(sums, np.isnan(values).any(axis=0), keys)


def frame_means(frame: pl.DataFrame, keys: Sequence[MetricKey]) -> np.ndarray:
    """:func:`means` of a per-sample table's rows (each key's value and weight, ``key/w``),
    summed by Polars: no array copy of the table."""
    sums, undefined = [], []
    for key in keys:
        value = pl.col(str(key)).cast(pl.Float64)
        defined = value.is_not_null() & value.is_not_nan()
        weight = pl.when(defined).then(pl.col(weight_column(key)).cast(pl.Float64)).otherwise(0.0)
        sums += [(weight * value.fill_nan(0.0)).sum().alias(f"{key}/v"), weight.sum()]
        undefined.append((~defined).any().alias(f"{key}/x"))
    found = frame.select(*sums, *undefined).row(0)
    k = len(keys)
    weighted, weights = found[0 : 2 * k : 2], found[1 : 2 * k : 2]
    return means(np.array(weighted + weights), np.array(found[2 * k :]), keys)
