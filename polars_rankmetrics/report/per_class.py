"""Per-class lwlrap: the label-by-label breakdown of label-weighted LRAP."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar, Unpack

import polars as pl

from polars_rankmetrics.checks import validation
from polars_rankmetrics.engines import driver
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.label_averages import LABEL, combine, label_scores
from polars_rankmetrics.metrics.registry import Context, MetricKey
from polars_rankmetrics.options import RankingOptions, Run, documented
from polars_rankmetrics.report.labels import with_lwlrap
from polars_rankmetrics.states import is_state, merge

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)


@documented(RankingOptions)
def lwlrap_per_class(
    data: Frame,
    *,
    by: str | Sequence[str] | None = None,
    **options: Unpack[RankingOptions],
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
        The long table, as for :func:`~polars_rankmetrics.evaluate`; or states of
        :func:`~polars_rankmetrics.state` kept with ``per_label=True``, as
        :func:`~polars_rankmetrics.finalize` takes them.
    by
        Column(s) splitting the table into independent evaluations: one set of rows each.
    **options

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
    if is_state(data):
        merged = merge(data, by, options=options)
        merged.require("lwlrap_per_class", per_label=True)
        validation.check_result_names(merged.cols.in_source(), ["lwlrap", "weight"])
        table = _per_class(merged.tables, merged.cols)
    else:
        run, cols = Run.of(options, by=by, accepted=RankingOptions)
        table = per_class_lwlrap(run, data, cols)
    return table.lazy() if isinstance(data, pl.LazyFrame) else table


def per_class_lwlrap(run: Run, data: Any, cols: Columns) -> pl.DataFrame:
    """:func:`lwlrap_per_class` in ``run``: from the label counts (for the support) and the
    label precisions of :func:`.driver.collect`."""
    validation.check_result_names(cols, ["lwlrap", "weight"])
    with driver.inside_names(cols) as inner:
        collected, _ = run.collect(
            data, inner, [MetricKey("lwlrap")], ["labels", "precisions"], parameters=Context()
        )
    return _per_class(collected, inner)


def _per_class(collected: dict[str, list[pl.DataFrame]], cols: Columns) -> pl.DataFrame:
    """The per-class table from the label counts and label precisions (``cols`` with the
    ``by`` columns under their inside names, as the tables have them)."""
    group = list(cols.by) or [validation.GROUP]
    keys = [*group, LABEL]
    counts = label_scores(combine(collected["labels"], keys), [], zero_division=0.0)
    table = with_lwlrap(counts, combine(collected["precisions"], keys), keys, group)
    table = table.select(
        *cols.by, pl.col(LABEL).alias(cols.label), "lwlrap",
        pl.col("lwlrap_weight").alias("weight"),
    )  # fmt: skip
    return cols.restored(table.sort([*cols.by, cols.label]))
