"""``rankmetrics_source``: the user's table as a DuckDB view, whatever its kind (a DuckDB
relation, files, a pyarrow dataset, a frame), its ``by`` columns renamed as the evaluation names
them inside. Names are quoted, paths quoted as string literals, frames registered on the
connection (temporary, like every view here)."""

from __future__ import annotations

from typing import Any

import duckdb
import polars as pl

from polars_rankmetrics.checks import types
from polars_rankmetrics.engines.duckdb.csv_dialect import read_csv
from polars_rankmetrics.engines.sql.export import quote_identifier, quote_literal
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.inputs.sources import Files, Source, is_url


def _is_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    found = con.execute(
        "SELECT count(*) FROM (SELECT table_name AS name FROM duckdb_tables() "
        "UNION ALL SELECT view_name FROM duckdb_views()) WHERE name = ?",
        [name],
    ).fetchall()
    return bool(found[0][0] > 0)


def _literal_glob(path: str) -> str:
    """A file path (already expanded) as a DuckDB glob matching only itself: ``[``, ``*`` and
    ``?`` in a real file name bracketed."""
    return "".join(f"[{c}]" if c in "[*?" else c for c in path)


# A column whose chunks hold fewer rows than this on average is exported in one chunk: DuckDB
# pays a fixed cost for each chunk it scans, which many small chunks make larger than the cost
# of copying the column whole.
_CHUNK_ROWS = 10_000


def _arrow(frame: pl.DataFrame) -> object:
    """``frame`` as an Arrow table of each column's own chunks, without a copy. (``to_arrow``
    cuts the frame into record batches, which copies every column whose chunks do not line up
    with the others': a top-k piece's columns of predictions, ranks and gains, joined apart.)
    A column of small chunks (:data:`_CHUNK_ROWS`), or of chunks Arrow finds invalid (Polars
    exports an empty slice of strings with an offset past its buffer), is exported whole.
    pyarrow is imported here, where a frame is registered: a run over files never loads it."""
    import pyarrow as pa  # type: ignore[import-untyped]

    return pa.table({column.name: _chunks(pa, column) for column in frame.get_columns()})


def _chunks(pa: Any, column: pl.Series) -> Any:
    """``column`` as an Arrow chunked array (``pa``: pyarrow) of its own chunks, or of one
    chunk (:func:`_arrow`)."""
    if len(column) >= _CHUNK_ROWS * column.n_chunks():
        chunks = pa.chunked_array(column)
        try:
            chunks.validate()
            return chunks
        except pa.ArrowInvalid:
            pass
    return pa.chunked_array([column.to_arrow()])


def _source_query(
    con: duckdb.DuckDBPyConnection, source: Source, cols: Columns, tables: bool
) -> tuple[str, Files | None]:
    """A SELECT over ``source``, and the files it reads if it reads files. A string is the name
    of a table or view of ``con`` if it has one (``tables``: a new connection has none), else a
    path. A frame is registered once the columns ``cols`` reads are checked as the Polars
    engine checks them (:func:`~polars_rankmetrics.checks.types.check_frame`)."""
    if source.kind == "duckdb":
        return source.data.sql_query(), None  # type: ignore[attr-defined]
    if source.kind == "dataset":
        con.register("rankmetrics_frame", source.data)  # scanned, not loaded
        return "SELECT * FROM rankmetrics_frame", None
    if source.kind != "paths":
        frame = source.in_memory()
        # The frame's own types checked as the Polars engine checks them: DuckDB reads some
        # through Arrow as others (Object as bytes, Duration as an interval).
        types.check_frame(frame, cols)
        halves = [name for name, dtype in frame.schema.items() if dtype == pl.Float16]
        if halves:  # Arrow's half floats, which DuckDB does not read, widened exactly
            frame = frame.with_columns(pl.col(halves).cast(pl.Float32))
        con.register("rankmetrics_frame", _arrow(frame))
        return "SELECT * FROM rankmetrics_frame", None
    if isinstance(source.data, str) and tables and _is_table(con, source.data):
        return f"SELECT * FROM {quote_identifier(source.data)}", None
    files = source.files
    if files.format != "ndjson":
        # The files' types as Polars reads them (a Parquet file's Arrow types, a CSV file's
        # inferred ones) checked as the Polars engine checks them: DuckDB reads a Parquet
        # Duration as BIGINT and a 128-bit integer as bytes.
        types.check_frame(source.polars(), cols)
    paths = ", ".join(
        quote_literal(path if is_url(path) else _literal_glob(path)) for path in files.paths
    )
    if files.format == "csv":
        return read_csv(paths, source.polars().collect_schema()), files
    if files.format == "ndjson":
        return f"SELECT * FROM read_json([{paths}], format = 'newline_delimited')", files
    hive = "true" if files.hive else "false"
    return f"SELECT * FROM read_parquet([{paths}], hive_partitioning = {hive})", files


def register_source(
    con: duckdb.DuckDBPyConnection, source: Source, cols: Columns, *, tables: bool = True
) -> pl.Schema:
    """``rankmetrics_source`` over ``source``, those of its ``by`` columns it has renamed as
    ``cols`` names them inside (:meth:`.Columns.inside`); its schema, which the caller checks
    (:func:`~polars_rankmetrics.checks.types.check_schema`: a missing column is refused
    under the user's name). ``tables``: see :func:`_source_query`.

    A relation is read where it is when its SQL stands alone (over files, say); one over
    objects of another connection (its tables, registered frames) is read into memory through
    Arrow."""
    try:
        query, files = _source_query(con, source, cols, tables)
        con.execute(f"CREATE OR REPLACE TEMP VIEW rankmetrics_source AS {query}")
    except duckdb.CatalogException:
        if source.kind != "duckdb":
            raise
        query, files = _source_query(con, Source(source.polars()), cols, tables)
        con.execute(f"CREATE OR REPLACE TEMP VIEW rankmetrics_source AS {query}")
    except duckdb.Error as error:
        if "httpfs" not in str(error):  # DuckDB names the extension only for a URL
            raise
        raise ValueError(
            f"DuckDB cannot read the URL(s) {source.data!r} without its httpfs extension, which it "
            "could not install here (no network?): INSTALL httpfs once where the network allows, "
            "or use engine='polars'"
        ) from None
    schema = source_schema(con)
    aliases = [(name, inside) for name, inside in cols.aliases if name in schema]
    if not aliases:
        return schema
    renames = ", ".join(f"{quote_identifier(a)} AS {quote_identifier(b)}" for a, b in aliases)
    con.execute(
        f"CREATE OR REPLACE TEMP VIEW rankmetrics_source AS "
        f"SELECT * RENAME ({renames}) FROM ({query})"
    )
    return source_schema(con)


def count_rows(con: duckdb.DuckDBPyConnection) -> int:
    """The rows of ``rankmetrics_source``."""
    return int(con.execute("SELECT count(*) FROM rankmetrics_source").fetchall()[0][0])


def source_schema(con: duckdb.DuckDBPyConnection) -> pl.Schema:
    """The columns of ``rankmetrics_source`` and their Polars types."""
    return pl.DataFrame(con.sql("SELECT * FROM rankmetrics_source LIMIT 0")).schema
