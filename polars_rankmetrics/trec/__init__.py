"""trec_eval's evaluation of runs against qrels, as a table of what it prints: the measures
of :mod:`polars_rankmetrics.trec.measures`, computed by :func:`~polars_rankmetrics.evaluate`'s
TREC keys (:mod:`polars_rankmetrics.metrics.trec`), summarised over topics as trec_eval does."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

import polars as pl

from polars_rankmetrics.engines import topk, trec_pass
from polars_rankmetrics.engines.key_rules import TrecOptions
from polars_rankmetrics.evaluate import evaluate
from polars_rankmetrics.inputs.sources import Source
from polars_rankmetrics.inputs.trec import TrecRun, Unbucketed
from polars_rankmetrics.metrics import trec_kernel
from polars_rankmetrics.metrics.registry import MetricKey
from polars_rankmetrics.metrics.sums import undefined_as_nan
from polars_rankmetrics.metrics.trec import JUDGED, NONPOOL, UNJUDGED
from polars_rankmetrics.options import Options, Run, documented
from polars_rankmetrics.trec import compiled
from polars_rankmetrics.trec.measures import Measure
from polars_rankmetrics.trec.measures import measures as parse_measures

__all__ = ["trec_eval"]

# The options under which the measures read the rows in position order, in memory, with
# Polars (:func:`_in_position_order`); any other goes through evaluate.
_IN_MEMORY_OPTIONS = {"engine", "memory_limit", "temp_dir", "progress"}
_SUMMARIES = {
    "mean": lambda c: c.mean(),
    "sum": lambda c: c.sum(),
    "geometric": lambda c: c.log().mean().exp(),
}


@documented(Options)
def trec_eval(
    run: Any,
    qrels: Any,
    measures: str | Sequence[str] = ("official",),
    *,
    per_topic: bool = False,
    complete: bool = False,
    max_docs: int | None = None,
    relevance_level: int = 1,
    judged_only: bool = False,
    ties: str = "trec_eval",
    **options: Unpack[Options],
) -> pl.DataFrame:
    """Evaluate one or several runs against qrels as trec_eval 10.0 does, one row per value it
    prints.

    With ``memory_limit``, a run larger than the budget is split into buckets of whole topics
    (the qrels with them), each put in trec_eval's order and cut by ``-M`` and ``-J`` apart:
    the whole run is never sorted, nor held (the per-topic ``relstring`` excepted).

    Parameters
    ----------
    run
        A frame, LazyFrame or path of the run: columns ``run`` (the run tag; several tags are
        several runs, evaluated apart), ``sample`` (the topic id), ``label`` (the document
        id), ``score`` and optionally ``rank``, which is never read: trec_eval orders each
        topic's documents by score descending, then by document id descending as text.
    qrels
        The qrels: ``sample``, ``label`` and ``truth`` (the relevance, an integer: 0 judged
        non-relevant, a negative value in the pool but unjudged, as trec_eval reads them).
    measures
        trec_eval's ``-m`` arguments: ``"official"`` (default), ``"all_trec"`` (its 37
        families, :data:`~polars_rankmetrics.trec.measures.ALL_TREC`), a family
        (``"P"``, ``"ndcg_cut"``) or a family with parameters (``"P.5,10"``,
        ``"ndcg.1=3,2=9"``, ``"iprec_at_recall.0,.5"``).
    per_topic
        trec_eval's ``-q``: the values of each topic too, before the summary.
    complete
        ``-c``: every topic of the qrels counts, those missing from a run scoring 0. Without
        it the topics are those of both the run and the qrels (as trec_eval 9 and pytrec_eval;
        trec_eval 10.0 stops with exit 4 where a qrels topic is missing from the run).
    max_docs
        ``-M``: only the first ``max_docs`` documents of each topic are read.
    relevance_level
        ``-l``: a judged relevance at least this is relevant (default 1).
    judged_only
        ``-J``: the documents the qrels do not judge are removed from the run first.
    ties
        ``"trec_eval"``, the only rule of trec_eval's measures (see
        :func:`~polars_rankmetrics.evaluate`).
    **options

    Returns
    -------
    polars.DataFrame
        Columns ``run``, ``measure`` (the name trec_eval prints: ``P_5``), ``topic`` (the
        topic id, or ``all`` for the summary), ``value`` (Float64; null for ``runid``) and
        ``text`` (the value as trec_eval prints it: ``%.4f``, an integer for the counts, the
        run tag for ``runid``). One block per run (by run tag): with ``per_topic`` each topic's
        rows (topics in text order, measures in trec_eval's order; ``num_q``, ``gm_map``,
        ``gm_bpref`` and ``runid`` only in the summary), then the ``all`` rows: the mean over
        topics, the geometric mean for ``gm_map`` and ``gm_bpref`` (each topic's value at least
        1e-5), the sum for the ``num_*`` counts.

    Raises
    ------
    ValueError
        For an unknown measure or bad parameters, a relevance that is not an integer, input
        ``evaluate`` refuses, or runs and qrels without a topic in common.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as rm
    >>> run = pl.DataFrame({"run": "bm25", "sample": "q1", "label": ["d1", "d2", "d3"],
    ...                     "score": [2.0, 1.0, 1.0]})
    >>> qrels = pl.DataFrame({"sample": "q1", "label": ["d2", "d3"], "truth": [1, 0]})
    >>> rm.trec_eval(run, qrels, ["map", "P.2"]).select("measure", "topic", "text")
    shape: (2, 3)
    ┌─────────┬───────┬────────┐
    │ measure ┆ topic ┆ text   │
    │ ---     ┆ ---   ┆ ---    │
    │ str     ┆ str   ┆ str    │
    ╞═════════╪═══════╪════════╡
    │ map     ┆ all   ┆ 0.3333 │
    │ P_2     ┆ all   ┆ 0.0000 │
    └─────────┴───────┴────────┘
    """
    chosen = parse_measures(measures)
    keys = [m.key for m in chosen if m.key is not None]
    if not keys:
        raise ValueError("measures names no measure with a value; ask for one besides runid")
    trec = TrecOptions(relevance_level, max_docs, judged_only, complete)
    in_memory = options.get("engine") in (None, "polars") and options.get("memory_limit") is None
    one_pass = in_memory and ties == "trec_eval" and set(options) <= _IN_MEMORY_OPTIONS
    topics = None
    relstring = [m.length for m in chosen if m.name.startswith("relstring")]
    if isinstance(run, TrecRun):
        if one_pass and not complete:
            topics = _by_buckets(run, qrels, keys, trec)
        if topics is None or per_topic and relstring:
            run = run.read().collect()
    if topics is None and one_pass:
        topics = _in_position_order(run, qrels, keys, trec)
    if topics is None:
        topics = evaluate(
            run, keys, truth_table=qrels, by="run", per_sample=True, ties=ties,
            relevance_level=relevance_level, max_docs=max_docs, judged_only=judged_only,
            complete=complete, **options,
        )  # fmt: skip
    # trec_eval's 0 / 0 (Rndcg, iprec_at_recall under -J) as NaN, which its summary keeps.
    topics = undefined_as_nan(topics, keys).sort("run", pl.col("sample").cast(pl.String))
    if topics.height == 0:
        raise ValueError("no topic has both a run and qrels (trec_eval's exit 7)")
    strings = {}
    if per_topic and relstring:
        strings = _relstrings(run, qrels, relstring[0], trec, options)
    blocks = []
    for (tag,), values in topics.group_by("run", maintain_order=True):
        rows = _topic_rows(values, chosen, strings) if per_topic else []
        blocks.append(_frame(str(tag), [*rows, *_summary_rows(str(tag), values, chosen)]))
    return pl.concat(blocks)


def _by_buckets(
    run: TrecRun, qrels: Any, keys: Sequence[MetricKey], trec: TrecOptions
) -> pl.DataFrame | None:
    """:func:`_in_position_order` of each bucket of whole topics of a run file
    (:meth:`~polars_rankmetrics.inputs.trec.TrecRun.buckets`) with the qrels of its topics,
    the buckets' values together: every step works within a topic, so that a bucket's topics
    take the values they take in the whole run. None where the file cannot be read so, where
    a bucket's input is one that ``evaluate`` may refuse (``_in_position_order``), or where
    no topic has qrels (for the whole path to refuse)."""
    judged = Source.of(qrels).lazy().collect()
    # Qrels without a string sample column are the whole path's to refuse.
    if judged.schema.get("sample") != pl.String:
        return None
    if trec_kernel.supported(keys):
        return compiled.evaluate(run, judged, keys, trec)
    spans = compiled.topic_spans(judged)
    parts = []
    try:
        for bucket in run.buckets():
            topics = bucket.get_column("sample").unique()
            if spans is None:
                held = [judged.filter(pl.col("sample").is_in(topics.implode()))]
            else:
                held = [judged.slice(*spans[t]) for t in topics if t in spans]
            if not held or not sum(frame.height for frame in held):
                continue  # no topic of the bucket is evaluated (they are without -c)
            values = _in_position_order(bucket, pl.concat(held), keys, trec, checked=True)
            if values is None:
                return None
            parts.append(values)
    except Unbucketed:
        return None
    return pl.concat(parts, how="vertical") if parts else None


def _in_position_order(
    run: Any, qrels: Any, keys: Sequence[MetricKey], trec: TrecOptions, *, checked: bool = False
) -> pl.DataFrame | None:
    """:func:`~polars_rankmetrics.engines.trec_pass.topic_values` with the run tag as ``by``."""
    _, cols = Run.of({}, by="run")
    return trec_pass.topic_values(run, qrels, keys, trec, cols.in_source(), checked=checked)


def _relstrings(
    run: Any, qrels: Any, length: int, trec: TrecOptions, options: Options
) -> dict[tuple[str, str], str]:
    """``relstring`` of each (run, topic): the first ``length`` documents retrieved, one
    character each: the relevance 0-9, ``>`` above 9, ``-`` outside the qrels, ``.`` pooled but
    unjudged (a negative relevance)."""
    _, cols = Run.of(options, by="run")
    cols = cols.in_source()
    predictions, judged = topk.trec_tables(
        Source.of(run).lazy(), Source.of(qrels).lazy(), cols, max_docs=trec.max_docs,
        judged_only=trec.judged_only, complete=trec.complete,
    )  # fmt: skip
    keys = [*cols.sample_keys, cols.label]
    code = pl.col(cols.truth).fill_null(NONPOOL)
    char = (
        pl.when(code > JUDGED + 9).then(pl.lit(">"))
        .when(code >= JUDGED).then((code - JUDGED).cast(pl.String))
        .when(code == UNJUDGED).then(pl.lit("."))
        .otherwise(pl.lit("-"))
    )  # fmt: skip
    table = (
        predictions.join(judged, on=keys, how="left")
        .group_by(cols.sample_keys)
        .agg(char.sort_by(-pl.col(cols.score)).head(length).str.join("").alias("__string"))
        .collect()
    )
    return {(str(row[0]), str(row[1])): row[2] for row in table.iter_rows()}


def _text(measure: Measure, value: float) -> str:
    if value != value:  # trec_eval's 0 / 0, which C's printf("%6.4f") writes so on x86-64
        return "  -nan"
    return f"{round(value)}" if measure.summary == "sum" else f"{value:.4f}"


def _topic_rows(
    values: pl.DataFrame, chosen: Sequence[Measure], strings: dict[tuple[str, str], str]
) -> list[tuple[Any, ...]]:
    shown = [m for m in chosen if m.per_topic]
    rows = []
    for topic in values.iter_rows(named=True):
        tag, sample = str(topic["run"]), str(topic["sample"])
        for m in shown:
            if m.key is None:  # relstring
                rows.append((m.name, sample, None, f"'{strings.get((tag, sample), '')}'"))
                continue
            value = topic[m.name]
            rows.append((m.name, sample, value, _text(m, value)))
    return rows


def _summary_rows(
    tag: str, values: pl.DataFrame, chosen: Sequence[Measure]
) -> list[tuple[Any, ...]]:
    computed = [m for m in chosen if m.key is not None]
    means = values.select(_SUMMARIES[m.summary](pl.col(m.name)) for m in computed).row(0)
    summary = dict(zip([m.name for m in computed], means, strict=True))
    return [
        (m.name, "all", None, tag) if m.key is None
        else (m.name, "all", summary[m.name], _text(m, summary[m.name]))
        for m in chosen
        if m.key is not None or m.summary == "text" and not m.per_topic
    ]  # fmt: skip


def _frame(tag: str, rows: list[tuple[Any, ...]]) -> pl.DataFrame:
    schema = {"measure": pl.String, "topic": pl.String, "value": pl.Float64, "text": pl.String}
    frame = pl.DataFrame(rows, schema=schema, orient="row")
    return frame.select(pl.lit(tag, pl.String).alias("run"), pl.all())
