"""What every SQL engine's session shares: the queries of the session interface over the views of
``sql/``, and turning their rows into the engines' common frames.

A subclass connects: it defines ``rankmetrics_source`` (the user's table), and answers
:meth:`SQLSession._fetch` (a query's rows as a Polars frame), :meth:`SQLSession._execute` (a
statement run) and :meth:`SQLSession._source_type` (a source column's SQL type). The session
defines the other views itself (:func:`setup_statements`: the input and cut-off views, then the
views of ``sql/``, all in its dialect and temporary) before its first query that reads them: an
engine binds a view as it defines it, and the driver checks the source's columns first
(:func:`~polars_rankmetrics.checks.types.check_schema`), so that a missing column is
refused by name, as on every engine. The views only the metrics read are defined after the
checks' queries, before the first of the metrics': a table the checks refuse costs none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import Any

import polars as pl

from polars_rankmetrics.checks import validation
from polars_rankmetrics.engines.base import Settings
from polars_rankmetrics.engines.memory import row_bytes
from polars_rankmetrics.engines.sql import checks as sql_checks
from polars_rankmetrics.engines.sql import results as sql_results
from polars_rankmetrics.engines.sql.export import (
    input_statements,
    named_view_statements,
    quote,
    views_read,
)
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.label_averages import topk_label_columns
from polars_rankmetrics.metrics.registry import Context, MetricKey
from polars_rankmetrics.metrics.retrieval import PROPENSITY


def setup_statements(
    cols: Columns, dialect: str, settings: Settings, schema: pl.Schema
) -> tuple[list[str], list[str]]:
    """The temporary views over ``rankmetrics_source`` (of ``schema``) that an evaluation with
    ``settings`` (its keys, their parameters, its tables) reads, in two steps: the input and
    cut-off views (:func:`input_views`) with the views of ``sql/`` the checks read, then the
    other views of ``sql/`` its queries read (:func:`defined_views`)."""
    checks = views_read(_CHECK_VIEWS)
    named = named_view_statements(dialect, temporary=True, views=defined_views(settings))
    first = [statement for view, statement in named if view in checks]
    return [*input_views(cols, dialect, settings, schema), *first], [
        statement for view, statement in named if view not in checks
    ]


def input_views(cols: Columns, dialect: str, settings: Settings, schema: pl.Schema) -> list[str]:
    """The input, cut-off and parameter views over ``rankmetrics_source`` (of ``schema``) for
    the keys and parameters of ``settings``."""
    context = settings.context
    return input_statements(
        "rankmetrics_source", cols, dialect, sql_results.cutoffs(settings.keys), temporary=True,
        bool_truth=schema[cols.truth] == pl.Boolean,
        bool_pred=cols.pred is not None and schema[cols.pred] == pl.Boolean,
        threshold=context.threshold, beta=context.beta, zero_division=context.zero_division,
        n_labels=context.n_labels, propensity=PROPENSITY if PROPENSITY in schema else None,
        keys=settings.keys, relevance_level=context.relevance_level,
        judged_only=context.judged_only,
    )  # fmt: skip


def defined_views(settings: Settings) -> set[str]:
    """The views of ``sql/`` a session with ``settings`` queries: :func:`session_views` and the
    views the caller asked for (``settings.views``)."""
    return session_views(settings.keys, settings.tables) | set(settings.views)


# The views a session's queries read besides the metrics' own: the checks, and per table.
_CHECK_VIEWS = ("rankmetrics_row_checks", "rankmetrics_group_labels", "rankmetrics_sample_checks")
_TABLE_VIEWS = {
    "labels": "rankmetrics_label_counts", "curves": "rankmetrics_score_counts",
    "precisions": "rankmetrics_label_precisions", "topk_labels": "rankmetrics_topk_label_counts",
}  # fmt: skip


def session_views(keys: Sequence[MetricKey], tables: Sequence[str]) -> set[str]:
    """The views of ``sql/`` a session evaluating ``keys`` into ``tables`` queries."""
    return {
        *_CHECK_VIEWS,
        *sql_results.sql_views(keys).values(),
        *(_TABLE_VIEWS[table] for table in tables if table in _TABLE_VIEWS),
    }


class SQLSession:
    """The :class:`~polars_rankmetrics.engines.base.Session` queries, in SQL."""

    dialect = "duckdb"
    # Bytes of the engine's share of the budget one row of a bucket needs, per input byte.
    bytes_per_input_byte = 1.0

    def __init__(self, cols: Columns, schema: pl.Schema, settings: Settings | None = None) -> None:
        """``schema``: the columns of ``rankmetrics_source``; ``settings``: the evaluation whose
        views the session defines (:meth:`_define`)."""
        self.cols, self._schema = cols, schema
        self._undefined = settings  # None once the views are defined
        self._later: list[str] = []  # the statements of the views only the metrics read

    def _fetch(self, sql: str, parameters: Mapping[str, object] | None = None) -> pl.DataFrame:
        """The rows of ``sql``; ``parameters`` are bound to ``:name`` markers (see
        :meth:`_parameter`)."""
        raise NotImplementedError

    def _execute(self, statement: str) -> None:
        """Run ``statement`` (one that defines a view)."""
        raise NotImplementedError

    def _frame(
        self, sql: str, parameters: Mapping[str, object] | None = None, *, checks: bool = False
    ) -> pl.DataFrame:
        """:meth:`_fetch`, the session's views defined first (with ``checks``, those the
        checks read: :meth:`_views`)."""
        self._views(checks=checks)
        return self._fetch(sql, parameters)

    def _fetch_row(self, sql: str) -> dict[str, Any]:
        """The one row of ``sql`` (a query of numbers, such as counts), by column name."""
        return self._fetch(sql).row(0, named=True)

    def _row(self, sql: str, *, checks: bool = False) -> dict[str, Any]:
        """:meth:`_fetch_row`, the session's views defined first (as :meth:`_frame`)."""
        self._views(checks=checks)
        return self._fetch_row(sql)

    def _views(self, *, checks: bool = False) -> None:
        """Define the session's views, once, before the first query that reads them: with
        ``checks``, the views the checks read (:meth:`_define`); the others before the first
        query of the metrics, so that a table the checks refuse costs none of them."""
        if self._undefined is not None:
            settings, self._undefined = self._undefined, None
            self._define(settings)
        if not checks:
            later, self._later = self._later, []
            for statement in later:
                self._execute(statement)

    def _define(self, settings: Settings) -> None:
        """The views of an evaluation with ``settings`` (:func:`setup_statements`): those the
        checks read, the others kept for :meth:`_views`."""
        now, self._later = setup_statements(self.cols, self.dialect, settings, self._schema)
        for statement in now:
            self._execute(statement)

    def _parameter(self, name: str) -> str:
        """The marker of a bound parameter in this engine's SQL."""
        return f"${name}"

    def _source_type(self, column: str) -> str:
        """The SQL type of a column of ``rankmetrics_source``, as the engine writes it."""
        raise NotImplementedError

    def _quote(self, name: str) -> str:
        return quote(name, self.dialect)

    def schema(self) -> pl.Schema:
        return self._schema

    def count_rows(self) -> int:
        return int(self._fetch_row("SELECT count(*) AS n FROM rankmetrics_source")["n"])

    def hold(self, *, unique_labels: bool = False) -> None:
        """Nothing: the SQL engines plan their reads of the source themselves (a copy into a
        temporary table costs more than the Parquet reads it spares)."""

    def check_rows(
        self, keys: Sequence[MetricKey], *, ordered: bool = False
    ) -> validation.RowFacts:
        """The counts of ``rankmetrics_row_checks`` that ``keys`` check
        (:func:`~polars_rankmetrics.engines.sql.checks.counted_problems`), plus the checks that
        need the source's own types: a null ``by`` value, and an integer or decimal score that
        DOUBLE cannot hold exactly. (A SQL table has no row order: ``ordered`` finds nothing.)"""
        problems = sql_checks.counted_problems(self.cols, keys, self._schema)
        told = sql_checks.told(self.cols, keys)
        counted = self._flag_counts(sql_checks.flagged(problems), told)
        query = sql_checks.counts_query(problems, self.cols, self._quote, counted)
        counts = self._row(query, checks=True)
        rows = int(counts.pop("n_rows"))
        problem_counts = {p: n for p, n in counts.items() if p not in told}
        found = sql_checks.row_examples(problem_counts, self._flagged)
        for i, b in enumerate(self.cols.by):
            found[f"null_by_{i}"] = self._source_row(f"{self._quote(b)} IS NULL")
        found["inexact_score"] = None
        score_type = self._schema[self.cols.score]
        if not (score_type.is_float() or score_type == pl.Boolean):
            score, sql_type = self._quote(self.cols.score), self._source_type(self.cols.score)
            found["inexact_score"] = self._source_row(
                f"TRY_CAST(CAST({score} AS DOUBLE) AS {sql_type}) IS DISTINCT FROM {score}"
            )
        validation.judge_rows(found, self.cols, keys, rows)
        return validation.RowFacts(rows, not counts.get("non_binary_truth"))

    def _flag_counts(self, problems: Sequence[str], told: Sequence[str]) -> str:
        """The relation that counts ``problems`` (rows flagged by ``rankmetrics_row_flags``,
        ``told`` among them counted only for what they tell, :func:`~.checks.told`): one row, a
        column per problem."""
        del problems, told  # rankmetrics_row_checks counts every one
        return "rankmetrics_row_checks"

    def _example(self, row: Mapping[str, object] | None) -> dict[str, object] | None:
        """An example row of a check as ``{by..., sample, label}``."""
        if row is None:
            return None
        grp = sql_results.group_values(row["grp"], self.cols)
        return grp | {self.cols.sample: row["sample"], self.cols.label: row["label"]}

    def _flagged(self, problem: str) -> dict[str, object] | None:
        """An example row of ``problem``, with the offending value where the message shows it
        (:data:`~polars_rankmetrics.checks.validation.VALUE_SHOWN`)."""
        role = validation.VALUE_SHOWN.get(problem)
        shown = f", {role}" if role else ""
        found = self._frame(
            f"SELECT grp, sample, label{shown} FROM rankmetrics_row_flags WHERE {problem} = 1 "
            "LIMIT 1",
            checks=True,
        )
        example = self._example(found.row(0, named=True) if found.height else None)
        if example is not None and role:
            example[getattr(self.cols, role)] = found[role][0]
        return example

    def _source_row(self, condition: str) -> dict[str, object] | None:
        """An example row of the source meeting ``condition`` (over its own columns)."""
        names = dict.fromkeys([*self.cols.by, self.cols.sample, self.cols.label])
        columns = ", ".join(self._quote(n) for n in names)
        found = self._frame(
            f"SELECT {columns} FROM rankmetrics_source WHERE {condition} LIMIT 1", checks=True
        )
        return found.row(0, named=True) if found.height else None

    def _grouped(self, sql: str, *, checks: bool = False) -> pl.DataFrame:
        """The rows of ``sql`` per group: ``grp`` as the ``by`` columns (or ``__group``); the
        checks' columns under their internal names (see ``validation.SUMMARY_NAMES``); with
        ``checks``, a query of the checks (:meth:`_views`)."""
        frame = self._frame(sql, checks=checks)
        frame = frame.rename(
            {k: v for k, v in validation.SUMMARY_NAMES.items() if k in frame.columns}
        )
        frame = sql_results.ungroup(frame, self.cols)
        return frame if self.cols.by else frame.with_columns(pl.lit(0).alias(validation.GROUP))

    def group_labels(self) -> pl.DataFrame:
        return self._grouped("SELECT grp, group_labels FROM rankmetrics_group_labels", checks=True)

    def label_range(self) -> tuple[int, int] | None:
        return self._label_range

    @cached_property
    def _label_range(self) -> tuple[int, int] | None:
        """Asked once a session: by the table checks, and by DuckDB's sample counts (a scan
        where no file's statistics answer it)."""
        if not self._schema[self.cols.label].is_integer():
            return None
        query = "SELECT min(label) AS low, max(label) AS high FROM rankmetrics_input"
        found = self._row(query, checks=True)
        lowest, highest = found["low"], found["high"]
        return None if lowest is None else (int(lowest), int(highest))

    def sample_summary(self) -> pl.DataFrame:
        return self._grouped("SELECT * FROM rankmetrics_sample_checks", checks=True)

    def repeated_label(self, where: Mapping[str, object]) -> object:
        found = self._frame(
            "SELECT grp, label FROM rankmetrics_input "
            f"WHERE sample = {self._parameter('sample')} GROUP BY grp, label HAVING count(*) > 1",
            {"sample": where[self.cols.sample]},
            checks=True,
        )
        found = sql_results.ungroup(found, self.cols)
        in_group = [pl.col(b).eq_missing(where[b]) for b in self.cols.by] or [pl.lit(True)]
        return found.filter(*in_group).sort("label")["label"][0]

    def label_counts(self) -> pl.DataFrame:
        return self._grouped("SELECT grp, label, tp, fp, fn FROM rankmetrics_label_counts")

    def score_counts(self) -> pl.DataFrame:
        return self._grouped("SELECT grp, label, score, pos, neg FROM rankmetrics_score_counts")

    def topk_label_counts(self, cuts: Sequence[int]) -> pl.DataFrame:
        """The view's rows (grp, label, cut) as the top-k label counts are kept: a row per
        label, ``support`` and each cut-off's columns
        (:func:`~polars_rankmetrics.metrics.label_averages.topk_label_columns`); a cut-off
        whose rows lack a label (one predicted below it) counts 0 there."""
        columns = []
        for k in cuts:
            for name, value in zip(topk_label_columns(k), ("tp", "fp"), strict=True):
                columns.append(
                    f"coalesce(max(CASE WHEN cut = {int(k)} THEN {value} END), 0) AS "
                    f"{self._quote(name)}"
                )
        return self._grouped(
            f"SELECT grp, label, max(support) AS support, {', '.join(columns)} "
            "FROM rankmetrics_topk_label_counts GROUP BY grp, label"
        )

    def label_precisions(self) -> pl.DataFrame:
        return self._grouped("SELECT grp, label, precision_sum FROM rankmetrics_label_precisions")

    def piece(
        self, tables: Sequence[str], keys: Sequence[MetricKey], context: Context,
        check: Callable[[pl.DataFrame], None],
    ) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:  # fmt: skip
        """One query per table, the checks first."""
        summary = self.sample_summary()
        check(summary)
        sample_keys = [k for k in keys if k.metric.reduction == "samples"]
        cuts = sorted({k.k for k in keys if k.metric.reduction == "topk_labels" and k.k})
        queries: dict[str, Callable[[], pl.DataFrame]] = {
            "sums": lambda: self.sums(sample_keys, context),
            "per_sample": lambda: self.per_sample(sample_keys, context),
            "samples": self.samples,
            "labels": self.label_counts,
            "curves": self.score_counts,
            "precisions": self.label_precisions,
            "topk_labels": lambda: self.topk_label_counts(cuts),
        }
        return summary, {table: queries[table]() for table in tables}

    def _run(
        self, queries: list[sql_results.ViewQuery]
    ) -> list[tuple[sql_results.ViewQuery, pl.DataFrame]]:
        return [(query, self._frame(query.sql)) for query in queries]

    def sums(self, keys: Sequence[MetricKey], context: Context) -> pl.DataFrame:
        results = self._run(sql_results.sums_queries(keys, context))
        return sql_results.sums_frame(results, self.cols, context)

    def per_sample(self, keys: Sequence[MetricKey], context: Context) -> pl.DataFrame:
        results = self._run(sql_results.per_sample_queries(keys, context))
        return sql_results.per_sample_frame(results, self.cols, context)

    def samples(self) -> pl.DataFrame:
        """The ``by`` columns and the sample id, a row per sample."""
        frame = sql_results.ungroup(
            self._frame("SELECT DISTINCT grp, sample FROM rankmetrics_input"), self.cols
        )
        return frame.rename({"sample": self.cols.sample})

    def bytes_per_row(self) -> float:
        return self.bytes_per_input_byte * row_bytes(self._schema, self.cols)

    def query_progress(self) -> float | None:
        return None
