"""Each key's inputs under its own rules: the tie rule, trec_eval's options of the TREC keys,
and a call that mixes the TREC keys with the library's.

In a call of the TREC keys (trec_eval's and ir_measures' names) and the library's keys
(:func:`~polars_rankmetrics.metrics.registry.parse_keys` reads ``map`` and ``ndcg`` as
trec_eval's there), each key is evaluated as in a call of its own kind (:func:`key_parts`):
the TREC keys against the truth table read as qrels, in trec_eval's order and topics; the
library's binary keys against it with a relevance at least ``relevance_level`` read as
relevant (1) and any other as not (0); its graded keys (``ndcg@K``, ``dcg``) with the relevance
as gain where it is above 0, and no gain elsewhere, as trec_eval's ndcg reads it. The results
are joined on the ``by`` columns (per sample, and the sample), each key over its own samples.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import reduce
from typing import Any

import polars as pl

from polars_rankmetrics.engines import topk
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.inputs.sources import Source
from polars_rankmetrics.metrics.registry import LABEL_VIEW, SET_VIEW, Context, MetricKey
from polars_rankmetrics.metrics.sums import weight_column


@dataclass(frozen=True)
class TrecOptions:
    """The options of the TREC keys (trec_eval's ``-l``, ``-M``, ``-J``, ``-c``: see
    :func:`evaluate`)."""

    relevance_level: int = 1
    max_docs: int | None = None
    judged_only: bool = False
    complete: bool = False


def _score_values_read(key: MetricKey, cols: Columns) -> str | None:
    """What of the scores ``key`` reads besides their order within each sample (None: only
    that order), which a tie rule cannot change and the tie-broken scores do not keep: their
    values as probabilities, each label's scores across the samples, or the threshold's
    decisions (where no ``pred`` column gives them)."""
    metric = key.metric
    if metric.probabilities:
        return "the scores as probabilities"
    if metric.reduction == "curves":
        return "each label's scores across the samples"
    if metric.sql_view in (SET_VIEW, LABEL_VIEW) and cols.pred is None:
        return "the scores against the threshold (a pred column would give the decisions)"
    return None


def tie_ordered(
    data: Any, truth_table: Any, keys: Sequence[MetricKey], cols: Columns, context: Context,
    *, ties: str | None, trec: TrecOptions,
) -> tuple[Any, Any, Context]:  # fmt: skip
    """The inputs with the tie rule applied
    (:func:`~polars_rankmetrics.engines.topk.trec_order`), and, for the TREC keys, the run as
    given, the qrels with the preparation that each bucket of whole topics of both takes
    (:class:`~polars_rankmetrics.engines.topk.Qrels`: trec_eval's order and options,
    :func:`~polars_rankmetrics.engines.topk.trec_tables`, applied per bucket so that no step
    sorts the whole run under a memory limit) and the relevance level: what every verb
    evaluating ``keys`` runs first (:func:`evaluate`, ``compare``)."""
    trec_keys = [key for key in keys if key.metric.family == "trec"]
    if ties is not None and ties not in topk.TIES:
        raise ValueError(f"ties must be one of {', '.join(topk.TIES)}, not {ties!r}")
    options = (trec.max_docs, trec.judged_only, trec.complete, trec.relevance_level)
    if not trec_keys:
        if options != (None, False, False, 1):
            raise ValueError(
                "relevance_level, max_docs, judged_only and complete are trec_eval's options "
                "of the TREC keys (P_5, AP, nDCG@10, ...)"
            )
        if ties != "trec_eval":
            return data, truth_table, context
        for key in keys:
            reads = _score_values_read(key, cols)
            if reads is not None:
                raise ValueError(
                    f"ties='trec_eval' orders the tied scores within each sample, which {key} "
                    f"does not read: it reads {reads}; evaluate it in a call without ties="
                )
        opened = cols.in_source()
        return topk.trec_order(Source.of(data).lazy(), opened), truth_table, context
    if len(trec_keys) < len(keys):
        other = next(key for key in keys if key.metric.family != "trec")
        raise ValueError(f"{trec_keys[0]} and {other} follow two rules: see key_parts")
    if ties == "average":
        raise ValueError(
            f"{trec_keys[0]} follows trec_eval's tie rule (ties='trec_eval'); ties='average' is "
            "for the library's keys (precision@K, map, ndcg@K, ...)"
        )
    if truth_table is None:
        raise ValueError(f"{trec_keys[0]} evaluates a run against qrels: give truth_table=")
    level, most = trec.relevance_level, trec.max_docs
    if isinstance(level, bool) or not isinstance(level, int) or level < 0:
        raise ValueError(f"relevance_level must be an integer >= 0, not {level!r}")
    if most is not None and (isinstance(most, bool) or not isinstance(most, int) or most < 1):
        raise ValueError(f"max_docs must be a positive integer, not {most!r}")
    preparation = topk.TrecPreparation(most, trec.judged_only, trec.complete)
    qrels = topk.Qrels(truth_table, preparation)
    return data, qrels, replace(context, relevance_level=level, judged_only=trec.judged_only)


@dataclass(frozen=True)
class Part:
    """Keys evaluated together, and their inputs as :func:`tie_ordered` prepared them."""

    keys: list[MetricKey]
    data: Any
    truth_table: Any
    context: Context


def key_parts(
    data: Any, truth_table: Any, keys: Sequence[MetricKey], cols: Columns, context: Context,
    *, ties: str | None, trec: TrecOptions,
) -> list[Part]:  # fmt: skip
    """The keys in the parts evaluated apart, each with its inputs: one part where the keys
    follow one rule (:func:`tie_ordered`); for TREC keys beside the library's, the TREC keys
    (trec_eval's tie rule and ``trec``'s options), then the library's binary keys and their
    graded keys, each reading the truth table as the module's notes say, under ``ties``
    (``"trec_eval"``, or the library's default)."""
    trec_keys = [key for key in keys if key.metric.family == "trec"]
    library = [key for key in keys if key.metric.family != "trec"]
    if not trec_keys or not library:
        return [Part(list(keys), *tie_ordered(
            data, truth_table, keys, cols, context, ties=ties, trec=trec
        ))]  # fmt: skip
    if truth_table is None:
        raise ValueError(f"{trec_keys[0]} evaluates a run against qrels: give truth_table=")
    trec_ties = None if ties == "average" else ties
    parts = [Part(trec_keys, *tie_ordered(
        data, truth_table, trec_keys, cols, context, ties=trec_ties, trec=trec
    ))]  # fmt: skip
    truth = Source.of(truth_table).lazy()
    graded = cols.truth in truth.collect_schema()
    relevance = pl.col(cols.truth)
    relevant = (relevance >= trec.relevance_level).cast(pl.Int64)
    gain = pl.when(relevance > 0).then(relevance).otherwise(0)
    readings = [
        ([k for k in library if k.is_binary], relevant),
        ([k for k in library if not k.is_binary], gain),
    ]
    for part_keys, read in readings:
        if part_keys:
            read_table = truth.with_columns(read.alias(cols.truth)) if graded else truth
            parts.append(Part(part_keys, *tie_ordered(
                data, read_table, part_keys, cols, context, ties=ties, trec=TrecOptions()
            )))  # fmt: skip
    return parts


def _result_columns(
    results: Sequence[pl.DataFrame], on: Sequence[str], keys: Sequence[MetricKey]
) -> list[str]:
    """The columns of the joined result: ``on``, then each key's, in the keys' order."""
    present = {c for result in results for c in result.columns}
    suffixes = ("", "_lo", "_hi", "/w")
    names = [f"{key}{suffix}" for key in keys for suffix in suffixes]
    return [*on, *(name for name in names if name in present and name not in on)]


def joined(
    results: Sequence[pl.DataFrame], on: Sequence[str], keys: Sequence[MetricKey]
) -> pl.DataFrame:
    """The results of the parts (:func:`key_parts`) as one: joined on ``on`` (the ``by``
    columns, per sample the sample's too), a row for each value of them in any part (a key's
    value null where its part has no such row), sorted by them, the keys' columns in order."""
    if len(results) == 1:
        return results[0]
    if not on:
        return pl.concat(results, how="horizontal").select(_result_columns(results, on, keys))
    both = reduce(
        lambda left, right: left.join(
            right, on=list(on), how="full", coalesce=True, nulls_equal=True
        ),
        results,
    )
    return both.sort(list(on)).select(_result_columns(results, on, keys))


def merged_per_sample(
    pieces: Sequence[list[pl.DataFrame]], cols: Columns, keys: Sequence[MetricKey]
) -> list[pl.DataFrame]:
    """The driver's per-sample frames of each part (a frame per ``by`` group, sorted by
    sample) as one frame per group sorted by sample, every key's value and weight (a sample a
    part lacks: no value, weight 0): what the statistics read."""
    if len(pieces) == 1:
        return list(pieces[0])
    on = list(cols.sample_keys)
    rows = joined([pl.concat(part) for part in pieces], on, keys)
    rows = rows.with_columns(pl.col([weight_column(k) for k in keys]).fill_null(0))
    if not cols.by:
        return [rows]
    return rows.partition_by(list(cols.by), maintain_order=True)
