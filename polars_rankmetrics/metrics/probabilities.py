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
CALIBRATION = ("ece", "mce")


def uniform_bins(scores: np.ndarray, n_bins: int) -> np.ndarray:
    """The bin of each score among ``n_bins`` equal-width bins of [0, 1], as scikit-learn's
    ``calibration_curve(strategy="uniform")`` bins: the number of inner edges of
    ``numpy.linspace(0, 1, n_bins + 1)`` strictly below the score, so a score on an edge falls
    in the bin below it (0.5 of 10 bins in [0.4, 0.5]), 0 in the first bin and 1 in the last."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return np.searchsorted(edges[1:-1], scores, side="left")


def calibration_bins(counts: pl.DataFrame, keys: Sequence[str], n_bins: int) -> pl.DataFrame:
    """Per ``keys`` and non-empty ``bin`` (:func:`uniform_bins`) from score counts: ``weight``
    (the weighted cells), ``score_sum`` (their weighted scores) and ``positives`` (their weighted
    positive cells). Bins of disjoint sets of samples add up."""
    pos, neg = pl.col("pos"), pl.col("neg")
    bins = uniform_bins(counts.get_column("score").to_numpy(), n_bins)
    return (
        counts.with_columns(pl.Series("bin", bins, dtype=pl.Int64))
        .group_by([*keys, "bin"])
        .agg(
            (pos + neg).sum().alias("weight"),
            (pl.col("score") * (pos + neg)).sum().alias("score_sum"),
            pos.sum().alias("positives"),
        )
        .filter(pl.col("weight") > 0)
    )


def calibration_errors(counts: pl.DataFrame, keys: Sequence[str], n_bins: int) -> pl.DataFrame:
    """Per ``keys`` from score counts: ``support`` (the weighted positives), ``ece`` (the sum
    over bins of the bin's share of the weight times the gap between its mean score and its
    share of positives) and ``mce`` (the largest such gap over the non-empty bins)."""
    weight, positives = pl.col("weight"), pl.col("positives")
    gap = (pl.col("score_sum") - positives).abs()
    return (
        calibration_bins(counts, keys, n_bins)
        .group_by(list(keys))
        .agg(
            positives.sum().alias("support"),
            (gap.sum() / weight.sum()).alias("ece"),
            (gap / weight).max().alias("mce"),
        )
    )
