"""Drop-ins for scikit-learn's per-label tables of multilabel predictions:
``multilabel_confusion_matrix`` and ``classification_report``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import polars as pl

from polars_rankmetrics.evaluate import evaluate
from polars_rankmetrics.report.labels import label_report
from polars_rankmetrics.sklearn.arguments import AVERAGES, PRF, documented, zero_division_of
from polars_rankmetrics.sklearn.inputs import Matrices, predictions
from polars_rankmetrics.sklearn.undefined import Call, with_sklearn_warnings

_COUNTS = ("true_positives", "false_positives", "false_negatives")


def _counts(m: Matrices, samplewise: bool, engine: str) -> list[np.ndarray]:
    """tp, fp and fn per label (per sample with ``samplewise``), weighted as scikit-learn
    weighs them: a sample's counts times its weight."""
    if samplewise:
        rows = evaluate(m.table, list(_COUNTS), per_sample=True, engine=engine, **m.columns)
        rows = rows.sort("sample")
        weights = 1 if m.weights is None else m.weights
        return [rows.get_column(c).to_numpy() * weights for c in _COUNTS]
    table, by = m.per_label_table()
    rows = evaluate(table, list(_COUNTS), by=by, per_sample=True, engine=engine, **m.columns)
    if m.weights is not None:
        weight = pl.Series(m.weights).gather(rows.get_column("sample"))
        rows = rows.with_columns(pl.col(_COUNTS) * weight)
    sums = rows.group_by(by).agg(pl.col(_COUNTS).sum()).sort(by)
    return [sums.get_column(c).to_numpy() for c in _COUNTS]


@documented("y_true", "y_pred", "sample_weight", "labels", "engine")
def multilabel_confusion_matrix(
    y_true: object, y_pred: object, *, sample_weight: object = None, labels: Any = None,
    samplewise: bool = False, engine: str = "polars",
) -> np.ndarray:  # fmt: skip
    """scikit-learn's ``multilabel_confusion_matrix`` for multilabel indicator input: per label
    (or sample), ``[[tn, fp], [fn, tp]]``.

    Parameters
    ----------
    <parameters>
    samplewise
        One matrix per sample instead of per label.

    Returns
    -------
    numpy.ndarray
        Of shape (labels, 2, 2), or (samples, 2, 2) with ``samplewise``: whole numbers without
        sample weights, each sample's cells counting its weight with them. Equal to
        scikit-learn's.

    Raises
    ------
    <raises>

    Examples
    --------
    >>> from polars_rankmetrics.sklearn import multilabel_confusion_matrix
    >>> multilabel_confusion_matrix([[1, 0, 1], [0, 1, 0]], [[1, 0, 0], [0, 1, 1]])
    array([[[1, 0],
            [0, 1]],
    <BLANKLINE>
           [[1, 0],
            [0, 1]],
    <BLANKLINE>
           [[0, 1],
            [1, 0]]])
    """
    m = predictions("multilabel_confusion_matrix", y_true, y_pred, sample_weight, labels)
    tp, fp, fn = with_sklearn_warnings(
        Call((), m.n_samples, m.n_labels), lambda: _counts(m, samplewise, engine)
    )
    if m.weights is None:
        tp, fp, fn = (np.rint(c).astype(np.int64) for c in (tp, fp, fn))
        cells = m.n_labels if samplewise else m.n_samples
        tn = cells - tp - fp - fn
    else:
        tn = (m.weights * m.n_labels if samplewise else m.weights.sum()) - tp - fp - fn
    return np.stack([tn, fp, fn, tp]).T.reshape(-1, 2, 2)


def _report_values(
    m: Matrices, zero_division: float | str, engine: str
) -> tuple[list[np.ndarray], dict[str, list[float]]]:
    """Per label precision, recall, F1 and support; per average its precision, recall, F1."""
    options: dict[str, Any] = {"zero_division": zero_division, "engine": engine}
    report = label_report(m.table, **options, **m.columns)
    per_label = [report.get_column(c).to_numpy() for c in ("precision", "recall", "f1")]
    keys = [f"{score}_{average}" for average in AVERAGES for score in ("precision", "recall", "f1")]
    row = evaluate(m.table, keys, **options, **m.columns).row(0, named=True)
    averages = {a: [row[f"{s}_{a}"] for s in ("precision", "recall", "f1")] for a in AVERAGES}
    return [*per_label, m.whole(report.get_column("support").to_numpy())], averages


