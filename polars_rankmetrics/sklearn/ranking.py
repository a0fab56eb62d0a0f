"""Drop-ins for scikit-learn's ranking and curve metrics (``sklearn/metrics/_ranking.py``): the
same names and arguments, a truth matrix and a score matrix in.

The ranking metrics (coverage, lrap, ranking loss, dcg, ndcg) average over samples and take their
degenerate cases from :mod:`polars_rankmetrics.metrics.ranking`; the curves (average precision,
ROC AUC) are :mod:`polars_rankmetrics.metrics.label_averages`' per label, averaged as
scikit-learn's ``average=``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import numpy as np

from polars_rankmetrics.evaluate import evaluate
from polars_rankmetrics.inputs.convert import dense_array, from_dense
from polars_rankmetrics.report.labels import label_report
from polars_rankmetrics.sklearn.inputs import WEIGHT, Matrices, sample_weights, scores
from polars_rankmetrics.sklearn.undefined import (
    NO_NEGATIVE,
    NO_POSITIVE,
    ROC_AUC,
    Call,
    with_sklearn_warnings,
)

F = TypeVar("F", bound=Callable[..., float])

# The part of the ranking drop-ins' docstrings they share (numpydoc), added by _documented.
_SHARED_DOC = """
    Parameters
    ----------
    y_true
        The truth, (samples x labels), as a numpy array, nested lists or a scipy sparse
        matrix: 0/1{graded}.
    y_score
        The scores, of the same shape: higher ranks first, ties as scikit-learn ties them;
        infinite scores rank first or last (scikit-learn refuses them).{extra}
    sample_weight
        One weight per sample (None: every sample weighs 1).
    engine
        The engine that computes it: ``"polars"``, ``"duckdb"`` or ``"spark"``.

    Returns
    -------
    float
        The weighted mean over samples, equal to ``sklearn.metrics.{name}`` on the same input
        (to about 1e-12 relative: the sums run in parallel).

    Raises
    ------
    ValueError
        For shapes that differ, a NaN, {refused}, or a ``sample_weight`` that is not one
        weight per sample, naming the column and a sample.

    Examples
    --------
    >>> from polars_rankmetrics.sklearn import {name}
    >>> {name}([[1, 0, 0], [0, 0, 1]], [[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]]{call})
    {value}
"""
_K_DOC = """
    k
        Only the top k positions count (None: the whole ranking).
    ignore_ties
        Rank tied scores in ``numpy.argsort``'s order instead of averaging over their orders."""


def _documented(
    value: str, call: str = "", extra: str = "", graded: bool = False
) -> Callable[[F], F]:
    def add(function: F) -> F:
        function.__doc__ = (function.__doc__ or "") + _SHARED_DOC.format(
            name=function.__name__, value=value, call=call, extra=extra,
            graded=" or graded non-negative gains" if graded else "",
            refused="a negative gain" if graded else "truth outside {0, 1}",
        )  # fmt: skip
        return function

    return add


