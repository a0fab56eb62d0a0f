"""The SQL engines' row checks: ``rankmetrics_row_checks`` (``sql/08_checks.sql``) counts each
problem in one pass, and one flagged row of ``rankmetrics_row_flags`` is fetched as the example
for the message.

The problem ids are the columns of those views and the keys of
:func:`polars_rankmetrics.checks.validation.row_problems`; :data:`SQL_PROBLEMS` names the ones the
SQL answers. An engine counts only the problems an evaluation can show (:func:`counted_problems`):
each count is an aggregate over every row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import polars as pl

from polars_rankmetrics.checks.types import ruled_out
from polars_rankmetrics.checks.validation import row_problems
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.registry import MetricKey

SQL_PROBLEMS = (
    "null_sample", "null_label", "null_score", "nan_score", "score_outside_unit", "null_truth",
    "nan_truth",
    "non_binary_truth", "negative_truth", "null_weight", "bad_weight", "null_pred",
    "non_binary_pred", "missing_propensity", "bad_propensity",
)  # fmt: skip


def counted_problems(cols: Columns, keys: Sequence[MetricKey], schema: pl.Schema) -> list[str]:
    """The problems of :data:`SQL_PROBLEMS` that an evaluation of ``keys`` over ``cols`` checks
    (:func:`~polars_rankmetrics.checks.validation.row_problems`: no weight flags without a weight
    column, no propensity flags without a propensity-scored key, no pred flags without a pred
    column), and ``non_binary_truth``, which also tells whether the truth is binary; less those
    the column types of ``schema`` rule out
    (:func:`~polars_rankmetrics.checks.types.ruled_out`: a boolean truth column is binary)."""
    checked, ruled = row_problems(cols, keys), ruled_out(schema, cols)
    return [
        pid for pid in SQL_PROBLEMS
        if (pid in checked or pid == "non_binary_truth") and pid not in ruled
    ]  # fmt: skip


def told(cols: Columns, keys: Sequence[MetricKey]) -> list[str]:
    """The problems :func:`counted_problems` counts only for what they tell, no problem to
    ``keys``: ``non_binary_truth`` where every key takes a graded truth (dcg, ndcg), counted to
    know whether the truth is binary."""
    return [] if "non_binary_truth" in row_problems(cols, keys) else ["non_binary_truth"]


# The problems that are the nulls of one source column, by the Columns field naming it.
_COLUMN_NULLS = {
    "null_sample": "sample", "null_label": "label", "null_truth": "truth", "null_pred": "pred",
}  # fmt: skip


def flagged(problems: Sequence[str]) -> list[str]:
    """The problems of ``problems`` that are counted from the rows' flags
    (``rankmetrics_row_flags``), not from a source column's nulls."""
    return [p for p in problems if p not in _COLUMN_NULLS]


def counts_query(
    problems: Sequence[str], cols: Columns, quote: Callable[[str], str],
    counted: str = "rankmetrics_row_checks",
) -> str:  # fmt: skip
    """One row: ``n_rows`` and, per problem id, how many rows show it. A column's nulls are
    counted over ``rankmetrics_source``'s own column (named by ``cols``, quoted by ``quote``),
    which a file's statistics answer, and the rest (:func:`flagged`) read from ``counted``, one
    row with a column per problem (``rankmetrics_row_checks``, or the same counts computed
    otherwise): through the input view's cast of a boolean truth column DuckDB propagates no
    statistics, and would scan the column for its null count."""
    unknown = sorted(set(problems) - set(SQL_PROBLEMS))
    if unknown:
        raise ValueError(f"{unknown[0]!r} is not a problem of rankmetrics_row_checks")
    nulls = [
        f"count(*) - count({quote(getattr(cols, _COLUMN_NULLS[p]))}) AS {p}"
        for p in problems if p in _COLUMN_NULLS
    ]  # fmt: skip
    source = f"SELECT {', '.join(['count(*) AS n_rows', *nulls])} FROM rankmetrics_source"
    rest = flagged(problems)
    if not rest:
        return source
    return (
        f"SELECT s.*, c.* FROM ({source}) AS s "
        f"CROSS JOIN (SELECT {', '.join(rest)} FROM {counted}) AS c"
    )


def row_examples(
    counts: Mapping[str, object], flagged: Callable[[str], dict[str, object] | None]
) -> dict[str, dict[str, object] | None]:
    """Per problem id of :data:`SQL_PROBLEMS`: an example row (``flagged(problem)``) where its
    count is above 0, else None (also where it was not counted)."""
    return {pid: flagged(pid) if counts.get(pid) else None for pid in SQL_PROBLEMS}
