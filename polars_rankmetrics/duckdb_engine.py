"""The DuckDB engine: the views of ``sql/`` over any source, evaluated lazily and spilling to disk.

The SQL files are the single source of the SQL; this module only names the input for them. It
creates two relations the views read:

- ``rankmetrics_input(grp, sample, label, score, truth, weight)``: the user's table with its
  columns renamed (identifiers quoted, never pasted), ``grp`` a struct of the ``by`` columns;
- ``rankmetrics_cutoffs(k)``: the dcg/ndcg cut-offs wanted (NULL for no cut), inserted as bound
  parameters.

A session (:class:`DuckDBSession`) owns its connection and closes it however the run ends. The
views are created once per connection and never redefined: a table split into buckets is
written once as Parquet (``COPY ... PARTITION_BY``), and each bucket gets a connection of its own.
Every view is temporary, so nothing is left in a user's database file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from polars_rankmetrics import sql_checks, sql_results, validation
from polars_rankmetrics.columns import Columns
from polars_rankmetrics.engines import Settings
from polars_rankmetrics.memory import engine_limit, row_bytes
from polars_rankmetrics.metrics import Context, MetricKey
from polars_rankmetrics.sources import parquet_paths

# Bytes of DuckDB's share of the budget that one row of a bucket needs, per input byte: past
# it, DuckDB's memory outside its buffer manager (the per-sample aggregation over millions of
# samples) takes the process over the budget. Calibrated on the benchmark table (17 input bytes
# a row, 10 B/row measured in benchmarks/out_of_core.py).
BYTES_PER_INPUT_BYTE = 0.6

_INPUT_VIEWS = ("rankmetrics_input", "rankmetrics_source")


def sql_directory() -> Path:
    """Where the SQL files are: in the installed package, or the checkout's top-level ``sql/``."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "sql", here.parent / "sql"):
        if any(candidate.glob("*.sql")):
            return candidate
    raise FileNotFoundError("the rankmetrics SQL files are missing from this installation")


def sql_files() -> list[Path]:
    """The view definitions, in the order they must run (each reads the ones before it)."""
    return sorted(sql_directory().glob("*.sql"))


def view_names() -> list[str]:
    """The views the files of ``sql/`` define, in the order they are defined."""
    names = []
    for path in sql_files():
        names += re.findall(r"CREATE OR REPLACE VIEW (\w+)", path.read_text())
    return names


def temporary(sql: str) -> str:
    """The statements of a file of ``sql/`` with temporary views (nothing saved in a database
    file; a temporary view may read a temporary table)."""
    return sql.replace("CREATE OR REPLACE VIEW", "CREATE OR REPLACE TEMP VIEW")


def quote_identifier(name: str) -> str:
    """A SQL identifier for any column name: double-quoted, inner quotes doubled."""
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    """A SQL string literal: single-quoted, inner quotes doubled."""
    return "'" + text.replace("'", "''") + "'"


def connect(
    memory_limit: str | None = None, temp_directory: Path | None = None
) -> duckdb.DuckDBPyConnection:
    """An in-memory connection. ``memory_limit`` (e.g. ``"1GB"``) is the budget of the whole
    process: DuckDB gets its share (:mod:`polars_rankmetrics.memory`) and spills beyond it to
    ``temp_directory``."""
    config: dict[str, str] = {"preserve_insertion_order": "false"}
    if memory_limit is not None:
        config["memory_limit"] = engine_limit(memory_limit)
        if temp_directory is not None:
            config["temp_directory"] = str(temp_directory / "duckdb")
    try:
        return duckdb.connect(config=config)
    except duckdb.Error as error:
        raise ValueError(f"bad DuckDB setting: {error}") from None


def _is_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    found = con.execute(
        "SELECT count(*) FROM (SELECT table_name AS name FROM duckdb_tables() "
        "UNION ALL SELECT view_name FROM duckdb_views()) WHERE name = ?",
        [name],
    ).fetchall()
    return bool(found[0][0] > 0)


def _source_query(con: duckdb.DuckDBPyConnection, source: Any) -> str:
    """A SELECT over ``source``; names quoted, paths quoted as string literals, frames
    registered on the connection (temporary, like every view here)."""
    if isinstance(source, duckdb.DuckDBPyRelation):
        return source.sql_query()
    if isinstance(source, pl.LazyFrame):
        source = source.collect()
    if isinstance(source, pl.DataFrame):
        con.register("rankmetrics_frame", source.to_arrow())
        return "SELECT * FROM rankmetrics_frame"
    if isinstance(source, str) and _is_table(con, source):
        return f"SELECT * FROM {quote_identifier(source)}"
    paths = ", ".join(quote_literal(_literal_glob(path)) for path in parquet_paths(source))
    return f"SELECT * FROM read_parquet([{paths}])"


def _literal_glob(path: str) -> str:
    """A file path (already expanded) as a DuckDB glob matching only itself: ``[``, ``*`` and
    ``?`` in a real file name bracketed."""
    return "".join(f"[{c}]" if c in "[*?" else c for c in path)


