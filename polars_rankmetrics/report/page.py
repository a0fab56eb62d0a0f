"""``html_report``: the evaluation as one self-contained HTML page, from one pass over the data.

The page holds, for every ``by`` value side by side: the summary metrics (with bootstrap
intervals, ``ci=``) and the paired comparison with a baseline (``baseline=``); the micro-averaged
precision-recall and ROC curves; the per-label curves of the worst and the best labels; the
per-label table, sorted by any column with a click; the per-label differences from the baseline;
the distribution of the scores of positive and negative cells; and, for a top-k table, precision@K
and recall@K at every K. A run against qrels under ``ties="trec_eval"`` holds trec_eval's measures
instead (``AP``, ``recip_rank``, ``ndcg_cut_K``, ``P_K``, ``recall_K``), under its tie rule; the
page states the tie rule its numbers follow.

Where every score of a dense table lies in [0, 1] the scores are read as probabilities too: the
summary gains ``log_loss_macro``, ``brier_macro`` and ``ece_micro``, the per-label table
``log_loss``, ``brier`` and ``ece`` (:func:`~polars_rankmetrics.label_report`), and the page a
reliability diagram per model (every label's cells pooled, 15 equal-width bins: the bins of
``ece_micro``), with the cells in each bin. A table with any score outside [0, 1] (logits,
ranks) has none of these. Of more than two models the page also holds a systems section
(:mod:`.systems`): their leaderboard, with the letters of the groups that do not differ
significantly, each metric's values sorted with their intervals, and the pairs' p-values as a
heat map. Each chart's numbers are computed first (:mod:`.chart_data`), then
drawn as inline SVG (:mod:`.charts`); the table's sorting is a few lines of inline script: the
page requests nothing from any network.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from os import PathLike
from typing import Any, Unpack

import polars as pl

from polars_rankmetrics.checks import validation
from polars_rankmetrics.engines import driver
from polars_rankmetrics.engines.key_rules import TrecOptions, tie_ordered
from polars_rankmetrics.engines.topk import TIES
from polars_rankmetrics.inference.intervals import check_bootstrap, intervals
from polars_rankmetrics.inference.paired import (
    baseline_values,
    paired,
    typed_baseline,
)
from polars_rankmetrics.inference.samples import Groups, frame_means, sample_groups
from polars_rankmetrics.inference.units import paired_by_units, unit_intervals, unit_tables
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.label_averages import (
    LABEL,
    combine,
    cumulative,
    label_curves,
    label_means,
)
from polars_rankmetrics.metrics.parameters import parameters
from polars_rankmetrics.metrics.probabilities import N_BINS
from polars_rankmetrics.metrics.registry import Context, MetricKey, parse_keys
from polars_rankmetrics.metrics.undefined import gathered
from polars_rankmetrics.options import Options, Run, documented
from polars_rankmetrics.outputs import write_text
from polars_rankmetrics.report import chart_data, charts, systems
from polars_rankmetrics.report.labels import LABEL_TABLES, label_table, reads_probabilities
from polars_rankmetrics.report.systems import Systems

# The summary of a dense table: keys averaged over samples (intervals and tests apply), then
# keys averaged over labels.
SAMPLE_KEYS = ("lrap", "lwlrap", "coverage_error", "ranking_loss", "ndcg", "ndcg@10",
               "hamming_loss", "f1_samples")  # fmt: skip
LABEL_KEYS = ("f1_micro", "f1_macro", "average_precision_micro", "average_precision_macro",
              "roc_auc_micro", "roc_auc_macro")  # fmt: skip
# The summary's keys where the scores are probabilities (every score in [0, 1]).
PROBABILITY_KEYS = ("log_loss_macro", "brier_macro", "ece_micro")
# The tie rule each kind of page follows, as the page states it.
DENSE_TIES = (
    "Tied scores: the ranking metrics count ties as scikit-learn does, and ndcg takes its expected "
    "value over the orders of each tied block."
)
TOP_K_TIES = (
    "Tied scores (ties='average'): the retrieval metrics take their expected value over the "
    "orders of each tied block."
)


def trec_rule(trec: TrecOptions) -> str:
    """What a page of trec_eval's measures states of its numbers: the tie rule and the options
    (``-l``, ``-M``, ``-J``, ``-c``) they were computed under."""
    level = trec.relevance_level
    read = [f"a relevance of {level} or more is relevant (trec_eval's -l {level})"]
    if trec.max_docs is not None:
        read.append(f"the first {trec.max_docs} documents of each topic are read (-M)")
    if trec.judged_only:
        read.append("the documents the qrels do not judge are removed first (-J)")
    topics = (
        "every topic of the qrels is evaluated, one a run lacks scoring 0 (trec_eval's -c)"
        if trec.complete
        else "the topics of both the run and the qrels are evaluated (trec_eval without -c)"
    )
    return (
        "trec_eval's measures under its tie rule (ties='trec_eval'): each topic's documents "
        "ordered by score descending, then by document id descending as text; AP is trec_eval's "
        f"map. {_sentence('; '.join(read))}, and ndcg_cut_K takes the relevance as gain. "
        f"{_sentence(topics)}. The per-label sections (curves, table, score distributions) "
        "are for a dense table of 0/1 truth; a run holds none of them."
    )


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


# The worst and the best labels drawn one by one, by average precision.
EXTREMES = 3
# Bins of the score distributions.
BINS = 40


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
    k: int = 10,
    threshold: float = 0.5,
    zero_division: float | str = "warn",
    ties: str | None = None,
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
    k
        The deepest cut-off drawn for a top-k table.
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
    relevance_level, max_docs, judged_only, complete
        With ``ties="trec_eval"``: trec_eval's ``-l``, ``-M``, ``-J`` and ``-c``, as for
        :func:`~polars_rankmetrics.evaluate` (by default its defaults: a relevance of 1 or
        more is relevant, every retrieved document read, unjudged ones kept, the topics of both
        the run and the qrels); the page states the ones given.
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
        ``ties="trec_eval"`` without ``truth_table`` or with ``n_labels``, and trec_eval's
        options without ``ties="trec_eval"``.

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
    if ties == "trec_eval":
        if truth_table is None or n_labels is not None:
            raise ValueError(
                "ties='trec_eval' reports trec_eval's measures of a run against qrels: give "
                "truth_table= (the qrels), without n_labels= (trec_eval's ndcg needs none)"
            )
        trec = TrecOptions(relevance_level, max_docs, judged_only, complete)
        shape = _Shape.trec(k, trec)
        data, qrels, context = tie_ordered(
            data, truth_table, shape.sample_keys, cols, context, ties=ties, trec=trec
        )
        shape = replace(shape, inputs=driver.TopK(qrels))
    else:
        if (relevance_level, max_docs, judged_only, complete) != (1, None, False, False):
            raise ValueError(
                "relevance_level, max_docs, judged_only and complete are trec_eval's options: "
                "they go with ties='trec_eval' (a run against qrels)"
            )
        shape = _Shape.dense() if truth_table is None else _Shape.top_k(truth_table, n_labels, k)
    with gathered():  # one warning for the per-sample values and the per-label tables
        report = _report(run, data, cols, shape, baseline=baseline, ci=ci, n_boot=n_boot,
                         seed=seed, bootstrap=bootstrap, context=context, title=title)  # fmt: skip
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


@dataclass(frozen=True)
class _Shape:
    """What the page holds of a table: the keys averaged over samples (the summary's
    intervals and the comparison apply to them) and those averaged over labels (a dense table
    only); the keys of the summary and the comparison (``shown``); the run's inputs; the tie
    rule its numbers follow, as the page states it (``ties``); for a top-k table, the names of
    the keys drawn at each cut-off K = 1 .. k (``cuts``: the precision's, then the recall's;
    empty for a dense table, drawn by its labels)."""

    sample_keys: list[MetricKey]
    label_keys: list[MetricKey]
    shown: list[MetricKey]
    inputs: driver.TopK
    ties: str
    cuts: tuple[list[str], list[str]] = ([], [])

    @classmethod
    def dense(cls) -> _Shape:
        sample_keys = parse_keys(list(SAMPLE_KEYS))
        return cls(
            sample_keys, parse_keys(list(LABEL_KEYS)), sample_keys, driver.TopK(), DENSE_TIES
        )

    @classmethod
    def top_k(cls, truth_table: Any, n_labels: int | None, k: int) -> _Shape:
        """The retrieval metrics at every cut-off 1 .. ``k`` (drawn), the summary showing the
        mean reciprocal rank, average precision, ndcg@``k`` (with ``n_labels``) and the
        precision and recall at ``k``."""
        cuts = _cuts(k, "precision@{}", "recall@{}")
        whole = ["mrr", "map", *([f"ndcg@{k}"] if n_labels is not None else [])]
        shown = parse_keys([*whole, cuts[0][-1], cuts[1][-1]])
        keys = parse_keys([*cuts[0], *cuts[1], *whole])
        return cls(keys, [], shown, driver.TopK(truth_table, n_labels), TOP_K_TIES, cuts)

    @classmethod
    def trec(cls, k: int, trec: TrecOptions) -> _Shape:
        """trec_eval's measures at every cut-off 1 .. ``k`` (drawn), the summary showing ``AP``
        (trec_eval's map), ``recip_rank``, ``ndcg_cut_k``, ``P_k`` and ``recall_k``; the inputs
        are set once the run and qrels are read as the TREC keys read them, under ``trec``'s
        options."""
        cuts = _cuts(k, "P_{}", "recall_{}")
        whole = ["AP", "recip_rank", f"ndcg_cut_{k}"]
        shown = parse_keys([*whole, cuts[0][-1], cuts[1][-1]])
        keys = parse_keys([*cuts[0], *cuts[1], *whole])
        return cls(keys, [], shown, driver.TopK(), trec_rule(trec), cuts)


def _cuts(k: int, precision: str, recall: str) -> tuple[list[str], list[str]]:
    """The names of the precision and the recall keys at K = 1 .. ``k``."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, not {k!r}")
    cuts = range(1, k + 1)
    return [precision.format(c) for c in cuts], [recall.format(c) for c in cuts]


