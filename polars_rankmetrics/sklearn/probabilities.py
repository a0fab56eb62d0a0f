"""Drop-ins for scikit-learn's probability losses (``log_loss``, ``brier_score_loss``) on a
multilabel indicator matrix: scikit-learn's own numbers, which are not the per-label losses.

scikit-learn 1.9.1 reads each row of a (samples x labels) probability matrix as one multiclass
distribution, warns that the rows "do not sum to one", and computes, per sample:

- ``log_loss``: ``-sum over the positive cells of ln p``, p clipped to [eps, 1 - eps]
  (eps = 2^-52); the negative cells cost nothing;
- ``brier_score_loss``: ``sum over the labels of (y - p)^2``, halved with fewer than 3 labels
  (``scale_by_half="auto"``);

then the weighted mean over samples (``log_loss(normalize=False)``: the weighted sum). These are
the library's ``log_loss_micro`` over the positive cells alone, times their weight over the
samples', and ``brier_micro`` times the number of labels. The per-label binary losses are
:func:`~polars_rankmetrics.evaluate`'s ``log_loss_macro`` and ``brier_macro``
(``docs/metrics.md``, "Probabilities").
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import polars as pl

from polars_rankmetrics.evaluate import evaluate
from polars_rankmetrics.inputs.convert import dense_array
from polars_rankmetrics.sklearn.inputs import WEIGHT, indicator, sample_weights, scores
from polars_rankmetrics.sklearn.undefined import caller_level

_NOT_ONE = "The y_prob values do not sum to one. Make sure to pass probabilities."


def _probabilities(function: str, y_true: object, y_proba: object, labels: object) -> np.ndarray:
    """``y_proba`` checked as scikit-learn checks it for multilabel indicator ``y_true``: values
    in [0, 1] (its messages), ``labels`` None (scikit-learn raises for multilabel input), and its
    warning where a row does not sum to one."""
    truth = indicator(y_true, "y_true", function)
    proba = dense_array(y_proba, "y_proba")
    if proba.dtype.kind not in "iufb":
        raise ValueError(f"y_proba holds {proba.dtype} values, not numbers")
    proba = proba.astype(float)
    if truth.shape != proba.shape:
        raise ValueError(f"y_true has shape {truth.shape} but y_proba has shape {proba.shape}")
    if np.isnan(proba).any():
        raise ValueError("Input y_proba contains NaN.")
    if proba.max() > 1:
        raise ValueError(f"y_prob contains values greater than 1: {proba.max()}")
    if proba.min() < 0:
        raise ValueError(f"y_prob contains values lower than 0: {proba.min()}")
    if labels is not None:
        raise ValueError(
            f"{function} takes no labels= with multilabel indicator input (scikit-learn raises "
            "'The object was not fitted with multilabel input.')"
        )
    eps = np.finfo(np.float64).eps
    if not np.isclose(proba.sum(axis=1), 1.0, rtol=math.sqrt(eps)).all():
        warnings.warn(_NOT_ONE, UserWarning, stacklevel=caller_level())
    return proba


def _total(weights: np.ndarray | None, n_samples: int) -> float:
    """The samples' summed weight; numpy's error where it is 0, as scikit-learn's mean gives."""
    total = float(n_samples if weights is None else weights.sum())
    if total == 0:
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    return total


