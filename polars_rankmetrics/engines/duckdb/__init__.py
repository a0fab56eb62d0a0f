"""The DuckDB engine: the views of ``sql/`` over any source, evaluated lazily and spilling to disk.

The SQL files are the single source of the SQL; this module only names the input for them. It
creates the three relations the views read (docs/engines.md, "SQL alone"):

- ``rankmetrics_input(grp, sample, label, score, truth, weight, pred, predicted, propensity)``:
  the user's table with its columns renamed (identifiers quoted, never pasted), ``grp`` a struct
  of the ``by`` columns;
- ``rankmetrics_cutoffs(k, unscored)``: the dcg/ndcg cut-offs wanted (NULL for no cut);
- ``rankmetrics_parameters(beta, zero_division, n_labels)``: the threshold metrics' parameters
  and a top-k table's label space (numbers written as checked literals).

A connection is closed however the run ends. A table split into buckets is written once as
Parquet (``COPY ... PARTITION_BY``); the buckets of a run share one connection
(:meth:`DuckDBEngine.open_pieces`), whose views the first bucket's session defines and the
next ones reuse, each session dropping the tables it held. Every view is temporary, so nothing
is left in a user's database file.

This module is the engine (:data:`ENGINE`) and the public helpers for a connection of your own
(:func:`connect`, :func:`register_views`, :func:`unregister_views`, :func:`expect_nan`); the
package holds the rest by job: :mod:`.source` (the user's table as ``rankmetrics_source``),
:mod:`.csv_dialect` (CSV files read as Polars reads them), :mod:`.session` (the queries),
:mod:`.tuning` (settings, the views held once, the plan of the positive ranks) and
:mod:`.variants` (DuckDB's variants of views of ``sql/``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, Unpack

import duckdb
import polars as pl

from polars_rankmetrics.checks import types
from polars_rankmetrics.engines.base import Opener, Settings
from polars_rankmetrics.engines.duckdb.session import DefinedViews, DuckDBSession
from polars_rankmetrics.engines.duckdb.source import count_rows, register_source
from polars_rankmetrics.engines.duckdb.tuning import PERFECT_HASH_BITS
from polars_rankmetrics.engines.interrupts import stopping
from polars_rankmetrics.engines.memory import ENGINE_SHARE, engine_limit, engine_share
from polars_rankmetrics.engines.sql import results as sql_results
from polars_rankmetrics.engines.sql.export import input_statements, view_names, view_statements
from polars_rankmetrics.inputs.columns import ColumnNames, Columns, documented
from polars_rankmetrics.inputs.media import out_of_space
from polars_rankmetrics.inputs.sources import Source
from polars_rankmetrics.metrics.parameters import parameters
from polars_rankmetrics.metrics.registry import MetricKey

__all__ = [
    "ENGINE", "DuckDBEngine", "DuckDBSession", "connect", "expect_nan", "register_views",
    "unregister_views",
]  # fmt: skip

_INPUT_VIEWS = (
    "rankmetrics_parameters", "rankmetrics_cutoffs", "rankmetrics_input", "rankmetrics_source",
)  # fmt: skip


def connect(
    memory_limit: str | None = None, temp_directory: Path | None = None, *,
    share: float = ENGINE_SHARE,
) -> duckdb.DuckDBPyConnection:  # fmt: skip
    """An in-memory DuckDB connection set up as the engine uses it.

    Group keys of a narrow integer span are aggregated in perfect hash tables (see
    :mod:`.variants`), and Parquet float columns are read as possibly holding NaN
    (:func:`expect_nan`).

    Parameters
    ----------
    memory_limit
        The memory budget of the whole process, such as ``"1GB"``: DuckDB gets its share
        (:mod:`polars_rankmetrics.engines.memory`) and spills beyond it. None: DuckDB's default.
    temp_directory
        Where DuckDB spills (its ``duckdb`` subdirectory): beyond its share of a
        ``memory_limit``, or beyond DuckDB's default limit without one. None: DuckDB's default
        (``.tmp`` in the working directory).
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
        "preserve_insertion_order": "false", "perfect_ht_threshold": PERFECT_HASH_BITS,
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
    schema = register_source(con, Source.of(source), cols)
    types.check_schema(schema, cols, partial(count_rows, con))
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
    # A top-k piece is joined as for the Polars engine (the gains scattered into the predictions,
    # cheaper than a hash join), which also finds whether its samples repeat no label: then the
    # sample counts' distinct labels are their rows (no distinct count over a large label span),
    # and, where the views rank the positives, ranks predictions in rank order by scans, which
    # the positive ranks read instead of their windows (variants.carried_ranks).
    scans_rank_order = True
    # Calibrated with benchmarks/report.py: at the usual share, DuckDB's windows (the label
    # precisions), beside what the buckets' per-sample frames leave in the allocators, take a
    # large HTML report past its budget.
    per_sample_share = 0.5

    def reads_scanned_ranks(self, keys: Sequence[MetricKey]) -> bool:
        return any(
            sql_results.ranks_positives(view) for view in sql_results.sql_views(keys).values()
        )

    @contextmanager
    def open(self, data: Source, cols: Columns, settings: Settings) -> Iterator[DuckDBSession]:
        with self._connected(settings) as (con, share):
            schema = register_source(con, Source.of(data), cols, tables=False)
            yield DuckDBSession(con, cols, schema, settings, share=share)

    @contextmanager
    def open_pieces(self, cols: Columns, settings: Settings) -> Iterator[Opener]:
        """One connection for every bucket of a run: the views are defined once, by the first
        bucket's session, and each later session over a bucket of the same columns reuses
        them (the bucket registered in place of the previous one, whose session released the
        tables it held)."""
        with self._connected(settings) as (con, share):
            views = DefinedViews()

            @contextmanager
            def open_piece(data: Source) -> Iterator[DuckDBSession]:
                schema = register_source(con, Source.of(data), cols, tables=False)
                session = DuckDBSession(con, cols, schema, settings, share=share, views=views)
                try:
                    yield session
                finally:
                    session.release()

            yield open_piece

    @contextmanager
    def _connected(self, settings: Settings) -> Iterator[tuple[duckdb.DuckDBPyConnection, float]]:
        """A connection for ``settings`` (and DuckDB's share of the budget), interrupted by a
        signal and closed however the block ends; DuckDB running out of memory is a
        ``ValueError`` saying what to do. Its spill files filling their directory (DuckDB's
        "failed to offload", an ``OutOfMemoryException`` too) is not the budget's fault: that
        error is raised as it is, for the driver to name the directory
        (:func:`~polars_rankmetrics.inputs.media.explained`)."""
        share = engine_share(settings.tables, self.per_sample_share)
        con = connect(settings.memory_limit, settings.spill_dir, share=share)
        try:
            with stopping(partial(_interrupt, con)):
                if settings.track_progress:
                    con.execute("SET enable_progress_bar = true")
                    con.execute("SET enable_progress_bar_print = false")
                yield con, share
        except duckdb.OutOfMemoryException as error:
            if out_of_space(error):
                raise
            raise ValueError(_out_of_memory(settings.memory_limit, share, error)) from error
        finally:
            con.close()


def _out_of_memory(budget: str | None, share: float, error: Exception) -> str:
    """What to do where DuckDB ran out of memory: a budget too small for what it reads (a
    reader's buffers do not spill), or a table too large without one."""
    first = str(error).strip().splitlines()[0]
    if budget is None:
        return f"DuckDB ran out of memory ({first}): give memory_limit= to evaluate in buckets"
    return (
        f"memory_limit {budget!r} is too small for DuckDB here: its share of it "
        f"({engine_limit(budget, share)}) ran out ({first}); give a larger memory_limit"
    )


ENGINE = DuckDBEngine()
