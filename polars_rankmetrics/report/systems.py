"""The HTML report's systems section, for more than two models: which of them really differ.

The section holds the leaderboard (:class:`~.leaderboard.Leaderboard`: per model and metric
the value, its interval and its group letters, the best value in bold), then per metric the
models' values sorted with their intervals, and the pairs' adjusted p-values as a heat map.
The numbers are those of :func:`~polars_rankmetrics.leaderboard`'s and of the all-pairs
:func:`~polars_rankmetrics.compare`'s tables, laid out by :mod:`.chart_data` and drawn by
:mod:`.charts`.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_rankmetrics.report import chart_data, charts
from polars_rankmetrics.report.leaderboard import Leaderboard

HEADING = "Many systems: which differ"


def body(leaderboard: pl.DataFrame, pairs: pl.DataFrame, by: Sequence[str], alpha: float) -> str:
    """The section's HTML: the leaderboard's table, then per metric its sorted values and its
    heat map of the pairs' adjusted p-values, the models of both in the order of the metric's
    ranks."""
    parts = [Leaderboard(leaderboard, by, alpha).to_html()]
    for metric in dict.fromkeys(leaderboard["metric"].to_list()):
        points = chart_data.Means.of(leaderboard, metric, by)
        matrix = chart_data.p_value_matrix(pairs, metric, by, points.names)
        parts.append(
            '<div class="charts">'
            + charts.means(points, title=f"{metric}, best first", xlabel=metric)
            + charts.heat_map(points.names, matrix, title=f"{metric}: the pairs' p", alpha=alpha)
            + "</div>"
        )
    return "".join(parts)


def note(test: str, correction: str | None, alpha: float, ci: float) -> str:
    """What the section states under its heading: the test, the correction, the levels."""
    corrected = f", {correction}-adjusted over the pairs and metrics" if correction else ""
    return (
        f"Every pair of models compared on the samples they share ({test}{corrected}). Two "
        f"models sharing a letter do not differ significantly (adjusted p >= {alpha:g}); bold: "
        f"the best value of each metric; in brackets and as bars, {ci:.0%} bootstrap intervals "
        "of the values. The heat map colours each pair's adjusted p on a log scale (dark: "
        "small); its cells print the p-values (in bold below the level) for up to "
        f"{charts.ANNOTATED_MODELS} models."
    )