def _input_view(cols: Columns) -> str:
    """``rankmetrics_input`` over ``rankmetrics_source``, the columns renamed and cast."""
    q = quote_identifier
    grp = "struct_pack(" + ", ".join(f"{q(b)} := {q(b)}" for b in cols.by) + ")" if cols.by else "0"
    weight = f"CAST({q(cols.weight)} AS DOUBLE)" if cols.weight else "1.0"
    return (
        "CREATE OR REPLACE TEMP VIEW rankmetrics_input AS SELECT "
        f"{grp} AS grp, {q(cols.sample)} AS sample, {q(cols.label)} AS label, "
        f"CAST({q(cols.score)} AS DOUBLE) AS score, CAST({q(cols.truth)} AS DOUBLE) AS truth, "
        f"{weight} AS weight FROM rankmetrics_source"
    )


def register_views(
    con: duckdb.DuckDBPyConnection,
    source: Any,
    *,
    sample: str = "sample",
    label: str = "label",
    score: str = "score",
    truth: str = "truth",
    weight: str | None = None,
    by: str | Sequence[str] | None = None,
    cutoffs: Iterable[int | None] = (None,),
) -> None:
    """Create the rankmetrics views on ``con`` over ``source``, as temporary views.

    ``source`` is a DuckDB relation, a Polars frame, the name of a table or view of ``con``, or a
    Parquet path, glob or list of paths. Afterwards ``rankmetrics_per_sample`` and
    ``rankmetrics_summary`` answer queries (one row per group, sample and cut-off ``k``), as do the
    checks ``rankmetrics_row_checks``, ``rankmetrics_group_labels`` and
    ``rankmetrics_sample_checks``. Nothing is computed yet, and nothing is saved in the database
    (the views last as long as the connection); :func:`unregister_views` removes them.
    """
    cols = Columns.of(sample=sample, label=label, score=score, truth=truth, weight=weight, by=by)
    _register(con, source, cols, cutoffs)


def unregister_views(con: duckdb.DuckDBPyConnection) -> None:
    """Remove what :func:`register_views` created on ``con``."""
    for view in (*reversed(view_names()), *_INPUT_VIEWS):  # each reads the ones before it
        con.execute(f"DROP VIEW IF EXISTS {view}")
    con.execute("DROP TABLE IF EXISTS rankmetrics_cutoffs")
    con.unregister("rankmetrics_frame")


def _register(
    con: duckdb.DuckDBPyConnection, source: Any, cols: Columns, cutoffs: Iterable[int | None]
) -> pl.Schema:
    con.execute(f"CREATE OR REPLACE TEMP VIEW rankmetrics_source AS {_source_query(con, source)}")
    schema = con.sql("SELECT * FROM rankmetrics_source LIMIT 0").pl().schema
    validation.check_schema(schema, cols)
    con.execute(_input_view(cols))
    con.execute("CREATE OR REPLACE TEMP TABLE rankmetrics_cutoffs (k BIGINT)")
    con.executemany(
        "INSERT INTO rankmetrics_cutoffs VALUES (?)", [[k] for k in dict.fromkeys(cutoffs)]
    )
    for path in sql_files():
        con.execute(temporary(path.read_text()))
    return schema


def _set_cutoffs(con: duckdb.DuckDBPyConnection, keys: Sequence[MetricKey]) -> None:
    con.execute("DELETE FROM rankmetrics_cutoffs")
    con.executemany(
        "INSERT INTO rankmetrics_cutoffs VALUES (?)", [[k] for k in sql_results.cutoffs(keys)]
    )


def _example(cols: Columns, row: Mapping[str, Any] | None) -> dict[str, object] | None:
    """An example row of a check as ``{by..., sample, label}`` (its ``grp`` unnested)."""
    if row is None:
        return None
    grp = row["grp"] if cols.by and isinstance(row["grp"], dict) else {}
    return dict(grp) | {cols.sample: row["sample"], cols.label: row["label"]}


