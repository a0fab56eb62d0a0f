"""Frame functions named as in scikit-learn: DataFrame in, DataFrame out (LazyFrame in, LazyFrame
out), so they chain with ``.pipe()``. Any other dataframe (pandas, pyarrow, a DuckDB relation,
see :mod:`polars_rankmetrics.inputs.sources`) or Parquet path in: a Polars DataFrame out.

Each returns one row with the metric; one row per group with ``by=``; or one row per sample (with
the ``by`` and sample columns) with ``per_sample=True``. The value column is named by the metric key
(``lrap``, ``ndcg@5``, ...). The input is validated first, eagerly: for a LazyFrame that runs
three queries over it (the row checks, the label sets, the per-sample checks) before the lazy
result is returned.

They run the driver's checks (:func:`~polars_rankmetrics.engines.driver.check_all`) and the
Polars engine's per-sample plan, not the driver's buckets: their contract is a LazyFrame for a
LazyFrame, a query the caller composes and collects, which the bucket driver (it collects
every piece) cannot return. For a table larger than memory, call
:func:`~polars_rankmetrics.evaluate` with ``memory_limit``: the same numbers, in buckets.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar, Unpack, cast

import polars as pl

from polars_rankmetrics.checks.validation import check_result_names
from polars_rankmetrics.engines.driver import check_all, inside_names
from polars_rankmetrics.engines.polars import PolarsSession, lazy_inside, lazy_result
from polars_rankmetrics.inputs.columns import Columns, RankingColumns, documented
from polars_rankmetrics.metrics.parameters import check_log_base
from polars_rankmetrics.metrics.registry import MetricKey

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)
F = TypeVar("F", bound=Callable[..., object])

# The part of the frame functions' docstrings they share (numpydoc), added by _documented.
_SHARED_DOC = """
    Parameters
    ----------
    data
        The long table, one row per (sample, label): a polars DataFrame or LazyFrame, another
        library's dataframe (pandas, pyarrow, a DuckDB relation: see
        :mod:`polars_rankmetrics.inputs.sources`), or paths of Parquet, CSV or NDJSON files.
    by
        Column(s) splitting the table into independent evaluations: one result row each.
    per_sample
        One row per sample (the ``by`` and sample columns, then the value) instead of the
        mean.{extra}
    **columns

    Returns
    -------
    polars.DataFrame or polars.LazyFrame
        A LazyFrame for a LazyFrame (checked at once, computed when collected), a DataFrame for
        anything else: one row, or one per ``by`` group (sorted), or one per sample, with the
        value in the column ``{column}``.

    Raises
    ------
    ValueError
        For input the metric is not defined on (see :func:`~polars_rankmetrics.evaluate`).

    Examples
    --------
    >>> import polars_rankmetrics as rm
    >>> df = rm.from_dense([[1, 0, 0], [0, 0, 1]], [[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]])
    >>> df.pipe(rm.{name}{call}).item()
    {value}
