"""``html_report``: the evaluation as one self-contained HTML page, from one pass over the data.

The page holds, for every ``by`` value side by side: the summary metrics (with bootstrap
intervals, ``ci=``) and the paired comparison with a baseline (``baseline=``); the micro-averaged
precision-recall and ROC curves; the per-label curves of the worst and the best labels; the
per-label table, sorted by any column with a click; the per-label differences from the baseline;
the distribution of the scores of positive and negative cells; and, for a top-k table, precision@K
and recall@K at every K. A run against qrels under ``ties="trec_eval"`` holds trec_eval's measures
instead (``AP``, ``recip_rank``, ``ndcg_cut_K``, ``P_K``, ``recall_K``), under its tie rule;
``metrics=`` names the keys instead, trec_eval's beside the library's (:mod:`.contents`). The
page states the tie rule its numbers follow.

Where every score of a dense table lies in [0, 1] the scores are read as probabilities too: the
summary gains ``log_loss_macro``, ``brier_macro`` and ``ece_micro``, the per-label table
``log_loss``, ``brier`` and ``ece`` (:func:`~polars_rankmetrics.label_report`), and the page a
reliability diagram per model (every label's cells pooled, 15 equal-width bins: the bins of
``ece_micro``), with the cells in each bin. A table with any score outside [0, 1] (logits,
ranks) has none of these. Of more than two models the page also holds a systems section
(:mod:`.systems`): their leaderboard, with the letters of the groups that do not differ
significantly, each metric's values sorted with their intervals, and the pairs' p-values as a
heat map. Each chart's numbers are computed first (:mod:`.chart_data`), then drawn as inline
SVG (:mod:`.charts`) in the page's sections (:mod:`.sections`); the table's sorting is a few
lines of inline script: the page requests nothing from any network.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from os import PathLike
from typing import Any, Unpack

import polars as pl

from polars_rankmetrics.checks import validation
from polars_rankmetrics.engines import driver
from polars_rankmetrics.engines.key_rules import (
    Part,
    TrecOptions,
    joined,
    key_parts,
    merged_per_sample,
)
from polars_rankmetrics.engines.topk import TIES
from polars_rankmetrics.inference.intervals import check_bootstrap, intervals
from polars_rankmetrics.inference.paired import (
    CompareOptions,
    baseline_values,
    paired,
    typed_baseline,
)
from polars_rankmetrics.inference.samples import Groups, frame_means, sample_groups
from polars_rankmetrics.inference.units import paired_by_units, unit_intervals, unit_tables
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.label_averages import combine, label_means
from polars_rankmetrics.metrics.parameters import parameters
from polars_rankmetrics.metrics.registry import Context, MetricKey, parse_keys
from polars_rankmetrics.metrics.undefined import gathered
from polars_rankmetrics.options import Options, Run, documented
from polars_rankmetrics.outputs import write_text
from polars_rankmetrics.report import systems
from polars_rankmetrics.report.contents import PROBABILITY_KEYS, Shape
from polars_rankmetrics.report.labels import LABEL_TABLES, label_table, reads_probabilities
from polars_rankmetrics.report.sections import Page
from polars_rankmetrics.report.systems import Systems


@dataclass(frozen=True)
class Report:
    """An evaluation report: its tables and its HTML page (shown inline in a notebook).

    ``summary``: one row per ``by`` value, a column per metric (with ``_lo`` and ``_hi`` under
    ``ci``); ``labels``: the per-label table of :func:`~polars_rankmetrics.label_report` (None
    for a top-k table); ``comparison``: :func:`~polars_rankmetrics.compare`'s table against the
    baseline (None without one); ``html``: the page; of more than two models, ``leaderboard``
    and ``pairs``: the systems section's tables (:func:`~polars_rankmetrics.leaderboard`'s, and
    :func:`~polars_rankmetrics.compare`'s of every pair; None otherwise).
    """

    summary: pl.DataFrame
    labels: pl.DataFrame | None
    comparison: pl.DataFrame | None
    html: str
    leaderboard: pl.DataFrame | None = None
    pairs: pl.DataFrame | None = None

    def _repr_html_(self) -> str:
        return self.html

    def save(self, path: str | PathLike[str]) -> None:
        """Write the page to ``path`` (UTF-8), crash-safely
        (:func:`~polars_rankmetrics.outputs.write_text`): whole or not at all."""
        write_text(path, self.html)


@documented(Options)
def html_report(
    data: Any,
    *,
    by: str | Sequence[str] | None = None,
    baseline: Any = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int | None = 0,
    bootstrap: str = "multinomial",
    truth_table: Any = None,
    n_labels: int | None = None,
    propensities: Any = None,
    k: int = 10,
    threshold: float = 0.5,
    zero_division: float | str = "warn",
    ties: str | None = None,
    metrics: str | Sequence[str] | None = None,
    relevance_level: int = 1,
    max_docs: int | None = None,
    judged_only: bool = False,
    complete: bool = False,
    path: str | PathLike[str] | None = None,
    title: str = "Evaluation report",
    **options: Unpack[Options],
) -> Report:
    """Evaluate ``data`` and lay the result out as one self-contained HTML page.

    Parameters
    ----------
    data
        The long table, as for :func:`~polars_rankmetrics.evaluate` (a top-k table's predictions
        with ``truth_table``).
    by
        The column(s) naming the models (or slices) shown side by side.
    baseline
        A value of ``by``: every other value is compared with it (paired bootstrap intervals of
        the differences, Fisher's permutation test, Holm's correction, on the summary's keys
        averaged over samples), and, for a dense table, the per-label differences from it are
        drawn.
    ci, n_boot, seed
        A bootstrap interval of each summary metric averaged over samples, as for
        :func:`~polars_rankmetrics.evaluate`; ``ci`` is also the comparison's level (0.95 by
        default).
    bootstrap
        ``"multinomial"`` (default) or ``"poisson"``: how the intervals and the comparison
        draw the samples, as for :func:`~polars_rankmetrics.evaluate` and
        :func:`~polars_rankmetrics.compare` (``"poisson"``: by hashed units, the draws that
        merge across partitions and states).
    truth_table, n_labels
        A top-k table, as for :func:`~polars_rankmetrics.evaluate`: the summary holds the
        retrieval metrics (with ``ci`` and ``baseline`` as for a dense table), and the page
        precision@K and recall@K for K = 1 .. ``k``.
    propensities
        Label propensities for the propensity-scored keys of ``metrics`` (``psndcg@5``), as
        for :func:`~polars_rankmetrics.evaluate`.
    k
        The deepest cut-off drawn for a top-k table (without ``metrics``).
    threshold, zero_division
        As for :func:`~polars_rankmetrics.evaluate`. The table is read once, in buckets under a
        memory budget. The page's size grows with the labels and the models, not the rows; the
        memory of the exact curves with the labels times the distinct scores.
    ties
        The tie rule, and with it the measures of a top-k table. None or ``"average"``
        (default): the library's keys, which take their expected value over the orders of
        each tied block (a dense table's ranking metrics count ties as scikit-learn does).
        ``"trec_eval"``: a run against qrels (``truth_table`` required; a TREC run and qrels
        as :func:`~polars_rankmetrics.read_trec_run` and
        :func:`~polars_rankmetrics.read_trec_qrels` read them, the qrels shared by every run or
        per run): trec_eval's measures ``AP`` (its ``map``), ``recip_rank``, ``ndcg_cut_{k}``,
        ``P_{k}`` and ``recall_{k}`` in the summary, ``P_K`` and ``recall_K`` for K = 1 ..
        ``k`` drawn, each topic's documents ordered by score descending, then by label
        descending as text. Graded relevance is read as trec_eval reads it: a relevance of at
        least ``relevance_level`` is relevant, and ``ndcg_cut`` takes it as gain. The topics
        of both the run and the qrels are evaluated (or with ``complete`` every topic of the
        qrels). ``n_labels`` does not apply. The page states the rule its numbers follow.
        With ``metrics``, the tie rule of the library's keys, as for
        :func:`~polars_rankmetrics.evaluate` (``"trec_eval"`` needs ``truth_table``).
    metrics
        The keys of the summary, the intervals and the comparison, in place of the page's own
        (None), as :func:`~polars_rankmetrics.evaluate` reads them: with any trec_eval or
        ir_measures name (``P_5``, ``ndcg_cut_10``, ``nDCG@10``), every name trec_eval has
        (``map``, ``ndcg``) is trec_eval's measure, the library's other keys (``precision@5``,
        ``mrr``) keep their own definitions, and each key is read by its own rules (each a pass
        over the data, joined on ``by``: the summary's values are ``evaluate``'s, the
        comparison's ``compare``'s). A top-k table's keys must be averaged over samples; a
        dense table's keys averaged over labels join the summary beside its per-label
        sections. No geometric means (``gm_map``). The page draws no cut-off chart, and states
        the rule each kind of key follows.
    relevance_level, max_docs, judged_only, complete
        With ``ties="trec_eval"`` or TREC keys in ``metrics``: trec_eval's ``-l``, ``-M``,
        ``-J`` and ``-c``, as for :func:`~polars_rankmetrics.evaluate` (by default its
        defaults: a relevance of 1 or more is relevant, every retrieved document read,
        unjudged ones kept, the topics of both the run and the qrels); the page states the
        ones given. Beside TREC keys, the library's binary keys read a relevance of at least
        ``relevance_level`` as relevant, so graded qrels work with them.
    path
        Also write the page there.
    title
        The page's title.
    **options

    Returns
    -------
    Report
        The tables and the page; ``Report.save(path)`` writes it.

    Raises
    ------
    ValueError
        For input the metrics are not defined on (as :func:`~polars_rankmetrics.evaluate`), a
        ``baseline`` that is not a value of ``by``, an unknown ``ties``, or
        ``ties="trec_eval"`` without ``truth_table`` (or, without ``metrics``, with
        ``n_labels``), trec_eval's options without ``ties="trec_eval"`` or a TREC key, an
        unknown key in ``metrics``, a geometric mean, a top-k table's key averaged over labels,
        and ``baseline`` where ``metrics`` holds no key averaged over samples.

    Examples
    --------
    >>> import polars_rankmetrics as rm
    >>> report = rm.html_report("data/example.parquet", by="model", baseline="baseline")
    >>> [(model, round(lrap, 6)) for model, lrap in report.summary.select("model", "lrap").rows()]
    [('baseline', 0.418674), ('candidate', 0.69374)]
    >>> report.html.startswith("<!DOCTYPE html>")
    True
    """
    require_matplotlib()
    check_bootstrap(bootstrap)
    if ties is not None and ties not in TIES:
        raise ValueError(f"ties must be one of {', '.join(TIES)}, not {ties!r}")
    run, cols = Run.of(options, by=by)
    context = parameters(threshold=threshold, zero_division=zero_division)
    trec = TrecOptions(relevance_level, max_docs, judged_only, complete)
    shape = Shape.of(metrics, truth_table, n_labels, k, ties=ties, trec=trec)
    keys = [*shape.sample_keys, *shape.label_keys]
    parts = key_parts(data, truth_table, keys, cols, context, ties=ties, trec=trec)
    with gathered():  # one warning for the per-sample values and the per-label tables
        inputs = (n_labels, propensities)
        report = _report(run, parts, cols, shape, inputs, baseline=baseline, ci=ci,
                         n_boot=n_boot, seed=seed, bootstrap=bootstrap, title=title)  # fmt: skip
    if path is not None:
        report.save(path)
    return report


def require_matplotlib() -> None:
    """Refuse at once, before any work, where matplotlib, which draws the page's charts, is
    missing: the ``report`` extra is not part of a plain install."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ImportError(
            "the HTML report draws its charts with matplotlib, which is not installed: "
            "pip install matplotlib (or the report extra: pip install "
            "'polars-rankmetrics[report]')"
        ) from None


