"""The engine interface, and the registry that :func:`~polars_rankmetrics.evaluate` picks from.

An engine is one module with a class implementing :class:`Engine`, registered by name. It opens
a :class:`Session` over a source; the session answers the queries the evaluation needs, and the
bucket driver (:mod:`polars_rankmetrics.engines.driver`) does everything else the same way for every
engine: the order of the checks, the split into buckets, progress, combining the sums.

Every frame a session returns is a Polars DataFrame: per-group frames carry the ``by`` columns
(or ``__group`` without ``by``, see :func:`~polars_rankmetrics.checks.validation.group_keys`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

import polars as pl

from polars_rankmetrics.checks.validation import RowFacts
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.inputs.sources import Source
from polars_rankmetrics.metrics.registry import Context, MetricKey

# The tables a run collects per piece, of the keys reduced over samples (``sums``: per group and
# key, ``key`` = sum of weight x value, ``key/w`` = sum of weight and the columns of
# :mod:`polars_rankmetrics.metrics.sums`; ``per_sample``: the ``by`` columns, the sample id and one
# column per key) and of the per-label tables of :mod:`polars_rankmetrics.metrics.label_averages`
# (``labels``: label counts; ``curves``: score counts; ``precisions``: per group and label,
# ``precision_sum``, the weighted sum of the lrap precisions of the label's positive cells;
# ``topk_labels``: per group and label, the true samples and at each cut-off K the expected true
# and false predictions within the top K, weighted, ``support``, ``tp@K`` and ``fp@K``);
# ``samples``: the ``by`` columns and the sample id, a row per sample (what an evaluation state
# hashes).
TABLES = ("sums", "per_sample", "samples", "labels", "curves", "precisions", "topk_labels")
SAMPLE_TABLES = ("sums", "per_sample", "samples")


@dataclass(frozen=True)
class Settings:
    """How a session should run: the process's memory budget (``"1GB"``, or None), the
    directory the library manages for this run's spill files, whether the caller wants
    progress (an engine may need to switch its progress tracking on), the metric keys the run
    evaluates and their parameters (a SQL engine defines its cut-offs, threshold and parameters
    from them) and the tables it collects (:data:`TABLES`; a SQL engine defines the views they
    read, and ``views``, views of ``sql/`` that the caller queries itself)."""

    memory_limit: str | None = None
    spill_dir: Path | None = None
    track_progress: bool = False
    keys: tuple[MetricKey, ...] = ()
    context: Context = Context()
    tables: tuple[str, ...] = TABLES
    views: tuple[str, ...] = ()


class Session(Protocol):
    """One open evaluation over one source (the whole table, or one bucket of whole samples)."""

    def schema(self) -> pl.Schema:
        """The source's columns and their Polars types."""
        ...

    def count_rows(self) -> int:
        """The number of rows (cheap on Parquet: the files' metadata)."""
        ...

    def hold(self, *, unique_labels: bool = False) -> None:
        """Keep the columns the evaluation reads in memory for the queries that follow, where
        the engine gains from it (asked only of a source evaluated in one piece, so within the
        memory budget: a whole table, or a top-k piece joined in memory); an engine whose reads
        are cheap or cached on their own does nothing. ``unique_labels``: the caller found that
        no sample repeats a label (a top-k piece's join, ``Joined.unique_labels``)."""
        ...

    def check_rows(self, keys: Sequence[MetricKey], *, ordered: bool = False) -> RowFacts:
        """The row checks over the whole source (raise on the first problem); with ``ordered``,
        also whether its rows are strictly ordered by sample and label, where the engine can
        tell (``RowFacts.unique_labels``; it may hold the key columns in memory: asked only of
        a table evaluated in one piece)."""
        ...

    def group_labels(self) -> pl.DataFrame:
        """:func:`~polars_rankmetrics.checks.validation.group_labels` of the source."""
        ...

    def label_range(self) -> tuple[int, int] | None:
        """The smallest and the largest label of a source of integer labels; None for other
        labels or no rows. (Asked without ``by`` columns; cheap where a file's statistics or
        the held columns answer it.)"""
        ...

    def sample_summary(self) -> pl.DataFrame:
        """:func:`~polars_rankmetrics.checks.validation.sample_summary` of the source."""
        ...

    def repeated_label(self, where: Mapping[str, object]) -> object:
        """A label repeated within the sample ``where``."""
        ...

    def piece(
        self, tables: Sequence[str], keys: Sequence[MetricKey], context: Context,
        check: Callable[[pl.DataFrame], None],
    ) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:  # fmt: skip
        """The sample summary (see ``sample_summary``), passed to ``check`` (which raises on bad
        samples) before any result is returned, and each of ``tables`` over the source, by name
        (:data:`TABLES`). An engine may answer them in one query (Polars) or one by one (SQL).

        Every table adds up over disjoint sets of samples, except ``per_sample``, whose rows
        are concatenated."""
        ...

    def bytes_per_row(self) -> float:
        """Bytes of the engine's share of the budget that one row of a bucket needs."""
        ...

    def split(self, n: int, directory: Path) -> list[list[Path]]:
        """Write the source to ``directory`` as ``n`` buckets of whole samples (by a hash of the
        ``by`` columns and the sample id); the Parquet files of each bucket."""
        ...

    def query_progress(self) -> float | None:
        """The running query's progress in [0, 1], or None where the engine cannot tell."""
        ...


