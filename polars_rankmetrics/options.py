"""The options of one run, which every public function that runs an evaluation takes as
keywords: where it runs (``engine``), within what memory (``memory_limit``, ``temp_dir``), what
it reports while running (``progress``), and the names of the long table's columns.

They are written and documented here once: a function takes ``**options:
Unpack[Options]`` (or :class:`RankingOptions`), its docstring has the line ``**options``,
which :func:`documented` replaces by the entries, and :meth:`Run.of` splits the keywords into
the run and the columns, refusing any other keyword with a ``TypeError`` naming the valid ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from os import PathLike
from typing import Any, TypedDict, TypeVar

import polars as pl

from polars_rankmetrics.engines import driver
from polars_rankmetrics.engines.base import Engine, Progress, get_engine
from polars_rankmetrics.inputs.columns import ColumnNames, Columns, RankingColumns
from polars_rankmetrics.inputs.columns import documented as columns_documented
from polars_rankmetrics.metrics.registry import Context, MetricKey

Function = TypeVar("Function", bound=Callable[..., object])


class RunOptions(TypedDict, total=False):
    """Where and within what one run evaluates (defaults: the Polars engine, no memory limit,
    the system's temporary directory, no progress)."""

    engine: str
    memory_limit: str | None
    temp_dir: str | PathLike[str] | None
    progress: Progress | None


class Options(RunOptions, ColumnNames, total=False):
    """:class:`RunOptions` and the column keywords (:class:`ColumnNames`)."""


class RankingOptions(RunOptions, RankingColumns, total=False):
    """:class:`RunOptions` and the column keywords of the ranking metrics
    (:class:`RankingColumns`: no ``pred``)."""


_RUN_DOC = """\
    engine
        A registered engine: ``"polars"`` (default), ``"duckdb"`` or ``"spark"``; all give the
        same numbers.
    memory_limit
        A memory budget for the whole process, such as ``"1GB"``, for tables larger than memory,
        on every engine: a table whose rows need more than the engine's share of it (an
        estimate per row from the column types) is split once into hash buckets of whole
        samples, evaluated one at a time; DuckDB also keeps its buffers within its share and
        spills beyond it. A budget too small for one sample's rows, or that would need more
        than 1,024 buckets, is refused. Without it, a source not yet in memory (a path, a
        LazyFrame) that is too large for the memory available is evaluated in buckets anyway,
        within three quarters of the available memory.
    temp_dir
        Where the run's spill and bucket files go (in a directory of its own, removed
        afterwards); default: the system's temporary directory.
    progress
        Called as ``progress(done, total)`` after the whole-table checks and after each bucket
        (``total`` = buckets + 1), and in between from the engine's own estimate where it has
        one (DuckDB).
"""


def documented(options: type[RunOptions]) -> Callable[[Function], Function]:
    """Write the entries of the run options and of the column keywords of ``options``
    (:class:`Options` or :class:`RankingOptions`) where the function's docstring has the line
    ``**options``."""
    columns = ColumnNames if "pred" in options.__annotations__ else RankingColumns

    def add(function: Function) -> Function:
        doc = function.__doc__ or ""
        if "    **options\n" not in doc:
            raise ValueError(f"{function.__qualname__}'s docstring has no **options line")
        function.__doc__ = doc.replace("    **options\n", _RUN_DOC + "    **columns\n", 1)
        return columns_documented(columns)(function)

    return add


@dataclass(frozen=True)
class Run:
    """One run's engine and resources, as the driver takes them."""

    engine: Engine
    memory_limit: str | None = None
    temp_dir: str | PathLike[str] | None = None
    progress: Progress | None = None

    @classmethod
    def of(
        cls,
        options: RunOptions,
        *,
        by: str | Sequence[str] | None = None,
        accepted: type[RunOptions] = Options,
    ) -> tuple[Run, Columns]:
        """The run and the columns (with ``by``) of a public function's keywords ``options``;
        ``TypeError`` naming the valid keywords of ``accepted`` for any other."""
        given: dict[str, Any] = dict(options)
        unknown = [name for name in given if name not in accepted.__annotations__]
        if unknown:
            columns = [n for n in accepted.__annotations__ if n not in RunOptions.__annotations__]
            raise TypeError(
                f"unexpected keyword argument {unknown[0]!r}; the column keywords are "
                f"{', '.join(columns)}; the run options are {', '.join(RunOptions.__annotations__)}"
            )
        run = {name: given.pop(name) for name in RunOptions.__annotations__ if name in given}
        column_names = ColumnNames if "pred" in accepted.__annotations__ else RankingColumns
        cols = Columns.of(by=by, accepted=column_names, **given)
        return cls(get_engine(run.pop("engine", "polars")), **run), cols

    def collect(
        self,
        data: Any,
        cols: Columns,
        keys: Sequence[MetricKey],
        tables: Sequence[str],
        *,
        parameters: Context,
        inputs: driver.TopK | None = None,
    ) -> tuple[dict[str, list[pl.DataFrame]], Context]:
        """:func:`.driver.collect` of ``tables`` over ``data`` in this run."""
        return driver.collect(
            self.engine, data, cols, keys, tables, parameters=parameters,
            inputs=inputs or driver.TopK(), memory_limit=self.memory_limit,
            temp_dir=self.temp_dir, progress=self.progress,
        )  # fmt: skip

    def evaluate(
        self,
        data: Any,
        cols: Columns,
        keys: Sequence[MetricKey],
        *,
        parameters: Context,
        inputs: driver.TopK | None = None,
        per_sample: bool = False,
    ) -> pl.DataFrame:
        """:func:`.driver.run`: ``keys`` over ``data`` in this run, reduced."""
        return driver.run(
            self.engine, data, cols, keys, inputs=inputs or driver.TopK(),
            per_sample=per_sample, parameters=parameters, memory_limit=self.memory_limit,
            temp_dir=self.temp_dir, progress=self.progress,
        )  # fmt: skip
