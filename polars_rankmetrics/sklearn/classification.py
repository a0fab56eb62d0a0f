"""Drop-ins for scikit-learn's multilabel classification metrics
(``sklearn/metrics/_classification.py``): the same names and arguments, two multilabel indicator
matrices in (the truth and the predictions).

The averages are :func:`~polars_rankmetrics.evaluate`'s keys (``precision_macro``,
``f1_samples``, ``hamming_loss``, ...), the per-label values (``average=None``)
:func:`~polars_rankmetrics.label_report`'s columns, and the remaining per-label scores
(F-beta, Jaccard, the confusion counts) ``evaluate`` by a column holding the label, one
evaluation per label. A 0/0 takes ``zero_division``; with ``"warn"`` (the default) it is 0 and
scikit-learn's own warning is given (:mod:`polars_rankmetrics.sklearn.undefined`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from polars_rankmetrics.evaluate import evaluate
from polars_rankmetrics.report.labels import label_report
from polars_rankmetrics.sklearn.arguments import (
    check_average,
    documented,
    note_pos_label,
    zero_division_of,
)
from polars_rankmetrics.sklearn.inputs import Matrices, predictions
from polars_rankmetrics.sklearn.undefined import Call, with_sklearn_warnings

Scores = tuple[Any, Any, Any, Any]


def _per_label(m: Matrices, key: str, engine: str, **options: Any) -> np.ndarray:
    """One averaged ``key`` (``fbeta_macro``) per label: one evaluation per label."""
    table, by = m.per_label_table()
    result = evaluate(table, [key], by=by, engine=engine, **m.columns, **options)
    return result.sort(by).get_column(key).to_numpy()


def _set_values(
    m: Matrices, beta: float, average: str | None, zero_division: float | str, engine: str
) -> Scores:
    """Precision, recall, F-beta and support (None for an average): scikit-learn's
    ``precision_recall_fscore_support`` (F-beta is precision for beta 0, recall for infinity)."""
    f_kind = "precision" if beta == 0 else "recall" if math.isinf(beta) else "fbeta"
    options: dict[str, Any] = {"zero_division": zero_division, "engine": engine}
    if average is None:
        report = label_report(m.table, **options, **m.columns)
        p, r = (report.get_column(c).to_numpy() for c in ("precision", "recall"))
        if f_kind != "fbeta":
            f = p if f_kind == "precision" else r
        elif beta == 1:
            f = report.get_column("f1").to_numpy()
        else:
            f = _per_label(m, "fbeta_macro", beta=beta, **options)
        return p, r, f, m.whole(report.get_column("support").to_numpy())
    keys = [f"precision_{average}", f"recall_{average}", f"{f_kind}_{average}"]
    if f_kind == "fbeta":
        options["beta"] = beta
    row = evaluate(m.table, list(dict.fromkeys(keys)), **options, **m.columns).row(0, named=True)
    return row[keys[0]], row[keys[1]], row[keys[2]], None


def _set_scores(
    function: str, y_true: object, y_pred: object, *, beta: float, labels: object,
    pos_label: object, average: str | None, sample_weight: object, zero_division: object,
    warn_for: Sequence[str], engine: str,
) -> Scores:  # fmt: skip
    check_average(average)
    zero = zero_division_of(zero_division)
    if isinstance(beta, bool) or not isinstance(beta, int | float) or not beta >= 0:
        raise ValueError(f"beta must be a number >= 0, not {beta!r}")
    note_pos_label(pos_label, average)
    m = predictions(function, y_true, y_pred, sample_weight, labels)
    call = Call(warn_for, m.n_samples, m.n_labels)
    return with_sklearn_warnings(call, lambda: _set_values(m, beta, average, zero, engine))


@documented(
    "y_true", "y_pred", "labels", "pos_label", "average", "sample_weight", "zero_division",
    "engine",
)  # fmt: skip
def precision_recall_fscore_support(
    y_true: object, y_pred: object, *, beta: float = 1.0, labels: object = None,
    pos_label: object = 1, average: str | None = None,
    warn_for: Sequence[str] = ("precision", "recall", "f-score"), sample_weight: object = None,
    zero_division: object = "warn", engine: str = "polars",
) -> Scores:  # fmt: skip
    """scikit-learn's ``precision_recall_fscore_support`` for multilabel indicator input.

    Per label, sample or pooled: precision tp / (tp + fp), recall tp / (tp + fn) and F-beta
    (1 + b^2) tp / ((1 + b^2) tp + b^2 fn + fp), with weighted counts.

    Parameters
    ----------
    <parameters>
    beta
        The weight of recall in the F-score, >= 0 (0: precision, ``math.inf``: recall).
    warn_for
        The scores that warn where ill-defined (with ``zero_division="warn"``).

    Returns
    -------
    tuple
        ``(precision, recall, fbeta, support)``: floats and None for an ``average``; with
        ``average=None`` four arrays of one value per label, the support (true cells) whole
        numbers without sample weights. Equal to scikit-learn's on the same input (to about
        1e-12).

    Raises
    ------
    <raises>

    Examples
    --------
    >>> from polars_rankmetrics.sklearn import precision_recall_fscore_support
    >>> y_true = [[1, 0, 1], [0, 1, 1]]
    >>> y_pred = [[1, 1, 0], [0, 1, 1]]
    >>> precision_recall_fscore_support(y_true, y_pred, average="micro")
    (0.75, 0.75, 0.75, None)
    >>> precision_recall_fscore_support(y_true, y_pred)
    (array([1. , 0.5, 1. ]), array([1. , 1. , 0.5]), array([1.        , 0.66666667, 0.66666667]), array([1, 1, 2]))
    """  # noqa: E501
    return _set_scores(
        "precision_recall_fscore_support", y_true, y_pred, beta=beta, labels=labels,
        pos_label=pos_label, average=average, sample_weight=sample_weight,
        zero_division=zero_division, warn_for=tuple(warn_for), engine=engine,
    )  # fmt: skip


@documented(
    "y_true", "y_pred", "labels", "pos_label", "average", "sample_weight", "zero_division",
    "engine",
)  # fmt: skip
def precision_score(
    y_true: object, y_pred: object, *, labels: object = None, pos_label: object = 1,
    average: str | None = "binary", sample_weight: object = None, zero_division: object = "warn",
    engine: str = "polars",
) -> Any:  # fmt: skip
    """scikit-learn's ``precision_score`` for multilabel indicator input: tp / (tp + fp).

    Parameters
    ----------
    <parameters>

    Returns
    -------
    float or numpy.ndarray
        The average, or with ``average=None`` one value per label; equal to scikit-learn's.

    Raises
    ------
    <raises>

    Examples
    --------
    >>> from polars_rankmetrics.sklearn import precision_score
    >>> precision_score([[1, 0, 1], [0, 1, 1]], [[1, 1, 0], [0, 1, 1]], average="macro")
    0.8333333333333334
    """
    return _set_scores(
        "precision_score", y_true, y_pred, beta=1.0, labels=labels, pos_label=pos_label,
        average=average, sample_weight=sample_weight, zero_division=zero_division,
        warn_for=("precision",), engine=engine,
    )[0]  # fmt: skip


@documented(
    "y_true", "y_pred", "labels", "pos_label", "average", "sample_weight", "zero_division",
    "engine",
)  # fmt: skip
def recall_score(
    y_true: object, y_pred: object, *, labels: object = None, pos_label: object = 1,
    average: str | None = "binary", sample_weight: object = None, zero_division: object = "warn",
    engine: str = "polars",
) -> Any:  # fmt: skip
    """scikit-learn's ``recall_score`` for multilabel indicator input: tp / (tp + fn).

    Parameters
    ----------
    <parameters>

    Returns
    -------
    float or numpy.ndarray
        The average, or with ``average=None`` one value per label; equal to scikit-learn's.

    Raises
    ------
    <raises>

    Examples
    --------
    >>> from polars_rankmetrics.sklearn import recall_score
    >>> recall_score([[1, 0, 1], [0, 1, 1]], [[1, 1, 0], [0, 1, 1]], average="samples")
    0.75
    """
    return _set_scores(
        "recall_score", y_true, y_pred, beta=1.0, labels=labels, pos_label=pos_label,
        average=average, sample_weight=sample_weight, zero_division=zero_division,
        warn_for=("recall",), engine=engine,
    )[1]  # fmt: skip


@documented(
    "y_true", "y_pred", "labels", "pos_label", "average", "sample_weight", "zero_division",
    "engine",
)  # fmt: skip
def fbeta_score(
    y_true: object, y_pred: object, *, beta: float, labels: object = None,
    pos_label: object = 1, average: str | None = "binary", sample_weight: object = None,
    zero_division: object = "warn", engine: str = "polars",
) -> Any:  # fmt: skip
    """scikit-learn's ``fbeta_score`` for multilabel indicator input:
    (1 + b^2) tp / ((1 + b^2) tp + b^2 fn + fp).

    Parameters
    ----------
    <parameters>
    beta
        The weight of recall, >= 0 (0: precision, ``math.inf``: recall).

    Returns
    -------
    float or numpy.ndarray
        The average, or with ``average=None`` one value per label; equal to scikit-learn's.

    Raises
    ------
    <raises>

    Examples
    --------
    >>> from polars_rankmetrics.sklearn import fbeta_score
    >>> fbeta_score([[1, 0, 1], [0, 1, 1]], [[1, 1, 0], [0, 1, 1]], beta=2, average=None)
    array([1.        , 0.83333333, 0.55555556])
    """
    return _set_scores(
        "fbeta_score", y_true, y_pred, beta=beta, labels=labels, pos_label=pos_label,
        average=average, sample_weight=sample_weight, zero_division=zero_division,
        warn_for=("f-score",), engine=engine,
    )[2]  # fmt: skip


@documented(
    "y_true", "y_pred", "labels", "pos_label", "average", "sample_weight", "zero_division",
    "engine",
)  # fmt: skip
def f1_score(
    y_true: object, y_pred: object, *, labels: object = None, pos_label: object = 1,
    average: str | None = "binary", sample_weight: object = None, zero_division: object = "warn",
    engine: str = "polars",
) -> Any:  # fmt: skip
    """scikit-learn's ``f1_score`` for multilabel indicator input: 2 tp / (2 tp + fn + fp).

    Parameters
    ----------
    <parameters>

    Returns
    -------
    float or numpy.ndarray
        The average, or with ``average=None`` one value per label; equal to scikit-learn's.

    Raises
    ------
    <raises>

    Examples
    --------
    >>> from polars_rankmetrics.sklearn import f1_score
    >>> f1_score([[1, 0, 1], [0, 1, 1]], [[1, 1, 0], [0, 1, 1]], average="weighted")
    0.75
    """
    return _set_scores(
        "f1_score", y_true, y_pred, beta=1.0, labels=labels, pos_label=pos_label,
        average=average, sample_weight=sample_weight, zero_division=zero_division,
        warn_for=("f-score",), engine=engine,
    )[2]  # fmt: skip


@documented(
    "y_true", "y_pred", "labels", "pos_label", "average", "sample_weight", "zero_division",
    "engine",
)  # fmt: skip
def jaccard_score(
    y_true: object, y_pred: object, *, labels: object = None, pos_label: object = 1,
    average: str | None = "binary", sample_weight: object = None, zero_division: object = "warn",
    engine: str = "polars",
) -> Any:  # fmt: skip
    """scikit-learn's ``jaccard_score`` for multilabel indicator input: tp / (tp + fp + fn).

    ``zero_division`` takes ``"warn"``, 0 or 1, as in scikit-learn (not NaN).

    Parameters
    ----------
    <parameters>

    Returns
    -------
    float or numpy.ndarray
        The average, or with ``average=None`` one value per label; equal to scikit-learn's.

    Raises
    ------
    <raises>

    Examples
    --------
    >>> from polars_rankmetrics.sklearn import jaccard_score
    >>> jaccard_score([[1, 0, 1], [0, 1, 1]], [[1, 1, 0], [0, 1, 1]], average="samples")
    0.6666666666666666
    """
    check_average(average)
    zero = zero_division_of(zero_division, nan=False)
    note_pos_label(pos_label, average)
    m = predictions("jaccard_score", y_true, y_pred, sample_weight, labels)

    def compute() -> Any:
        if average is None:
            return _per_label(m, "jaccard_macro", engine, zero_division=zero)
        keys = [f"jaccard_{average}"]
        return float(evaluate(m.table, keys, zero_division=zero, engine=engine, **m.columns).item())

    return with_sklearn_warnings(Call(("jaccard",), m.n_samples, m.n_labels), compute)


def _subset_accuracy(m: Matrices, normalize: bool, engine: str) -> float:
    if normalize:
        return float(evaluate(m.table, ["subset_accuracy"], engine=engine, **m.columns).item())
    rows = evaluate(m.table, ["subset_accuracy"], per_sample=True, engine=engine, **m.columns)
    exact = rows.sort("sample").get_column("subset_accuracy").to_numpy()
    return float(exact.sum() if m.weights is None else exact @ m.weights)


def _quiet(compute: Callable[[], float], m: Matrices) -> float:
    """A metric scikit-learn never warns for, its warnings passed through as they are."""
    return with_sklearn_warnings(Call((), m.n_samples, m.n_labels), compute)


@documented("y_true", "y_pred", "normalize", "sample_weight", "engine")
def accuracy_score(
    y_true: object, y_pred: object, *, normalize: bool = True, sample_weight: object = None,
    engine: str = "polars",
) -> float:  # fmt: skip
    """scikit-learn's ``accuracy_score`` for multilabel indicator input: subset accuracy, the
    samples whose predicted set is exactly the true set (both empty counts).

    Parameters
    ----------
    <parameters>

    Returns
    -------
    float
        Equal to scikit-learn's on the same input.

    Raises
    ------
    <raises>

    Examples
    --------
    >>> from polars_rankmetrics.sklearn import accuracy_score
    >>> accuracy_score([[1, 0, 1], [0, 1, 1]], [[1, 1, 0], [0, 1, 1]])
    0.5
    """
    m = predictions("accuracy_score", y_true, y_pred, sample_weight)
    return _quiet(lambda: _subset_accuracy(m, normalize, engine), m)


@documented("y_true", "y_pred", "normalize", "sample_weight", "engine")
def zero_one_loss(
    y_true: object, y_pred: object, *, normalize: bool = True, sample_weight: object = None,
    engine: str = "polars",
) -> float:  # fmt: skip
    """scikit-learn's ``zero_one_loss`` for multilabel indicator input: the samples whose
    predicted set is not exactly the true set.

    Parameters
    ----------
    <parameters>

    Returns
    -------
    float
        Equal to scikit-learn's on the same input.

    Raises
    ------
    <raises>

    Examples
    --------
    >>> from polars_rankmetrics.sklearn import zero_one_loss
    >>> zero_one_loss([[1, 0, 1], [0, 1, 1]], [[1, 1, 0], [0, 1, 1]], normalize=False)
    1.0
    """
    m = predictions("zero_one_loss", y_true, y_pred, sample_weight)

    def compute() -> float:
        if normalize:
            return float(evaluate(m.table, ["zero_one_loss"], engine=engine, **m.columns).item())
        return m.total_weight - _subset_accuracy(m, False, engine)

    return _quiet(compute, m)


@documented("y_true", "y_pred", "sample_weight", "engine")
def hamming_loss(
    y_true: object, y_pred: object, *, sample_weight: object = None, engine: str = "polars"
) -> float:
    """scikit-learn's ``hamming_loss`` for multilabel indicator input: the (weighted) share of
    cells predicted wrongly.

    Parameters
    ----------
    <parameters>

    Returns
    -------
    float
        Equal to scikit-learn's on the same input.

    Raises
    ------
    <raises>

    Examples
    --------
    >>> from polars_rankmetrics.sklearn import hamming_loss
    >>> hamming_loss([[1, 0, 1], [0, 1, 1]], [[1, 1, 0], [0, 1, 1]])
    0.3333333333333333
    """
    m = predictions("hamming_loss", y_true, y_pred, sample_weight)
    return _quiet(
        lambda: float(evaluate(m.table, ["hamming_loss"], engine=engine, **m.columns).item()), m
    )
