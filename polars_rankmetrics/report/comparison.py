"""A comparison (:func:`~polars_rankmetrics.compare`) as people read it: a terminal table with
the significant rows marked, JSON, CSV, a Markdown table, or a LaTeX table as papers print
them (one row per model, one column per metric, the best value of each metric in bold, a dagger
where a model differs significantly from the baseline)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import polars as pl

from polars_rankmetrics.metrics.registry import parse_keys

FORMATS = ("table", "json", "csv", "markdown", "latex")
_ARROWS = {"higher": r" $\uparrow$", "lower": r" $\downarrow$"}


def _number(value: float | None, digits: int = 4) -> str:
    if value is None or math.isnan(value):
        return "nan"
    return f"{value:.{digits}f}"


def _p(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "nan"
    return f"{value:.2e}" if value < 1e-3 else f"{value:.4f}"


def _model(row: dict[str, object], by: Sequence[str]) -> str:
    return ", ".join(str(row[b]) for b in by)


def render_comparison(
    result: pl.DataFrame, fmt: str, by: Sequence[str], alpha: float, baseline: str = "baseline"
) -> str:
    """``result`` of :func:`~polars_rankmetrics.compare` in ``fmt`` (:data:`FORMATS`); a row
    is significant where its adjusted p-value is below ``alpha``; ``baseline`` names the
    baseline's row of the LaTeX table."""
    if fmt == "json":
        rows = json.loads(result.fill_nan(None).write_json())
        return json.dumps(rows, indent=2, allow_nan=False)
    if fmt == "csv":
        return result.write_csv().rstrip("\n")
    if fmt == "latex":
        return _latex(result, by, alpha, baseline)
    rows = result.to_dicts()
    head = [
        "model" if len(by) == 1 else ", ".join(by), "metric", "value", "baseline", "delta",
        "interval", "p", "p adjusted", "wins/ties/losses", "",
    ]  # fmt: skip
    lines = [
        [
            _model(r, by),
            str(r["metric"]),
            _number(r["value"]),
            _number(r["baseline_value"]),
            f"{r['delta']:+.4f}" if not math.isnan(r["delta"]) else "nan",
            f"[{_number(r['delta_lo'])}, {_number(r['delta_hi'])}]",
            _p(r["p_value"]),
            _p(r["p_adjusted"]),
            f"{r['wins']}/{r['ties']}/{r['losses']}",
            "*" if (r["p_adjusted"] or math.nan) < alpha else "",
        ]  # fmt: skip
        for r in rows
    ]
    note = f"* adjusted p < {alpha:g}"
    if fmt == "markdown":
        table = ["| " + " | ".join(head[:-1]) + " |", "|" + "---|" * (len(head) - 1)]
        for line in lines:
            cells = line[:-1]
            cells[1] += " *" if line[-1] else ""
            table.append("| " + " | ".join(cells) + " |")
        return "\n".join([*table, "", note])
    widths = [max(len(head[i]), *(len(line[i]) for line in lines)) for i in range(len(head))]
    text = [
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in [head, *lines]
    ]
    return "\n".join([*text, note])


def _latex(result: pl.DataFrame, by: Sequence[str], alpha: float, baseline: str) -> str:
    """One row per model (the baseline first), one column per metric: the value, bold where it
    is the best of its column by the metric's direction, a dagger where the model differs from
    the baseline with an adjusted p-value below ``alpha``."""
    metrics = list(dict.fromkeys(result["metric"].to_list()))
    better = {str(key): key.metric.better for key in parse_keys(metrics)}
    rows = result.to_dicts()
    models = list(dict.fromkeys(_model(r, by) for r in rows))
    base = {r["metric"]: r["baseline_value"] for r in rows}
    cells: dict[tuple[str, str], tuple[float, bool]] = {}
    for r in rows:
        p = r["p_adjusted"]
        cells[(_model(r, by), str(r["metric"]))] = (r["value"], p is not None and p < alpha)
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
        "Model & " + " & ".join(_tex(m) + _ARROWS[better[m]] for m in metrics) + r" \\",
        r"\midrule",
    ]
    for name, values in table_rows:
        out = []
        for m in metrics:
            value, significant = values[m]
            text = _number(value)
            if not math.isnan(value) and value == best[m]:
                text = rf"\textbf{{{text}}}"
            out.append(text + (r"$^\dagger$" if significant else ""))
        lines.append(_tex(name) + " & " + " & ".join(out) + r" \\")
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        rf"% $^\dagger$: adjusted p < {alpha:g} against the baseline; bold: best per metric",
    ]
    return "\n".join(lines)


def _tex(text: str) -> str:
    return "".join("\\" + c if c in "&%$#_{}" else c for c in text)
