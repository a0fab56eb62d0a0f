"""Additive sums and their means: how per-sample values become one number per group.

Every engine reduces a set of whole samples to one row per group holding, for each metric key,
``key`` = the sum of weight x value and ``key/w`` = the sum of the weights, where the weight is the
sample weight (times the sample's positive count for a metric weighted by positives). A null
value (a 0/0 with ``zero_division`` NaN, lwlrap without positives, ROC AUC of a one-class sample)
adds to neither; ``key/x`` counts the null values of samples with a positive weight, which make
the mean NaN for a metric whose undefined value is NaN (``undefined="nan"``). Sums of disjoint
sets of samples add up, so buckets combine by addition; :func:`means` divides.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import polars as pl

from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.registry import MetricKey

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)


def weight_column(key: MetricKey) -> str:
    return f"{key}/w"


def undefined_column(key: MetricKey) -> str:
    """The count of a key's null values in samples of positive weight."""
    return f"{key}/x"


def _mean(key: MetricKey) -> pl.Expr:
    weighted = pl.col(str(key)) / pl.col(weight_column(key))
    if key.metric.undefined == "nan":
        # scikit-learn: a NaN value makes the mean NaN, unless its sample weighs 0.
        return pl.when(pl.col(undefined_column(key)) > 0).then(float("nan")).otherwise(weighted)
    # Where every value left has weight 0 (the others were 0/0 with zero_division NaN), 0 / 0 is
    # NaN, as scikit-learn gives: it weights each sample's counts, so that a sample of weight 0
    # is a 0/0 too.
    return weighted


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


def undefined_as_nan(per_sample: pl.DataFrame, keys: Sequence[MetricKey]) -> pl.DataFrame:
    """Per-sample output: the null values of the keys whose undefined value is NaN, as NaN."""
    nan_keys = [str(k) for k in keys if k.metric.undefined == "nan"]
    if not nan_keys:
        return per_sample
    return per_sample.with_columns(pl.col(nan_keys).fill_null(float("nan")))
