"""The DuckDB engine: the views of ``sql/`` over any source, evaluated lazily and spilling to disk.

The SQL files are the single source of the SQL; this module only names the input for them. It
creates the three relations the views read (docs/engines.md, "SQL alone"):

- ``rankmetrics_input(grp, sample, label, score, truth, weight, pred, predicted, propensity)``:
  the user's table with its columns renamed (identifiers quoted, never pasted), ``grp`` a struct
  of the ``by`` columns;
- ``rankmetrics_cutoffs(k, unscored)``: the dcg/ndcg cut-offs wanted (NULL for no cut);
- ``rankmetrics_parameters(beta, zero_division, n_labels)``: the threshold metrics' parameters
  and a top-k table's label space (numbers written as checked literals).

A session (:class:`DuckDBSession`) owns its connection and closes it however the run ends. The
views are created once per connection and never redefined: a table split into buckets is
written once as Parquet (``COPY ... PARTITION_BY``), and each bucket gets a connection of its own.
Every view is temporary, so nothing is left in a user's database file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, Unpack

import duckdb
import polars as pl

from polars_rankmetrics.checks import validation
from polars_rankmetrics.engines.base import Settings
from polars_rankmetrics.engines.interrupts import stopping
from polars_rankmetrics.engines.memory import (
    ENGINE_SHARE,
    engine_limit,
    engine_share,
    parse_size,
)
from polars_rankmetrics.engines.sql import results as sql_results
from polars_rankmetrics.engines.sql.export import (
    input_statements,
    quote_identifier,
    quote_literal,
    view_names,
    view_statements,
    views_read,
    words,
)
from polars_rankmetrics.engines.sql.session import SQLSession, session_views, setup_statements
from polars_rankmetrics.inputs.columns import ColumnNames, Columns, documented
from polars_rankmetrics.inputs.media import csv_header, malformed
from polars_rankmetrics.inputs.sources import Files, Source, is_url
from polars_rankmetrics.metrics.parameters import parameters
from polars_rankmetrics.metrics.registry import Context, MetricKey

_INPUT_VIEWS = (
    "rankmetrics_parameters", "rankmetrics_cutoffs", "rankmetrics_input", "rankmetrics_source",
)  # fmt: skip


def connect(
    memory_limit: str | None = None, temp_directory: Path | None = None, *,
    share: float = ENGINE_SHARE,
) -> duckdb.DuckDBPyConnection:  # fmt: skip
    """An in-memory DuckDB connection set up as the engine uses it.

    Group keys of a narrow integer span are aggregated in perfect hash tables (see
    :data:`_ONE_GROUP`), and Parquet float columns are read as possibly holding NaN
    (:func:`expect_nan`).

    Parameters
    ----------
    memory_limit
        The memory budget of the whole process, such as ``"1GB"``: DuckDB gets its share
        (:mod:`polars_rankmetrics.engines.memory`) and spills beyond it. None: DuckDB's default.
    temp_directory
        Where DuckDB spills under a ``memory_limit`` (its ``duckdb`` subdirectory).
    share
        The part of ``memory_limit`` DuckDB's own limit is set to (the rest is left to the
        process around it).

    Returns
    -------
    duckdb.DuckDBPyConnection
        A new connection, for :func:`register_views` for example.

    Raises
    ------
    ValueError
        For a budget DuckDB does not accept.

    Examples
    --------
    >>> from polars_rankmetrics.duckdb_engine import connect
    >>> con = connect("1GB")
    >>> con.sql("SELECT current_setting('parquet_can_have_nan')").fetchall()
    [(True,)]
    """
    config: dict[str, str | bool | int | float | list[str]] = {
        "preserve_insertion_order": "false", "perfect_ht_threshold": _PERFECT_HASH_BITS,
    }  # fmt: skip
    if memory_limit is not None:
        config["memory_limit"] = engine_limit(memory_limit, share)
        # Under a budget, jemalloc's background threads hand memory freed by an idle DuckDB
        # back to the system (Arrow buffers of results that the caller frees later).
        config["allocator_background_threads"] = True
        if temp_directory is not None:
            config["temp_directory"] = str(temp_directory / "duckdb")
    try:
        con = duckdb.connect(config=config)
    except duckdb.Error as error:
        raise ValueError(f"bad DuckDB setting: {error}") from None
    expect_nan(con)
    # Each reference to a view over Parquet files binds read_parquet again: with the metadata
    # cache, the connection reads each file's footer once.
    con.execute("SET parquet_metadata_cache = true")
    return con


def expect_nan(con: duckdb.DuckDBPyConnection) -> None:
    """Have ``con`` read any Parquet float column as possibly holding NaN.

    Parquet writers leave NaN out of a float column's min/max, as the format asks, and most
    write no NaN count. DuckDB reads such bounds as "no NaN" by default and folds ``isnan``, a
    comparison, or a column whose bounds are equal, to what the bounds imply: a NaN score would
    pass the checks and be ranked as another value. With ``parquet_can_have_nan`` the bounds
    leave room for NaN, and nothing a NaN contradicts is inferred.
    """
    con.execute("SET parquet_can_have_nan = true")


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


def _source_query(
    con: duckdb.DuckDBPyConnection, source: Source, tables: bool
) -> tuple[str, Files | None]:
    """A SELECT over ``source``, and the files it reads if it reads files; names quoted, paths
    quoted as string literals, frames registered on the connection (temporary, like every view
    here). A string is the name of a table or view of ``con`` if it has one (``tables``: a new
    connection has none), else a path."""
    if source.kind == "duckdb":
        return source.data.sql_query(), None  # type: ignore[attr-defined]
    if source.kind == "dataset":
        con.register("rankmetrics_frame", source.data)  # scanned, not loaded
        return "SELECT * FROM rankmetrics_frame", None
    if source.kind != "paths":
        con.register("rankmetrics_frame", source.in_memory().to_arrow())
        return "SELECT * FROM rankmetrics_frame", None
    if isinstance(source.data, str) and tables and _is_table(con, source.data):
        return f"SELECT * FROM {quote_identifier(source.data)}", None
    files = source.files
    paths = ", ".join(
        quote_literal(path if is_url(path) else _literal_glob(path)) for path in files.paths
    )
    if files.format == "csv":  # Polars' dialect, which the sniffer may miss on a ragged line
        options = "delim = ',', quote = '\"', escape = '\"', header = true, null_padding = true"
        return f"SELECT * FROM read_csv([{paths}], {options})", files
    if files.format == "ndjson":
        return f"SELECT * FROM read_json([{paths}], format = 'newline_delimited')", files
    hive = "true" if files.hive else "false"
    return f"SELECT * FROM read_parquet([{paths}], hive_partitioning = {hive})", files


def _register(
    con: duckdb.DuckDBPyConnection, source: Source, cols: Columns, *, tables: bool = True
) -> pl.Schema:
    """``rankmetrics_source`` over ``source``, its ``by`` columns renamed as ``cols`` names them
    inside (:meth:`.Columns.inside`); its schema, checked. ``tables``: see :func:`_source_query`.

    A relation is read where it is when its SQL stands alone (over files, say); one over
    objects of another connection (its tables, registered frames) is read into memory through
    Arrow."""
    try:
        query, files = _source_query(con, source, tables)
        con.execute(f"CREATE OR REPLACE TEMP VIEW rankmetrics_source AS {query}")
    except duckdb.CatalogException:
        if source.kind != "duckdb":
            raise
        query, files = _source_query(con, Source(source.polars()), tables)
        con.execute(f"CREATE OR REPLACE TEMP VIEW rankmetrics_source AS {query}")
    except duckdb.Error as error:
        if "httpfs" not in str(error):  # DuckDB names the extension only for a URL
            raise
        raise ValueError(
            f"DuckDB cannot read the URL(s) {source.data!r} without its httpfs extension, which it "
            "could not install here (no network?): INSTALL httpfs once where the network allows, "
            "or use engine='polars'"
        ) from None
    if files is not None and files.format == "csv":
        _check_fields(con, files)
        query = _numbers_read_as_text(con, query, cols.in_source())
        con.execute(f"CREATE OR REPLACE TEMP VIEW rankmetrics_source AS {query}")
    validation.check_schema(_schema(con), cols.in_source(), partial(_count_rows, con))
    if cols.aliases:
        renames = ", ".join(
            f"{quote_identifier(a)} AS {quote_identifier(b)}" for a, b in cols.aliases
        )
        con.execute(
            f"CREATE OR REPLACE TEMP VIEW rankmetrics_source AS "
            f"SELECT * RENAME ({renames}) FROM ({query})"
        )
    return _schema(con)


def _check_fields(con: duckdb.DuckDBPyConnection, files: Files) -> None:
    """Refuse CSV files with a record longer than the header: the reader pads a short record
    with nulls (which the checks refuse, as on Polars) and gives a long one's extra fields a
    column of their own."""
    paths = [path for path in files.paths if not is_url(path)]
    if paths and len(_schema(con)) > max(len(csv_header(path)) for path in paths):
        raise ValueError(
            malformed(files.paths) or "a CSV file has a record with more fields than its header"
        )


def _numbers_read_as_text(con: duckdb.DuckDBPyConnection, query: str, cols: Columns) -> str:
    """``query`` (over CSV files) with the score, truth, weight and pred columns that DuckDB's
    sniffer typed as text but whose every value is a number cast to DOUBLE. The sniffer takes
    ``inf``, ``-inf`` and ``NaN`` (as Polars and pandas write them) for text; Polars reads them
    as numbers, and so must every engine. A column with any other text stays text, and is
    refused as not numeric."""
    schema = _schema(con)
    roles = [c for c in (cols.score, cols.truth, cols.weight, cols.pred) if c is not None]
    text = [c for c in dict.fromkeys(roles) if c in schema and schema[c] == pl.String]
    if not text:
        return query
    counts = ", ".join(
        f"count(*) FILTER (WHERE {q} IS NOT NULL AND TRY_CAST({q} AS DOUBLE) IS NULL)"
        for q in map(quote_identifier, text)
    )
    found = con.execute(f"SELECT {counts} FROM rankmetrics_source").fetchall()[0]
    numbers = [quote_identifier(c) for c, others in zip(text, found, strict=True) if not others]
    if not numbers:
        return query
    casts = ", ".join(f"CAST({q} AS DOUBLE) AS {q}" for q in numbers)
    return f"SELECT * REPLACE ({casts}) FROM ({query})"


def _count_rows(con: duckdb.DuckDBPyConnection) -> int:
    return int(con.execute("SELECT count(*) FROM rankmetrics_source").fetchall()[0][0])


def _schema(con: duckdb.DuckDBPyConnection) -> pl.Schema:
    return pl.DataFrame(con.sql("SELECT * FROM rankmetrics_source LIMIT 0")).schema


@documented(ColumnNames)
def register_views(
    con: duckdb.DuckDBPyConnection,
    source: Any,
    *,
    by: str | Sequence[str] | None = None,
    cutoffs: Iterable[int | None] = (None,),
    threshold: float = 0.5,
    beta: float = 1.0,
    zero_division: float | str = 0.0,
    **columns: Unpack[ColumnNames],
) -> None:
    """Create the rankmetrics views on ``con`` over ``source``, as temporary views.

    Nothing is computed yet, and nothing is saved in the database: the views last as long as
    the connection, and :func:`unregister_views` removes them. The connection is set to read
    Parquet float columns as possibly holding NaN (``parquet_can_have_nan``), so that a NaN is
    refused whatever the file's statistics say.

    Parameters
    ----------
    con
        A DuckDB connection.
    source
        A DuckDB relation, a Polars frame, the name of a table or view of ``con``, or a Parquet
        path, glob or list of paths (quoted, never pasted into SQL).
    by
        The column(s) splitting the table into independent evaluations: ``grp`` in the views
        (a struct of several, 0 without ``by``).
    cutoffs
        The dcg/ndcg cut-offs of ``rankmetrics_summary``'s rows (None: no cut).
    threshold, beta, zero_division
        For the threshold metrics, as for :func:`~polars_rankmetrics.evaluate`.
    **columns

    Returns
    -------
    None
        Afterwards ``rankmetrics_per_sample`` and ``rankmetrics_summary`` answer queries (one
        row per group, sample and cut-off ``k``), the threshold metrics
        ``rankmetrics_set_per_sample`` and ``rankmetrics_set_summary``, the paired comparisons
        ``rankmetrics_paired``, and the checks ``rankmetrics_row_checks``,
        ``rankmetrics_group_labels`` and ``rankmetrics_sample_checks``.

    Raises
    ------
    ValueError
        For a missing column or a column of the wrong type (the row checks are views to query),
        no cut-off, or a ``source`` named like one of the views (``rankmetrics_input``, ...).

    Examples
    --------
    >>> import duckdb
    >>> import polars_rankmetrics as rm
    >>> con = duckdb.connect()
    >>> df = rm.from_dense([[1, 0, 1], [0, 1, 0]], [[0.9, 0.5, 0.2], [0.3, 0.8, 0.1]])
    >>> register_views(con, df)
    >>> con.sql("SELECT lrap, round(ndcg, 6) AS ndcg FROM rankmetrics_summary").fetchall()
    [(0.9166666666666666, 0.95986)]
    """
    cols = Columns.of(by=by, **columns)
    context = parameters(threshold=threshold, beta=beta, zero_division=zero_division)
    cuts = list(cutoffs)
    if not cuts:
        raise ValueError("cutoffs= needs at least one cut-off: None (the whole ranking) or a K")
    if isinstance(source, str) and source.lower() in (*_INPUT_VIEWS, *view_names()):
        raise ValueError(
            f"the source {source!r} has the name of a view register_views defines over it; "
            "rename it, or, to run the views over your own rankmetrics_input, "
            "rankmetrics_cutoffs and rankmetrics_parameters, run the statements of "
            "`rankmetrics sql` (docs/engines.md, SQL alone)"
        )
    expect_nan(con)
    schema = _register(con, Source.of(source), cols)
    statements = input_statements(
        "rankmetrics_source", cols, "duckdb", cuts, temporary=True,
        bool_truth=schema[cols.truth] == pl.Boolean,
        bool_pred=cols.pred is not None and schema[cols.pred] == pl.Boolean,
        threshold=context.threshold, beta=context.beta, zero_division=context.zero_division,
    )  # fmt: skip
    for statement in [*statements, *view_statements("duckdb", temporary=True)]:
        con.execute(statement)


def unregister_views(con: duckdb.DuckDBPyConnection) -> None:
    """Remove what :func:`register_views` created on ``con``.

    Parameters
    ----------
    con
        A connection :func:`register_views` was called on (once or more; calling this on a
        connection without the views does nothing).

    Returns
    -------
    None

    Examples
    --------
    >>> import duckdb
    >>> import polars_rankmetrics as rm
    >>> con = duckdb.connect()
    >>> register_views(con, rm.from_dense([[1, 0]], [[0.9, 0.1]]))
    >>> unregister_views(con)
    >>> query = "SELECT count(*) FROM duckdb_views() WHERE view_name LIKE 'rankmetrics%'"
    >>> con.sql(query).fetchall()
    [(0,)]
    """
    for view in (*reversed(view_names()), *_INPUT_VIEWS):  # each reads the ones before it
        con.execute(f"DROP VIEW IF EXISTS {view}")
    con.unregister("rankmetrics_frame")


# DuckDB counts a sample's distinct labels from the bits of its labels rather than with
# count(DISTINCT label), which keeps a hash set per sample: the set bits of a bitstring over the
# label range (bit_count(bitstring_agg(...))) for integer labels spanning at most 1024 values,
# which caps each sample's bitstring at 128 bytes; of an OR of one bit per label in a 128-bit
# integer (HUGEINT), cheaper still, for at most 127.
_BITSTRING_MAX_LABELS = 1024
_HUGEINT_BITS = 127  # 1 << 127 overflows the signed 128 bits
_DISTINCT_LABELS = "count(DISTINCT label) AS distinct_labels"
# Without a weight column every row's weight is 1: the sample counts' weight columns are
# constants rather than two aggregates DuckDB does not fold.
_UNWEIGHTED = {
    "max(weight) AS weight": "CAST(1 AS DOUBLE) AS weight",
    "CASE WHEN min(weight) < max(weight) THEN 1 ELSE 0 END AS varying_weight":
        "0 AS varying_weight",
}  # fmt: skip
# Without by, every grp is 0: the two aggregations over every row, the sample counts and the
# rows coverage error joins back to them, group (and join) by the sample alone, which DuckDB
# aggregates in a perfect hash table (an array indexed by the sample id; each thread's holds
# every id of the span) where the ids span at most 2^_PERFECT_HASH_BITS values, instead of
# hashing (0, sample). The threshold stays below the span at which (0, sample), two keys, would
# get a perfect table too, whose size outgrows what it spares.
_ONE_GROUP = {
    "rankmetrics_sample_counts": {
        "        grp, sample,\n": "        0 AS grp, sample,\n",
        "GROUP BY grp, sample": "GROUP BY sample",
    },
    "rankmetrics_coverage_per_sample": {
        "        i.grp, i.sample,\n": "        0 AS grp, i.sample,\n",
        "ON i.grp = s.grp AND i.sample = s.sample": "ON i.sample = s.sample",
        "GROUP BY i.grp, i.sample": "GROUP BY i.sample",
    },
}  # fmt: skip
_PERFECT_HASH_BITS = 18
# The positive ranks by pairs (rankmetrics_positive_ranks_by_pairs) where a table has at most
# this many pairs per row that the windows would rank (a pair costs DuckDB less than a row
# ranked by the windows: benchmarks/floors.py); counted on a reservoir of _ESTIMATE_SAMPLES
# samples. The choice changes no value, only the time.
_PAIRS_PER_RANKED_ROW = 3
_ESTIMATE_SAMPLES = 500
# The fewest pairs (each positive paired with the positives scoring at least as high) and the
# most rows ranked (every row), from the held sample counts: beyond the ratio, the windows
# without counting the pairs (which, with many positives ranking low, cost the count itself).
_BOUNDS = """
SELECT
    sum(n_positives * (n_positives + 1) / 2) AS least_pairs, sum(n_rows) AS most_ranked
