"""Threshold metrics of one sample as Polars expressions: its predicted label set against its true
one (the example-based metrics of multilabel classification).

A label is predicted when ``predicted(...)`` is true for its row: the ``pred`` column's decision
(bool or 0/1), or ``score >= threshold``. Over one sample's rows, with ``tp`` the true labels
predicted, ``fp`` the false ones predicted and ``fn`` the true ones missed:

==================  ==========================================  =========================
expression          value                                       0/0 (``zero_division``)
==================  ==========================================  =========================
hamming_loss        (fp + fn) / L                               -
subset_accuracy     1 if the predicted set equals the true set  - (both empty: equal, 1)
zero_one_loss       1 - subset_accuracy                         -
precision_samples   tp / (tp + fp)  (scikit-learn's precision)  nothing predicted
recall_samples      tp / (tp + fn)                              nothing true
fbeta_samples       (1 + b^2) tp / ((1 + b^2) tp + b^2 fn + fp)  nothing predicted or true
jaccard_samples     tp / (tp + fp + fn)                         nothing predicted or true
==================  ==========================================  =========================

``zero_division`` is 0, 1 or NaN; NaN gives a null value, and a sample with a null value drops out
of the (weighted) mean, as scikit-learn's ``zero_division=np.nan`` does. These are scikit-learn's
``average="samples"`` metrics (and ``hamming_loss``, ``accuracy_score``, ``zero_one_loss``).
"""

from __future__ import annotations

import math

import polars as pl


def predicted(score: str = "score", *, pred: str | None = None, threshold: float = 0.5) -> pl.Expr:
    """Per row: whether the label is predicted."""
    if pred is not None:
        return pl.col(pred).cast(pl.Float64) > 0
    return pl.col(score) >= threshold


def _counts(truth: str, is_predicted: pl.Expr) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    true = pl.col(truth) > 0
    tp = (true & is_predicted).sum().cast(pl.Float64)
    fp = (~true & is_predicted).sum().cast(pl.Float64)
    fn = (true & ~is_predicted).sum().cast(pl.Float64)
    return tp, fp, fn


def _ratio(numerator: pl.Expr, denominator: pl.Expr, zero_division: float) -> pl.Expr:
    fallback = pl.lit(None, pl.Float64) if math.isnan(zero_division) else pl.lit(zero_division)
    return pl.when(denominator > 0).then(numerator / denominator).otherwise(fallback)


def hamming_loss(truth: str, is_predicted: pl.Expr) -> pl.Expr:
    """The share of the sample's labels predicted wrongly. Lower is better."""
    _, fp, fn = _counts(truth, is_predicted)
    return (fp + fn) / pl.len().cast(pl.Float64)


def subset_accuracy(truth: str, is_predicted: pl.Expr) -> pl.Expr:
    """1 when the predicted set is exactly the true set (both empty counts), else 0."""
    _, fp, fn = _counts(truth, is_predicted)
    return (fp + fn == 0).cast(pl.Float64)


def zero_one_loss(truth: str, is_predicted: pl.Expr) -> pl.Expr:
    """1 - subset accuracy. Lower is better."""
    return 1.0 - subset_accuracy(truth, is_predicted)


def precision(truth: str, is_predicted: pl.Expr, zero_division: float = 0.0) -> pl.Expr:
    """|true and predicted| / |predicted|."""
    tp, fp, _ = _counts(truth, is_predicted)
    return _ratio(tp, tp + fp, zero_division)


def recall(truth: str, is_predicted: pl.Expr, zero_division: float = 0.0) -> pl.Expr:
    """|true and predicted| / |true|."""
    tp, _, fn = _counts(truth, is_predicted)
    return _ratio(tp, tp + fn, zero_division)


def fbeta(
    truth: str, is_predicted: pl.Expr, beta: float = 1.0, zero_division: float = 0.0
) -> pl.Expr:
    """The F-beta score of the sample's sets (recall weighted beta times as much)."""
    tp, fp, fn = _counts(truth, is_predicted)
    b2 = beta * beta
    return _ratio((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp, zero_division)


def jaccard(truth: str, is_predicted: pl.Expr, zero_division: float = 0.0) -> pl.Expr:
    """|true and predicted| / |true or predicted| (the seeds' example-based "accuracy")."""
    tp, fp, fn = _counts(truth, is_predicted)
    return _ratio(tp, tp + fp + fn, zero_division)
