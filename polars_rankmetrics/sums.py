"""Additive sums and their means: how per-sample values become one number per group.

Every engine reduces a set of whole samples to one row per group holding, for each metric key,
``key`` = the sum of weight x value and ``key/w`` = the sum of the weights, where the weight is the
sample weight (times the sample's positive count for a metric weighted by positives). Sums of
disjoint sets of samples add up, so buckets combine by addition; :func:`means` divides.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import polars as pl

from polars_rankmetrics.columns import Columns
from polars_rankmetrics.metrics import MetricKey

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)


def weight_column(key: MetricKey) -> str:
    return f"{key}/w"


def means(sums: Frame, cols: Columns, keys: Sequence[MetricKey]) -> Frame:
    """Weighted means from sums rows (maybe several per group): one row, or one per ``by``
    group, sorted by the ``by`` columns.

    A group whose weights sum to 0 for a key (lwlrap without any positive) has NaN (0 / 0).
    """
    by = list(cols.by)
    totals = sums.group_by(by).agg(pl.exclude(by).sum()) if by else sums.select(pl.all().sum())
    values = [(pl.col(str(k)) / pl.col(weight_column(k))).alias(str(k)) for k in keys]
    result = totals.select(*by, *values)
    return result.sort(by) if by else result
