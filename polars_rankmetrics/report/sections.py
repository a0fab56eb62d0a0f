"""The HTML page's sections, in order (:class:`Page`), and its style and table sorting: the
page's numbers come computed (:mod:`.page`), each chart's from :mod:`.chart_data`, drawn by
:mod:`.charts`."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

import polars as pl

from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.label_averages import LABEL, cumulative, label_curves
from polars_rankmetrics.metrics.probabilities import N_BINS
from polars_rankmetrics.metrics.registry import MetricKey
from polars_rankmetrics.report import chart_data, charts

# The worst and the best labels drawn one by one, by average precision.
EXTREMES = 3
# Bins of the score distributions.
BINS = 40

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


class Page:
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

    def cut_offs(self, summary: pl.DataFrame, precision: list[str], recall: list[str]) -> None:
        """The precision and the recall keys at K = 1 .. k (named at K = 1 .. k in
        ``precision`` and ``recall``), a line per row of ``summary``."""
        lines = [
            (name, *chart_data.at_k(row, precision, recall))
            for name, row in zip(self.names, summary.iter_rows(named=True), strict=True)
        ]
        named = (_at_k(precision[0]), _at_k(recall[0]))
        self.section(
            "Retrieval at each cut-off",
            charts.at_k(lines, title=f"{named[0]} and {named[1]}", names=named),
        )

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


def _at_k(name: str) -> str:
    """A key's name at K = 1 as the chart names it at every K (``P_1``: ``P_K``)."""
    return name[:-1] + "K"


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
