"""A leaderboard (:func:`~polars_rankmetrics.leaderboard`'s table) as people read it:
:class:`Leaderboard` renders itself as a terminal table, Markdown, LaTeX, JSON or CSV.

The text, Markdown and LaTeX forms are the table IR papers print: one row per model, one
column per metric, each value followed by its group letters as a superscript and the best value
of each metric in bold. Two models that share a letter do not differ significantly (their
pair's adjusted p-value is at least ``alpha``); two models without a common letter do.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from polars_rankmetrics.metrics.registry import parse_keys
from polars_rankmetrics.report.comparison import (
    ARROWS,
    Rendered,
    model_name,
    number,
    tex,
)


@dataclass(frozen=True)
class Leaderboard(Rendered):
    r""":func:`~polars_rankmetrics.leaderboard`'s ``result``, rendered: ``by`` names the model
    columns, ``alpha`` the level the letters were drawn at, ``test`` the test that drew them
    (both stated under the table).

    In the wide forms (text, Markdown, LaTeX) the models are in the order of the first
    metric's ranks (ties by name); a metric a model has no row for is left empty, and a NaN
    value is printed as ``nan`` and is never the best.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics.report import Leaderboard
    >>> board = pl.DataFrame({
    ...     "model": ["b", "a", "c"], "metric": ["lrap"] * 3, "value": [0.8, 0.7, 0.5],
    ...     "value_lo": [0.75, 0.65, 0.45], "value_hi": [0.85, 0.75, 0.55],
    ...     "rank": [1, 2, 3], "group": ["a", "ab", "b"],
    ... })
    >>> print(Leaderboard(board, by=["model"], test="tukey_hsd").to_latex())  # doctest: +ELLIPSIS
    \begin{tabular}{lr}
    \toprule
    Model & lrap $\uparrow$ \\
    \midrule
    b & \textbf{0.8000}$^{\mathrm{a}}$ \\
    a & 0.7000$^{\mathrm{ab}}$ \\
    c & 0.5000$^{\mathrm{b}}$ \\
    \bottomrule
    \end{tabular}
    % bold: best per metric; models sharing a letter do not differ significantly (tukey_hsd): ...
    """

    result: pl.DataFrame
    by: Sequence[str]
    alpha: float = 0.05
    test: str = ""

    def to_table(self) -> str:
        """A terminal table, aligned: ``value [lo, hi] letters``, the best value starred."""
        grid = _Grid.of(self.result, self.by)
        head = [_model_head(self.by), *grid.metrics]
        lines = [
            [model, *(grid.cell(model, m, _text_cell) for m in grid.metrics)]
            for model in grid.models
        ]
        widths = [max(len(line[i]) for line in [head, *lines]) for i in range(len(head))]
        text = [
            "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
            for line in [head, *lines]
        ]
        return "\n".join([*text, self._note("*")])

    def to_markdown(self) -> str:
        """A Markdown table: the best value in bold, the letters in ``<sup>``, the interval
        after them."""
        grid = _Grid.of(self.result, self.by)
        head = [_model_head(self.by), *(m + _UNICODE_ARROWS[grid.better[m]] for m in grid.metrics)]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for model in grid.models:
            cells = [model, *(grid.cell(model, m, _markdown_cell) for m in grid.metrics)]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join([*lines, "", self._note("bold")])

    def to_latex(self) -> str:
        """A LaTeX table (booktabs): the best value of each metric in ``\\textbf``, the letters
        as a superscript."""
        grid = _Grid.of(self.result, self.by)
        lines = [
            r"\begin{tabular}{l" + "r" * len(grid.metrics) + "}",
            r"\toprule",
            "Model & " + " & ".join(tex(m) + ARROWS[grid.better[m]] for m in grid.metrics)
            + r" \\",
            r"\midrule",
        ]  # fmt: skip
        for model in grid.models:
            cells = [grid.cell(model, m, _latex_cell) for m in grid.metrics]
            lines.append(tex(model) + " & " + " & ".join(cells) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}", "% " + self._note("bold")]
        return "\n".join(lines)

    def to_html(self) -> str:
        """An HTML table, as the Markdown one: the best value in ``<b>``, the letters in
        ``<sup>``, the interval after them (the HTML report's systems section)."""
        grid = _Grid.of(self.result, self.by)
        head = "".join(
            f"<th>{html.escape(h)}</th>"
            for h in [_model_head(self.by), *(m + _UNICODE_ARROWS[grid.better[m]]
                                             for m in grid.metrics)]
        )  # fmt: skip
        rows = "".join(
            f"<tr><td>{html.escape(model)}</td>"
            + "".join(f"<td>{grid.cell(model, m, _html_cell)}</td>" for m in grid.metrics)
            + "</tr>"
            for model in grid.models
        )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"

    def _note(self, best: str) -> str:
        test = f" ({self.test})" if self.test else ""
        return (
            f"{best}: best per metric; models sharing a letter do not differ significantly"
            f"{test}: adjusted p >= {self.alpha:g}"
        )


_UNICODE_ARROWS = {"higher": " \u2191", "lower": " \u2193"}


@dataclass(frozen=True)
class _Cell:
    value: float
    lo: float | None
    hi: float | None
    group: str
    best: bool


def _text_cell(cell: _Cell) -> str:
    star = "*" if cell.best else ""
    interval = "" if cell.lo is None else f" [{number(cell.lo)}, {number(cell.hi)}]"
    return f"{number(cell.value)}{star}{interval} {cell.group}".rstrip()


def _markdown_cell(cell: _Cell) -> str:
    value = f"**{number(cell.value)}**" if cell.best else number(cell.value)
    letters = f"<sup>{cell.group}</sup>" if cell.group else ""
    interval = "" if cell.lo is None else f" [{number(cell.lo)}, {number(cell.hi)}]"
    return value + letters + interval


def _html_cell(cell: _Cell) -> str:
    value = f"<b>{number(cell.value)}</b>" if cell.best else number(cell.value)
    letters = f"<sup>{html.escape(cell.group)}</sup>" if cell.group else ""
    interval = "" if cell.lo is None else f" [{number(cell.lo)}, {number(cell.hi)}]"
    return value + letters + interval


def _latex_cell(cell: _Cell) -> str:
    value = rf"\textbf{{{number(cell.value)}}}" if cell.best else number(cell.value)
    return value + (rf"$^{{\mathrm{{{tex(cell.group)}}}}}$" if cell.group else "")


def _model_head(by: Sequence[str]) -> str:
    """The models' column heading: the ``by`` columns' names (``run`` for TREC runs)."""
    return ", ".join(by)


def _float(value: float | None) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True)
class _Grid:
    """The leaderboard's rows laid out by (model, metric), the models in the order of the
    first metric's ranks, with each metric's direction and best value."""

    metrics: list[str]
    models: list[str]
    better: Mapping[str, str]
    cells: dict[tuple[str, str], _Cell]

    @classmethod
    def of(cls, result: pl.DataFrame, by: Sequence[str]) -> _Grid:
        metrics = list(dict.fromkeys(result["metric"].to_list()))
        better = {str(key): key.metric.better for key in parse_keys(metrics)}
        rows = result.to_dicts()
        best: dict[str, float] = {}
        for m in metrics:
            found = [r["value"] for r in rows if r["metric"] == m and not _nan(r["value"])]
            best[m] = (max if better[m] == "higher" else min)(found) if found else math.nan
        cells = {
            (model_name(r, by), str(r["metric"])): _Cell(
                value=math.nan if r["value"] is None else float(r["value"]),
                lo=_float(r.get("value_lo")),
                hi=_float(r.get("value_hi")),
                group=str(r["group"] or ""),
                best=not _nan(r["value"]) and r["value"] == best[str(r["metric"])],
            )
            for r in rows
        }
        first = sorted(
            (r for r in rows if r["metric"] == metrics[0]),
            key=lambda r: (r["rank"] is None, r["rank"], model_name(r, by)),
        ) if metrics else []  # fmt: skip
        models = list(dict.fromkeys([*(model_name(r, by) for r in first),
                                     *(model_name(r, by) for r in rows)]))  # fmt: skip
        return cls(metrics, models, better, cells)

    def cell(self, model: str, metric: str, show: Callable[[_Cell], str]) -> str:
        """The (model, metric) cell as ``show`` writes it; empty where there is no row."""
        found = self.cells.get((model, metric))
        return "" if found is None else show(found)


def _nan(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
