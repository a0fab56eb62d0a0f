"""A DuckDB session: the queries of the SQL sessions on a connection of its own, with the views
a run reads more than once held in temporary tables and DuckDB's variants of the sample counts
(:mod:`.tuning`, :mod:`.variants`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import duckdb
import polars as pl

from polars_rankmetrics.engines.duckdb import tuning
from polars_rankmetrics.engines.duckdb.variants import sample_counts
from polars_rankmetrics.engines.memory import ENGINE_SHARE, engine_limit, parse_size
from polars_rankmetrics.engines.sql.export import quote_identifier, quote_literal
from polars_rankmetrics.engines.sql.session import SQLSession
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.registry import Context, MetricKey


class DuckDBSession(SQLSession):
    """A session on a DuckDB connection of its own."""

    dialect = "duckdb"
    # Calibrated with benchmarks/out_of_core.py: past it, DuckDB's memory outside its buffer
    # manager (the per-sample aggregation over millions of samples) takes the process over the
    # budget.
    bytes_per_input_byte = 0.6

    def __init__(
        self, con: duckdb.DuckDBPyConnection, cols: Columns, schema: pl.Schema,
        shared: Mapping[str, str] | None = None, memory_limit: str | None = None,
        ranks: bool = False, share: float = ENGINE_SHARE,
    ) -> None:  # fmt: skip
        """``shared``: :func:`~.tuning.shared_views`; ``ranks``: whether the run reads the
        positive ranks (:func:`~.tuning.ranks_by_pairs`)."""
        super().__init__(cols, schema)
        self.con, self._shared, self._ranks = con, dict(shared or {}), ranks
        self.share = share  # the part of the budget DuckDB's limit is
        limit = None if memory_limit is None else engine_limit(memory_limit, share)
        self._limit = None if limit is None else parse_size(limit)
        self._counts_defined = False

    def piece(
        self, tables: Sequence[str], keys: Sequence[MetricKey], context: Context,
        check: Callable[[pl.DataFrame], None],
    ) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:  # fmt: skip
        """:meth:`SQLSession.piece`, the session's shared views computed once first, into
        temporary tables of the columns they name (only here: a session that only checks and
        splits a table too large for the budget never computes them over the whole of it). The
        sample counts are one of them: the sample checks and the metrics read one aggregation."""
        self._define_sample_counts()
        for view, columns in self._shared.items():  # the sample counts before the ranks
            if view == "rankmetrics_positive_ranks" and not tuning.positives_fit(
                self._frame, self._limit
            ):
                continue
            self.con.execute(f"CREATE TEMP TABLE {view}_once AS SELECT {columns} FROM {view}")
            self.con.execute(f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT * FROM {view}_once")
            if view == "rankmetrics_sample_counts" and self._ranks:
                if tuning.ranks_by_pairs(self._frame):
                    self.con.execute(
                        "CREATE OR REPLACE TEMP VIEW rankmetrics_positive_ranks AS "
                        "SELECT * FROM rankmetrics_positive_ranks_by_pairs"
                    )
        self._shared = {}
        return super().piece(tables, keys, context, check)

    def _frame(self, sql: str, parameters: Mapping[str, object] | None = None) -> pl.DataFrame:
        # Through the relation's Arrow stream: .pl() would import pyarrow.
        return pl.DataFrame(self.con.sql(sql, params=dict(parameters) if parameters else None))

    def sample_summary(self) -> pl.DataFrame:
        """:meth:`SQLSession.sample_summary` over DuckDB's sample counts."""
        self._define_sample_counts()
        return super().sample_summary()

    def _define_sample_counts(self) -> None:
        """Once: the sample counts as DuckDB computes them (:func:`~.variants.sample_counts`;
        the label range from Parquet's statistics at no cost)."""
        if self._counts_defined:
            return
        self._counts_defined = True
        weighted, grouped = self.cols.weight is not None, bool(self.cols.by)
        self.con.execute(sample_counts(self.con, self.label_range(), weighted, grouped))

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