def _report(
    run: Run, data: Any, cols: Columns, shape: _Shape, *, baseline: Any, ci: float | None,
    n_boot: int, seed: int | None, bootstrap: str, context: Context, title: str,
) -> Report:  # fmt: skip
    """The report of ``data``: one pass collecting the per-sample rows (and, for a dense table,
    the per-label tables), then the summary, the comparison and the page's sections."""
    if baseline is not None and not cols.by:
        raise ValueError("baseline= is a value of by=: give by= too")
    base = None if baseline is None else baseline_values(baseline, cols.by)
    keys = [*shape.sample_keys, *shape.label_keys]
    validation.check_result_names(cols, [str(key) for key in keys])
    with driver.inside_names(cols) as inner:
        tables = ["per_sample", *(LABEL_TABLES if shape.label_keys else [])]
        collected, context = run.collect(
            data, inner, keys, tables, parameters=context, inputs=shape.inputs
        )
        groups, by_types = sample_groups(collected.pop("per_sample"), inner, shape.sample_keys)
        group = list(inner.by) or [validation.GROUP]
        summary = _summary(groups, by_types, inner, shape.sample_keys, ci=ci, n_boot=n_boot,
                           seed=seed, bootstrap=bootstrap, context=context)  # fmt: skip
        labels = counts = None
        label_keys = list(shape.label_keys)
        probabilities = False
        if label_keys:
            combined = {
                reduction: combine(collected[reduction], [*group, *driver.LABEL_TABLES[reduction]])
                for reduction in driver.LABEL_TABLES
                if reduction in collected
            }
            probabilities = reads_probabilities(combined["curves"])
            if probabilities:
                label_keys += parse_keys(list(PROBABILITY_KEYS))
            averages = label_means(combined, group, label_keys, context)
            on = list(inner.by) or None
            summary = (
                summary.join(averages, on=on, nulls_equal=True).sort(on, nulls_last=True)
                if on else pl.concat([summary, averages.drop(validation.GROUP)], how="horizontal")
            )  # fmt: skip
            labels = label_table(collected, inner, context, probabilities)
            counts = combined["curves"]
        comparison = None
        if base is not None:
            base = typed_baseline(base, cols.by, list(by_types.values()))
            compared = paired_by_units if bootstrap == "poisson" else paired
            comparison = compared(
                dict(groups), by_types, inner, shape.shown,
                baseline=base, test="permutation", correction="holm", n_resamples=10_000,
                n_boot=n_boot, level=ci or 0.95, seed=seed, on_missing="error",
            )  # fmt: skip
        many = None
        if len(groups) > 2:
            many = Systems.of(groups, by_types, inner, shape.shown, summary, ci=ci,
                              n_boot=n_boot, seed=seed, bootstrap=bootstrap)  # fmt: skip
            many = many.restored(inner)
    names = _model_names(summary, inner)
    page = _Page(title, names, inner)
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
        precision, recall = shape.cuts
        lines = [
            (name, *chart_data.at_k(row, precision, recall))
            for name, row in zip(names, summary.iter_rows(named=True), strict=True)
        ]
        named = (_at_k(precision[0]), _at_k(recall[0]))
        page.section(
            "Retrieval at each cut-off",
            charts.at_k(lines, title=f"{named[0]} and {named[1]}", names=named),
        )
    return Report(
        inner.restored(summary),
        None if labels is None else inner.restored(labels),
        None if comparison is None else inner.restored(comparison),
        page.render(),
        None if many is None else many.leaderboard,
        None if many is None else many.pairs,
    )


