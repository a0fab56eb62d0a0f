"""The SQL engines' row checks: each problem is a 0/1 column of ``rankmetrics_row_flags``
(``sql/08_checks.sql``), counted in one pass, and one flagged row is fetched as the example for
the message.

The problem ids are those columns and the keys of
:func:`polars_rankmetrics.validation.row_problems`; :data:`SQL_PROBLEMS` names the ones the SQL
answers (``rankmetrics_row_checks`` counts every one of them, for SQL alone). An engine counts
only the problems an evaluation can show (:func:`counted_problems`): each flag is an expression
over every row (the 14 take DuckDB 0.13 s at 10M rows, the 8 of an unweighted table scored by a
ranking or threshold metric 0.09 s).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from polars_rankmetrics.columns import Columns
from polars_rankmetrics.metrics import MetricKey
from polars_rankmetrics.validation import row_problems

SQL_PROBLEMS = (
    "null_sample", "null_label", "null_score", "nan_score", "null_truth", "nan_truth",
    "non_binary_truth", "negative_truth", "null_weight", "bad_weight", "null_pred",
    "non_binary_pred", "missing_propensity", "bad_propensity",
)  # fmt: skip


def counted_problems(cols: Columns, keys: Sequence[MetricKey]) -> list[str]:
    """The problems of :data:`SQL_PROBLEMS` that an evaluation of ``keys`` over ``cols`` checks
    (:func:`~polars_rankmetrics.validation.row_problems`: no weight flags without a weight
    column, no propensity flags without a propensity-scored key, no pred flags without a pred
    column), and ``non_binary_truth``, which also tells whether the truth is binary."""
    checked = row_problems(cols, keys)
    return [pid for pid in SQL_PROBLEMS if pid in checked or pid == "non_binary_truth"]


def counts_query(problems: Sequence[str]) -> str:
    """One row: ``n_rows`` and, per problem id, how many rows show it."""
    unknown = sorted(set(problems) - set(SQL_PROBLEMS))
    if unknown:
        raise ValueError(f"{unknown[0]!r} is not a problem of rankmetrics_row_flags")
    counts = "".join(f", sum({pid}) AS {pid}" for pid in problems)
    return f"SELECT count(*) AS n_rows{counts} FROM rankmetrics_row_flags"


def row_examples(
    counts: Mapping[str, object], flagged: Callable[[str], dict[str, object] | None]
) -> dict[str, dict[str, object] | None]:
    """Per problem id counted: an example row (``flagged(problem)``) where the count is above 0,
    else None."""
    return {pid: flagged(pid) if counts[pid] else None for pid in counts}
