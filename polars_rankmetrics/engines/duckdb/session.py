"""A DuckDB session: the queries of the SQL sessions on a connection, with the views
a run reads more than once held in temporary tables and DuckDB's variants of views of ``sql/``
(:mod:`.tuning`, :mod:`.variants`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from polars_rankmetrics.engines.base import Settings
from polars_rankmetrics.engines.duckdb import tuning
from polars_rankmetrics.engines.duckdb.variants import (
    BINARY_IDEAL,
    BY_PAIRS,
    DISCOUNTS,
    IDEAL_TABLE,
    POSITIVE_RANKS,
    POSITIVE_SUMS,
    SAMPLE_COUNTS,
    SUMS_BY_PAIRS,
    carried_ranks,
    defined_variants,
    sample_counts,
)
from polars_rankmetrics.engines.memory import ENGINE_SHARE, engine_limit
from polars_rankmetrics.engines.sql.export import (
    named_view_statements,
    quote_identifier,
    quote_literal,
    views_read,
)
from polars_rankmetrics.engines.sql.session import SQLSession, defined_views, input_views
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.inputs.sizes import parse_size
from polars_rankmetrics.metrics.registry import Context, MetricKey

_INPUT = "rankmetrics_input AS "  # how the statement defining the input view names it
# The held sample counts' column counting the rows flagged by any row problem checked.
_FLAGGED = "rankmetrics_flagged"
# The views counting each row problem and flagging each row (sql/08_checks.sql).
_ROW_CHECK_VIEWS = ("rankmetrics_row_flags", "rankmetrics_row_checks")


@dataclass
class DefinedViews:
    """The views the sessions of one connection share: defined by the first session, over a
    source of ``schema`` (None until then), and reused by the next ones over the same
    columns."""

    schema: pl.Schema | None = None


class DuckDBSession(SQLSession):
    """A session on a DuckDB connection: its own, or one the buckets of a run share
    (:class:`DefinedViews`)."""

    dialect = "duckdb"
    # Calibrated with benchmarks/out_of_core.py: past it, DuckDB's memory outside its buffer
    # manager (the per-sample aggregation over millions of samples) takes the process over the
    # budget.
    bytes_per_input_byte = 0.6

    def __init__(
        self, con: duckdb.DuckDBPyConnection, cols: Columns, schema: pl.Schema,
        settings: Settings, share: float = ENGINE_SHARE, views: DefinedViews | None = None,
    ) -> None:  # fmt: skip
        """A session over ``rankmetrics_source`` (of ``schema``) on ``con``, whose views it
        defines for an evaluation with ``settings``; ``share``: the part of the memory budget
        DuckDB's own limit is; ``views``: the views the connection's sessions share (the
        session defines them unless an earlier one did over the same columns, and
        :meth:`release` leaves them as defined)."""
        super().__init__(cols, schema, settings)
        self.con, self.share = con, share
        self._defined = views
        self._restore: list[str] = []  # the statements of the views the session replaces
        budget = settings.memory_limit
        self._limit = None if budget is None else parse_size(engine_limit(budget, share))
        self._shared: dict[str, str] = {}  # the views held once (tuning.shared_views)
        self._ranks = False  # whether the run reads the positive ranks
        self._ideal = False  # whether the run reads the ideal table
        self._input_query = ""  # the query of rankmetrics_input
        self._counts_defined = False
        self._counts_held = False
        self._whole = False  # the session evaluates its table in one piece (hold)
        self._unique_labels = False  # no sample repeats a label, as hold was told
        self._deferred: list[str] = []  # the statements of views defined where needed

    def _define(self, settings: Settings) -> None:
        """The views of :meth:`SQLSession._define`, some as DuckDB's variants
        (:func:`~.variants.defined_variants`), and the plan of the positive ranks left open
        where the run reads them (both plans defined, for :func:`~.tuning.ranks_by_pairs` to
        choose, and both plans of their sums where the run reads those); the views to hold once
        (:func:`~.tuning.shared_views`)."""
        views = defined_views(settings)
        self._ranks = "rankmetrics_positive_ranks" in views_read(views)
        if self._ranks:
            sums = (SUMS_BY_PAIRS,) if POSITIVE_SUMS in views_read(views) else ()
            settings = replace(settings, views=(*settings.views, BY_PAIRS, *sums))
        defined = defined_views(settings)
        read = views_read(defined)
        self._ideal = IDEAL_TABLE in read
        variants = defined_variants(
            self.con, read, grouped=bool(self.cols.by), weighted=self.cols.weight is not None
        )
        inputs = input_views(self.cols, "duckdb", settings, self._schema)
        self._input_query = next(s.split(_INPUT, 1)[1] for s in inputs if _INPUT in s)
        named = named_view_statements("duckdb", temporary=True, views=defined, variants=variants)
        shared = self._defined
        if shared is None or shared.schema != self._schema:
            # In one piece, the row problems are counted in the sample counts' pass: the views
            # counting them one by one are defined only where a row is flagged (by this
            # session: the sessions of the pieces of a run define them with the others).
            deferred = _ROW_CHECK_VIEWS if self._whole and shared is None else ()
            self._deferred = [statement for view, statement in named if view in deferred]
            for statement in [*inputs, *(s for view, s in named if view not in deferred)]:
                self._execute(statement)
            if shared is not None:
                shared.schema = self._schema
        # Replaced by piece, per table.
        replaced = (SAMPLE_COUNTS, DISCOUNTS, POSITIVE_RANKS, POSITIVE_SUMS, IDEAL_TABLE)
        self._restore = [statement for view, statement in named if view in replaced]
        others = [*inputs, *(s for view, s in named if view != SAMPLE_COUNTS)]
        others += [BINARY_IDEAL] if self._ideal else []  # the columns it reads are held
        self._shared = tuning.shared_views(views, others, self._columns(SAMPLE_COUNTS))

    def _columns(self, view: str) -> list[str]:
        """The columns of ``view``."""
        found = self.con.execute(f"SELECT column_name FROM (DESCRIBE {view})").fetchall()
        return [row[0] for row in found]

    def piece(
        self, tables: Sequence[str], keys: Sequence[MetricKey], context: Context,
        check: Callable[[pl.DataFrame], None],
    ) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:  # fmt: skip
        """:meth:`SQLSession.piece`, the session's shared views computed once first, into
        temporary tables of the columns they name (only here: a session that only checks and
        splits a table too large for the budget never computes them over the whole of it). The
        sample counts are one of them: the sample checks and the metrics read one aggregation,
        whose distinct labels are the rows where ``context`` says no sample repeats a label, and
        the ideal table of a binary truth (``context.binary_truth``) reads them
        (:data:`~.variants.BINARY_IDEAL`)."""
        self._hold_sample_counts(unique_labels=context.rows.unique_labels)
        if self._ideal and context.binary_truth:
            self.con.execute(BINARY_IDEAL)
        if self._ranks:
            sums = tuning.sums_by_pairs(keys) and POSITIVE_RANKS not in self._shared
            self._rank_positives(carried=context.rows.carries_ranks, sums=sums)
        for view, columns in self._shared.items():  # the discounts, the positive ranks
            ranks = view == "rankmetrics_positive_ranks"
            if ranks and not tuning.positives_fit(self._row, self._limit):
                continue
            self._hold(view, columns)
        self._shared = {}
        return super().piece(tables, keys, context, check)

    def hold(self, *, unique_labels: bool = False) -> None:
        """Count the row checks in the pass that computes the sample counts: the session
        evaluates its table in one piece, whose sample counts the checks and the metrics
        read (:meth:`_flag_counts`); with ``unique_labels``, a sample's distinct labels are its
        rows."""
        self._whole, self._unique_labels = True, unique_labels

    def _flag_counts(self, problems: Sequence[str], told: Sequence[str]) -> str:
        """Where the session evaluates its table in one piece (:meth:`hold`), the sample counts'
        pass also counts the rows flagged by ``problems``, in one column (:data:`_FLAGGED`), but
        those of ``told`` (no problem to the run, counted for what they tell: a graded truth to
        dcg and ndcg) each in a column of its own. Where the flagged rows are none, the counts
        are zeros (the told ones' as found), without a pass of their own; else, and in a bucket,
        ``rankmetrics_row_checks`` counts each problem."""
        if not (self._whole and problems):
            return self._counted_apart(problems, told)
        flags = {_FLAGGED: [p for p in problems if p not in told]}
        flags |= {p: [p] for p in problems if p in told}
        flags = {column: found for column, found in flags.items() if found}
        self._views()
        self._hold_sample_counts(unique_labels=self._unique_labels, flags=flags)
        totals = ", ".join(f"coalesce(sum({column}), 0) AS {column}" for column in flags)
        found = self._row(f"SELECT {totals} FROM {SAMPLE_COUNTS}_once")
        if found.get(_FLAGGED, 0):
            return self._counted_apart(problems, told)
        counts = {p: 0 for p in problems} | {c: v for c, v in found.items() if c != _FLAGGED}
        return f"(SELECT {', '.join(f'{int(n)} AS {p}' for p, n in counts.items())})"

    def _counted_apart(self, problems: Sequence[str], told: Sequence[str]) -> str:
        """``rankmetrics_row_checks``, counting each problem (:meth:`SQLSession._flag_counts`),
        defined first where the session deferred it."""
        self._define_deferred()
        return super()._flag_counts(problems, told)

    def _flagged(self, problem: str) -> dict[str, object] | None:
        self._define_deferred()
        return super()._flagged(problem)

    def _define_deferred(self) -> None:
        """Define the views the session deferred (:data:`_ROW_CHECK_VIEWS`), once."""
        statements, self._deferred = self._deferred, []
        for statement in statements:
            self._execute(statement)

    def _hold_sample_counts(
        self, *, unique_labels: bool = False, flags: Mapping[str, Sequence[str]] | None = None
    ) -> None:
        """Once: the sample counts (:meth:`_define_sample_counts`) held in a temporary table of
        the columns the session's statements read, and of the columns of ``flags``."""
        if self._counts_held:
            return
        self._define_sample_counts(unique_labels=unique_labels, flags=flags)
        columns = ", ".join([self._shared.pop(SAMPLE_COUNTS), *(flags or {})])
        self._hold(SAMPLE_COUNTS, columns)
        self._counts_held = True

    def _hold(self, view: str, columns: str) -> None:
        """``view`` computed once, into a temporary table of ``columns`` that the view reads
        from then on."""
        self.con.execute(f"CREATE TEMP TABLE {view}_once AS SELECT {columns} FROM {view}")
        self.con.execute(f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT * FROM {view}_once")

    def release(self) -> None:
        """Drop the tables the session held and define the views it replaced as they were, for
        the next session on the connection; the bucket's frame is let go (its memory freed
        before the next bucket is registered)."""
        for statement in self._restore:
            self.con.execute(statement)
        for view in (SAMPLE_COUNTS, DISCOUNTS, POSITIVE_RANKS):
            self.con.execute(f"DROP TABLE IF EXISTS {view}_once")
        self.con.unregister("rankmetrics_frame")

    def _rank_positives(self, *, carried: bool, sums: bool = False) -> None:
        """The plan of the positive ranks, once the sample counts are held: from the ranks the
        rows carry (``carried``: :func:`~.variants.carried_ranks`), else by pairs where
        :func:`~.tuning.ranks_by_pairs` chooses them, else the windows of ``sql/``. By pairs,
        with ``sums`` (the ranking view alone reads the ranks, and only their sums by pairs:
        :func:`~.tuning.sums_by_pairs`), their sums per sample are counted by pairs too, without
        a count per positive."""
        if carried:
            statements = carried_ranks(self.con, self._input_query)
        elif tuning.ranks_by_pairs(self._row):
            statements = [
                f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT * FROM {plan}"
                for view, plan in ((POSITIVE_RANKS, BY_PAIRS), (POSITIVE_SUMS, SUMS_BY_PAIRS))
                if sums or view == POSITIVE_RANKS
            ]
        else:
            return
        for statement in statements:
            self.con.execute(statement)

    def _fetch(self, sql: str, parameters: Mapping[str, object] | None = None) -> pl.DataFrame:
        # Through the relation's Arrow stream: .pl() would import pyarrow.
        return pl.DataFrame(self.con.sql(sql, params=dict(parameters) if parameters else None))

    def _execute(self, statement: str) -> None:
        self.con.execute(statement)

    def _fetch_row(self, sql: str) -> dict[str, Any]:
        # A DB-API result: a relation (_fetch) binds its query once more before it runs.
        found = self.con.execute(sql)
        names = [column[0] for column in found.description]
        return dict(zip(names, found.fetchall()[0], strict=True))

    def sample_summary(self) -> pl.DataFrame:
        """:meth:`SQLSession.sample_summary` over DuckDB's sample counts."""
        self._define_sample_counts()
        return super().sample_summary()

    def _define_sample_counts(
        self, *, unique_labels: bool = False, flags: Mapping[str, Sequence[str]] | None = None
    ) -> None:
        """Once: the sample counts as DuckDB computes them (:func:`~.variants.sample_counts`;
        the label range from Parquet's statistics at no cost; ``unique_labels``: no sample
        repeats a label, its distinct labels are its rows; ``flags``: row problems counted
        per sample too, :func:`~.variants.sample_counts`)."""
        if self._counts_defined:
            return
        self._views()
        self._counts_defined = True
        weighted, grouped = self.cols.weight is not None, bool(self.cols.by)
        span = None if unique_labels else self.label_range()
        self.con.execute(
            sample_counts(
                self.con, span, weighted, grouped, unique_labels=unique_labels, flags=flags
            )
        )

    def _source_type(self, column: str) -> str:
        found = self.con.execute(
            "SELECT column_type FROM (DESCRIBE rankmetrics_source) WHERE column_name = ?",
            [column],
        ).fetchall()
        return str(found[0][0])

    def split(self, n: int, directory: Path) -> list[list[Path]]:
        """One ``COPY ... PARTITION_BY`` writes every bucket."""
        keys = ", ".join(quote_identifier(c) for c in self.cols.sample_keys)
        self.con.execute(
            f"COPY (SELECT *, CAST(hash({keys}) % {int(n)} AS BIGINT) AS __bucket "
            f"FROM rankmetrics_source) TO {quote_literal(str(directory))} "
            "(FORMAT parquet, PARTITION_BY (__bucket))"
        )
        return [sorted(directory.glob(f"__bucket={i}/*.parquet")) for i in range(n)]

    def query_progress(self) -> float | None:
        share = self.con.query_progress()
        return None if share < 0 else share / 100
