"""Additive sums and their means: how per-sample values become one number per group.

Every engine reduces a set of whole samples to one row per group holding, for each metric key,
``key`` = the sum of weight x value and ``key/w`` = the sum of the weights, where the weight is the
sample weight (times the sample's positive count for a metric weighted by positives), and
``key/u`` and ``key/n``, the plain sum and the count of the values. A null value (a 0/0 with
``zero_division`` NaN, lwlrap without positives) adds to none of them. Sums of disjoint sets of
samples add up, so buckets combine by addition; :func:`means` divides.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import polars as pl

from polars_rankmetrics.classification import label_average
from polars_rankmetrics.columns import Columns
from polars_rankmetrics.metrics import Context, MetricKey
from polars_rankmetrics.validation import GROUP

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)


def weight_column(key: MetricKey) -> str:
    return f"{key}/w"


def plain_columns(key: MetricKey) -> tuple[str, str]:
    """The plain sum and the count of a key's non-null values."""
    return f"{key}/u", f"{key}/n"


def _mean(key: MetricKey) -> pl.Expr:
    weighted = pl.col(str(key)) / pl.col(weight_column(key))
    if key.metric.weighting == "positives":
        return weighted
    # Where every value left has weight 0 (the others were 0/0 with zero_division NaN), the plain
    # mean of those values, as scikit-learn's average does.
    plain, count = plain_columns(key)
    return (
        pl.when(pl.col(weight_column(key)) > 0)
        .then(weighted)
        .otherwise(pl.col(plain) / pl.col(count))
    )


def means(sums: Frame, cols: Columns, keys: Sequence[MetricKey]) -> Frame:
    """Weighted means from sums rows (maybe several per group): one row, or one per ``by``
    group, sorted by the ``by`` columns.

    A group without any value for a key (lwlrap without any positive) has NaN (0 / 0).
    """
    by = list(cols.by)
    totals = sums.group_by(by).agg(pl.exclude(by).sum()) if by else sums.select(pl.all().sum())
    values = [_mean(k).cast(pl.Float64).alias(str(k)) for k in keys]
    result = totals.select(*by, *values)
    return result.sort(by) if by else result


def label_means(
    counts: pl.DataFrame, cols: Columns, keys: Sequence[MetricKey], context: Context
) -> pl.DataFrame:
    """The metrics averaged over labels, from per-label counts (maybe several rows per group
    and label: one per bucket): one row, or one per ``by`` group, one column per key."""
    group = list(cols.by) or [GROUP]
    totals = counts.group_by([*group, "label"]).agg(pl.col("tp", "fp", "fn").sum())
    parts = []
    for key in keys:
        kind, average, f1 = key.metric.label_score  # type: ignore[misc]
        value = label_average(
            totals, list(cols.by), kind, average, beta=1.0 if f1 else context.beta,
            zero_division=context.zero_division,
        )  # fmt: skip
        parts.append(value.rename({"value": str(key)}))
    result = parts[0]
    for part in parts[1:]:
        result = result.join(part, on=list(cols.by)) if cols.by else result.hstack(part)
    return result.sort(list(cols.by)) if cols.by else result
