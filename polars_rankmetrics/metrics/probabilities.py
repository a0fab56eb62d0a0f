"""Probability metrics: each score read as the probability that its label is true, each cell
(sample, label) a binary problem of its own.

Per cell, with ``y`` the truth (0 or 1) and ``p`` the score in [0, 1]:

==========  ===============================================================================
kind        loss of the cell
==========  ===============================================================================
log_loss    ``-ln(p)`` when ``y = 1``, ``-ln(1 - p)`` when ``y = 0``; the probability of the
            outcome clipped to ``[eps, 1 - eps]`` first, ``eps`` = :data:`EPS`, the float64
            machine epsilon (2.22e-16), as scikit-learn 1.9.1 clips: a cell scored 0 or 1 and
            wrong costs ``-ln(eps)`` = 36.04, never an infinity
brier       ``(y - p) ** 2``
==========  ===============================================================================

A sample's value (``_samples``) is the mean of its cells' losses (:func:`sample_loss`); a
label's (``_macro``, ``_weighted``) or a group's pooled cells' (``_micro``) is the mean of their
losses weighted by the sample weights (:func:`label_losses`, read from the score counts, where
every distinct score of a label carries its weighted positive and negative cells). Every cell
has a loss, so none of these is ever ill-defined. Lower is better.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

EPS = float(np.finfo(np.float64).eps)
KINDS = ("log_loss", "brier")


def _clipped(probability: pl.Expr) -> pl.Expr:
    return probability.clip(EPS, 1.0 - EPS)


def outcome_loss(kind: str, probability: pl.Expr, miss: pl.Expr) -> pl.Expr:
    """The loss of a cell from the probability it gave its outcome (``p`` for a true cell,
    ``1 - p`` for a false one) and its distance from the truth (``1 - p`` for a true cell, ``p``
    for a false one)."""
    if kind == "log_loss":
        return -_clipped(probability).log()
    if kind == "brier":
        return miss * miss
    raise KeyError(kind)


def cell_loss(kind: str, truth: str = "truth", score: str = "score") -> pl.Expr:
    """Per row: the loss of the cell, ``kind`` one of :data:`KINDS`."""
    p = pl.col(score).cast(pl.Float64)
    true = pl.col(truth) > 0
    outcome = pl.when(true).then(p).otherwise(1.0 - p)
    miss = pl.when(true).then(1.0 - p).otherwise(p)
    return outcome_loss(kind, outcome, miss)


def sample_loss(kind: str, truth: str = "truth", score: str = "score") -> pl.Expr:
    """Over one sample's rows: the mean loss of its cells."""
    return cell_loss(kind, truth, score).mean()


def label_losses(counts: pl.DataFrame, keys: Sequence[str], kinds: Sequence[str]) -> pl.DataFrame:
    """Per ``keys`` (group and ``label``; or the group alone, pooling the labels: micro) from
    score counts (``score``, ``pos``, ``neg``): ``support`` (the weighted positives) and each of
    ``kinds``, the weighted mean loss of the cells (NaN where they weigh nothing)."""
    pos, neg, p = pl.col("pos"), pl.col("neg"), pl.col("score")
    total = pl.col("__cells")
    sums = [
        (
            pos * outcome_loss(kind, p, 1.0 - p) + neg * outcome_loss(kind, 1.0 - p, p)
        ).sum().alias(kind)
        for kind in kinds
    ]  # fmt: skip
    return (
        counts.group_by(list(keys))
        .agg(pos.sum().alias("support"), (pos + neg).sum().alias("__cells"), *sums)
        .with_columns(
            pl.when(total > 0).then(pl.col(kind) / total).otherwise(float("nan")).alias(kind)
            for kind in kinds
        )
        .drop("__cells")
    )


N_BINS = 15
STRATEGIES = ("uniform", "quantile")
# The calibration errors and the binning each reads: ``ece``/``mce`` over equal-width bins,
# ``ece_quantile``/``mce_quantile`` over equal-mass bins.
CALIBRATION = {
    "ece": "uniform",
    "mce": "uniform",
    "ece_quantile": "quantile",
    "mce_quantile": "quantile",
}


