"""The drop-ins' inputs: scikit-learn's (samples x labels) matrices, checked and turned into the
long table that :func:`~polars_rankmetrics.evaluate` and :func:`~polars_rankmetrics.label_report`
read.

The classification drop-ins take multilabel indicator input only: two matrices of 0 and 1 (or
bool), dense or scipy sparse, of the same shape with at least two labels. Anything else (a vector
of binary or multiclass targets, other values) is refused with a ``ValueError`` that says so, as
scikit-learn's own functions compute those.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from polars_rankmetrics.inputs.convert import dense_array, from_dense

# The long table's columns as the drop-ins build it, and the by column of one evaluation per
# label (``per_label``).
WEIGHT = "weight"
PRED = "pred"
_PER_LABEL = "column"

_MULTILABEL_ONLY = (
    "{function} takes multilabel indicator input: {problem}. For binary or multiclass targets, "
    "use scikit-learn's own {function}"
)


def refused(function: str, problem: str) -> ValueError:
    """The error of a drop-in given input it does not take."""
    return ValueError(_MULTILABEL_ONLY.format(function=function, problem=problem))


def indicator(matrix: object, name: str, function: str) -> np.ndarray:
    """``matrix`` as a dense (samples x labels) array of 0 and 1; ``ValueError`` otherwise."""
    try:
        array = dense_array(matrix, name)
    except ValueError as error:
        raise refused(function, str(error)) from None
    if array.shape[1] < 2:
        raise refused(function, f"{name} has {array.shape[1]} label column, not 2 or more")
    if array.dtype != bool:
        if array.dtype.kind not in "iuf":
            raise refused(function, f"{name} holds {array.dtype} values, not 0 and 1")
        other = array[(array != 0) & (array != 1)]
        if other.size:
            raise refused(function, f"{name} holds {other[0]}, not only 0 and 1")
    return array


def sample_weights(sample_weight: object, n_samples: int) -> np.ndarray | None:
    """``sample_weight`` as a float array of one weight per sample (None stays None)."""
    if sample_weight is None:
        return None
    weights = np.asarray(sample_weight, dtype=float)
    if weights.shape != (n_samples,):
        raise ValueError(f"sample_weight has shape {weights.shape}; expected one weight per sample")
    return weights


def label_columns(labels: object, n_labels: int) -> np.ndarray | None:
    """The columns ``labels`` selects, in its order, as scikit-learn reads ``labels=`` for
    multilabel indicator input: column indices in [0, n labels); None for all columns."""
    if labels is None:
        return None
    columns = np.asarray(labels)
    if columns.ndim != 1 or columns.size == 0 or columns.dtype.kind not in "iu":
        raise ValueError(
            f"labels must be column indices (integers) for multilabel indicator input, got "
            f"{labels!r}"
        )
    if columns.max() >= n_labels:
        raise ValueError(
            "All labels must be in [0, n labels) for multilabel targets. "
            f"Got {columns.max()} > {n_labels - 1}"
        )
    if columns.min() < 0:
        raise ValueError(
            f"All labels must be in [0, n labels) for multilabel targets. Got {columns.min()} < 0"
        )
    return columns


@dataclass(frozen=True)
class Matrices:
    """One drop-in call's matrices as a long table: ``sample``, ``label`` (the column's position
    among those selected), ``score``, ``truth``, ``pred`` (decisions, for the set metrics) and
    ``weight`` (with sample weights)."""

    table: pl.DataFrame
    n_samples: int
    n_labels: int
    weights: np.ndarray | None
    y_true: np.ndarray

    @property
    def columns(self) -> dict[str, Any]:
        """The column keywords of :func:`~polars_rankmetrics.evaluate` for :attr:`table`."""
        pred = PRED if PRED in self.table.columns else None
        return {"weight": None if self.weights is None else WEIGHT, "pred": pred}

    @property
    def total_weight(self) -> float:
        """The samples' summed weight (their number without weights)."""
        return float(self.n_samples if self.weights is None else self.weights.sum())

    def whole(self, counts: np.ndarray) -> np.ndarray:
        """Weighted ``counts`` as scikit-learn gives them: whole numbers without sample
        weights."""
        return counts if self.weights is not None else np.rint(counts).astype(np.int64)

    def weighted(self, matrix: np.ndarray) -> np.ndarray:
        """``matrix`` (samples x labels) with each row times its sample's weight."""
        return matrix if self.weights is None else matrix * self.weights[:, None]

    def per_label_table(self) -> tuple[pl.DataFrame, str]:
        """:attr:`table` with a ``by`` column holding each cell's label, and its name: evaluated
        by it, every averaged key (``fbeta_macro``) is one label's value."""
        return self.table.with_columns(pl.col("label").alias(_PER_LABEL)), _PER_LABEL


def _long(
    y_true: np.ndarray, y_other: np.ndarray, weights: np.ndarray | None, *, pred: bool
) -> pl.DataFrame:
    table = from_dense(y_true.astype(np.int8), y_other.astype(float))
    if pred:
        table = table.with_columns(pl.col("score").alias(PRED))
    if weights is not None:
        table = table.with_columns(pl.Series(WEIGHT, np.repeat(weights, y_true.shape[1])))
    return table


def predictions(
    function: str, y_true: object, y_pred: object, sample_weight: object, labels: object = None
) -> Matrices:  # fmt: skip
    """The set metrics' input: two indicator matrices of one shape, and ``labels=`` applied."""
    truth = indicator(y_true, "y_true", function)
    pred = indicator(y_pred, "y_pred", function)
    if truth.shape != pred.shape:
        raise ValueError(f"y_true has shape {truth.shape} but y_pred has shape {pred.shape}")
    weights = sample_weights(sample_weight, truth.shape[0])
    columns = label_columns(labels, truth.shape[1])
    if columns is not None:
        truth, pred = truth[:, columns], pred[:, columns]
    table = _long(truth, pred, weights, pred=True)
    return Matrices(table, truth.shape[0], truth.shape[1], weights, truth.astype(np.int8))


def scores(function: str, y_true: object, y_score: object, sample_weight: object) -> Matrices:
    """The curve metrics' input: an indicator matrix and a score matrix of its shape."""
    truth = indicator(y_true, "y_true", function)
    score = dense_array(y_score, "y_score")
    if truth.shape != score.shape:
        raise ValueError(f"y_true has shape {truth.shape} but y_score has shape {score.shape}")
    if score.dtype.kind not in "iufb":
        raise ValueError(f"y_score holds {score.dtype} values, not numbers")
    weights = sample_weights(sample_weight, truth.shape[0])
    table = _long(truth, score, weights, pred=False)
    return Matrices(table, truth.shape[0], truth.shape[1], weights, truth.astype(np.int8))
