"""The report's charts, drawn by matplotlib as inline SVG: vector graphics that need no script
and no network to show, print sharply and stay small.

Each function draws the numbers :mod:`.chart_data` computed (plain arrays: one row per point,
model or label) and returns one ``<svg>`` element as text. Curves are drawn from the exact
per-score points, thinned for drawing only (:func:`thinned`); the numbers printed beside them
are the exact ones.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

# At most this many points per drawn curve: a curve of the exact points is the same line on a
# screen, and the page's size does not grow with the table's rows.
MAX_POINTS = 300
# Model colours (Okabe-Ito, distinguishable with colour-vision deficiencies), in model order.
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")


def colour(i: int) -> str:
    return COLOURS[i % len(COLOURS)]


def thinned(x: np.ndarray, y: np.ndarray, most: int = MAX_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """At most ``most`` points of a curve, evenly spaced along its points, the first and the
    last kept."""
    if len(x) <= most:
        return x, y
    keep = np.unique(np.linspace(0, len(x) - 1, most).round().astype(int))
    return x[keep], y[keep]


@contextmanager
def _figure(width: float, height: float, panels: tuple[int, int] = (1, 1)) -> Iterator[Any]:
    try:
        import matplotlib
    except ImportError:
        raise ImportError(
            "the HTML report draws its charts with matplotlib: pip install "
            "'polars-rankmetrics[report]'"
        ) from None
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    settings: dict[str, Any] = {
        "svg.fonttype": "none",  # text stays text: smaller, selectable, the page's font
        "svg.hashsalt": "rankmetrics",  # the same ids on every run
        "font.size": 9,
        "axes.spines.top": False,
        "axes.spines.right": False,
    }
    with matplotlib.rc_context(settings):  # type: ignore[arg-type]
        figure, axes = plt.subplots(
            *panels, figsize=(width, height), squeeze=False, constrained_layout=True
        )
        try:
            yield figure, axes
        finally:
            plt.close(figure)


def _svg(figure: Any) -> str:
    out = io.StringIO()
    figure.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
    text = out.getvalue()
    return text[text.index("<svg") :]


Curve = tuple[str, np.ndarray, np.ndarray, str]  # (model, x, y, legend note)


def _draw_curves(
    ax: Any, lines: Sequence[Curve], references: Sequence[tuple[str, float]], *, kind: str,
    models: list[str], size: float,
) -> None:  # fmt: skip
    """A line per model on ``ax`` (coloured by its place in ``models``), each model's
    prevalence dashed (``references``, PR) or the chance diagonal (ROC), the axes labelled."""
    for model, x, y, note in lines:
        tx, ty = thinned(x, y)
        ax.step(tx, ty, where="post" if kind == "roc" else "pre",
                color=colour(models.index(model)), label=f"{model} ({note})")  # fmt: skip
    if kind == "roc":
        ax.plot([0, 1], [0, 1], linestyle=":", color="#777777", label="chance")
    for model, prevalence in references:
        ax.axhline(prevalence, linestyle="--", linewidth=0.8, color=colour(models.index(model)),
                   label=f"{model} prevalence {prevalence:.3f}")  # fmt: skip
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("false positive rate" if kind == "roc" else "recall", fontsize=size)
    ax.set_ylabel("true positive rate" if kind == "roc" else "precision", fontsize=size)
    ax.legend(loc="lower right" if kind == "roc" else "upper right", fontsize=size - 2)


def curves(
    lines: Sequence[Curve],
    *,
    kind: str,
    title: str,
    references: Sequence[tuple[str, float]] = (),
) -> str:
    """One chart of curves, a line per model: ``kind`` ``"pr"`` (recall, precision; a dashed
    line per model at its prevalence, ``references``: (model, prevalence)) or ``"roc"`` (false
    positive rate, true positive rate; the chance diagonal)."""
    with _figure(4.2, 3.4) as (figure, axes):
        ax = axes[0][0]
        models = list(dict.fromkeys(line[0] for line in lines))
        _draw_curves(ax, lines, references, kind=kind, models=models, size=9)
        ax.set_title(title)
        return _svg(figure)


def small_multiples(
    panels: Sequence[tuple[str, Sequence[Curve], Sequence[tuple[str, float]]]], *, kind: str
) -> str:
    """Curves of several labels in a grid, three to a row: per panel (title, a line per model,
    prevalences)."""
    columns = 3
    rows = max(1, -(-len(panels) // columns))
    with _figure(9.0, 2.6 * rows, (rows, columns)) as (figure, axes):
        models: list[str] = []
        for _, lines, _ in panels:
            models += [line[0] for line in lines if line[0] not in models]
        for i, ax in enumerate(axes.flat):
            if i >= len(panels):
                ax.set_axis_off()
                continue
            title, lines, references = panels[i]
            _draw_curves(ax, lines, references, kind=kind, models=models, size=7)
            ax.set_title(title, fontsize=8)
        return _svg(figure)


def differences(labels: Sequence[str], deltas: np.ndarray, *, title: str, xlabel: str) -> str:
    """Horizontal bars, one per label, sorted: a model's per-label value minus the baseline's
    (blue: better, orange: worse)."""
    order = np.argsort(deltas)
    height = max(2.0, 0.16 * len(labels) + 0.8)
    with _figure(6.0, height) as (figure, axes):
        ax = axes[0][0]
        values = deltas[order]
        ax.barh(np.arange(len(values)), values,
                color=[COLOURS[0] if v >= 0 else COLOURS[1] for v in values])  # fmt: skip
        ax.set_yticks(np.arange(len(values)), [labels[i] for i in order], fontsize=6)
        ax.axvline(0, color="#333333", linewidth=0.8)
        ax.set_xlabel(xlabel)
        ax.set_title(title)
        return _svg(figure)


def distributions(
    histograms: Sequence[tuple[str, np.ndarray, np.ndarray, np.ndarray]], *, title: str
) -> str:
    """The distribution of scores of the positive and the negative cells, per model: per model
    (model, bin edges, weighted positives, weighted negatives), each drawn as a share of its
    class."""
    with _figure(6.0, 3.0) as (figure, axes):
        ax = axes[0][0]
        for i, (model, edges, positives, negatives) in enumerate(histograms):
            for counts, style, name in (
                (positives, "-", "positives"),
                (negatives, ":", "negatives"),
            ):
                total = counts.sum()
                share = counts / total if total > 0 else counts
                ax.stairs(share, edges, color=colour(i), linestyle=style,
                          label=f"{model}: {name}")  # fmt: skip
        ax.set_xlabel("score")
        ax.set_ylabel("share of the class's cells")
        ax.set_title(title)
        ax.legend(fontsize=7)
        return _svg(figure)


def at_k(
    lines: Sequence[tuple[str, np.ndarray, np.ndarray, np.ndarray]], *, title: str,
    names: tuple[str, str] = ("precision@K", "recall@K"),
) -> str:  # fmt: skip
    """The precision and the recall at K against K, per model: (model, K, precision, recall);
    ``names``: theirs in the legend (``("P_K", "recall_K")`` for trec_eval's)."""
    with _figure(6.0, 3.2) as (figure, axes):
        ax = axes[0][0]
        for i, (model, ks, precision, recall) in enumerate(lines):
            ax.plot(ks, precision, marker="o", markersize=3, color=colour(i),
                    label=f"{model}: {names[0]}")  # fmt: skip
            ax.plot(ks, recall, marker="s", markersize=3, linestyle="--", color=colour(i),
                    label=f"{model}: {names[1]}")  # fmt: skip
        ax.set_xlabel("K")
        ax.set_ylabel("value")
        ax.set_ylim(0, 1.02)
        ax.set_title(title)
        ax.legend(fontsize=7)
        return _svg(figure)


def reliability(lines: Sequence[tuple[str, Any]], *, title: str) -> str:
    """A reliability diagram per model (model, :class:`~.chart_data.Reliability`): above, each
    non-empty bin's share of positives against its mean score, beside the diagonal of perfect
    calibration; below, the cells in each bin (the bin counts), a bar per model."""
    with _figure(6.0, 5.2, (2, 1)) as (figure, axes):
        top, bottom = axes[0][0], axes[1][0]
        top.plot([0, 1], [0, 1], linestyle=":", color="#777777", label="perfect calibration")
        width = 1.0 / max(1, max((points.bins for _, points in lines), default=1))
        for i, (model, points) in enumerate(lines):
            top.plot(points.mean_score, points.observed, marker="o", markersize=3,
                     color=colour(i), label=model)  # fmt: skip
            share = width / max(1, len(lines))
            left = points.bin * width + i * share
            bottom.bar(left, points.count, width=share, align="edge", color=colour(i),
                       label=model)  # fmt: skip
        top.set_xlim(0, 1)
        top.set_ylim(0, 1.02)
        top.set_xlabel("mean score in the bin")
        top.set_ylabel("share of positives")
        top.set_title(title)
        top.legend(fontsize=7, loc="upper left")
        bottom.set_xlim(0, 1)
        bottom.set_xlabel("score bin")
        bottom.set_ylabel("cells (weighted)")
        bottom.legend(fontsize=7)
        return _svg(figure)


def means(points: Any, *, title: str, xlabel: str) -> str:
    """One metric's models, best at the top (:class:`~.chart_data.Means`): each value a dot,
    its interval a bar, its group letters beside it."""
    count = len(points.names)
    with _figure(5.0, max(1.6, 0.28 * count + 0.9)) as (figure, axes):
        ax = axes[0][0]
        y = np.arange(count)[::-1]
        low = np.where(np.isnan(points.lo), points.value, points.lo)
        high = np.where(np.isnan(points.hi), points.value, points.hi)
        spread = np.abs(np.vstack([points.value - low, high - points.value]))
        ax.errorbar(points.value, y, xerr=spread, fmt="o", markersize=4, color=COLOURS[0],
                    ecolor="#777777", capsize=2)  # fmt: skip
        for yi, x, letters in zip(y, high, points.group, strict=True):
            ax.annotate(letters, (x, yi), xytext=(4, 0), textcoords="offset points",
                        va="center", fontsize=7)  # fmt: skip
        ax.set_yticks(y, points.names, fontsize=7 if count > 15 else 9)
        ax.set_ylim(-0.7, count - 0.3)
        ax.set_xlabel(xlabel)
        ax.set_title(title)
        return _svg(figure)


# Up to this many models the heat map prints each pair's p-value in its cell.
ANNOTATED_MODELS = 15


def heat_map(names: Sequence[str], matrix: np.ndarray, *, title: str, alpha: float) -> str:
    """The pairs' p-values as a heat map (rows and columns the models, in ``names``' order),
    coloured on a log scale from 1e-4 (dark) to 1 (light); with at most
    :data:`ANNOTATED_MODELS` models each cell prints its p-value, in bold below ``alpha``."""
    from matplotlib.colors import LogNorm

    count = len(names)
    side = max(3.0, 0.32 * count + 1.6)
    with _figure(side + 0.8, side) as (figure, axes):
        ax = axes[0][0]
        shown = np.clip(matrix, 1e-4, 1.0)
        image = ax.imshow(shown, cmap="viridis", norm=LogNorm(vmin=1e-4, vmax=1.0))
        size = 7 if count > 15 else 9
        ax.set_xticks(np.arange(count), names, rotation=90, fontsize=size)
        ax.set_yticks(np.arange(count), names, fontsize=size)
        if count <= ANNOTATED_MODELS:
            for i in range(count):
                for j in range(count):
                    p = matrix[i, j]
                    if np.isnan(p):
                        continue
                    ax.text(j, i, _p_text(p), ha="center", va="center", fontsize=6,
                            fontweight="bold" if p < alpha else "normal",
                            color="white" if p < 0.01 else "black")  # fmt: skip
        bar = figure.colorbar(image, ax=ax, label="adjusted p")
        # Plain tick labels: the log scale's own are mathtext, slow to lay out.
        ticks = [1e-4, 1e-3, 1e-2, alpha, 1.0]
        bar.set_ticks(ticks, labels=[_p_text(t) for t in ticks])
        bar.minorticks_off()
        ax.set_title(title)
        return _svg(figure)


def _p_text(p: float) -> str:
    """A p-value as the heat map's cells print it."""
    return f"{p:.0e}" if p < 1e-3 else f"{p:.3f}"
