"""Drop-ins for scikit-learn's ranking metrics: the same names and arguments, matrices in, a float
out, computed by this library's Polars engine.

    from polars_rankmetrics.sklearn import label_ranking_average_precision_score
    label_ranking_average_precision_score(y_true, y_score)  # was: from sklearn.metrics import ...

``y_true`` and ``y_score`` are (samples x labels) numpy arrays, nested lists or scipy sparse
matrices; the values and the degenerate cases are scikit-learn's (see
:mod:`polars_rankmetrics.metrics.ranking`). Bad input raises ``ValueError``, as scikit-learn does,
with this library's messages. The long table is built from the matrices first
(:func:`~polars_rankmetrics.from_dense`); for tables that are long already, call
:func:`~polars_rankmetrics.evaluate` on them directly.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from polars_rankmetrics.evaluate import evaluate
from polars_rankmetrics.inputs.convert import dense_array, from_dense


def _value(
    key: str, y_true: object, y_score: object, sample_weight: object, **options: object
) -> float:
    table = from_dense(y_true, y_score)
    weight = None
    if sample_weight is not None:
        weights = np.asarray(sample_weight, dtype=float)
        n_labels = dense_array(y_true, "y_true").shape[1]
        if weights.shape != (table.height // max(n_labels, 1),):
            raise ValueError(
                f"sample_weight has shape {weights.shape}; expected one weight per sample"
            )
        table = table.with_columns(weight=pl.Series(np.repeat(weights, n_labels)))
        weight = "weight"
    result = evaluate(table, [key], weight=weight, **options)  # type: ignore[arg-type]
    return float(result.item())


def coverage_error(y_true: object, y_score: object, *, sample_weight: object = None) -> float:
    """scikit-learn's ``coverage_error``: the mean largest rank of a positive label."""
    return _value("coverage_error", y_true, y_score, sample_weight)


def label_ranking_average_precision_score(
    y_true: object, y_score: object, *, sample_weight: object = None
) -> float:
    """scikit-learn's ``label_ranking_average_precision_score`` (lrap)."""
    return _value("lrap", y_true, y_score, sample_weight)


def label_ranking_loss(y_true: object, y_score: object, *, sample_weight: object = None) -> float:
    """scikit-learn's ``label_ranking_loss``: the share of wrongly ordered pairs, ties wrong."""
    return _value("ranking_loss", y_true, y_score, sample_weight)


def _untied(y_score: object) -> np.ndarray:
    """With ``ignore_ties``, scikit-learn ranks each row by ``np.argsort(y_score)[:, ::-1]``:
    the same order, as distinct scores (so the tie-averaged dcg is that order's dcg)."""
    scores = dense_array(y_score, "y_score")
    order = np.argsort(scores)[:, ::-1]
    untied = np.empty(scores.shape, dtype=float)
    np.put_along_axis(untied, order, -np.arange(scores.shape[1], dtype=float), axis=1)
    return untied


def dcg_score(
    y_true: object,
    y_score: object,
    *,
    k: int | None = None,
    log_base: float = 2,
    sample_weight: object = None,
    ignore_ties: bool = False,
) -> float:
    """scikit-learn's ``dcg_score``: graded truth, ties averaged unless ``ignore_ties``."""
    key = "dcg" if k is None else f"dcg@{k}"
    scores = _untied(y_score) if ignore_ties else y_score
    return _value(key, y_true, scores, sample_weight, log_base=log_base)


def ndcg_score(
    y_true: object,
    y_score: object,
    *,
    k: int | None = None,
    sample_weight: object = None,
    ignore_ties: bool = False,
) -> float:
    """scikit-learn's ``ndcg_score``: dcg over the ideal dcg, 0 for a sample without gain."""
    key = "ndcg" if k is None else f"ndcg@{k}"
    scores = _untied(y_score) if ignore_ties else y_score
    return _value(key, y_true, scores, sample_weight)
