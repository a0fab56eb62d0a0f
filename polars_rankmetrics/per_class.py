"""Per-class lwlrap: the label-by-label breakdown of label-weighted LRAP."""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike
from typing import TypeVar

import polars as pl

from polars_rankmetrics.engines.base import get_engine
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.report import per_class_lwlrap

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
    engine: str = "polars",
    memory_limit: str | None = None,
    temp_dir: str | PathLike[str] | None = None,
) -> Frame:
    """lwlrap of each label, with the label's share of the positives.

    For label c, ``lwlrap`` is the (sample-weighted) mean LRAP precision of its positive cells and
    ``weight`` is its share of all positives (weighted), so ``sum(weight * lwlrap)`` over the labels
    is the overall :func:`~polars_rankmetrics.lwlrap`. A label that is never positive (or only in
    samples of weight 0) has a null ``lwlrap`` and weight 0; in a group without any positive
    (weighted) every label's weight is NaN (0 / 0) and every ``lwlrap`` null. One row per label
    (per ``by`` group), sorted: a LazyFrame for a LazyFrame, a DataFrame for anything else (a
    DataFrame, another library's frame, Parquet paths). The numbers are those of
    :func:`~polars_rankmetrics.label_report`'s ``lwlrap`` and ``lwlrap_weight`` columns, computed
    by the same pipeline on any ``engine``, in buckets under ``memory_limit``; a LazyFrame is
    evaluated at once and its result returned as a LazyFrame.
    """
    cols = Columns.of(sample=sample, label=label, score=score, truth=truth, weight=weight, by=by)
    table = per_class_lwlrap(
        get_engine(engine), data, cols, memory_limit=memory_limit, temp_dir=temp_dir
    )
    return table.lazy() if isinstance(data, pl.LazyFrame) else table
