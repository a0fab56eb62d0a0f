"""An ir_measures provider computed by this library: ir_measures' calls (and PyTerrier's
``pt.Experiment``, which evaluates through them) with this library's numbers.

>>> import ir_measures
>>> from ir_measures import AP, P, nDCG
>>> import polars_rankmetrics.ir_measures as rm_ir
>>> rm_ir.register()  # first in ir_measures' default pipeline
>>> qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}}
>>> run = {"q1": {"d1": 1.2, "d2": 3.0, "d3": 0.5}}
>>> values = ir_measures.calc_aggregate([AP, P @ 2, nDCG @ 10], qrels, run)
>>> values[AP], values[P @ 2], round(values[nDCG @ 10], 4)
(0.5833333333333333, 0.5, 0.6199)
>>> rm_ir.unregister()  # the pipeline as it was

The provider translates: each measure is one of this library's TREC keys
(:mod:`.measures`), each run and qrels form ir_measures reads a long table (:mod:`.inputs`), and
:func:`~polars_rankmetrics.evaluate` computes the values. Each measure has the semantics of the
provider that serves it in ir_measures' default pipeline (pytrec_eval's for ``P``, ``R``,
``AP``, ``RR``, ``nDCG``, ``Bpref``, ``infAP``, ``Success``, ``Rprec``, ``IPrec``, the ``Set``
measures and the counts; the ``judged`` provider's for ``Judged``; gdeval's for ``ERR``); a
measure it does not compute (``RBP``, ``nDCG(dcg='exp-log2')``, ``RR@k``, ``alpha_nDCG``, ...)
goes on to the pipeline's other providers.

As in ir_measures, the topics are the qrels': a run's topic without qrels is not evaluated, and
a qrels topic missing from the run takes the measure's default (0). A document twice in a
topic, a score that is not a number or a relevance that is not an integer raise
``ValueError``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import Any

import ir_measures
import polars as pl
from ir_measures.measures.base import Measure
from ir_measures.providers.base import Evaluator, Provider
from ir_measures.util import Metric

from polars_rankmetrics.evaluate import evaluate
from polars_rankmetrics.ir_measures import inputs
from polars_rankmetrics.ir_measures import measures as translated
from polars_rankmetrics.metrics.registry import MetricKey

__all__ = ["RankmetricsProvider", "provider", "register", "unregister"]


class RankmetricsProvider(Provider):  # type: ignore[misc]
    """ir_measures' provider of the measures this library computes
    (:data:`.measures.SUPPORTED_MEASURES`), by ``evaluate``'s TREC keys."""

    NAME = "polars_rankmetrics"
    SUPPORTED_MEASURES = translated.SUPPORTED_MEASURES

    def _evaluator(self, measures: Iterable[Measure], qrels: Any) -> RankmetricsEvaluator:
        return RankmetricsEvaluator(list(measures), inputs.qrels_table(qrels))

    def install_instructions(self) -> str:
        return "pip install polars-rankmetrics"


class RankmetricsEvaluator(Evaluator):  # type: ignore[misc]
    """The measures against one qrels, for any number of runs; ir_measures' ``Evaluator``
    gives each qrels topic the runs miss the measure's default."""

    def __init__(self, measures: list[Measure], qrels: pl.DataFrame) -> None:
        for measure in measures:
            translated.key(measure)  # refused here, before any run
        self.topics = qrels.get_column("sample").unique()
        super().__init__(measures, set(self.topics.to_list()))
        self.qrels = qrels

    def _iter_calc(self, run: Any) -> Iterator[Metric]:
        table = inputs.run_table(run)
        if not table.get_column("sample").is_in(self.topics.implode()).any():
            return  # no topic to evaluate: each takes its default
        groups: dict[bool, list[Measure]] = {}
        judged = []
        for measure in self.measures:
            if measure.NAME == "Judged":
                judged.append(measure)
            else:
                groups.setdefault(translated.judged_only(measure), []).append(measure)
        for flag, chosen in groups.items():
            keys = {translated.key(m): m for m in chosen}
            values = evaluate(
                table, list(keys), truth_table=self.qrels, per_sample=True, judged_only=flag
            )
            yield from _metrics(values, keys)
        if judged:
            yield from _judged(table, self.qrels, judged)


def _metrics(values: pl.DataFrame, keys: dict[MetricKey, Measure]) -> Iterator[Metric]:
    """ir_measures' per-topic metrics of ``evaluate``'s per-sample table, topics in text
    order."""
    names = [str(key) for key in keys]
    chosen = list(keys.values())
    for topic, *row in values.select("sample", *names).sort("sample").iter_rows():
        for measure, value in zip(chosen, row, strict=True):
            yield Metric(query_id=topic, measure=measure, value=value)


def _judged(run: pl.DataFrame, qrels: pl.DataFrame, chosen: list[Measure]) -> Iterator[Metric]:
    """ir_measures' ``Judged@k`` (its ``judged`` provider): the documents the qrels name among
    the first k, ties ordered by document id ascending, over k, or over the topic's documents
    where it has fewer than k (without k: over them all). Computed by the TREC key
    ``Judged@k`` on the run scored by that order, and scaled from k to the topic's length."""
    ordered = run.sort(["sample", "score", "label"], descending=[False, True, False])
    position = pl.int_range(pl.len()).over("sample")
    scored = ordered.with_columns((-position).cast(pl.Float64).alias("score"))
    lengths = run.group_by("sample").agg(pl.len().alias("__length"))
    longest = int(lengths.get_column("__length").max())  # type: ignore[arg-type]
    keys = {}
    for measure in chosen:
        cutoff = translated.judged_cutoff(measure) or longest
        keys[dataclasses.replace(translated.key(measure), k=cutoff)] = measure
    values = evaluate(scored, list(keys), truth_table=qrels, per_sample=True)
    length = pl.col("__length")
    scaled = values.join(lengths, on="sample").select(
        "sample",
        *(pl.col(str(key)) * key.k / pl.min_horizontal(length, key.k) for key in keys),
    )
    yield from _metrics(scaled, keys)


_PIPELINE = ir_measures.DefaultPipeline.providers
provider = RankmetricsProvider()


def register() -> None:
    """Put :data:`provider` first in ir_measures' default pipeline (``ir_measures.calc``,
    ``calc_aggregate``, ``iter_calc``, ``evaluator`` and PyTerrier's ``pt.Experiment``): it
    serves the measures it computes, the other providers the rest. Registering twice is
    registering once."""
    if provider not in _PIPELINE:
        _PIPELINE.insert(0, provider)
    ir_measures.providers.registry[provider.NAME] = provider


def unregister() -> None:
    """Take :data:`provider` out of ir_measures' default pipeline: the pipeline as it was."""
    while provider in _PIPELINE:
        _PIPELINE.remove(provider)
    ir_measures.providers.registry.pop(provider.NAME, None)