class Engine(Protocol):
    """An engine: a name, the exceptions its library raises for bad input or I/O (which the
    command reports in one line), whether the driver splits a table too large for the memory
    budget (an engine that manages its own memory, like Spark, takes none), whether a top-k
    piece is joined for its plan (``scans_rank_order``:
    :meth:`~polars_rankmetrics.engines.topk.Piece.join` scatters the gains, and ranks predictions
    in rank order by scans, which the engine reads: ``Rows.carries_ranks``,
    ``Rows.unique_labels``), the share of a memory budget it gets in a run that also collects
    per-sample values (:func:`~polars_rankmetrics.engines.memory.engine_share`), and sessions
    over the sources it accepts."""

    name: str
    errors: tuple[type[Exception], ...]
    splits: bool
    scans_rank_order: bool
    per_sample_share: float

    def open(
        self, data: Source, cols: Columns, settings: Settings
    ) -> AbstractContextManager[Session]:
        """A session over ``data``, a :class:`~polars_rankmetrics.inputs.sources.Source` (the
        driver classifies each input once and hands it on; ``Source.of`` keeps it as it is,
        and classifies anything else a caller of the engine itself passes), those of its ``by``
        columns it has renamed as ``cols`` names them inside. The session's ``schema`` is then
        checked once, by the caller (:func:`~polars_rankmetrics.checks.types.check_schema`),
        before any other query: an engine defines what reads the columns (views) on its first
        query. Closing the session releases everything it holds."""
        ...

    def reads_scanned_ranks(self, keys: Sequence[MetricKey]) -> bool:
        """Whether the engine's plan for ``keys`` reads the positives' ranks that a top-k piece
        joined in rank order carries (only with ``scans_rank_order``)."""
        ...


Opener = Callable[[Source], AbstractContextManager[Session]]


@runtime_checkable
class OpensPieces(Protocol):
    """An engine whose buckets share what it sets up once per run (DuckDB: a connection and its
    views) rather than each opening its own."""

    def open_pieces(self, cols: Columns, settings: Settings) -> AbstractContextManager[Opener]:
        """What the buckets of a run share, closed at the end of the block; within it, what it
        gives opens a session over one bucket (as :meth:`Engine.open` does) on what they share,
        one bucket at a time, releasing what the session holds when it is closed."""
        ...


# name -> module that defines it; modules are imported on first use (DuckDB, Spark).
_ENGINES: dict[str, str] = {
    "polars": "polars_rankmetrics.engines.polars",
    "duckdb": "polars_rankmetrics.engines.duckdb",
    "spark": "polars_rankmetrics.engines.spark",
}
# What to install for an engine whose library is an optional dependency.
_EXTRAS = {"spark": "polars-rankmetrics[spark]"}
_LOADED: dict[str, Engine] = {}


def engine_names() -> tuple[str, ...]:
    return tuple(_ENGINES)


def get_engine(name: str) -> Engine:
    """The engine registered as ``name``; ``ValueError`` naming the choices otherwise."""
    if name not in _ENGINES:
        raise ValueError(f"unknown engine {name!r}; choose one of {', '.join(_ENGINES)}")
    if name not in _LOADED:
        try:
            _LOADED[name] = importlib.import_module(_ENGINES[name]).ENGINE
        except ImportError as error:
            extra = _EXTRAS.get(name, error.name)
            raise ValueError(
                f"the {name} engine needs {error.name}, which is not installed: "
                f"pip install '{extra}'"
            ) from None
    return _LOADED[name]


Progress = Callable[[float, float], None]
