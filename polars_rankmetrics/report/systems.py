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
from dataclasses import dataclass
from typing import Any

import polars as pl

from polars_rankmetrics.inference.paired import CompareOptions
from polars_rankmetrics.inference.pairs import MANY_TESTS, all_pairs, default_correction, other
from polars_rankmetrics.inference.samples import Groups
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.leaderboard import ranked
from polars_rankmetrics.metrics.registry import MetricKey
from polars_rankmetrics.report import chart_data, charts
from polars_rankmetrics.report.leaderboard import Leaderboard

HEADING = "Many systems: which differ"
# The section's test: Tukey's HSD on the two-way ANOVA (the samples as blocks), family-wise
# over the pairs of a metric and computed without resampling; with sample weights, which it
# does not take, Fisher's permutation test on each pair, Holm-adjusted over every pair and
# metric.
TEST, WEIGHTED_TEST = "tukey_hsd", "permutation"
N_RESAMPLES = 10_000
# The level of the letters and of the heat map's bold cells.
ALPHA = 0.05


@dataclass(frozen=True)
class Systems:
    """The section's tables: the leaderboard (:func:`~polars_rankmetrics.leaderboard`'s
    columns), every pair (:func:`~polars_rankmetrics.compare` with ``baseline=None``), and the
    test and correction that judged the pairs."""

    leaderboard: pl.DataFrame
    pairs: pl.DataFrame
    test: str
    correction: str | None

    @classmethod
    def of(
        cls, groups: Groups, by_types: dict[str, Any], cols: Columns,
        keys: Sequence[MetricKey], summary: pl.DataFrame, *, ci: float | None, n_boot: int,
        seed: int | None, bootstrap: str,
    ) -> Systems:  # fmt: skip
        """From the report's per-sample rows (``groups``: more than two models) and its
        ``summary`` (each key's value, and its interval under ``ci``; without ``ci`` the
        leaderboard's intervals are null). The pairs are compared on the samples every model
        has (``on_missing="drop"``: a page is drawn where a model lacks some). Tukey's HSD
        compares unweighted means: the keys that weigh each sample by its positives (lwlrap)
        are left out of it."""
        test = TEST if cols.weight is None else WEIGHTED_TEST
        if test == TEST:
            keys = [key for key in keys if key.metric.weighting == "sample"]
        correction = default_correction(test)
        how = CompareOptions(test, correction, N_RESAMPLES, n_boot, ci or 0.95, seed, "drop")
        pairs = all_pairs(
            dict(groups), by_types, cols, keys, how,
            by_units=bootstrap == "poisson" and test not in MANY_TESTS,
        )  # fmt: skip
        by = list(cols.by)
        bounds = [f"{k}_{end}" for k in map(str, keys) for end in ("lo", "hi")]
        values = summary.with_columns(
            pl.lit(None, pl.Float64).alias(c) for c in bounds if c not in summary.columns
        )
        board = pl.concat([ranked(values, pairs, by, str(key), alpha=ALPHA) for key in keys])
        return cls(board.sort("metric", "rank", *by, nulls_last=True), pairs, test, correction)

    def restored(self, cols: Columns) -> Systems:
        """The tables with their ``by`` columns, and the other model's, under the user's
        names (``cols``: the evaluation's inside names)."""
        others = {other(inner): other(outer) for outer, inner in cols.aliases}
        return Systems(
            cols.restored(self.leaderboard), cols.restored(self.pairs).rename(others),
            self.test, self.correction,
        )  # fmt: skip


def body(systems: Systems, by: Sequence[str], alpha: float = ALPHA) -> str:
    """The section's HTML: the leaderboard's table, then per metric its sorted values and its
    heat map of the pairs' adjusted p-values, the models of both in the order of the metric's
    ranks."""
    leaderboard, pairs = systems.leaderboard, systems.pairs
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


def note(systems: Systems, ci: float | None) -> str:
    """What the section states under its heading: the test, the correction, the levels."""
    test = (
        "Tukey's HSD on the two-way ANOVA, the samples as blocks: family-wise over the pairs "
        "of each metric; the metrics that weigh each sample by its positives, such as lwlrap, "
        "are left out, since it compares unweighted means"
        if systems.test == TEST
        else f"Fisher's permutation test ({N_RESAMPLES:,} resamples), {systems.correction}-"
        "adjusted over every pair and metric (Tukey's HSD takes no sample weights)"
    )
    intervals = (
        f"in brackets and as bars, {ci:.0%} bootstrap intervals of the values"
        if ci else "the values have intervals with ci= (--ci)"
    )  # fmt: skip
    return (
        f"Every pair of models compared on the samples every model has ({test}). Two models "
        f"sharing a letter do not differ significantly (adjusted p >= {ALPHA:g}); bold: the "
        f"best value of each metric; {intervals}. The heat map colours each pair's adjusted p "
        "on a log scale (dark: small); its cells print the p-values (in bold below "
        f"{ALPHA:g}) for up to {charts.ANNOTATED_MODELS} models."
    )
