"""The TREC keys of every topic in memory with Polars, the run sorted once: the one route of
:func:`~polars_rankmetrics.trec_eval` and of :func:`~polars_rankmetrics.evaluate`'s TREC keys
on the Polars engine without a memory budget. The run and qrels are put in trec_eval's order
and joined (:func:`~polars_rankmetrics.engines.topk.trec_tables`,
:func:`~polars_rankmetrics.engines.topk.trec_rows`), then every key is computed in one
compiled pass (:mod:`polars_rankmetrics.metrics.trec_kernel`), or, for keys it does not
compute, by the keys' expressions in grouped passes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from polars_rankmetrics.engines import topk
from polars_rankmetrics.engines.key_rules import TrecOptions
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.inputs.sources import Source
from polars_rankmetrics.inputs.trec import key_hash
from polars_rankmetrics.metrics import trec_kernel
from polars_rankmetrics.metrics.registry import Context, MetricKey
from polars_rankmetrics.metrics.trec import POSITION, gain_rows, in_position_order


def topic_values(
    run: Any, qrels: Any, keys: Sequence[MetricKey], trec: TrecOptions, cols: Columns, *,
    checked: bool = False,
) -> pl.DataFrame | None:  # fmt: skip
    """Each topic's values of ``keys``, as :func:`~polars_rankmetrics.evaluate` gives them
    (``per_sample``), computed in one pass over the run's rows in trec_eval's order joined
    with the qrels (:func:`~polars_rankmetrics.metrics.trec.in_position_order`: no measure
    sorts); the run sorted once. None where the input is one that ``evaluate`` refuses or may
    refuse (a bad relevance, a missing column, a score that is not a float, a null or NaN
    score, a null in the qrels, a docno twice in a topic, no run row), so that it names the
    problem. ``checked``: the run is a bucket of
    :meth:`~polars_rankmetrics.inputs.trec.TrecRun.buckets`, which has no such row and holds
    each topic's rows one after another, so the run's checks are skipped and its sort reads
    the topics' order."""
    try:
        runs, judged = (Source.of(table).lazy() for table in (run, qrels))
        run_schema, qrels_schema = runs.collect_schema(), judged.collect_schema()
        names = [cols.sample, cols.label]
        topk.check_key_types(run_schema, qrels_schema, names, ("run", "qrels"))
        missing = [name for name in cols.by if name not in run_schema]
        # Integer and decimal scores are evaluate's to check (a 64-bit float holds them?).
        if missing or not run_schema[cols.score].is_float():
            return None
        read = [cols.sample, cols.label, cols.truth]
        qrels_nulls = judged.select(pl.any_horizontal(pl.col(read).is_null()).any())
        # The columns read, alone through the sort.
        ordered, judged = topk.trec_tables(
            runs.select(*cols.by, *names, cols.score), judged, cols, max_docs=trec.max_docs,
            judged_only=trec.judged_only, complete=trec.complete, together=checked,
        )  # fmt: skip
    except (ValueError, KeyError, pl.exceptions.PolarsError):
        return None
    keyed = [*cols.by, *names]
    score = pl.col(cols.score).cast(pl.Float64)
    given = runs.select(
        pl.len().alias("rows"),
        (score.is_nan() | score.is_null() | pl.any_horizontal(pl.col(keyed).is_null()))
        .any()
        .alias("unordered"),
        _distinct(keyed).alias("distinct"),
    )
    # Each table computed once (a lazy plan would sort the run again for each reader).
    *found, nulls, in_order, qrels_rows = pl.collect_all(
        [*([] if checked else [given]), qrels_nulls, ordered, judged]
    )
    if nulls.item():
        return None
    qrels_found = qrels_rows.lazy().select(
        pl.len().alias("rows"), _distinct(keyed).alias("distinct")
    )
    for facts in (frame.row(0, named=True) for frame in found):
        if facts["rows"] == 0 or facts["unordered"] or facts["distinct"] != facts["rows"]:
            return None
    qrels_facts = qrels_found.collect().row(0, named=True)
    if qrels_facts["distinct"] != qrels_facts["rows"]:
        return None
    topic = [topk.TOPIC]
    levels = [
        level for key in keys if isinstance(level := key.param("rel", trec.relevance_level), int)
    ]
    joined = topk.trec_rows(in_order, qrels_rows, cols)
    del in_order, qrels_rows  # the sorted run's copy is not held beside the rows
    if trec_kernel.supported(keys):
        return trec_kernel.topic_values(
            joined, cols.sample_keys, topk.TOPIC, cols.score, cols.truth, keys,
            trec.relevance_level, judged_only=trec.judged_only,
        )  # fmt: skip
    rows = in_position_order(joined.lazy(), topic, cols.truth, cols.score, levels)
    table = rows.collect().lazy()
    del joined, rows
    context = Context(
        truth=cols.truth, score=POSITION, relevance_level=trec.relevance_level,
        judged_only=trec.judged_only,
    )  # fmt: skip
    # A geometric key's expression is the logarithm of the topic's value (evaluate's too).
    values = {
        key: key.expression(context).exp() if key.metric.geometric else key.expression(context)
        for key in keys
    }
    # Apart, computed once: the aggregations that reduce values on each topic's rows, and
    # those that work on lists of a topic's documents of positive gain (on those rows alone
    # where they read no other: gain_rows). Mixed, an aggregation runs every expression the
    # slow way, several times the cost of the two parts apart.
    parts = [
        (table, [k for k in keys if not _listwise(k)]),
        (gain_rows(table, cols.truth), [k for k in keys if _listwise(k) and not _gains(k)]),
        (table, [k for k in keys if _gains(k)]),
    ]
    result: pl.DataFrame | None = None
    for rows_read, part in parts:
        if part:
            named = [pl.col(cols.sample_keys).first()] if result is None else []
            each = rows_read.group_by(topic).agg(*named, *(values[key] for key in part))
            each_frame = each.collect()
            result = each_frame if result is None else result.join(each_frame, on=topic)
    assert result is not None  # keys is not empty
    return result.select(*cols.sample_keys, *(str(key) for key in keys))


_LISTWISE = ("trec_g", "trec_ndcg_rel", "trec_rndcg")


def _listwise(key: MetricKey) -> bool:
    """Whether a key's expression works on each topic's lists (sorts, gathers, prefix sums of
    its documents of positive gain) rather than reducing values on its rows."""
    return key.metric.name in _LISTWISE or _gains(key)


def _gains(key: MetricKey) -> bool:
    """Whether a key has gain parameters (``ndcg.1=3,2=9``)."""
    return key.param("gains") is not None


def _distinct(names: Sequence[str]) -> pl.Expr:
    """How many distinct (``names``) rows, by a hash of each: fewer than the rows where two
    repeat (or, rarely, two hashes collide: then ``evaluate`` looks)."""
    return key_hash(names).n_unique()