FROM rankmetrics_sample_counts
"""
# Bytes a row of the positive ranks takes in DuckDB's buffers: its ten 8-byte columns.
_POSITIVE_RANK_BYTES = 80


def sample_counts(span: tuple[int, int] | None, weighted: bool, grouped: bool) -> str:
    """``rankmetrics_sample_counts`` of ``sql/`` as DuckDB computes it, the same counts: the
    distinct labels as set bits where the labels are integers spanning at most 1024 values
    (``span``: the lowest and highest), the weight the constant 1 without a weight column (not
    ``weighted``), grouped by the sample alone without ``by`` (not ``grouped``)."""
    [view] = [s for s in view_statements("duckdb", temporary=True) if _DISTINCT_LABELS in s]
    if span is not None and span[1] - span[0] < _BITSTRING_MAX_LABELS:
        lowest, highest = int(span[0]), int(span[1])
        if highest - lowest < _HUGEINT_BITS:
            bit = f"CAST(1 AS HUGEINT) << CAST(label - {lowest} AS HUGEINT)"
            bits = f"bit_count(bit_or({bit})) AS distinct_labels"
        else:
            bits = f"bit_count(bitstring_agg(label, {lowest}, {highest})) AS distinct_labels"
        view = view.replace(_DISTINCT_LABELS, bits)
    view = _rewritten(view, {} if weighted else _UNWEIGHTED)
    return view if grouped else one_group(view)


def one_group(statement: str) -> str:
    """``statement``, where it creates a view of :data:`_ONE_GROUP`, for a table without ``by``:
    grouped by the sample alone."""
    view = re.search(r"VIEW (\w+) AS", statement)
    return _rewritten(statement, _ONE_GROUP.get(view[1], {}) if view else {})


def _rewritten(statement: str, rewrites: Mapping[str, str]) -> str:
    for text, replacement in rewrites.items():
        assert statement.count(text) == 1, text  # the view of sql/ says it so, once
        statement = statement.replace(text, replacement)
    return statement


# The pairs the positive ranks by pairs would count and the rows the windows would rank, over a
# reservoir of _ESTIMATE_SAMPLES samples (repeatable: the same choice for the same table).
_ESTIMATE = f"""
WITH chosen AS (
    SELECT grp, sample, lowest_positive
    FROM rankmetrics_sample_counts USING SAMPLE reservoir({_ESTIMATE_SAMPLES} ROWS) REPEATABLE (7)
), chosen_rows AS MATERIALIZED (
    SELECT i.grp, i.sample, i.score, i.truth, c.lowest_positive
    FROM rankmetrics_input AS i JOIN chosen AS c ON i.grp = c.grp AND i.sample = c.sample
)
SELECT
    (SELECT count(*) FROM chosen_rows AS p JOIN chosen_rows AS c
        ON c.grp = p.grp AND c.sample = p.sample AND c.score >= p.score WHERE p.truth > 0)
        AS pairs,
    (SELECT count(*) FROM chosen_rows WHERE score >= lowest_positive) AS ranked
