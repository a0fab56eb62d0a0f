"""The bucket driver: one evaluation, the same steps on every engine.

1. The whole-table checks, once: the row checks, each group's label set, the label counts the
   metrics need.
2. The split: a table too large for the memory budget is written once, by the engine, as buckets
   of whole samples to a directory the library manages. A table that fits is one bucket, read
   where it is.
3. Per bucket: the per-sample checks against the whole table's label sets, then additive sums
   (:mod:`polars_rankmetrics.metrics.sums`) or per-sample rows.
4. The weight totals over all buckets, and the means.

Progress is reported per step (``progress(done, total)``, ``total`` = buckets + 1), and within a
step from the engine's own estimate where it has one.

One module per job: :mod:`.preparation` (what is evaluated: a top-k table joined with its truth
table), :mod:`.directories` (the run's directory for spill and bucket files), :mod:`.checks`
(the order of the checks), :mod:`.pieces` (steps 1 to 3: the split into buckets, each piece
evaluated), :mod:`.per_sample` (the per-sample rows, spilled under a budget), :mod:`.progress`
and :mod:`.reduction` (step 4). This module runs them in order: :func:`collect` the tables,
:func:`run` the result.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl

from polars_rankmetrics.checks import validation
from polars_rankmetrics.engines.base import Engine, Progress, Settings, get_engine
from polars_rankmetrics.engines.driver.checks import check_all
from polars_rankmetrics.engines.driver.directories import managed_directory
from polars_rankmetrics.engines.driver.pieces import check_limit, evaluate_pieces, split
from polars_rankmetrics.engines.driver.preparation import TopK, prepare
from polars_rankmetrics.engines.driver.reduction import (
    ADDITIVE_TABLES,
    LABEL_TABLES,
    per_sample_rows,
    reduced,
    tables_read,
)
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.inputs.media import explained
from polars_rankmetrics.inputs.sources import Source
from polars_rankmetrics.metrics.registry import Context, MetricKey

__all__ = [
    "ADDITIVE_TABLES", "LABEL_TABLES", "TopK", "check_all", "collect", "inside_names", "run",
]  # fmt: skip

_DENSE = TopK()  # no truth table: a dense table


def run(
    engine: Engine,
    data: Any,
    cols: Columns,
    keys: Sequence[MetricKey],
    *,
    inputs: TopK = _DENSE,
    per_sample: bool = False,
    sample_weights: bool = False,
    parameters: Context | None = None,
    memory_limit: str | None = None,
    temp_dir: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
) -> pl.DataFrame:
    """Evaluate ``keys`` over ``data`` on ``engine``; see :func:`polars_rankmetrics.evaluate`.

    ``parameters`` holds the metrics' parameters (log base, threshold, ...); its columns and
    ``binary_truth`` are set here. ``sample_weights`` (with ``per_sample``): each key's weight
    in the mean beside its value (``key/w``, 0 where the value is undefined), which resampling
    reads.
    """
    tables = tables_read(keys, per_sample=per_sample)
    validation.check_result_names(cols, [str(k) for k in keys])
    with inside_names(cols) as inner:
        collected, context = collect(
            engine, data, inner, keys, tables, parameters=parameters or Context(),
            inputs=inputs, memory_limit=memory_limit, temp_dir=temp_dir, progress=progress,
        )  # fmt: skip
    # The by columns keep their inside names until the result is restored.
    if per_sample:
        return inner.restored(
            per_sample_rows(collected, inner, keys, sample_weights=sample_weights)
        )
    return inner.restored(reduced(collected, inner, keys, context))


@contextmanager
def inside_names(cols: Columns) -> Iterator[Columns]:
    """``cols`` as an evaluation names them inside (:meth:`.Columns.inside`); a ``ValueError``
    raised in the block is raised again with the user's names for the ``by`` columns."""
    inner = cols.inside()
    try:
        yield inner
    except ValueError as error:
        raise ValueError(inner.shown(str(error))) from None


def collect(
    engine: Engine,
    data: Any,
    cols: Columns,
    keys: Sequence[MetricKey],
    tables: Sequence[str],
    *,
    parameters: Context,
    inputs: TopK = _DENSE,
    memory_limit: str | None = None,
    temp_dir: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
) -> tuple[dict[str, list[pl.DataFrame]], Context]:
    """Steps 1-4 over ``data``: every check, then per bucket each of ``tables`` (``sums``,
    ``per_sample``, ``labels``: label counts, ``curves``: score counts, ``precisions``: label
    precisions); the tables of every bucket (``per_sample``: a frame per ``by`` group, sorted
    by sample), and the context the metrics were computed with (``parameters`` with the
    columns of ``cols`` and whether the truth is binary).

    In order: classify each input once (:class:`Source`, handed on as that object),
    :func:`prepare` it (a top-k table joined lazily), check the budget, open the whole table,
    :func:`split` it (the whole-table checks, then buckets), evaluate each piece
    (:func:`evaluate_pieces`); :func:`run` reduces the tables. A failure that the medium
    explains (an input file removed or changed since the run started, a full ``temp_dir``, a
    malformed file) is raised as a ``ValueError`` saying so, and so is a run that ends well
    over an input file changed meanwhile
    (:func:`~polars_rankmetrics.inputs.media.explained`)."""
    source = Source.of(data)
    inputs = inputs.opened()
    temp_parent = Path(temp_dir) if temp_dir is not None else Path(tempfile.gettempdir())
    reported = (*engine.errors, OSError, pl.exceptions.PolarsError)
    with explained(temp_parent, source, inputs.truth_table, reported=reported):
        return _collect(
            engine, source, cols, keys, tables, parameters, inputs, memory_limit, temp_dir,
            progress,
        )  # fmt: skip


def _collect(
    engine: Engine, source: Source, cols: Columns, keys: Sequence[MetricKey],
    tables: Sequence[str], parameters: Context, inputs: TopK, memory_limit: str | None,
    temp_dir: str | os.PathLike[str] | None, progress: Progress | None,
) -> tuple[dict[str, list[pl.DataFrame]], Context]:  # fmt: skip
    prepared = prepare(engine, source, cols, keys, inputs)
    data, cols = prepared.data, prepared.cols
    parameters = replace(
        parameters, truth=cols.truth, score=cols.score, pred=cols.pred,
        n_labels=inputs.n_labels, top_k=cols.top_k,
    )  # fmt: skip
    check_limit(engine, memory_limit)
    with managed_directory(temp_dir) as directory:
        settings = Settings(
            memory_limit, directory, progress is not None, tuple(keys), parameters, tuple(tables)
        )
        # A top-k table is opened bucket by bucket; the whole of it only lazily, for its schema,
        # by the Polars engine (the join is Polars').
        opened = (
            engine.open(data, cols, settings)
            if prepared.split is None
            else get_engine("polars").open(data, cols, settings)
        )
        with opened as whole:
            pieces = split(engine, whole, prepared, cols, keys, settings, progress)
            return evaluate_pieces(engine, whole, pieces, prepared, cols, tables, settings)
