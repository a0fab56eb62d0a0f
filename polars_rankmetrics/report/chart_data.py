"""The numbers each chart of the report draws, computed from the evaluation's tables.

Compute, then draw: these functions return plain arrays, which :mod:`.charts` draws; they need
no matplotlib, and what a chart shows can be tested without drawing it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from polars_rankmetrics.metrics.probabilities import calibration_bins


@dataclass(frozen=True)
class Curve:
    """The precision-recall and ROC points of one cumulative table (one row per score
    threshold, with the cumulative ``tp`` and ``fp``), and the positives' share of the cells
    (the precision of a random ranking)."""

    pr: tuple[np.ndarray, np.ndarray]
    roc: tuple[np.ndarray, np.ndarray]
    prevalence: float

    @classmethod
    def of(cls, points: pl.DataFrame) -> Curve:
        tp, fp = points["tp"].to_numpy(), points["fp"].to_numpy()
        p, n = tp[-1], fp[-1]
        precision = np.divide(tp, tp + fp, out=np.ones_like(tp), where=tp + fp > 0)
        recall = tp / p if p > 0 else np.zeros_like(tp)
        fpr = fp / n if n > 0 else np.zeros_like(fp)
        # The curves start at the origin of recall (precision as at the first threshold) and
        # of the ROC.
        return cls(
            pr=(np.r_[0.0, recall], np.r_[precision[0], precision]),
            roc=(np.r_[0.0, fpr], np.r_[0.0, recall]),
            prevalence=float(p / (p + n)) if p + n > 0 else 0.0,
        )


def bin_edges(scores: pl.Series, bins: int) -> np.ndarray:
    """``bins`` equal bins over the range of the (finite) ``scores``; a range of one value
    widened to 1."""
    low, high = float(scores.min()), float(scores.max())  # type: ignore[arg-type]
    return np.linspace(low, high if high > low else low + 1.0, bins + 1)


def score_histograms(
    counts: pl.DataFrame, edges: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The bin edges and the weighted positive and negative cells per bin, from a table of
    ``score`` and its weighted positives ``pos`` and negatives ``neg``."""
    scores = counts["score"].to_numpy()
    positives, _ = np.histogram(scores, bins=edges, weights=counts["pos"].to_numpy())
    negatives, _ = np.histogram(scores, bins=edges, weights=counts["neg"].to_numpy())
    return edges, positives, negatives


@dataclass(frozen=True)
class Reliability:
    """A reliability diagram's points: per non-empty bin of the scores (``bins`` equal-width
    bins of [0, 1]), its number ``bin``, the weighted ``count`` of its cells, their weighted
    ``mean_score`` and their weighted share of positives, ``observed``: without weights,
    ``calibration_curve(y, p, n_bins=bins)``'s ``prob_pred`` and ``prob_true`` over the
    cells given."""

    bins: int
    bin: np.ndarray
    count: np.ndarray
    mean_score: np.ndarray
    observed: np.ndarray

    @classmethod
    def of(cls, counts: pl.DataFrame, bins: int) -> Reliability:
        """From a table of ``score`` and its weighted positives ``pos`` and negatives ``neg``
        (every label of a model pooled, or one label's)."""
        table = calibration_bins(counts, [], bins).sort("bin")
        weight = table["weight"].to_numpy()
        return cls(
            bins=bins,
            bin=table["bin"].to_numpy(),
            count=weight,
            mean_score=table["score_sum"].to_numpy() / weight,
            observed=table["positives"].to_numpy() / weight,
        )


def at_k(
    row: Mapping[str, Any], precision: Sequence[str], recall: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """K = 1 .. k, and the precision and the recall at each, from one summary row:
    ``precision`` and ``recall`` name their keys at K = 1 .. k (``precision@1``, ... or
    trec_eval's ``P_1``, ...)."""
    cuts = np.arange(1, len(precision) + 1)
    return cuts, np.array([row[p] for p in precision]), np.array([row[r] for r in recall])


def differences(
    labels: pl.Series, values: pl.Series, baseline: pl.Series
) -> tuple[list[str], np.ndarray]:
    """Per label, a model's value minus the baseline's (NaN drawn as 0), with the labels'
    names."""
    deltas = (values - baseline).fill_nan(0.0).to_numpy()
    return [str(v) for v in labels.to_list()], deltas
