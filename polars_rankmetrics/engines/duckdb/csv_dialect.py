"""CSV files read by DuckDB as Polars reads them: Polars' dialect, each column's type sniffed from
all its values (a sample of rows would type a column BIGINT from its first values and round a
later 0.5), records longer than the header refused, and the score, truth, weight and pred
columns that DuckDB's sniffer typed as text read as numbers where every value is one written
without a leading zero."""

from __future__ import annotations

import duckdb
import polars as pl

from polars_rankmetrics.engines.sql.export import quote_identifier
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.inputs.media import csv_header, malformed
from polars_rankmetrics.inputs.sources import Files, is_url

# Polars' dialect, which the sniffer may miss on a ragged line; every row sniffed.
_OPTIONS = (
    "delim = ',', quote = '\"', escape = '\"', header = true, null_padding = true, sample_size = -1"
)


def read_csv(paths: str) -> str:
    """A SELECT over the CSV files ``paths`` (a list of quoted string literals)."""
    return f"SELECT * FROM read_csv([{paths}], {_OPTIONS})"


def check_fields(schema: pl.Schema, files: Files) -> None:
    """Refuse CSV files with a record longer than the header: the reader pads a short record
    with nulls (which the checks refuse, as on Polars) and gives a long one's extra fields a
    column of their own (``schema``: the columns read)."""
    paths = [path for path in files.paths if not is_url(path)]
    if paths and len(schema) > max(len(csv_header(path)) for path in paths):
        raise ValueError(
            malformed(files) or "a CSV file has a record with more fields than its header"
        )


def numbers_read_as_text(
    con: duckdb.DuckDBPyConnection, query: str, schema: pl.Schema, cols: Columns
) -> str:
    """``query`` (over CSV files, the source ``rankmetrics_source`` of ``schema``) with the
    score, truth, weight and pred columns that DuckDB's sniffer typed as text but whose every
    value is a number cast to DOUBLE. The sniffer takes ``inf``, ``-inf`` and ``NaN`` (as Polars
    and pandas write them) for text; Polars reads them as numbers, and so must every engine. A
    column with any other text, or a number written with a leading zero (which both readers
    take for an id), stays text, and is refused as not numeric."""
    roles = [c for c in (cols.score, cols.truth, cols.weight, cols.pred) if c is not None]
    text = [c for c in dict.fromkeys(roles) if c in schema and schema[c] == pl.String]
    if not text:
        return query
    counts = ", ".join(
        f"count(*) FILTER (WHERE {q} IS NOT NULL AND (TRY_CAST({q} AS DOUBLE) IS NULL "
        f"OR regexp_matches({q}, '^0[0-9]')))"
        for q in map(quote_identifier, text)
    )
    found = con.execute(f"SELECT {counts} FROM rankmetrics_source").fetchall()[0]
    numbers = [quote_identifier(c) for c, others in zip(text, found, strict=True) if not others]
    if not numbers:
        return query
    casts = ", ".join(f"CAST({q} AS DOUBLE) AS {q}" for q in numbers)
    return f"SELECT * REPLACE ({casts}) FROM ({query})"