@documented("y_true", "y_pred", "labels", "sample_weight", "zero_division", "engine")
def classification_report(
    y_true: object, y_pred: object, *, labels: Any = None, target_names: Any = None,
    sample_weight: object = None, digits: int = 2, output_dict: bool = False,
    zero_division: object = "warn", engine: str = "polars",
) -> str | dict[str, Any]:  # fmt: skip
    """scikit-learn's ``classification_report`` for multilabel indicator input: per label and
    for the micro, macro, weighted and samples averages, precision, recall, F1 and support.

    Parameters
    ----------
    <parameters>
    target_names
        The labels' names in the report (default: their column indices).
    digits
        The digits of the text report's numbers.
    output_dict
        Return the numbers as a dict of dicts instead of text.

    Returns
    -------
    str or dict
        scikit-learn's text (or dict) on the same input. The numbers equal scikit-learn's to
        about 1e-12, so one exactly halfway between two printed values may round the other
        way.

    Raises
    ------
    <raises>

    Examples
    --------
    >>> from polars_rankmetrics.sklearn import classification_report
    >>> print(classification_report([[1, 0, 1], [0, 1, 1]], [[1, 1, 0], [0, 1, 1]]))
                  precision    recall  f1-score   support
    <BLANKLINE>
               0       1.00      1.00      1.00         1
               1       0.50      1.00      0.67         1
               2       1.00      0.50      0.67         2
    <BLANKLINE>
       micro avg       0.75      0.75      0.75         4
       macro avg       0.83      0.83      0.78         4
    weighted avg       0.88      0.75      0.75         4
     samples avg       0.75      0.75      0.75         4
    <BLANKLINE>
    """
    zero = zero_division_of(zero_division)
    m = predictions("classification_report", y_true, y_pred, sample_weight, labels)
    names = list(range(m.n_labels)) if labels is None else list(np.asarray(labels))
    if target_names is not None and len(names) != len(target_names):
        if labels is None:
            raise ValueError(
                f"Number of classes, {len(names)}, does not match size of target_names, "
                f"{len(target_names)}. Try specifying the labels parameter"
            )
        warnings.warn(
            f"labels size, {len(names)}, does not match size of target_names, {len(target_names)}",
            stacklevel=2,
        )
    shown = [f"{n}" for n in names] if target_names is None else list(target_names)
    call = Call(PRF, m.n_samples, m.n_labels)
    per_label, averages = with_sklearn_warnings(call, lambda: _report_values(m, zero, engine))
    return _formatted(shown, per_label, averages, digits, output_dict)


_HEADERS = ["precision", "recall", "f1-score", "support"]


def _formatted(
    names: list[str], per_label: list[np.ndarray], averages: dict[str, list[float]],
    digits: int, output_dict: bool,
) -> str | dict[str, Any]:  # fmt: skip
    """scikit-learn's layout of the report (its ``classification_report``, multilabel)."""
    rows = list(zip(names, *per_label, strict=False))
    total = np.sum(per_label[3])
    if output_dict:
        report: dict[str, Any] = {
            row[0]: dict(zip(_HEADERS, [float(v) for v in row[1:]], strict=True)) for row in rows
        }
        for average, values in averages.items():
            report[f"{average} avg"] = dict(
                zip(_HEADERS, [float(v) for v in [*values, total]], strict=True)
            )
        return report
    width = max(max(len(n) for n in names), len("weighted avg"), digits)
    text = ("{:>{width}s} " + " {:>9}" * 4).format("", *_HEADERS, width=width) + "\n\n"
    row_format = "{:>{width}s} " + " {:>9.{digits}f}" * 3 + " {:>9}\n"
    for row in rows:
        text += row_format.format(*row, width=width, digits=digits)
    text += "\n"
    for average, values in averages.items():
        text += row_format.format(f"{average} avg", *values, total, width=width, digits=digits)
    return text
