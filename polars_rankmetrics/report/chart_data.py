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


@dataclass(frozen=True)
class Means:
    """One metric's row of a leaderboard per model, best first (by ``rank``, ties by name): the
    models' ``names``, their ``value`` and its interval (``lo``, ``hi``: NaN where the
    leaderboard has none) and their ``group`` letters."""

    names: list[str]
    value: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    group: list[str]

    @classmethod
    def of(cls, leaderboard: pl.DataFrame, metric: str, by: Sequence[str]) -> Means:
        """From :func:`~polars_rankmetrics.leaderboard`'s table, whose ``by`` columns name the
        models."""
        rows = leaderboard.filter(pl.col("metric") == metric).to_dicts()
        rows.sort(key=lambda r: (r["rank"] is None, r["rank"], _name(r, by)))
        column = {
            c: np.array([np.nan if r.get(c) is None else r[c] for r in rows], dtype=float)
            for c in ("value", "value_lo", "value_hi")
        }
        return cls(
            names=[_name(r, by) for r in rows],
            value=column["value"],
            lo=column["value_lo"],
            hi=column["value_hi"],
            group=[str(r["group"] or "") for r in rows],
        )


def p_value_matrix(
    pairs: pl.DataFrame, metric: str, by: Sequence[str], names: Sequence[str]
) -> np.ndarray:
    """The pairs' adjusted p-values of one metric as a square matrix over ``names`` (the
    models, named by their ``by`` values joined by ", "): cell (i, j) and (j, i) hold the
    ``p_adjusted`` of the pair of models i and j in an all-pairs comparison (``pairs``, whose
    other model is in ``<by>_other``); the diagonal, and a pair the comparison lacks, NaN."""
    index = {name: i for i, name in enumerate(names)}
    matrix = np.full((len(names), len(names)), np.nan)
    others = [f"{b}_other" for b in by]
    for row in pairs.filter(pl.col("metric") == metric).iter_rows(named=True):
        i, j = index.get(_name(row, by)), index.get(_name(row, others))
        if i is not None and j is not None:
            p = np.nan if row["p_adjusted"] is None else row["p_adjusted"]
            matrix[i, j] = matrix[j, i] = p
    return matrix


def _name(row: Mapping[str, Any], by: Sequence[str]) -> str:
    return ", ".join(str(row[b]) for b in by)