def _summary(
    groups: Groups, by_types: dict[str, Any], cols: Columns, keys: Sequence[MetricKey], *,
    ci: float | None, n_boot: int, seed: int | None, bootstrap: str, context: Any,
) -> pl.DataFrame:  # fmt: skip
    """Per ``by`` group, each key's weighted mean over samples (with ``ci``, its bootstrap
    interval beside it)."""
    if ci is not None and bootstrap == "poisson":
        return unit_intervals(unit_tables(groups, cols.sample, keys), by_types, cols, keys,
                              level=ci, n_boot=n_boot, seed=seed, method="percentile",
                              context=context)  # fmt: skip
    if ci is not None:
        return intervals(groups, by_types, cols, keys, level=ci, n_boot=n_boot, seed=seed,
                         method="percentile", context=context)  # fmt: skip
    out = []
    for values_of_group, frame in groups:
        means = frame_means(frame, keys)
        row = dict(zip(cols.by, values_of_group, strict=True))
        out.append(row | {str(key): float(means[j]) for j, key in enumerate(keys)})
    schema: dict[str, Any] = dict(by_types)
    schema |= dict.fromkeys(map(str, keys), pl.Float64)
    return pl.DataFrame(out, schema=schema, orient="row")


def _at_k(name: str) -> str:
    """A key's name at K = 1 as the chart names it at every K (``P_1``: ``P_K``)."""
    return name[:-1] + "K"