"""


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
        """``shared``: :func:`_shared_views`; ``ranks``: whether the run reads the positive ranks
        (:meth:`_choose_positive_ranks`)."""
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
        """:meth:`SQLSession.piece`, the session's :func:`_shared_views` computed once first, into
        temporary tables of the columns they name (only here: a session that only checks and
        splits a table too large for the budget never computes them over the whole of it). The
        sample counts are one of them: the sample checks and the metrics read one aggregation."""
        self._define_sample_counts()
        for view, columns in self._shared.items():  # the sample counts before the ranks
            if view == "rankmetrics_positive_ranks" and not self._positives_fit():
                continue
            self.con.execute(f"CREATE TEMP TABLE {view}_once AS SELECT {columns} FROM {view}")
            self.con.execute(f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT * FROM {view}_once")
            if view == "rankmetrics_sample_counts" and self._ranks:
                self._choose_positive_ranks()
        self._shared = {}
        return super().piece(tables, keys, context, check)

    def _choose_positive_ranks(self) -> None:
        """The positive ranks by pairs where a reservoir of samples has at most
        :data:`_PAIRS_PER_RANKED_ROW` pairs per row the windows would rank, else by the windows
        (see ``rankmetrics_positive_ranks_by_pairs`` in ``sql/``); by the windows outright where
        the sample counts' bounds (:data:`_BOUNDS`) exceed the ratio (many positives: their
        pairs alone outnumber the rows)."""
        bounds = self._frame(_BOUNDS).row(0, named=True)
        if (bounds["least_pairs"] or 0) > _PAIRS_PER_RANKED_ROW * (bounds["most_ranked"] or 0):
            return
        found = self._frame(_ESTIMATE).row(0, named=True)
        if (found["pairs"] or 0) <= _PAIRS_PER_RANKED_ROW * (found["ranked"] or 0):
            self.con.execute(
                "CREATE OR REPLACE TEMP VIEW rankmetrics_positive_ranks AS "
                "SELECT * FROM rankmetrics_positive_ranks_by_pairs"
            )

    def _positives_fit(self) -> bool:
        """Whether the positive ranks are held: without a memory budget, and under one where
        their rows (the held sample counts' positives, :data:`_POSITIVE_RANK_BYTES` each) take at
        most half of DuckDB's share, the rest left to the windows that rank them. Beyond, a held
        table would spill, which costs more than computing the ranks once per view."""
        if self._limit is None:
            return True
        found = self._frame("SELECT sum(n_positives) AS n FROM rankmetrics_sample_counts_once")
        return int(found["n"][0] or 0) * _POSITIVE_RANK_BYTES <= self._limit / 2

    def _frame(self, sql: str, parameters: Mapping[str, object] | None = None) -> pl.DataFrame:
        # Through the relation's Arrow stream: .pl() would import pyarrow.
        return pl.DataFrame(self.con.sql(sql, params=dict(parameters) if parameters else None))

    def sample_summary(self) -> pl.DataFrame:
        """:meth:`SQLSession.sample_summary` over DuckDB's :func:`sample_counts`."""
        self._define_sample_counts()
        return super().sample_summary()

    def _define_sample_counts(self) -> None:
        """Once: the sample counts as DuckDB computes them (:func:`sample_counts`; the label
        range from Parquet's statistics at no cost)."""
        if self._counts_defined:
            return
        self._counts_defined = True
        weighted, grouped = self.cols.weight is not None, bool(self.cols.by)
        self.con.execute(sample_counts(self.label_range(), weighted, grouped))

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


def _shared_views(
    views: set[str], statements: Sequence[str], sample_counts: Sequence[str]
) -> dict[str, str]:
    """The views that the views a run reads (``views``, defined by ``statements``) would each
    recompute, DuckDB inlining a view at every reference, and the columns to hold of each
    (``sample_counts``: the columns of the sample counts' view): the discounts (a row per
    position, read by many joins of the gain and retrieval views), the sample counts (a row per
    sample, read by the sample checks, twice by the positive ranks and by the views that read
    them; only their columns that some statement names: hamming loss needs none of the ranking
    counts), and, when two or more of the views read them, the positive ranks (the positive rows
    alone; under a memory budget only where they fit,
    :meth:`DuckDBSession._positives_fit`)."""
    read = views_read(views)
    shared = {view: "*" for view in ("rankmetrics_discounts",) if view in read}
    if "rankmetrics_sample_counts" in read:
        named = words(s for s in statements if "VIEW rankmetrics_sample_counts AS" not in s)
        ranked = len([view for view in views if sql_results.ranks_positives(view)]) > 1
        named |= {"n_positives"} if ranked else set()  # what _positives_fit reads
        columns = [c for c in sample_counts if c in named and c not in ("grp", "sample")]
        shared["rankmetrics_sample_counts"] = ", ".join(["grp", "sample", *columns])
        if ranked:  # the positive ranks read the sample counts
            shared["rankmetrics_positive_ranks"] = "*"
    return shared


def _columns(con: duckdb.DuckDBPyConnection, view: str) -> list[str]:
    """The columns of ``view``."""
    return [row[0] for row in con.execute(f"SELECT column_name FROM (DESCRIBE {view})").fetchall()]


def _interrupt(con: duckdb.DuckDBPyConnection) -> None:
    """Stop ``con``'s running query (from the signal watcher's thread, :mod:`polars_rankmetrics.
    interrupts`); nothing if none runs or the session has just closed it."""
    try:
        con.interrupt()
    except duckdb.ConnectionException:
        pass


class DuckDBEngine:
    """DuckDB relations, Polars frames (a LazyFrame is collected), Parquet paths and globs."""

    name = "duckdb"
    errors: tuple[type[Exception], ...] = (duckdb.Error,)
    splits = True
    scans_rank_order = False
    # Calibrated with benchmarks/report.py: at the usual share, DuckDB's windows (the label
    # precisions), beside what the buckets' per-sample frames leave in the allocators, take a
    # large HTML report past its budget.
    per_sample_share = 0.5

    def reads_scanned_ranks(self, keys: Sequence[MetricKey]) -> bool:
        return False

    @contextmanager
    def open(self, data: Any, cols: Columns, settings: Settings) -> Iterator[DuckDBSession]:
        share = engine_share(settings.tables, self.per_sample_share)
        con = connect(settings.memory_limit, settings.spill_dir, share=share)
        try:
            with stopping(partial(_interrupt, con)):
                if settings.track_progress:
                    con.execute("SET enable_progress_bar = true")
                    con.execute("SET enable_progress_bar_print = false")
                schema = _register(con, Source.of(data), cols, tables=False)
                views = session_views(settings.keys, settings.tables) | set(settings.views)
                ranks = "rankmetrics_positive_ranks" in views_read(views)
                if ranks:  # the other plan of the positive ranks, for the session's choice
                    pairs = "rankmetrics_positive_ranks_by_pairs"
                    settings = replace(settings, views=(*settings.views, pairs))
                statements = setup_statements(cols, "duckdb", settings, schema)
                if not cols.by:
                    statements = [one_group(statement) for statement in statements]
                for statement in statements:
                    con.execute(statement)
                counts = _columns(con, "rankmetrics_sample_counts")
                shared = _shared_views(views, statements, counts)
                yield DuckDBSession(
                    con, cols, schema, shared, settings.memory_limit, ranks, share=share
                )
        finally:
            con.close()


ENGINE = DuckDBEngine()
