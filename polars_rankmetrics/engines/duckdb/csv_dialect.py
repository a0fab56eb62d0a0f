"""CSV files read by DuckDB as Polars reads them: the columns and types of
:func:`~polars_rankmetrics.inputs.sources.csv_schema` handed to DuckDB's reader, which then
sniffs nothing. Its sniffer would type a column otherwise: a number with spaces around it
(`` 0.9``) or a truth written ``t``/``f`` as a number or a boolean where Polars reads text, a
date as a date, and it would trim the header's names. RFC 4180's dialect as on Polars: ``""`` is
an empty string, and a blank line is no row (a record of empty fields, ``,,,``, is refused by
``csv_schema`` before any engine reads the files)."""

from __future__ import annotations

import polars as pl

from polars_rankmetrics.engines.sql.export import quote_identifier, quote_literal

# What Polars' inference of a CSV column gives, as DuckDB's types.
_TYPES = {
    pl.Int64: "BIGINT", pl.Int128: "HUGEINT", pl.UInt64: "UBIGINT", pl.Float64: "DOUBLE",
    pl.Boolean: "BOOLEAN", pl.String: "VARCHAR",
}  # fmt: skip

_OPTIONS = "delim = ',', quote = '\"', escape = '\"', header = true, allow_quoted_nulls = false"


def read_csv(paths: str, schema: pl.Schema) -> str:
    """A SELECT over the CSV files ``paths`` (a list of quoted string literals) of the columns
    and types ``schema`` (:func:`~polars_rankmetrics.inputs.sources.csv_schema`), without the
    rows of nulls that blank lines are (DuckDB reads one as such in a file of one column)."""
    columns = ", ".join(
        f"{quote_literal(name)}: {quote_literal(_TYPES[dtype.base_type()])}"
        for name, dtype in schema.items()
    )
    empty = " AND ".join(f"{quote_identifier(name)} IS NULL" for name in schema)
    return (
        f"SELECT * FROM read_csv([{paths}], {_OPTIONS}, columns = {{{columns}}}) "
        f"WHERE NOT ({empty})"
    )