"""
_K_DOC = """
    k
        Cut the ranking after the k-th position (None: the whole ranking)."""
_LOG_BASE_DOC = """
    log_base
        Base of the logarithm of the discount, > 1."""


def _documented(
    column: str, value: str, call: str = "", extra: str = "", *, sklearn: bool = True
) -> Callable[[F], F]:
    """Add the shared part of the docstring; refuse scikit-learn's call (:func:`_one_table`;
    ``sklearn``: :mod:`polars_rankmetrics.sklearn` has the function)."""

    def add(function: F) -> F:
        function.__doc__ = (function.__doc__ or "") + _SHARED_DOC.format(
            name=function.__name__, column=column, value=value, call=call, extra=extra
        )
        return _one_table(documented(RankingColumns)(function), sklearn)

    return add


def _one_table(function: F, sklearn: bool) -> F:
    """``function``, refusing scikit-learn's call ``function(y_true, y_score)`` with a
    ``TypeError`` that says which call takes matrices: the frame functions share scikit-learn's
    names but take one long table."""
    name = function.__name__
    calls = f"rm.{name}(rm.from_dense(y_true, y_score))"
    if sklearn:
        calls = f"polars_rankmetrics.sklearn.{name}(y_true, y_score), or " + calls
    message = (
        f"{name}() takes one long table (one row per sample and label), not scikit-learn's "
        f"(y_true, y_score): for matrices call {calls}"
    )

    @functools.wraps(function)
    def call(*data: Any, **options: Any) -> Any:
        if len(data) > 1 or "y_true" in options or "y_score" in options:
            raise TypeError(message)
        return function(*data, **options)

    return cast(F, call)


def _frame_metric(
    data: Frame,
    key: MetricKey,
    *,
    by: str | Sequence[str] | None,
    per_sample: bool,
    log_base: float = 2,
    columns: RankingColumns,
) -> Frame:
    check_log_base(log_base)
    cols = Columns.of(by=by, accepted=RankingColumns, **columns)
    check_result_names(cols, [str(key)])
    with inside_names(cols) as cols:
        lf = lazy_inside(data, cols)
        checked = check_all(PolarsSession(lf, cols), cols, [key])
    context = replace(checked, log_base=log_base)
    lazy = cols.restored(lazy_result(lf, cols, [key], context, per_sample_output=per_sample))
    return lazy if isinstance(data, pl.LazyFrame) else lazy.collect()


@_documented("coverage_error", "2.5")
def coverage_error(
    data: Frame,
    *,
    by: str | Sequence[str] | None = None,
    per_sample: bool = False,
    **columns: Unpack[RankingColumns],
) -> Frame:
    """Coverage error: how far down the ranking one must go to cover every true label.

    Per sample, the largest rank of a positive label (ties take the largest rank); 0 for a sample
    without positives, L for one whose labels are all positive. The mean over samples (weighted by
    ``weight``). Lower is better. Column ``coverage_error``. Matches scikit-learn's
    ``coverage_error``.
    """
    return _frame_metric(
        data, MetricKey("coverage_error"), by=by, per_sample=per_sample,
        columns=columns,
    )  # fmt: skip


@_documented("lrap", "0.41666666666666663")
def label_ranking_average_precision_score(
    data: Frame,
    *,
    by: str | Sequence[str] | None = None,
    per_sample: bool = False,
    **columns: Unpack[RankingColumns],
) -> Frame:
    """Label ranking average precision (LRAP), column ``lrap``.

    Per sample, the mean over positive labels j of the share of positives among the labels scored
    at or above j (ties count pessimistically). 1 for a sample whose labels are all negative or all
    positive. Higher is better. Matches scikit-learn's ``label_ranking_average_precision_score``.
    """
    return _frame_metric(
        data, MetricKey("lrap"), by=by, per_sample=per_sample,
        columns=columns,
    )  # fmt: skip


@_documented("ranking_loss", "0.75")
def label_ranking_loss(
    data: Frame,
    *,
    by: str | Sequence[str] | None = None,
    per_sample: bool = False,
    **columns: Unpack[RankingColumns],
) -> Frame:
    """Ranking loss, column ``ranking_loss``.

    Per sample, the share of (positive, negative) label pairs where the positive scores lower than
    or equal to the negative (a tie is an error). 0 for a sample whose labels are all negative or
    all positive. Lower is better. Matches scikit-learn's ``label_ranking_loss``.
    """
    return _frame_metric(
        data, MetricKey("ranking_loss"), by=by, per_sample=per_sample,
        columns=columns,
    )  # fmt: skip


@_documented("lwlrap", "0.41666666666666663", sklearn=False)
def lwlrap(
    data: Frame,
    *,
    by: str | Sequence[str] | None = None,
    per_sample: bool = False,
    **columns: Unpack[RankingColumns],
) -> Frame:
    """Label-weighted LRAP (Freesound Audio Tagging 2019), column ``lwlrap``.

    Every positive (sample, label) scores its LRAP precision; lwlrap is the mean over all positives,
    which equals scikit-learn's LRAP with ``sample_weight = n_positives`` (times ``weight``).
    Ties count pessimistically, unlike the competition's reference notebook, which breaks them by
    sort order. Samples without positives carry no weight (per sample: null); a table without any
    positive has no lwlrap (NaN). See :func:`lwlrap_per_class` for the breakdown by label.
    """
    return _frame_metric(
        data, MetricKey("lwlrap"), by=by, per_sample=per_sample,
        columns=columns,
    )  # fmt: skip


@_documented("dcg`` or ``dcg@k", "0.31546487678572877", ", k=2", _K_DOC + _LOG_BASE_DOC)
def dcg_score(
    data: Frame,
    *,
    k: int | None = None,
    log_base: float = 2,
    by: str | Sequence[str] | None = None,
    per_sample: bool = False,
    **columns: Unpack[RankingColumns],
) -> Frame:
    """Discounted cumulative gain, column ``dcg`` or ``dcg@k``.

    Per sample, ``sum over positions r <= k of gain_r / log_base(r + 1)`` with truth as the gain
    (graded, non-negative). Tied scores are averaged over all their orders (scikit-learn's default
    ``ignore_ties=False``), also when a tied block straddles k. ``k`` beyond the number of labels
    means no cut. 0 for a sample without gain. Matches scikit-learn's ``dcg_score``.
    """
    return _frame_metric(
        data, MetricKey("dcg", k), by=by, per_sample=per_sample, log_base=log_base,
        columns=columns,
    )  # fmt: skip


@_documented("ndcg`` or ``ndcg@k", "0.31546487678572877", ", k=2", _K_DOC)
def ndcg_score(
    data: Frame,
    *,
    k: int | None = None,
    by: str | Sequence[str] | None = None,
    per_sample: bool = False,
    **columns: Unpack[RankingColumns],
) -> Frame:
    """Normalized DCG, column ``ndcg`` or ``ndcg@k``.

    Per sample, tie-averaged dcg@k divided by the ideal dcg@k (truth ranked by itself); 0 when the
    ideal is 0. In [0, 1], higher is better. Needs at least two labels and non-negative truth
    (``ValueError`` otherwise, as in scikit-learn's ``ndcg_score``, which it matches).
    """
    return _frame_metric(
        data, MetricKey("ndcg", k), by=by, per_sample=per_sample,
        columns=columns,
    )  # fmt: skip
