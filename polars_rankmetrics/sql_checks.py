"""The SQL engines' row checks: ``rankmetrics_row_checks`` counts each problem, and one flagged row
of ``rankmetrics_row_flags`` is fetched as the example for the message.

The problem ids are the columns of those views (``sql/08_checks.sql``) and the keys of
:func:`polars_rankmetrics.validation.row_problems`; :data:`SQL_PROBLEMS` names the ones the SQL
answers, and a view that answers another set is refused here, so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

SQL_PROBLEMS = (
    "null_sample", "null_label", "null_score", "nan_score", "null_truth", "nan_truth",
    "non_binary_truth", "negative_truth", "null_weight", "bad_weight", "null_pred",
    "non_binary_pred", "missing_propensity", "bad_propensity",
)  # fmt: skip


def row_examples(
    counts: Mapping[str, object], flagged: Callable[[str], dict[str, object] | None]
) -> dict[str, dict[str, object] | None]:
    """Per problem id: an example row (``flagged(problem)``) where the count is above 0, else
    None. Raises ``RuntimeError`` when the view's columns are not exactly :data:`SQL_PROBLEMS`."""
    if set(counts) != set(SQL_PROBLEMS):
        raise RuntimeError(
            f"rankmetrics_row_checks answers {sorted(counts)}, expected {sorted(SQL_PROBLEMS)}"
        )
    return {pid: flagged(pid) if counts[pid] else None for pid in SQL_PROBLEMS}
