"""Per-class lwlrap: the label-by-label breakdown of label-weighted LRAP."""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike
from typing import TypeVar, Unpack

import polars as pl

from polars_rankmetrics.engines.base import get_engine
from polars_rankmetrics.inputs.columns import Columns, RankingColumns, documented
from polars_rankmetrics.report import per_class_lwlrap

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)


@documented(RankingColumns)
def lwlrap_per_class(
    data: Frame,
    *,
    by: str | Sequence[str] | None = None,
    engine: str = "polars",
    memory_limit: str | None = None,
    temp_dir: str | PathLike[str] | None = None,
    **columns: Unpack[RankingColumns],
) -> Frame:
    """lwlrap of each label, with the label's share of the positives.

    For label c, ``lwlrap`` is the (sample-weighted) mean LRAP precision of its positive cells
    and ``weight`` is its share of all positives (weighted), so ``sum(weight * lwlrap)`` over
    the labels is the overall :func:`~polars_rankmetrics.lwlrap`. The numbers are those of
    :func:`~polars_rankmetrics.label_report`'s ``lwlrap`` and ``lwlrap_weight`` columns,
    computed by the same pipeline.

    Parameters
    ----------
    data
        The long table, as for :func:`~polars_rankmetrics.evaluate`.
    by
        Column(s) splitting the table into independent evaluations: one set of rows each.
    engine, memory_limit, temp_dir
        As for :func:`~polars_rankmetrics.evaluate`: any engine, in buckets under a budget.
    **columns

    Returns
    -------
    polars.DataFrame or polars.LazyFrame
        One row per label (per ``by`` group), sorted: the ``by`` columns, the label, ``lwlrap``
        and ``weight``. A label that is never positive (or only in samples of weight 0) has a
        null ``lwlrap`` and weight 0; in a group without any positive every weight is NaN
        (0 / 0) and every ``lwlrap`` null. A LazyFrame for a LazyFrame (evaluated at once), a
        DataFrame for anything else.

    Raises
    ------
    ValueError
        For input lwlrap is not defined on (see :func:`~polars_rankmetrics.evaluate`), or a
        ``by`` column named ``lwlrap`` or ``weight``.

    Examples
    --------
    >>> import polars_rankmetrics as rm
    >>> df = rm.from_dense([[1, 0, 1], [0, 1, 0]], [[0.9, 0.5, 0.2], [0.3, 0.8, 0.1]])
    >>> rm.lwlrap_per_class(df)
    shape: (3, 3)
    ┌───────┬──────────┬──────────┐
    │ label ┆ lwlrap   ┆ weight   │
    │ ---   ┆ ---      ┆ ---      │
    │ i64   ┆ f64      ┆ f64      │
    ╞═══════╪══════════╪══════════╡
    │ 0     ┆ 1.0      ┆ 0.333333 │
    │ 1     ┆ 1.0      ┆ 0.333333 │
    │ 2     ┆ 0.666667 ┆ 0.333333 │
    └───────┴──────────┴──────────┘
    """
    cols = Columns.of(by=by, accepted=RankingColumns, **columns)
    table = per_class_lwlrap(
        get_engine(engine), data, cols, memory_limit=memory_limit, temp_dir=temp_dir
    )
    return table.lazy() if isinstance(data, pl.LazyFrame) else table