def _report(
    run: Run, parts: list[Part], cols: Columns, shape: Shape, inputs: tuple[int | None, Any], *,
    baseline: Any, ci: float | None, n_boot: int, seed: int | None, bootstrap: str, title: str,
) -> Report:  # fmt: skip
    """The report of the keys of ``parts`` (a top-k table's ``inputs``: ``n_labels`` and
    ``propensities``): a pass over each part
    (:func:`~polars_rankmetrics.engines.key_rules.key_parts`) collecting its per-sample rows
    (and, for a dense table, the per-label tables), and its summary, as ``evaluate`` gives it;
    then the comparison and the systems over the parts' per-sample rows joined, as ``compare``
    reads them; then the page's sections."""
    if baseline is not None and not cols.by:
        raise ValueError("baseline= is a value of by=: give by= too")
    if baseline is not None and not shape.shown:
        raise ValueError(
            "baseline= compares the keys averaged over samples, and metrics= names none: ask "
            "for one (lrap, precision@5, ...)"
        )
    base = None if baseline is None else baseline_values(baseline, cols.by)
    keys = [*shape.sample_keys, *shape.label_keys]
    validation.check_result_names(cols, [str(key) for key in keys])
    with driver.inside_names(cols) as inner:
        tables = ["per_sample", *(LABEL_TABLES if shape.per_label else [])]
        pieces, summaries = [], []
        for part in parts:
            collected, context = run.collect(
                part.data, inner, part.keys, tables, parameters=part.context,
                inputs=driver.TopK(part.truth_table, *inputs),
            )  # fmt: skip
            piece = collected.pop("per_sample")
            if len(parts) > 1:
                pieces.append(list(piece))
            part_keys = [key for key in part.keys if key in shape.sample_keys]
            groups, by_types = sample_groups(piece, inner, part_keys)
            summaries.append(_summary(groups, by_types, inner, part_keys, ci=ci, n_boot=n_boot,
                                      seed=seed, bootstrap=bootstrap, context=context))  # fmt: skip
        summary = joined(summaries, list(inner.by), shape.sample_keys)
        if len(summaries) > 1 and inner.by:  # the groups' order, as sample_groups sorts them
            summary = summary.sort(list(inner.by), nulls_last=True)
        if pieces:
            groups, by_types = sample_groups(
                merged_per_sample(pieces, inner, shape.sample_keys), inner, shape.sample_keys
            )
            del pieces
        group = list(inner.by) or [validation.GROUP]
        labels = counts = None
        label_keys = list(shape.label_keys)
        probabilities = False
        if shape.per_label:
            combined = {
                reduction: combine(collected[reduction], [*group, *driver.LABEL_TABLES[reduction]])
                for reduction in driver.LABEL_TABLES
                if reduction in collected
            }
            probabilities = reads_probabilities(combined["curves"])
            if probabilities and shape.probabilities:
                label_keys += parse_keys(list(PROBABILITY_KEYS))
            if label_keys:
                summary = _with_label_means(summary, combined, label_keys, inner, context)
            labels = label_table(collected, inner, context, probabilities)
            counts = combined["curves"]
        comparison = None
        if base is not None:
            base = typed_baseline(base, cols.by, list(by_types.values()))
            compared = paired_by_units if bootstrap == "poisson" else paired
            how = CompareOptions("permutation", "holm", 10_000, n_boot, ci or 0.95, seed)
            comparison = compared(dict(groups), by_types, inner, shape.shown, how, baseline=base)
        many = None
        if len(groups) > 2 and shape.shown:
            many = Systems.of(groups, by_types, inner, shape.shown, summary, ci=ci,
                              n_boot=n_boot, seed=seed, bootstrap=bootstrap)  # fmt: skip
            many = many.restored(inner)
    names = _model_names(summary, inner)
    page = Page(title, names, inner)
    page.summary(inner.restored(summary), shape.shown, label_keys, ci, shape.ties)
    if comparison is not None:
        page.comparison(inner.restored(comparison))
    if many is not None:
        page.section(systems.HEADING, systems.body(many, cols.by), systems.note(many, ci))
    if labels is not None and counts is not None:
        page.curves(counts, group, labels, base)
        page.label_table(inner.restored(labels))
        page.distributions(counts, group)
        if probabilities:
            page.reliability(counts)
    elif shape.cuts[0]:
        page.cut_offs(summary, *shape.cuts)
    return Report(
        inner.restored(summary),
        None if labels is None else inner.restored(labels),
        None if comparison is None else inner.restored(comparison),
        page.render(),
        None if many is None else many.leaderboard,
        None if many is None else many.pairs,
    )


