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
from typing import TypeVar

import numpy as np
import polars as pl


def predicted(score: str = "score", *, pred: str | None = None, threshold: float = 0.5) -> pl.Expr:
    """Per row: whether the label is predicted."""
    if pred is not None:
        return pl.col(pred).cast(pl.Float64) > 0
    return pl.col(score) >= threshold


def set_counts(true: pl.Expr, is_predicted: pl.Expr) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """Aggregations over a sample's rows: its true labels predicted (tp), false ones predicted
    (fp) and true ones missed (fn), as Float64; ``true``: whether each row's label is true."""
    tp = (true & is_predicted).sum().cast(pl.Float64)
    fp = (~true & is_predicted).sum().cast(pl.Float64)
    fn = (true & ~is_predicted).sum().cast(pl.Float64)
    return tp, fp, fn


def _counts(truth: str, is_predicted: pl.Expr) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """:func:`set_counts` of a truth column (a label is true where it is positive)."""
    return set_counts(pl.col(truth) > 0, is_predicted)


def wrong_share(fp: pl.Expr, fn: pl.Expr, labels: pl.Expr) -> pl.Expr:
    """Hamming loss from a sample's counts: its wrong predictions over its ``labels`` (L)."""
    return (fp + fn) / labels


def exact_match(fp: pl.Expr, fn: pl.Expr) -> pl.Expr:
    """Subset accuracy from a sample's counts: 1 where nothing is predicted wrongly (both sets
    empty counts), else 0."""
    return (fp + fn == 0).cast(pl.Float64)


Counts = TypeVar("Counts", pl.Expr, np.ndarray)


def set_ratio(
    kind: str, tp: Counts, fp: Counts, fn: Counts, *, beta: float = 1.0
) -> tuple[Counts, Counts]:
    """The numerator and the denominator of ``precision``, ``recall``, ``f1``, ``fbeta`` or
    ``jaccard`` from the counts of true positives, false positives and false negatives, as
    Polars expressions or numpy arrays alike: the one definition of these formulas, which the
    expressions (:func:`set_score`) and the resampled ``_micro`` averages both read. ``f1`` is
    ``fbeta`` with beta 1, whatever ``beta`` is."""
    b2 = 1.0 if kind == "f1" else beta * beta
    if kind == "precision":
        return tp, tp + fp
    if kind == "recall":
        return tp, tp + fn
    if kind in ("f1", "fbeta"):
        return (1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp
    if kind == "jaccard":
        return tp, tp + fp + fn
    raise KeyError(kind)


def set_score(
    kind: str, tp: pl.Expr, fp: pl.Expr, fn: pl.Expr, *, beta: float = 1.0,
    zero_division: float = 0.0,
) -> pl.Expr:  # fmt: skip
    """:func:`set_ratio` of the counts (of a sample, a label, or pooled); a 0/0 is
    ``zero_division`` (null for NaN)."""
    numerator, denominator = set_ratio(kind, tp, fp, fn, beta=beta)
    fallback = pl.lit(None, pl.Float64) if math.isnan(zero_division) else pl.lit(zero_division)
    return pl.when(denominator > 0).then(numerator / denominator).otherwise(fallback)


def count(kind: str, truth: str, is_predicted: pl.Expr) -> pl.Expr:
    """One sample's ``"tp"``, ``"fp"`` or ``"fn"``: what the ``_micro`` averages add up, so
    that their resampling reads them per sample."""
    return dict(zip(("tp", "fp", "fn"), _counts(truth, is_predicted), strict=True))[kind]


def hamming_loss(truth: str, is_predicted: pl.Expr) -> pl.Expr:
    """The share of the sample's labels predicted wrongly. Lower is better."""
    _, fp, fn = _counts(truth, is_predicted)
    return wrong_share(fp, fn, pl.len().cast(pl.Float64))


def subset_accuracy(truth: str, is_predicted: pl.Expr) -> pl.Expr:
    """1 when the predicted set is exactly the true set (both empty counts), else 0."""
    _, fp, fn = _counts(truth, is_predicted)
    return exact_match(fp, fn)


def zero_one_loss(truth: str, is_predicted: pl.Expr) -> pl.Expr:
    """1 - subset accuracy. Lower is better."""
    return 1.0 - subset_accuracy(truth, is_predicted)


def sample_score(
    kind: str, truth: str, is_predicted: pl.Expr, *, beta: float = 1.0, zero_division: float = 0.0
) -> pl.Expr:
    """:func:`set_score` of one sample's predicted and true label sets."""
    return set_score(kind, *_counts(truth, is_predicted), beta=beta, zero_division=zero_division)