def _value(
    key: str, y_true: object, y_score: object, sample_weight: object, engine: str,
    **options: object,
) -> float:  # fmt: skip
    table = from_dense(y_true, y_score)
    n_labels = dense_array(y_true, "y_true").shape[1]
    weights = sample_weights(sample_weight, table.height // max(n_labels, 1))
    if weights is not None:
        table = table.with_columns(**{WEIGHT: np.repeat(weights, n_labels)})
    result = evaluate(
        table, [key], weight=None if weights is None else WEIGHT, engine=engine,
        **options,  # type: ignore[arg-type]
    )  # fmt: skip
    return float(result.item())


@_documented("2.5")
def coverage_error(
    y_true: object, y_score: object, *, sample_weight: object = None, engine: str = "polars"
) -> float:
    """scikit-learn's ``coverage_error``: the mean largest rank of a positive label.

    A tie takes the largest rank of its block; a sample without positives counts 0.
    """
    return _value("coverage_error", y_true, y_score, sample_weight, engine)


@_documented("0.41666666666666663")
def label_ranking_average_precision_score(
    y_true: object, y_score: object, *, sample_weight: object = None, engine: str = "polars"
) -> float:
    """scikit-learn's ``label_ranking_average_precision_score`` (lrap).

    Per sample, the mean over its positives of the share of positives among the labels ranked
    at or above it (ties ranked "max"); 1 for a sample whose labels are all positive or all
    negative.
    """
    return _value("lrap", y_true, y_score, sample_weight, engine)


@_documented("0.75")
def label_ranking_loss(
    y_true: object, y_score: object, *, sample_weight: object = None, engine: str = "polars"
) -> float:
    """scikit-learn's ``label_ranking_loss``: the share of wrongly ordered pairs, ties wrong.

    A sample whose labels are all positive or all negative counts 0.
    """
    return _value("ranking_loss", y_true, y_score, sample_weight, engine)


def _untied(y_score: object) -> np.ndarray:
    """With ``ignore_ties``, scikit-learn ranks each row by ``np.argsort(y_score)[:, ::-1]``:
    the same order, as distinct scores (so the tie-averaged dcg is that order's dcg)."""
    scores = dense_array(y_score, "y_score")
    order = np.argsort(scores)[:, ::-1]
    untied = np.empty(scores.shape, dtype=float)
    np.put_along_axis(untied, order, -np.arange(scores.shape[1], dtype=float), axis=1)
    return untied


@_documented(
    "0.31546487678572877",
    ", k=2",
    _K_DOC
    + """
    log_base
        Base of the logarithm of the discount, > 1.""",
    graded=True,
)
def dcg_score(
    y_true: object,
    y_score: object,
    *,
    k: int | None = None,
    log_base: float = 2,
    sample_weight: object = None,
    ignore_ties: bool = False,
    engine: str = "polars",
) -> float:
    """scikit-learn's ``dcg_score``: graded truth, ties averaged unless ``ignore_ties``.

    Per sample, the sum over positions r <= k of gain / log_base(r + 1).
    """
    key = "dcg" if k is None else f"dcg@{k}"
    scores = _untied(y_score) if ignore_ties else y_score
    return _value(key, y_true, scores, sample_weight, engine, log_base=log_base)


@_documented("0.31546487678572877", ", k=2", _K_DOC, graded=True)
def ndcg_score(
    y_true: object,
    y_score: object,
    *,
    k: int | None = None,
    sample_weight: object = None,
    ignore_ties: bool = False,
    engine: str = "polars",
) -> float:
    """scikit-learn's ``ndcg_score``: dcg over the ideal dcg, 0 for a sample without gain.

    Needs at least two labels, as scikit-learn does.
    """
    key = "ndcg" if k is None else f"ndcg@{k}"
    scores = _untied(y_score) if ignore_ties else y_score
    return _value(key, y_true, scores, sample_weight, engine)


_CURVE_AVERAGES = ("micro", "macro", "weighted", "samples", None)


def _curve(
    function: str, kind: str, y_true: object, y_score: object, average: str | None,
    sample_weight: object, engine: str,
) -> float | np.ndarray:  # fmt: skip
    """``kind`` (``average_precision`` or ``roc_auc``) of the scores, averaged as ``average``
    (None: one value per label), with scikit-learn's warnings."""
    if average not in _CURVE_AVERAGES:
        raise ValueError(f"average has to be one of {_CURVE_AVERAGES}")
    m = scores(function, y_true, y_score, sample_weight)
    # scikit-learn's weighted average over labels without positives is 0, no curve computed.
    quiet = average == "weighted" and bool(np.isclose(m.weighted(m.y_true).sum(), 0.0))
    call = Call({kind}, m.n_samples, m.n_labels, quiet, _roc_auc_warnings(m, average))
    return with_sklearn_warnings(call, lambda: _curve_values(m, kind, average, engine))


def _roc_auc_warnings(m: Matrices, average: str | None) -> tuple[str, ...]:
    """scikit-learn's warnings for the undefined ROC curves of a call: a curve (a label's, a
    sample's, or the pooled cells') whose truth has one class is not computed ("Only one
    class"); one whose positives or negatives all weigh 0 is, and ``roc_curve`` warns."""
    y = m.y_true
    weights = np.ones(m.n_samples) if m.weights is None else m.weights
    if average == "samples":  # scikit-learn does not weigh a sample's cells
        curves = [(row, np.ones(m.n_labels)) for row in y]
    elif average == "micro":
        curves = [(y.ravel(), np.repeat(weights, m.n_labels))]
    else:
        curves = [(y[:, j], weights) for j in range(m.n_labels)]
    found = []
    for truth, weight in curves:
        if len(np.unique(truth)) < 2:
            found.append(ROC_AUC)
            continue
        if weight @ (1 - truth) <= 0:
            found.append(NO_NEGATIVE)
        if weight @ truth <= 0:
            found.append(NO_POSITIVE)
    return tuple(dict.fromkeys(found))


def _curve_values(m: Matrices, kind: str, average: str | None, engine: str) -> float | np.ndarray:
    if average is None:
        report = label_report(m.table, engine=engine, zero_division=0, **m.columns)
        return report.get_column(kind).to_numpy()
    return float(evaluate(m.table, [f"{kind}_{average}"], engine=engine, **m.columns).item())


def average_precision_score(
    y_true: object, y_score: object, *, average: str | None = "macro", pos_label: object = 1,
    sample_weight: object = None, engine: str = "polars",
) -> float | np.ndarray:  # fmt: skip
    """scikit-learn's ``average_precision_score`` for multilabel indicator input.

    Per label (or sample, or the pooled cells), the area under the precision-recall steps:
    ``sum over distinct scores n of (R_n - R_{n-1}) P_n``, a tied block one threshold, no
    interpolation. 0 for a label (or sample) without positives, where scikit-learn's
    ``UserWarning`` "No positive class found in y_true, recall is set to one for all
    thresholds." is given once.

    Parameters
    ----------
    y_true
        The truth, (samples x labels) of 0 and 1: a numpy array, nested lists or a scipy
        sparse matrix.
    y_score
        The scores, of the same shape; higher is more confident.
    average
        ``"macro"`` (the mean over labels), ``"weighted"`` (weighted by the labels' weighted
        positives; 0 where no label has any), ``"micro"`` (every cell in one ranking),
        ``"samples"`` (per sample, then the weighted mean) or None (one value per label).
    pos_label
        Fixed to 1 for multilabel indicator input, as in scikit-learn.
    sample_weight
        One weight per sample (None: every sample weighs 1).
    engine
        The engine that computes it: ``"polars"``, ``"duckdb"`` or ``"spark"``.

    Returns
    -------
    float or numpy.ndarray
        The average, or with ``average=None`` one value per label; equal to
        ``sklearn.metrics.average_precision_score`` on the same input (to about 1e-12).

    Raises
    ------
    ValueError
        For input that is not a multilabel indicator matrix (binary or multiclass targets:
        use scikit-learn's own), shapes that differ, a NaN score, an unknown ``average``, or
        ``pos_label`` other than 1.

    Examples
    --------
    >>> from polars_rankmetrics.sklearn import average_precision_score
    >>> y_true = [[1, 0], [0, 1], [1, 1]]
    >>> y_score = [[0.9, 0.2], [0.6, 0.7], [0.4, 0.8]]
    >>> round(average_precision_score(y_true, y_score), 6)
    0.916667
    >>> average_precision_score(y_true, y_score, average=None)
    array([0.83333333, 1.        ])
    """
    if pos_label != 1:
        raise ValueError(
            "Parameter pos_label is fixed to 1 for multilabel-indicator y_true. Do not set "
            "pos_label or set pos_label to 1."
        )
    return _curve("average_precision_score", "average_precision", y_true, y_score, average,
                  sample_weight, engine)  # fmt: skip


def roc_auc_score(
    y_true: object, y_score: object, *, average: str | None = "macro",
    sample_weight: object = None, max_fpr: float | None = None, multi_class: str = "raise",
    labels: object = None, engine: str = "polars",
) -> float | np.ndarray:  # fmt: skip
    """scikit-learn's ``roc_auc_score`` for multilabel indicator input.

    Per label (or sample, or the pooled cells), the trapezoidal area under the ROC curve, a tie
    counting 1/2. NaN for a label (or sample) with one class only, where scikit-learn's
    ``UndefinedMetricWarning`` "Only one class is present in y_true. ROC AUC score is not
    defined in that case." is given once; a NaN makes the ``macro`` and ``samples`` means
    NaN, and counts 0 in ``weighted`` for a label without positives.

    Parameters
    ----------
    y_true
        The truth, (samples x labels) of 0 and 1: a numpy array, nested lists or a scipy
        sparse matrix.
    y_score
        The scores, of the same shape; higher is more confident.
    average
        ``"macro"``, ``"weighted"`` (0 where no label has positives), ``"micro"``,
        ``"samples"`` or None (one value per label), as for
        :func:`average_precision_score`.
    sample_weight
        One weight per sample (None: every sample weighs 1).
    max_fpr
        None or 1: the whole curve (the partial AUC is not computed here).
    multi_class, labels
        Read by scikit-learn for multiclass targets only; ignored here, as scikit-learn
        ignores them for multilabel indicator input.
    engine
        The engine that computes it: ``"polars"``, ``"duckdb"`` or ``"spark"``.

    Returns
    -------
    float or numpy.ndarray
        The average, or with ``average=None`` one value per label; equal to
        ``sklearn.metrics.roc_auc_score`` on the same input (to about 1e-12).

    Raises
    ------
    ValueError
        For input that is not a multilabel indicator matrix (binary or multiclass targets:
        use scikit-learn's own), shapes that differ, a NaN score, an unknown ``average``, or a
        ``max_fpr`` other than None or 1.

    Examples
    --------
    >>> from polars_rankmetrics.sklearn import roc_auc_score
    >>> roc_auc_score([[1, 0], [0, 1], [1, 1]], [[0.9, 0.2], [0.6, 0.7], [0.4, 0.8]])
    0.75
    """
    if max_fpr is not None and max_fpr != 1:
        raise ValueError(
            f"roc_auc_score computes the whole ROC curve's area: max_fpr must be None or 1, not "
            f"{max_fpr!r} (scikit-learn's own roc_auc_score computes the partial AUC)"
        )
    return _curve("roc_auc_score", "roc_auc", y_true, y_score, average, sample_weight, engine)