def log_loss(
    y_true: object, y_proba: object = None, *, normalize: bool = True,
    sample_weight: object = None, labels: object = None, y_pred: object = "deprecated",
    engine: str = "polars",
) -> float:  # fmt: skip
    """scikit-learn's ``log_loss`` for multilabel indicator input: per sample ``-sum over its
    positive cells of ln p`` (p clipped to [eps, 1 - eps], eps = 2^-52), averaged over samples.

    This is not the per-label binary log loss (``log_loss_macro`` of
    :func:`~polars_rankmetrics.evaluate`): the negative cells cost nothing here, so scoring every
    cell 1.0 costs 0. As scikit-learn, it warns that the rows do not sum to one.

    Parameters
    ----------
    y_true
        The truth, (samples x labels), 0/1, as a numpy array, nested lists or a scipy sparse
        matrix.
    y_proba
        The probabilities, of the same shape, in [0, 1].
    normalize
        The weighted mean over samples (True) or the weighted sum.
    sample_weight
        One weight per sample (None: every sample weighs 1).
    labels
        None: scikit-learn takes no labels for multilabel input.
    y_pred
        scikit-learn's deprecated name of ``y_proba`` (with its ``FutureWarning``).
    engine
        The engine that computes it: ``"polars"``, ``"duckdb"`` or ``"spark"``.

    Returns
    -------
    float
        Equal to ``sklearn.metrics.log_loss`` on the same input.

    Raises
    ------
    ValueError
        For shapes that differ, values outside [0, 1] (scikit-learn's messages), a NaN, a truth
        that is not a multilabel indicator, or ``labels``.

    Examples
    --------
    >>> import warnings
    >>> from polars_rankmetrics.sklearn import log_loss
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")  # the rows do not sum to one
    ...     round(log_loss([[1, 0, 1], [0, 1, 0]], [[0.9, 0.2, 0.6], [0.3, 0.8, 0.1]]), 6)
    0.419665
    """
    if not (isinstance(y_pred, str) and y_pred == "deprecated"):
        if y_proba is not None:
            raise ValueError(
                "Cannot use both `y_pred` and `y_proba`. `y_pred` is deprecated, use `y_proba` "
                "instead."
            )
        warnings.warn(
            "`y_pred` was renamed to `y_proba` in version 1.9 and will be removed in 1.11. Use "
            "`y_proba` instead.",
            FutureWarning,
            stacklevel=caller_level(),
        )
        y_proba = y_pred
    proba = _probabilities("log_loss", y_true, y_proba, labels)
    truth = indicator(y_true, "y_true", "log_loss").astype(bool)
    weights = sample_weights(sample_weight, truth.shape[0])
    total = _total(weights, truth.shape[0]) if normalize else 1.0
    rows, _ = np.nonzero(truth)
    cell_weights = np.ones(rows.size) if weights is None else weights[rows]
    positive_weight = float(cell_weights.sum())
    if positive_weight == 0:
        return 0.0
    # Each positive cell its own sample of one label: the mean of their -ln p.
    cells = pl.DataFrame({
        "sample": np.arange(rows.size), "label": np.zeros(rows.size, dtype=np.int64),
        "score": proba[truth], "truth": np.ones(rows.size, dtype=np.int8), WEIGHT: cell_weights,
    })  # fmt: skip
    mean = evaluate(cells, ["log_loss_micro"], weight=WEIGHT, engine=engine).item()
    return float(mean * positive_weight / total)


def brier_score_loss(
    y_true: object, y_proba: object, *, sample_weight: object = None, pos_label: object = None,
    labels: object = None, scale_by_half: bool | str = "auto", engine: str = "polars",
) -> float:  # fmt: skip
    """scikit-learn's ``brier_score_loss`` for multilabel indicator input: per sample the sum
    over its labels of ``(y - p)^2``, averaged over samples, halved with fewer than 3 labels
    (``scale_by_half="auto"``).

    This is the number of labels times ``brier_micro`` of :func:`~polars_rankmetrics.evaluate`
    (halved or not), not the per-label Brier score ``brier_macro``. As scikit-learn, it warns
    that the rows do not sum to one.

    Parameters
    ----------
    y_true
        The truth, (samples x labels), 0/1, as a numpy array, nested lists or a scipy sparse
        matrix.
    y_proba
        The probabilities, of the same shape, in [0, 1].
    sample_weight
        One weight per sample (None: every sample weighs 1).
    pos_label
        Ignored, as scikit-learn ignores it for a matrix of probabilities.
    labels
        None: scikit-learn takes no labels for multilabel input.
    scale_by_half
        Halve the sum: ``"auto"`` with fewer than 3 labels, or True or False.
    engine
        The engine that computes it: ``"polars"``, ``"duckdb"`` or ``"spark"``.

    Returns
    -------
    float
        Equal to ``sklearn.metrics.brier_score_loss`` on the same input.

    Raises
    ------
    ValueError
        For shapes that differ, values outside [0, 1] (scikit-learn's messages), a NaN, a truth
        that is not a multilabel indicator, or ``labels``.

    Examples
    --------
    >>> import warnings
    >>> from polars_rankmetrics.sklearn import brier_score_loss
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")  # the rows do not sum to one
    ...     round(brier_score_loss([[1, 0, 1], [0, 1, 0]], [[0.9, 0.2, 0.6], [0.3, 0.8, 0.1]]), 6)
    0.175
    """
    if not (isinstance(scale_by_half, bool) or scale_by_half == "auto"):
        raise ValueError(f"scale_by_half must be a bool or 'auto', not {scale_by_half!r}")
    proba = _probabilities("brier_score_loss", y_true, y_proba, labels)
    m = scores("brier_score_loss", y_true, proba, sample_weight)
    _total(m.weights, m.n_samples)
    columns: dict[str, Any] = {"weight": m.columns["weight"]}
    mean = evaluate(m.table, ["brier_micro"], engine=engine, **columns).item()
    half = m.n_labels < 3 if scale_by_half == "auto" else scale_by_half
    return float(mean * m.n_labels * (0.5 if half else 1.0))