def _with_label_means(
    summary: pl.DataFrame, combined: dict[str, pl.DataFrame], keys: list[MetricKey],
    cols: Columns, context: Context,
) -> pl.DataFrame:  # fmt: skip
    """``summary`` with the keys averaged over labels beside it, from the per-label tables."""
    averages = label_means(combined, list(cols.by) or [validation.GROUP], keys, context)
    on = list(cols.by) or None
    if on is None:
        return pl.concat([summary, averages.drop(validation.GROUP)], how="horizontal")
    return summary.join(averages, on=on, nulls_equal=True).sort(on, nulls_last=True)


def _summary(
    groups: Groups, by_types: dict[str, Any], cols: Columns, keys: Sequence[MetricKey], *,
    ci: float | None, n_boot: int, seed: int | None, bootstrap: str, context: Any,
) -> pl.DataFrame:  # fmt: skip
    """Per ``by`` group, each key's weighted mean over samples (with ``ci``, its bootstrap
    interval beside it)."""
    if ci is not None and keys and bootstrap == "poisson":
        return unit_intervals(unit_tables(groups, cols.sample, keys), by_types, cols, keys,
                              level=ci, n_boot=n_boot, seed=seed, method="percentile",
                              context=context)  # fmt: skip
    if ci is not None and keys:
        return intervals(groups, by_types, cols, keys, level=ci, n_boot=n_boot, seed=seed,
                         method="percentile", context=context)  # fmt: skip
    out = []
    for values_of_group, frame in groups:
        row = dict(zip(cols.by, values_of_group, strict=True))
        if keys:  # a dense page may show keys averaged over labels alone
            means = frame_means(frame, keys)
            row |= {str(key): float(means[j]) for j, key in enumerate(keys)}
        out.append(row)
    schema: dict[str, Any] = dict(by_types)
    schema |= dict.fromkeys(map(str, keys), pl.Float64)
    return pl.DataFrame(out, schema=schema, orient="row")


def _model_names(summary: pl.DataFrame, cols: Columns) -> list[str]:
    """A display name per row of ``summary``: its ``by`` values ("all" without ``by``)."""
    if not cols.by:
        return ["all"]
    return [", ".join(str(v) for v in row) for row in summary.select(cols.by).iter_rows()]
