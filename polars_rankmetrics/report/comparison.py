"""A comparison (:func:`~polars_rankmetrics.compare`'s table) as people read it:
:class:`Comparison` renders itself as a terminal table with the significant rows marked, JSON,
CSV, a Markdown table, or a LaTeX table as papers print them (one row per model, one column per
metric, the best value of each metric in bold, a dagger where a model differs significantly
from the baseline). A comparison of all pairs (``baseline=None``) names both models of each row;
its LaTeX table has one row per pair, each cell the pair's delta, daggered where significant."""

from __future__ import annotations

import json
import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from polars_rankmetrics.metrics.registry import parse_keys

FORMATS = ("table", "json", "csv", "markdown", "latex")
ARROWS = {"higher": r" $\uparrow$", "lower": r" $\downarrow$"}


def number(value: float | None, digits: int = 4) -> str:
    """``value`` with ``digits`` decimals; None and NaN as ``nan``."""
    if value is None or math.isnan(value):
        return "nan"
    return f"{value:.{digits}f}"


def _p(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "nan"
    return f"{value:.2e}" if value < 1e-3 else f"{value:.4f}"


def model_name(row: dict[str, object], by: Sequence[str]) -> str:
    """A row's model as the tables name it: its ``by`` values joined by ", "."""
    return ", ".join(str(row[b]) for b in by)


class Rendered(ABC):
    """A result table that renders itself in each of :data:`FORMATS`: JSON and CSV as its
    rows are; the terminal table, Markdown and LaTeX as the subclass lays them out."""

    result: pl.DataFrame

    def render(self, fmt: str) -> str:
        """The table in ``fmt``, one of :data:`FORMATS`."""
        return {
            "table": self.to_table, "json": self.to_json, "csv": self.to_csv,
            "markdown": self.to_markdown, "latex": self.to_latex,
        }[fmt]()  # fmt: skip

    def to_json(self) -> str:
        """The rows as a JSON list of objects (NaN as null)."""
        rows = json.loads(self.result.fill_nan(None).write_json())
        return json.dumps(rows, indent=2, allow_nan=False)

    def to_csv(self) -> str:
        return self.result.write_csv().rstrip("\n")

    @abstractmethod
    def to_table(self) -> str:
        """A terminal table, aligned."""

    @abstractmethod
    def to_markdown(self) -> str:
        """A Markdown table."""

    @abstractmethod
    def to_latex(self) -> str:
        """A LaTeX table (booktabs)."""


@dataclass(frozen=True)
class Comparison(Rendered):
    """:func:`~polars_rankmetrics.compare`'s ``result``, rendered: a row is significant where
    its adjusted p-value is below ``alpha``; ``by`` names the model columns (the other model of
    a pair of all pairs in ``<by>_other``), ``baseline`` the baseline's row of the LaTeX table.
    An ``effect_size`` column is shown where the result has one."""

    result: pl.DataFrame
    by: Sequence[str]
    alpha: float = 0.05
    baseline: str = "baseline"

    def to_latex(self) -> str:
        if all_pairs(self.result):
            return _pairs_latex(self.result, self.by, self.alpha)
        return _latex(self.result, self.by, self.alpha, self.baseline)

    def to_table(self) -> str:
        """A terminal table, aligned, the significant rows starred."""
        return _text(self.result, self.by, self.alpha, markdown=False)

    def to_markdown(self) -> str:
        return _text(self.result, self.by, self.alpha, markdown=True)


def _text(result: pl.DataFrame, by: Sequence[str], alpha: float, *, markdown: bool) -> str:
    rows = result.to_dicts()
    pairs = all_pairs(result)
    model = "model" if len(by) == 1 else ", ".join(by)
    effect = "effect_size" in result.columns
    head = [
        model, *(["other"] if pairs else []), "metric", "value",
        "other value" if pairs else "baseline", "delta", "interval", "p", "p adjusted",
        *(["effect size"] if effect else []), "wins/ties/losses", "",
    ]  # fmt: skip
    lines = [
        [
            model_name(r, by),
            *([model_name(r, other_columns(by))] if pairs else []),
            str(r["metric"]),
            number(r["value"]),
            number(r["other_value" if pairs else "baseline_value"]),
            f"{r['delta']:+.4f}" if not math.isnan(r["delta"]) else "nan",
            f"[{number(r['delta_lo'])}, {number(r['delta_hi'])}]",
            _p(r["p_value"]),
            _p(r["p_adjusted"]),
            *([number(r["effect_size"], 3)] if effect else []),
            "-" if r["wins"] is None else f"{r['wins']}/{r['ties']}/{r['losses']}",
            "*" if (r["p_adjusted"] or math.nan) < alpha else "",
        ]  # fmt: skip
        for r in rows
    ]
    note = f"* adjusted p < {alpha:g}"
    if pairs:
        note += "; delta = model minus other"
    metric = head.index("metric")
    if markdown:
        table = ["| " + " | ".join(head[:-1]) + " |", "|" + "---|" * (len(head) - 1)]
        for line in lines:
            cells = line[:-1]
            cells[metric] += " *" if line[-1] else ""
            table.append("| " + " | ".join(cells) + " |")
        return "\n".join([*table, "", note])
    widths = [max(len(head[i]), *(len(line[i]) for line in lines)) for i in range(len(head))]
    text = [
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in [head, *lines]
    ]
    return "\n".join([*text, note])


def all_pairs(result: pl.DataFrame) -> bool:
    """Whether ``result`` is a comparison of all pairs (``baseline=None``: the other model in
    ``<by>_other`` columns) rather than against a baseline."""
    return "other_value" in result.columns


def other_columns(by: Sequence[str]) -> list[str]:
    """The columns naming the other model of a pair: ``<by>_other`` for each ``by`` column."""
    return [f"{b}_other" for b in by]


def _pairs_latex(result: pl.DataFrame, by: Sequence[str], alpha: float) -> str:
    """One row per pair ("A -- B"), one column per metric: the delta (A minus B), a dagger
    where the pair's adjusted p-value is below ``alpha``."""
    metrics = list(dict.fromkeys(result["metric"].to_list()))
    better = {str(key): key.metric.better for key in parse_keys(metrics)}
    cells: dict[str, dict[str, str]] = {}
    for r in result.to_dicts():
        pair = f"{tex(model_name(r, by))} -- {tex(model_name(r, other_columns(by)))}"
        p = r["p_adjusted"]
        text = "nan" if math.isnan(r["delta"]) else f"{r['delta']:+.4f}"
        cells.setdefault(pair, {})[str(r["metric"])] = text + (
            r"$^\dagger$" if p is not None and p < alpha else ""
        )
    lines = [
        r"\begin{tabular}{l" + "r" * len(metrics) + "}",
        r"\toprule",
        "Pair & " + " & ".join(tex(m) + ARROWS[better[m]] for m in metrics) + r" \\",
        r"\midrule",
        *(
            pair + " & "
            + " & ".join(row.get(m, "") for m in metrics) + r" \\"
            for pair, row in cells.items()
        ),
        r"\bottomrule",
        r"\end{tabular}",
        rf"% each cell: the first model minus the second; $^\dagger$: adjusted p < {alpha:g}",
    ]  # fmt: skip
    return "\n".join(lines)


def _latex(result: pl.DataFrame, by: Sequence[str], alpha: float, baseline: str) -> str:
    """One row per model (the baseline first), one column per metric: the value, bold where it
    is the best of its column by the metric's direction, a dagger where the model differs from
    the baseline with an adjusted p-value below ``alpha``."""
    metrics = list(dict.fromkeys(result["metric"].to_list()))
    better = {str(key): key.metric.better for key in parse_keys(metrics)}
    rows = result.to_dicts()
    models = list(dict.fromkeys(model_name(r, by) for r in rows))
    base = {r["metric"]: r["baseline_value"] for r in rows}
    cells: dict[tuple[str, str], tuple[float, bool]] = {}
    for r in rows:
        p = r["p_adjusted"]
        cells[(model_name(r, by), str(r["metric"]))] = (r["value"], p is not None and p < alpha)
    table_rows: list[tuple[str, dict[str, tuple[float, bool]]]] = [
        (baseline, {m: (base[m], False) for m in metrics})
    ]
    table_rows += [(model, {m: cells[(model, m)] for m in metrics}) for model in models]
    best: dict[str, float] = {}
    for m in metrics:
        found = [row[1][m][0] for row in table_rows if not math.isnan(row[1][m][0])]
        best[m] = (max if better[m] == "higher" else min)(found) if found else math.nan
    lines = [
        r"\begin{tabular}{l" + "r" * len(metrics) + "}",
        r"\toprule",
        "Model & " + " & ".join(tex(m) + ARROWS[better[m]] for m in metrics) + r" \\",
        r"\midrule",
    ]
    for name, values in table_rows:
        out = []
        for m in metrics:
            value, significant = values[m]
            text = number(value)
            if not math.isnan(value) and value == best[m]:
                text = rf"\textbf{{{text}}}"
            out.append(text + (r"$^\dagger$" if significant else ""))
        lines.append(tex(name) + " & " + " & ".join(out) + r" \\")
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        rf"% $^\dagger$: adjusted p < {alpha:g} against the baseline; bold: best per metric",
    ]
    return "\n".join(lines)


def tex(text: str) -> str:
    """``text`` with LaTeX's special characters escaped."""
    return "".join("\\" + c if c in "&%$#_{}" else c for c in text)