def uniform_bins(scores: np.ndarray, n_bins: int) -> np.ndarray:
    """The bin of each score among ``n_bins`` equal-width bins of [0, 1], as scikit-learn's
    ``calibration_curve(strategy="uniform")`` bins: the number of inner edges of
    ``numpy.linspace(0, 1, n_bins + 1)`` strictly below the score, so a score on an edge falls
    in the bin below it (0.5 of 10 bins in [0.4, 0.5]), 0 in the first bin and 1 in the last."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return np.searchsorted(edges[1:-1], scores, side="left")


def _lerp(a: pl.Expr, b: pl.Expr, t: pl.Expr) -> pl.Expr:
    """``numpy.percentile``'s linear interpolation between ``a`` and ``b``, operation for
    operation (from ``b`` backwards where ``t >= 0.5``), so that the edges are numpy's to the
    last bit."""
    diff = b - a
    return pl.when(t >= 0.5).then(b - diff * (1.0 - t)).otherwise(a + diff * t)


def quantile_edges(cells: pl.DataFrame, n_bins: int) -> pl.DataFrame:
    """Per ``__group``: the inner edges (``edge`` number 1 to ``n_bins - 1``, ``value``) of
    ``n_bins`` equal-mass bins of the cells (``__group``, ``score``, ``weight`` > 0, one row per
    group and distinct score), as scikit-learn's ``calibration_curve(strategy="quantile")``
    takes them: ``numpy.percentile`` of the scores at ``linspace(0, 100, n_bins + 1)``, linear
    interpolation, to the last bit.

    The weights count as repetitions: with whole weights the edges are the percentiles of the
    scores each repeated by its weight; any weights place the order statistic ``t`` (0-based,
    from 0 to ``W - 1``, ``W`` the group's total weight) on the distinct score whose span of
    cumulative weight ``[C - w, C)`` holds ``t``. A total weight of 1 puts every edge on the
    highest score (as ``numpy.percentile`` of one value), a total weight below 1 on the lowest.
    The edges read only the weight of each distinct score, which adds up over buckets of
    samples: they are exact out of core.
    """
    # As numpy.percentile(p, q * 100), which divides q * 100 by 100 again.
    quantiles = np.true_divide(np.linspace(0.0, 1.0, n_bins + 1) * 100, 100)[1:-1]
    weight = pl.col("weight")
    starts = (
        cells.sort("__group", "score")
        .select(
            "__group",
            "score",
            (weight.cum_sum().over("__group") - weight).alias("__start"),
            weight.sum().over("__group").alias("__total"),
        )
        .sort("__start")
    )
    total = pl.col("__total")
    h = (total - 1.0) * pl.col("__q")
    # numpy: before the first order statistic both neighbours are the first, else at or past the
    # last both the last.
    first, last = h < 0, h >= total - 1.0
    positions = (
        starts.group_by("__group")
        .agg(total.first())
        .join(pl.DataFrame({"edge": np.arange(1, n_bins), "__q": quantiles}), how="cross")
        .select(
            "__group",
            "edge",
            (h - h.floor()).alias("__gamma"),
            pl.when(first).then(0.0).when(last).then(total).otherwise(h.floor()).alias("__lower"),
            pl.when(first).then(0.0).when(last).then(total).otherwise(h.floor() + 1.0)
            .alias("__upper"),
        )
    )  # fmt: skip

    def at(position: str) -> pl.DataFrame:
        # Order statistic t: the score of the last span starting at or before t.
        return (
            positions.sort(position)
            .join_asof(starts, left_on=position, right_on="__start", by="__group",
                       check_sortedness=False)
            .select("__group", "edge", pl.col("score").alias(position))
        )  # fmt: skip

    lower, upper = pl.col("__lower"), pl.col("__upper")
    return (
        positions.select("__group", "edge", "__gamma")
        .join(at("__lower"), on=["__group", "edge"])
        .join(at("__upper"), on=["__group", "edge"])
        .select("__group", "edge", _lerp(lower, upper, pl.col("__gamma")).alias("value"))
    )


def quantile_bins(cells: pl.DataFrame, keys: Sequence[str], n_bins: int) -> pl.Series:
    """The bin of each of ``cells`` (``score``, ``weight`` > 0, one row per ``keys`` and distinct
    score) among the equal-mass bins of its keys (:func:`quantile_edges`): the number of inner
    edges strictly below the score, as scikit-learn's ``numpy.searchsorted`` over them."""
    if n_bins == 1:
        return pl.Series("bin", [0] * cells.height, dtype=pl.Int64)
    group = pl.struct(list(keys)).rank("dense").alias("__group")
    cells = cells.select(group, "score", "weight").with_row_index("__row")
    edges = (
        quantile_edges(cells, n_bins)
        .group_by("__group", "value")
        .agg(pl.col("edge").max())  # where edges repeat, a score above counts them all
        .sort("value")
    )
    binned = (
        cells.sort("score")
        .join_asof(edges, left_on="score", right_on="value", by="__group",
                   allow_exact_matches=False, check_sortedness=False)
        .sort("__row")
    )  # fmt: skip
    return binned.get_column("edge").fill_null(0).cast(pl.Int64).alias("bin")


def calibration_bins(
    counts: pl.DataFrame, keys: Sequence[str], n_bins: int, strategy: str = "uniform"
) -> pl.DataFrame:
    """Per ``keys`` and non-empty ``bin`` from score counts: ``weight`` (the weighted cells),
    ``score_sum`` (their weighted scores) and ``positives`` (their weighted positive cells).
    ``strategy`` ``"uniform"`` bins by :func:`uniform_bins`, ``"quantile"`` by
    :func:`quantile_bins` (equal mass: each bin about ``1 / n_bins`` of the weight, fewer
    non-empty bins where ties straddle an edge). Bins of disjoint sets of samples add up for
    ``"uniform"``; the equal-mass bins are recomputed from the summed score counts."""
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(map(repr, STRATEGIES))}, "
                         f"not {strategy!r}")  # fmt: skip
    keys = list(keys)
    pos, neg = pl.col("pos"), pl.col("neg")
    cells = counts.with_columns((pos + neg).alias("weight")).filter(pl.col("weight") > 0)
    if strategy == "uniform":
        bins = uniform_bins(cells.get_column("score").to_numpy(), n_bins)
        cells = cells.with_columns(pl.Series("bin", bins, dtype=pl.Int64))
    else:
        cells = cells.group_by([*keys, "score"]).agg(pos.sum(), neg.sum(), pl.col("weight").sum())
        cells = cells.with_columns(quantile_bins(cells, keys, n_bins))
    return cells.group_by([*keys, "bin"]).agg(
        pl.col("weight").sum(),
        (pl.col("score") * pl.col("weight")).sum().alias("score_sum"),
        pos.sum().alias("positives"),
    )


def calibration_errors(
    counts: pl.DataFrame, keys: Sequence[str], n_bins: int, strategy: str = "uniform"
) -> pl.DataFrame:
    """Per ``keys`` from score counts: ``support`` (the weighted positives), ``ece`` (the sum
    over bins of the bin's share of the weight times the gap between its mean score and its
    share of positives) and ``mce`` (the largest such gap over the non-empty bins), over the
    bins of ``strategy`` (:func:`calibration_bins`). Keys whose cells all weigh 0 have no row."""
    weight, positives = pl.col("weight"), pl.col("positives")
    gap = (pl.col("score_sum") - positives).abs()
    return (
        calibration_bins(counts, keys, n_bins, strategy)
        .group_by(list(keys))
        .agg(
            positives.sum().alias("support"),
            (gap.sum() / weight.sum()).alias("ece"),
            (gap / weight).max().alias("mce"),
        )
    )