class DuckDBSession:
    """A :class:`~polars_rankmetrics.engines.Session` on a connection of its own, over the
    views of ``sql/``."""

    def __init__(self, con: duckdb.DuckDBPyConnection, cols: Columns, schema: pl.Schema) -> None:
        self.con, self.cols, self._schema = con, cols, schema

    def _frame(self, sql: str, parameters: Sequence[object] | None = None) -> pl.DataFrame:
        return self.con.sql(sql, params=parameters).pl()

    def schema(self) -> pl.Schema:
        return self._schema

    def count_rows(self) -> int:
        return int(self.con.execute("SELECT count(*) FROM rankmetrics_source").fetchall()[0][0])

    def check_rows(self, keys: Sequence[MetricKey]) -> validation.RowFacts:
        """``rankmetrics_row_checks``, plus the checks that need the source's own types: a null
        ``by`` value, and an integer or decimal score that DOUBLE cannot hold exactly."""
        counts = self._frame("SELECT * FROM rankmetrics_row_checks").row(0, named=True)
        rows = counts.pop("n_rows")
        found = sql_checks.row_examples(counts, self._flagged)
        q = quote_identifier
        for i, b in enumerate(self.cols.by):
            found[f"null_by_{i}"] = self._source_row(f"{q(b)} IS NULL")
        found["inexact_score"] = None
        score_type = self._schema[self.cols.score]
        if not (score_type.is_float() or score_type == pl.Boolean):
            source_type = self.con.execute(
                "SELECT column_type FROM (DESCRIBE rankmetrics_source) WHERE column_name = ?",
                [self.cols.score],
            ).fetchall()[0][0]
            score = q(self.cols.score)
            found["inexact_score"] = self._source_row(
                f"TRY_CAST(CAST({score} AS DOUBLE) AS {source_type}) IS DISTINCT FROM {score}"
            )
        validation.judge_rows(found, self.cols, keys, rows)
        return validation.RowFacts(rows, not counts["non_binary_truth"])

    def _flagged(self, problem: str) -> dict[str, object] | None:
        found = self._frame(
            f"SELECT grp, sample, label FROM rankmetrics_row_flags WHERE {problem} = 1 LIMIT 1"
        )
        return _example(self.cols, found.row(0, named=True) if found.height else None)

    def _source_row(self, condition: str) -> dict[str, object] | None:
        """An example row of the source meeting ``condition`` (over its own columns)."""
        q = quote_identifier
        names = dict.fromkeys([*self.cols.by, self.cols.sample, self.cols.label])
        columns = ", ".join(q(n) for n in names)
        found = self._frame(f"SELECT {columns} FROM rankmetrics_source WHERE {condition} LIMIT 1")
        return found.row(0, named=True) if found.height else None

    def _grouped(self, sql: str) -> pl.DataFrame:
        frame = sql_results.ungroup(self._frame(sql), self.cols)
        return frame if self.cols.by else frame.with_columns(pl.lit(0).alias(validation.GROUP))

    def group_labels(self) -> pl.DataFrame:
        return self._grouped("SELECT grp, group_labels FROM rankmetrics_group_labels")

    def sample_summary(self) -> pl.DataFrame:
        return self._grouped("SELECT * FROM rankmetrics_sample_checks")

    def repeated_label(self, where: Mapping[str, object]) -> object:
        found = sql_results.ungroup(
            self._frame(
                "SELECT grp, label FROM rankmetrics_input WHERE sample = ? "
                "GROUP BY grp, label HAVING count(*) > 1",
                [where[self.cols.sample]],
            ),
            self.cols,
        )
        group = [pl.col(b).eq_missing(where[b]) for b in self.cols.by]
        return (
            found.filter(*group).sort("label")["label"][0]
            if group
            else found.sort("label")["label"][0]
        )

    def _run(
        self, queries: list[sql_results.ViewQuery], keys: Sequence[MetricKey]
    ) -> list[tuple[sql_results.ViewQuery, pl.DataFrame]]:
        _set_cutoffs(self.con, keys)
        return [(query, self._frame(query.sql)) for query in queries]

    def sums(self, keys: Sequence[MetricKey], context: Context) -> pl.DataFrame:
        results = self._run(sql_results.sums_queries(keys), keys)
        return sql_results.sums_frame(results, self.cols, context)

    def per_sample(self, keys: Sequence[MetricKey], context: Context) -> pl.DataFrame:
        results = self._run(sql_results.per_sample_queries(keys), keys)
        return sql_results.per_sample_frame(results, self.cols, context)

    def bytes_per_row(self) -> float:
        return BYTES_PER_INPUT_BYTE * row_bytes(self._schema, self.cols)

    def split(self, n: int, directory: Path) -> list[list[Path]]:
        """One ``COPY ... PARTITION_BY`` writes every bucket."""
        q = quote_identifier
        keys = ", ".join(q(c) for c in self.cols.sample_keys)
        self.con.execute(
            f"COPY (SELECT *, CAST(hash({keys}) % {int(n)} AS BIGINT) AS __bucket "
            f"FROM rankmetrics_source) TO {quote_literal(str(directory))} "
            "(FORMAT parquet, PARTITION_BY (__bucket))"
        )
        return [sorted(directory.glob(f"__bucket={i}/*.parquet")) for i in range(n)]

    def query_progress(self) -> float | None:
        share = self.con.query_progress()
        return None if share < 0 else share / 100


class DuckDBEngine:
    """DuckDB relations, table or view names of a connection's, Polars frames, Parquet paths."""

    name = "duckdb"
    errors: tuple[type[Exception], ...] = (duckdb.Error,)

    @contextmanager
    def open(self, data: Any, cols: Columns, settings: Settings) -> Iterator[DuckDBSession]:
        con = connect(settings.memory_limit, settings.spill_dir)
        try:
            if settings.track_progress:
                con.execute("SET enable_progress_bar = true")
                con.execute("SET enable_progress_bar_print = false")
            schema = _register(con, data, cols, [None])
            yield DuckDBSession(con, cols, schema)
        finally:
            con.close()


ENGINE = DuckDBEngine()
