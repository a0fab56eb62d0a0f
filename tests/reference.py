"""scikit-learn as the oracle: pivot a long table to dense matrices and call its metrics."""

from __future__ import annotations

import numpy as np
import polars as pl
from sklearn import metrics as skm

from polars_rankmetrics.metrics import MetricKey


def dense(df: pl.DataFrame, *, sample="sample", label="label", score="score", truth="truth"):
    """(sample ids, y_true, y_score) with samples and labels in sorted order."""
    wide = df.sort(sample, label)
    samples = wide[sample].unique(maintain_order=True)
    n_labels = wide[label].n_unique()
    y_true = wide[truth].cast(pl.Float64).to_numpy().reshape(len(samples), n_labels)
    y_score = wide[score].cast(pl.Float64).to_numpy().reshape(len(samples), n_labels)
    return samples, y_true, y_score


def finite_scores(y_score: np.ndarray) -> np.ndarray:
    """The same order without infinities (scikit-learn rejects them; every metric here only
    depends on the order of the scores within a sample)."""
    finite = y_score[np.isfinite(y_score)]
    top, bottom = (finite.max() + 1, finite.min() - 1) if finite.size else (1.0, -1.0)
    return np.where(y_score == np.inf, top, np.where(y_score == -np.inf, bottom, y_score))


def sklearn_value(key: MetricKey, y_true, y_score, sample_weight=None) -> float:
    """scikit-learn's value of one metric key (lwlrap: lrap weighted by the positive count)."""
    binary = y_true.astype(int)
    y_score = finite_scores(y_score)
    match key.name:
        case "coverage_error":
            return skm.coverage_error(binary, y_score, sample_weight=sample_weight)
        case "lrap":
            return skm.label_ranking_average_precision_score(
                binary, y_score, sample_weight=sample_weight
            )
        case "ranking_loss":
            return skm.label_ranking_loss(binary, y_score, sample_weight=sample_weight)
        case "lwlrap":
            n_pos = binary.sum(axis=1).astype(float)
            w = n_pos if sample_weight is None else n_pos * sample_weight
            if w.sum() == 0:
                return float("nan")
            return skm.label_ranking_average_precision_score(binary, y_score, sample_weight=w)
        case "dcg":
            return skm.dcg_score(y_true, y_score, k=key.k, sample_weight=sample_weight)
        case "ndcg":
            return skm.ndcg_score(y_true, y_score, k=key.k, sample_weight=sample_weight)
    raise AssertionError(key)


def sklearn_per_sample(key: MetricKey, y_true, y_score) -> np.ndarray:
    """scikit-learn's value for each sample alone (lwlrap: null for samples without positives)."""
    values = []
    for i in range(len(y_true)):
        if key.name == "lwlrap" and y_true[i].sum() == 0:
            values.append(np.nan)
            continue
        one = MetricKey("lrap") if key.name == "lwlrap" else key
        values.append(sklearn_value(one, y_true[i : i + 1], y_score[i : i + 1]))
    return np.array(values, dtype=float)
