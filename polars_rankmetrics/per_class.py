"""Per-class lwlrap: the label-by-label breakdown of label-weighted LRAP."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import polars as pl

from polars_rankmetrics.checks.validation import check_result_names
from polars_rankmetrics.engines.driver import check_all, inside_names
from polars_rankmetrics.engines.polars import PolarsSession, lazy_inside
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.ranking import label_precision
from polars_rankmetrics.metrics.ranks import window_ranks
from polars_rankmetrics.metrics.registry import MetricKey

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)


def lwlrap_per_class(
    data: Frame,
    *,
    by: str | Sequence[str] | None = None,
    weight: str | None = None,
    sample: str = "sample",
    label: str = "label",
    score: str = "score",
    truth: str = "truth",
) -> Frame:
    """lwlrap of each label, with the label's share of the positives.

    For label c, ``lwlrap`` is the (sample-weighted) mean LRAP precision of its positive cells and
    ``weight`` is its share of all positives (weighted), so ``sum(weight * lwlrap)`` over the labels
    is the overall :func:`~polars_rankmetrics.lwlrap`. A label that is never positive (or only in
    samples of weight 0) has a null ``lwlrap`` and weight 0; in a group without any positive
    (weighted) every label's weight is NaN (0 / 0) and every ``lwlrap`` null. One row per label
    (per ``by`` group), sorted: a LazyFrame for a LazyFrame, a DataFrame for anything else (a
    DataFrame, another library's frame, Parquet paths).
    """
    cols: Columns = Columns.of(
        sample=sample, label=label, score=score, truth=truth, weight=weight, by=by
    )
    check_result_names(cols, ["lwlrap", "weight"])
    with inside_names(cols) as cols:
        lf = lazy_inside(data, cols)
        check_all(PolarsSession(lf, cols), cols, [MetricKey("lwlrap")])
    w = pl.col(weight).cast(pl.Float64) if weight else pl.lit(1.0)
    label_keys = [*cols.by, label]
    per_label = (
        window_ranks(lf, sample=cols.sample_keys, score=score, truth=truth)
        .with_columns(label_precision(truth).alias("__precision"), w.alias("__w"))
        .filter(pl.col(truth) > 0)
        .group_by(label_keys)
        .agg(
            pl.when(pl.col("__w").sum() > 0)
            .then((pl.col("__precision") * pl.col("__w")).sum() / pl.col("__w").sum())
            .alias("lwlrap"),
            pl.col("__w").sum().alias("__positives"),
        )
    )
    share = pl.col("__positives") / pl.col("__positives").sum()
    if cols.by:
        share = share.over(list(cols.by))
    result = (
        lf.select(label_keys)
        .unique()
        .join(per_label, on=label_keys, how="left", nulls_equal=True)
        .with_columns(pl.col("__positives").fill_null(0.0))
        .with_columns(share.alias("weight"))
        .drop("__positives")
        .sort(label_keys)
    )
    result = cols.restored(result)
    return result if isinstance(data, pl.LazyFrame) else result.collect()
