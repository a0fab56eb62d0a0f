"""What a run evaluates: the table as given, or a top-k table's predictions joined with its
truth table (:mod:`polars_rankmetrics.engines.topk`), propensities joined in where a metric
reads them; and, for a top-k table, how its buckets are checked and split."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import polars as pl

from polars_rankmetrics.engines import topk
from polars_rankmetrics.engines.base import Engine
from polars_rankmetrics.engines.memory import polars_bytes_per_row
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.inputs.sources import Source
from polars_rankmetrics.metrics.registry import MetricKey


@dataclass(frozen=True)
class TopK:
    """A top-k evaluation's extra inputs (:mod:`polars_rankmetrics.engines.topk`): the truth
    table (None: the data is a dense table; qrels,
    :class:`~polars_rankmetrics.engines.topk.Qrels`, for the TREC keys; a :class:`Source` once
    :meth:`opened`) and the size of the label space; for the propensity-scored metrics on
    either shape, the propensity table; and what the metrics read of each piece of whole
    samples (a :data:`~polars_rankmetrics.engines.topk.Preparation`, applied per bucket;
    None: the tables as given)."""

    truth_table: Any = None
    n_labels: int | None = None
    propensities: Any = None
    preparation: topk.Preparation | None = None

    def opened(self) -> TopK:
        """These inputs with the truth table classified once (a :class:`Source`), qrels
        as their table and preparation."""
        table = self.truth_table
        if isinstance(table, topk.Qrels):
            return replace(self, truth_table=Source.of(table.table), preparation=table.preparation)
        return self if table is None else replace(self, truth_table=Source.of(table))


def _propensities(inputs: TopK, cols: Columns) -> pl.LazyFrame:
    """The propensity table of ``inputs``, classified and checked once
    (:func:`~polars_rankmetrics.engines.topk.propensity_table`)."""
    return topk.propensity_table(Source.of(inputs.propensities).lazy(), cols)


@dataclass(frozen=True)
class Prepared:
    """The table to evaluate (a top-k table's predictions joined with its truth table, and
    propensities joined in where asked for) and its columns; for a top-k table, the per-bucket
    sample check, a bound on its rows (the two tables' rows: counting the joined rows would run
    the join) and how it splits into buckets (each table apart, joined per bucket), and the
    bytes a row of a bucket needs at least (a top-k bucket is joined in memory by Polars,
    whatever the engine)."""

    data: Source
    cols: Columns
    check: Callable[..., None] | None = None
    rows: int | None = None
    split: Callable[[int, Path], list[Any]] | None = None
    bytes_per_row: float = 0.0


def prepare(
    engine: Engine, data: Source, cols: Columns, keys: Sequence[MetricKey], inputs: TopK
) -> Prepared:
    """What :func:`collect` evaluates: see :class:`Prepared`."""
    if inputs.truth_table is None and inputs.n_labels is not None:
        raise ValueError("n_labels is the label space of a top-k table: give truth_table= too")
    ps_keys = [key for key in keys if key.metric.needs_propensities]
    if ps_keys and inputs.propensities is None:
        raise ValueError(
            f"{ps_keys[0]} needs label propensities: give propensities= (a table of label and "
            "propensity, for example from label_propensities())"
        )
    if inputs.truth_table is None and not ps_keys:
        return Prepared(data, cols)
    if inputs.truth_table is None:
        lf = data.lazy()
        return Prepared(Source(topk.with_propensities(lf, _propensities(inputs, cols), cols)), cols)
    topk.check_request(keys, inputs.n_labels)
    given_predictions, given_truth = (
        table.lazy().rename(dict(cols.aliases), strict=False)
        for table in (data, inputs.truth_table)
    )
    given = (given_predictions, given_truth)
    cols = replace(cols.opened(), top_k=True)
    # The whole tables prepared lazily, for their schemas, their rows and the checks that read
    # the whole of a table (a relevance that is not an integer); the pieces are prepared one by
    # one. The truth table repeated for the groups it serves, found once.
    groups = topk.shared_groups(given_predictions, given_truth, cols)
    shared = topk.shared_truth(given_predictions, given_truth, cols, groups)
    predictions, truth_table = (
        given if inputs.preparation is None else inputs.preparation(given_predictions, shared, cols)
    )
    topk.check_tables(predictions, truth_table, cols)
    propensities = _propensities(inputs, cols) if ps_keys else None
    joined = topk.joined(predictions, truth_table, cols, propensities)
    # The truth table's rows once per group it serves (topk.shared_truth); the predictions'
    # rows as given, which bound the prepared ones (counting those would run the preparation),
    # none where the prepared truth table has none (topk.Preparation).
    truth_rows = _count(shared if inputs.preparation is None else truth_table)
    rows = truth_rows + (
        _count(given_predictions) if truth_rows or inputs.preparation is None else 0
    )
    return Prepared(
        Source(joined),
        cols,
        check=partial(
            topk.check_samples, cols=cols, n_labels=inputs.n_labels,
            repeated_label=partial(topk.repeated_in, given_predictions, given_truth, cols),
        ),
        rows=rows,
        split=partial(
            topk.split, given_predictions, given_truth, cols, propensities, groups=groups,
            preparation=inputs.preparation,
        ),
        bytes_per_row=polars_bytes_per_row(joined.collect_schema(), cols),
    )  # fmt: skip


def _count(table: pl.LazyFrame) -> int:
    """The rows of ``table``, by the streaming engine (a plan over a run larger than memory,
    such as the topics of the qrels that the run has, is never held whole)."""
    return int(table.select(pl.len()).collect(engine="streaming").item())
