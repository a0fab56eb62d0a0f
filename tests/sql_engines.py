"""Test-only engines that run the exported SQL on PostgreSQL, DataFusion and SQLite.

The library's driver and its shared SQL session run them exactly as they run DuckDB and Spark:
the table is loaded as ``rankmetrics_source``, the session defines the views with the statements
of ``rankmetrics sql --dialect``, and every check and metric is a query over them. So the same
test body checks numbers and error messages on every engine.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from polars_rankmetrics.engines.base import Settings
from polars_rankmetrics.engines.memory import ENGINE_SHARE
from polars_rankmetrics.engines.polars import lazy_inside
from polars_rankmetrics.engines.sql.session import SQLSession
from polars_rankmetrics.inputs.columns import Columns

_SQL_TYPES = {
    "postgres": {pl.Float64: "DOUBLE PRECISION", pl.Int64: "BIGINT", pl.Int32: "INTEGER",
                 pl.String: "TEXT", pl.Boolean: "BOOLEAN", pl.Float32: "REAL"},
    "sqlite": {pl.Float64: "REAL", pl.Int64: "INTEGER", pl.Int32: "INTEGER", pl.String: "TEXT",
               pl.Boolean: "INTEGER", pl.Float32: "REAL"},
}  # fmt: skip


def _rows(columns: list[str], rows: list[tuple]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=columns, orient="row", infer_schema_length=None)


class DBAPISession(SQLSession):
    """A session over a DB-API connection (PostgreSQL through psycopg, SQLite)."""

    def __init__(
        self, con: Any, dialect: str, cols: Columns, schema: pl.Schema, settings: Settings
    ) -> None:
        super().__init__(cols, schema, settings)
        self.con, self.dialect = con, dialect

    def _parameter(self, name: str) -> str:
        return f"%({name})s" if self.dialect == "postgres" else f":{name}"

    def _fetch(self, sql: str, parameters: Mapping[str, object] | None = None) -> pl.DataFrame:
        cursor = self.con.cursor()
        cursor.execute(sql, dict(parameters or {}))
        return _rows([d[0] for d in cursor.description], cursor.fetchall())

    def _execute(self, statement: str) -> None:
        self.con.execute(statement)

    def _source_type(self, column: str) -> str:
        raise NotImplementedError("the test tables have float scores")

    def split(self, n: int, directory: Path) -> list[list[Path]]:
        raise NotImplementedError


class DataFusionSession(SQLSession):
    dialect = "datafusion"

    def __init__(self, ctx: Any, cols: Columns, schema: pl.Schema, settings: Settings) -> None:
        super().__init__(cols, schema, settings)
        self.ctx = ctx

    def _fetch(self, sql: str, parameters: Mapping[str, object] | None = None) -> pl.DataFrame:
        result = self.ctx.sql(sql, param_values=dict(parameters) if parameters else None)
        return pl.from_arrow(result.to_arrow_table())

    def _execute(self, statement: str) -> None:
        self.ctx.sql(statement).collect()

    def _source_type(self, column: str) -> str:
        raise NotImplementedError("the test tables have float scores")

    def split(self, n: int, directory: Path) -> list[list[Path]]:
        raise NotImplementedError


@dataclass
class SQLTestEngine:
    """An engine for ``driver.run`` over one of the test databases; ``data`` is a Polars frame."""

    name: str
    connect: Any = None  # PostgreSQL: the connection string
    errors: tuple[type[Exception], ...] = ()
    splits = False
    scans_rank_order = False
    per_sample_share = ENGINE_SHARE  # a budget does not apply

    def reads_scanned_ranks(self, keys) -> bool:
        return False

    @contextmanager
    def open(self, data: Any, cols: Columns, settings: Settings) -> Iterator[SQLSession]:
        frame = lazy_inside(data, cols).collect()
        if self.name == "datafusion":
            import datafusion

            ctx = datafusion.SessionContext()
            ctx.register_record_batches("rankmetrics_source", [frame.to_arrow().to_batches()])
            yield DataFusionSession(ctx, cols, frame.schema, settings)
            return
        if self.name == "sqlite":
            con = sqlite3.connect(":memory:")
        else:
            import psycopg

            con = psycopg.connect(self.connect, autocommit=True)
            con.execute("DROP SCHEMA IF EXISTS rm CASCADE")
            con.execute("CREATE SCHEMA rm")
            con.execute("SET search_path TO rm")
        try:
            types = _SQL_TYPES[self.name]
            columns = ", ".join(f'"{c}" {types[frame.schema[c]]}' for c in frame.columns)
            con.execute(f"CREATE TABLE rankmetrics_source ({columns})")
            marks = ", ".join(["%s" if self.name == "postgres" else "?"] * frame.width)
            con.cursor().executemany(
                f"INSERT INTO rankmetrics_source VALUES ({marks})", frame.rows()
            )
            yield DBAPISession(con, self.name, cols, frame.schema, settings)
        finally:
            con.close()