def _model_names(summary: pl.DataFrame, cols: Columns) -> list[str]:
    """A display name per row of ``summary``: its ``by`` values ("all" without ``by``)."""
    if not cols.by:
        return ["all"]
    return [", ".join(str(v) for v in row) for row in summary.select(cols.by).iter_rows()]


_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 1.5rem;
       color: #1a1a1a; max-width: 80rem; }
h1 { font-size: 1.5rem; }
h2 { font-size: 1.15rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 0.85rem; margin: 0.5rem 0; }
th, td { padding: 0.2rem 0.6rem; text-align: right; border-bottom: 1px solid #eee; }
th:first-child, td:first-child { text-align: left; }
table.sortable th { cursor: pointer; user-select: none; background: #f5f5f5; }
table.sortable th[aria-sort="ascending"]::after { content: " \\25B2"; }
table.sortable th[aria-sort="descending"]::after { content: " \\25BC"; }
.charts { display: flex; flex-wrap: wrap; gap: 1rem; }
.charts svg, section > svg { max-width: 100%; height: auto; }
.note { color: #555; font-size: 0.85rem; }
.scroll { max-height: 28rem; overflow: auto; }
@media print { .scroll { max-height: none; overflow: visible; } h2 { break-after: avoid; }
               svg { break-inside: avoid; } }
"""

_SORT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  var headers = table.querySelectorAll("th");
  headers.forEach(function (th, column) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var ascending = th.getAttribute("aria-sort") !== "ascending";
      headers.forEach(function (other) { other.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      rows.sort(function (a, b) {
        var x = a.cells[column].getAttribute("data-value");
        var y = b.cells[column].getAttribute("data-value");
        var nx = parseFloat(x), ny = parseFloat(y);
        var order = isNaN(nx) || isNaN(ny) ? x.localeCompare(y) : nx - ny;
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


def _number(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "NaN"
    if isinstance(value, float):
        return f"{value:.4f}"
    return html.escape(str(value))


def _table(frame: pl.DataFrame, *, sortable: bool = False) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
    rows = []
    for row in frame.iter_rows():
        cells = "".join(f'<td data-value="{html.escape(str(v))}">{_number(v)}</td>' for v in row)
        rows.append(f"<tr>{cells}</tr>")
    kind = ' class="sortable"' if sortable else ""
    return f"<table{kind}><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


class _Page:
    """The page's sections, in order."""

    def __init__(self, title: str, names: list[str], cols: Columns) -> None:
        self.title, self.names, self.cols = title, names, cols
        self.parts: list[str] = []

    def section(self, heading: str, body: str, note: str = "") -> None:
        text = f'<p class="note">{html.escape(note)}</p>' if note else ""
        self.parts.append(f"<section><h2>{html.escape(heading)}</h2>{text}{body}</section>")

    def summary(
        self, summary: pl.DataFrame, sample_keys: Sequence[MetricKey],
        label_keys: Sequence[MetricKey], ci: float | None, ties: str,
    ) -> None:  # fmt: skip
        """Metrics as rows, models as columns; an interval in brackets under ``ci``; the tie
        rule the numbers follow (``ties``) stated under the heading."""
        rows = []
        for key in [*sample_keys, *label_keys]:
            name = str(key)
            cells = []
            for row in summary.iter_rows(named=True):
                text = _number(row[name])
                if ci is not None and f"{name}_lo" in row:
                    text += f" [{_number(row[f'{name}_lo'])}, {_number(row[f'{name}_hi'])}]"
                cells.append(f"<td>{text}</td>")
            better = "lower is better" if key.metric.better == "lower" else "higher is better"
            rows.append(
                f'<tr><td title="{html.escape(key.metric.description)}; {better}">{name}</td>'
                f"{''.join(cells)}</tr>"
            )
        head = "".join(f"<th>{html.escape(n)}</th>" for n in self.names)
        note = ties
        if ci:
            note += f" {int(ci * 100)}% bootstrap intervals of the samples in brackets."
        self.section(
            "Summary",
            f"<table><thead><tr><th>metric</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody>"
            "</table>",
            note,
        )

    def comparison(self, comparison: pl.DataFrame) -> None:
        shown = comparison.with_columns(
            pl.when(pl.col("p_adjusted") < 0.05).then(pl.lit("\u2020")).otherwise(pl.lit(""))
            .alias("significant")
        )  # fmt: skip
        self.section(
            "Comparison with the baseline",
            _table(shown, sortable=True),
            "delta = model minus baseline; [delta_lo, delta_hi] a paired bootstrap interval; "
            "p from Fisher's permutation test (compare's test='permutation', "
            "n_resamples=10,000), Holm-adjusted; "
            "\u2020: p_adjusted < 0.05.",
        )

    def curves(
        self,
        counts: pl.DataFrame,
        group: list[str],
        labels: pl.DataFrame,
        baseline: tuple[Any, ...] | None,
    ) -> None:
        """Micro-averaged and per-label precision-recall and ROC curves, and the per-label
        differences of average precision from the baseline."""
        by, label = list(self.cols.by), self.cols.label
        models = list(zip(self.names, _values(labels, by), strict=True))
        micro, exact = cumulative(counts, group), label_curves(counts, group)
        pr, roc, prevalences = [], [], []
        for name, values in models:
            points = _where(micro, by, values)
            if points.height == 0:
                continue
            curve = chart_data.Curve.of(points)
            row = _where(exact, by, values).row(0, named=True)
            pr.append((name, *curve.pr, f"AP {_number(row['average_precision'])}"))
            roc.append((name, *curve.roc, f"AUC {_number(row['roc_auc'])}"))
            prevalences.append((name, curve.prevalence))
        self.section(
            "Micro-averaged curves",
            '<div class="charts">'
            + charts.curves(
                pr, kind="pr", title="precision-recall, every cell", references=prevalences
            )  # fmt: skip
            + charts.curves(roc, kind="roc", title="ROC, every cell")
            + "</div>",
            "Drawn from the exact per-score counts (thinned for drawing); the legends' AP and "
            "AUC are exact. Dashed: each model's prevalence, the precision of a random ranking.",
        )
        first = _where(labels, by, models[0][1]).sort("average_precision", nulls_last=True)
        ranked = first[label].to_list()
        chosen = ranked[:EXTREMES] + [v for v in ranked[-EXTREMES:] if v not in ranked[:EXTREMES]]
        per_label = cumulative(counts, [*group, LABEL])
        panels_pr: list[tuple[str, list[charts.Curve], list[tuple[str, float]]]] = []
        panels_roc: list[tuple[str, list[charts.Curve], list[tuple[str, float]]]] = []
        for value in chosen:
            lines_pr, lines_roc, references = [], [], []
            for name, values in models:
                points = _where(per_label, [*by, LABEL], (*values, value))
                if points.height == 0:
                    continue
                curve = chart_data.Curve.of(points)
                row = _where(labels, [*by, label], (*values, value)).row(0, named=True)
                lines_pr.append((name, *curve.pr, f"AP {_number(row['average_precision'])}"))
                lines_roc.append((name, *curve.roc, f"AUC {_number(row['roc_auc'])}"))
                references.append((name, curve.prevalence))
            panels_pr.append((f"{label} {value}", lines_pr, references))
            panels_roc.append((f"{label} {value}", lines_roc, []))
        self.section(
            "Per-label curves: the worst and the best labels",
            charts.small_multiples(panels_pr, kind="pr")
            + charts.small_multiples(panels_roc, kind="roc"),
            f"The {EXTREMES} labels with the lowest and the {EXTREMES} with the highest average "
            f"precision for {self.names[0]}.",
        )
        if baseline is None or len(models) < 2:
            return
        key = baseline
        base = _where(labels, by, key).select(label, pl.col("average_precision").alias("base"))
        bars = []
        for name, values in models:
            if values == key:
                continue
            mine = _where(labels, by, values).join(base, on=label, how="inner")
            names_of_labels, deltas = chart_data.differences(
                mine[label], mine["average_precision"], mine["base"]
            )
            bars.append(charts.differences(
                names_of_labels, deltas, title=f"{name} minus the baseline",
                xlabel="difference of average precision",
            ))  # fmt: skip
        self.section("Per-label differences from the baseline", "".join(bars))

    def label_table(self, labels: pl.DataFrame) -> None:
        self.section(
            "Per label",
            f'<div class="scroll">{_table(labels, sortable=True)}</div>',
            "Click a column's header to sort by it. Counts are weighted by the sample weights.",
        )

    def distributions(self, counts: pl.DataFrame, group: list[str]) -> None:
        finite = counts.filter(pl.col("score").is_finite())
        if finite.height == 0:
            return
        edges = chart_data.bin_edges(finite["score"], BINS)
        by = list(self.cols.by)
        histograms = [
            (name, *chart_data.score_histograms(_where(finite, by, values), edges))
            for name, values in zip(self.names, _values(counts, by), strict=True)
        ]
        self.section(
            "Scores of positive and negative cells",
            charts.distributions(histograms, title="score distributions"),
        )

    def reliability(self, counts: pl.DataFrame) -> None:
        """Per model, every label's cells pooled: the reliability diagram and the bin counts."""
        by = list(self.cols.by)
        lines = [
            (name, chart_data.Reliability.of(_where(counts, by, values), N_BINS))
            for name, values in zip(self.names, _values(counts, by), strict=True)
        ]
        self.section(
            "Calibration: the scores read as probabilities",
            charts.reliability(lines, title="reliability, every cell"),
            f"Every score lies in [0, 1], so each is read as the probability that its label is "
            f"true. Above: per non-empty bin of {N_BINS} equal-width bins, the share of positive "
            f"cells against the mean score (on the diagonal: calibrated); below: the cells in "
            f"each bin, weighted. ece_micro is the bins' gaps weighted by their cells.",
        )

    def render(self) -> str:
        body = "".join(self.parts)
        return (
            '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(self.title)}</title><style>{_STYLE}</style></head>"
            f"<body><h1>{html.escape(self.title)}</h1>"
            f'<p class="note">Models: {html.escape(", ".join(self.names))}.</p>{body}'
            f"<script>{_SORT}</script></body></html>"
        )


def _values(frame: pl.DataFrame, by: list[str]) -> list[tuple[Any, ...]]:
    """The distinct values of the ``by`` columns in ``frame``, sorted (one empty tuple without
    ``by``): the models, in the summary's order."""
    if not by:
        return [()]
    return frame.select(by).unique().sort(by, nulls_last=True).rows()


def _where(frame: pl.DataFrame, columns: Sequence[str], values: Sequence[Any]) -> pl.DataFrame:
    """The rows of ``frame`` whose ``columns`` hold ``values`` (null matching null)."""
    condition = pl.lit(True)
    for column, value in zip(columns, values, strict=True):
        condition &= pl.col(column).eq_missing(pl.lit(value, dtype=frame.schema[column]))
    return frame.filter(condition)
