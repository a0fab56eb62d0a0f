"""The Spark engine: the same SQL views, run by Spark SQL on a SparkSession.

For tables that live on a cluster: ``evaluate(spark_dataframe, ..., engine="spark")`` or a table
name of the active session's catalog. Parquet paths are read by the active session, or by a local
one (``local[2]``) started for them, as ``rankmetrics evaluate PATH --engine spark`` does. The
result is small and comes back as a Polars frame. Spark keeps its own memory (``memory_limit``
does not apply) and spreads the work over its executors, so nothing is split into buckets here.

The session may be a classic one or a Spark Connect one (``SparkSession.builder.remote(url)``,
Databricks Connect): the engine uses only what both have (DataFrames, temporary views,
``spark.sql`` with bound parameters, Arrow results), never an RDD, the SparkContext or the JVM.

Every view is a temporary view of the session, removed when the evaluation ends.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import cast

import polars as pl
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession

from polars_rankmetrics.checks import types
from polars_rankmetrics.engines.base import Settings
from polars_rankmetrics.engines.memory import ENGINE_SHARE
from polars_rankmetrics.engines.sql.export import TREC_INPUTS, view_names
from polars_rankmetrics.engines.sql.session import SQLSession
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.inputs.sources import Source, polars_reads
from polars_rankmetrics.metrics.registry import MetricKey

_INPUT_VIEWS = (
    *sorted(TREC_INPUTS), "rankmetrics_parameters", "rankmetrics_cutoffs", "rankmetrics_input",
    "rankmetrics_source",
)  # fmt: skip


def local_session() -> SparkSession:
    """The SparkSession the Spark engine runs on.

    Returns
    -------
    pyspark.sql.SparkSession
        The active session (a Spark Connect session included, however it was built), or else
        a new local one on this machine: ``local[2]``, four shuffle partitions, bound to
        127.0.0.1, no UI and no console progress.

    Examples
    --------
    >>> from polars_rankmetrics.spark_engine import local_session
    >>> spark = local_session()
    >>> spark.sql("SELECT 1 AS one").collect()
    [Row(one=1)]
    """
    active = _active_session()
    if active is not None:
        return active
    session = (
        SparkSession.builder.master("local[2]")
        .appName("rankmetrics")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


def _active_session() -> SparkSession | None:
    """The active session: pyspark's answer, which is the Connect session once pyspark's
    builder made one (``builder.remote`` marks the process), else a Connect session built by
    Connect's own builder, which leaves the process unmarked (its module is imported once a
    Connect session exists)."""
    active = SparkSession.getActiveSession()
    connect = sys.modules.get("pyspark.sql.connect.session")
    if active is None and connect is not None:
        active = cast(SparkSession | None, connect.SparkSession.getActiveSession())
    return active


def _source(source: Source, cols: Columns) -> DataFrame:
    """A Spark DataFrame over ``source``: a string naming a table of the session is that
    table; Parquet and NDJSON files are read by Spark (by the cluster: through Spark Connect, by
    the server and its executors, not on the client); anything else is read into memory, its
    types checked, and handed over as Arrow (through Spark Connect, sent to the server).

    CSV files are read by Polars on the driver
    (:func:`~polars_rankmetrics.inputs.sources.csv_schema`), as on every engine, and handed
    over as Arrow: Spark's reader infers dates and takes a number with spaces around it for a
    number. A Parquet file's Arrow types are checked first, as the Polars engine checks them
    (Spark reads a Duration as a number), where Polars reads the files (local, or an object
    store: :func:`~polars_rankmetrics.inputs.sources.polars_reads`); elsewhere (``hdfs://``)
    Spark's own types are checked: an interval (Arrow's Duration) is refused as Polars refuses
    it, and a Time column, which Spark cannot read, is refused naming the files."""
    if source.kind == "spark":
        return source.data  # type: ignore[return-value]
    session = local_session()
    if source.kind == "paths" and isinstance(source.data, str) and _is_table(session, source.data):
        return session.table(source.data)
    if source.kind != "paths" or source.files.format == "csv":
        frame = source.in_memory()
        # The frame's own types checked as the Polars engine checks them: Arrow carries some
        # to Spark as others (Duration as an interval), and 128-bit integers not at all.
        types.check_frame(frame, cols)
        return session.createDataFrame(frame.to_arrow())
    files = source.files
    if files.format == "ndjson":
        return session.read.json(files.paths)
    if all(polars_reads(path) for path in files.paths):
        types.check_frame(source.lazy(), cols)
        return session.read.parquet(*files.paths)
    try:
        read = session.read.parquet(*files.paths)
    except PySparkException as error:
        if error.getCondition() != "UNSUPPORTED_TIME_TYPE":
            raise
        raise ValueError(
            f"the Parquet files {files.paths[0]!r}{' ...' if len(files.paths) > 1 else ''} hold a "
            "Time column, which Spark does not read (a score, truth or weight must be numeric, "
            "not Time): cast it first, or drop it"
        ) from None
    spark_types = pl.from_arrow(read.limit(0).toArrow()).schema  # type: ignore[union-attr]
    types.check_schema(spark_types, cols.in_source(), read.count)
    return read


def _is_table(session: SparkSession, name: str) -> bool:
    try:
        return bool(session.catalog.tableExists(name))
    except PySparkException:  # not a table name at all (a path)
        return False


class SparkSQLSession(SQLSession):
    """A session over the temporary views of one SparkSession."""

    dialect = "spark"

    def __init__(
        self, source: DataFrame, cols: Columns, schema: pl.Schema, settings: Settings
    ) -> None:
        super().__init__(cols, schema, settings)
        self.spark, self.source = source.sparkSession, source

    def _fetch(self, sql: str, parameters: Mapping[str, object] | None = None) -> pl.DataFrame:
        table = self.spark.sql(sql, args=dict(parameters) if parameters else None).toArrow()
        return pl.from_arrow(table)  # type: ignore[return-value]

    def _execute(self, statement: str) -> None:
        self.spark.sql(statement)

    def _parameter(self, name: str) -> str:
        return f":{name}"

    def _source_type(self, column: str) -> str:
        return str(self.source.schema[column].dataType.simpleString())

    def split(self, n: int, directory: Path) -> list[list[Path]]:
        raise NotImplementedError("the Spark engine is never split into buckets")


class SparkEngine:
    """Spark DataFrames, tables of the session's catalog, Polars frames and Parquet paths."""

    name = "spark"
    errors: tuple[type[Exception], ...] = (PySparkException,)
    splits = False
    per_sample_share = ENGINE_SHARE  # a budget does not apply
    scans_rank_order = False

    def reads_scanned_ranks(self, keys: Sequence[MetricKey]) -> bool:
        return False

    @contextmanager
    def open(self, data: Source, cols: Columns, settings: Settings) -> Iterator[SparkSQLSession]:
        source = _source(Source.of(data), cols)
        spark = source.sparkSession
        if cols.aliases:  # those of the by columns the source has (see check_schema)
            source = source.withColumnsRenamed(dict(cols.aliases))
        schema = pl.from_arrow(source.limit(0).toArrow()).schema  # type: ignore[union-attr]
        source.createOrReplaceTempView("rankmetrics_source")
        try:
            yield SparkSQLSession(source, cols, schema, settings)
        finally:
            for view in (*reversed(view_names()), *_INPUT_VIEWS):
                spark.catalog.dropTempView(view)


ENGINE = SparkEngine()
