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

from collections.abc import Callable
from typing import TypeVar

import numpy as np
import polars as pl

from polars_rankmetrics.evaluate import evaluate
from polars_rankmetrics.inputs.convert import dense_array, from_dense

__all__ = [
    "coverage_error", "dcg_score", "label_ranking_average_precision_score", "label_ranking_loss",
    "ndcg_score",
]  # fmt: skip

F = TypeVar("F", bound=Callable[..., float])

# The part of the drop-ins' docstrings they share (numpydoc), added by _documented.
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


@_documented("2.5")
def coverage_error(y_true: object, y_score: object, *, sample_weight: object = None) -> float:
    """scikit-learn's ``coverage_error``: the mean largest rank of a positive label.

    A tie takes the largest rank of its block; a sample without positives counts 0.
    """
    return _value("coverage_error", y_true, y_score, sample_weight)


@_documented("0.41666666666666663")
def label_ranking_average_precision_score(
    y_true: object, y_score: object, *, sample_weight: object = None
) -> float:
    """scikit-learn's ``label_ranking_average_precision_score`` (lrap).

    Per sample, the mean over its positives of the share of positives among the labels ranked
    at or above it (ties ranked "max"); 1 for a sample whose labels are all positive or all
    negative.
    """
    return _value("lrap", y_true, y_score, sample_weight)


@_documented("0.75")
def label_ranking_loss(y_true: object, y_score: object, *, sample_weight: object = None) -> float:
    """scikit-learn's ``label_ranking_loss``: the share of wrongly ordered pairs, ties wrong.

    A sample whose labels are all positive or all negative counts 0.
    """
    return _value("ranking_loss", y_true, y_score, sample_weight)


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
) -> float:
    """scikit-learn's ``dcg_score``: graded truth, ties averaged unless ``ignore_ties``.

    Per sample, the sum over positions r <= k of gain / log_base(r + 1).
    """
    key = "dcg" if k is None else f"dcg@{k}"
    scores = _untied(y_score) if ignore_ties else y_score
    return _value(key, y_true, scores, sample_weight, log_base=log_base)


@_documented("0.31546487678572877", ", k=2", _K_DOC, graded=True)
def ndcg_score(
    y_true: object,
    y_score: object,
    *,
    k: int | None = None,
    sample_weight: object = None,
    ignore_ties: bool = False,
) -> float:
    """scikit-learn's ``ndcg_score``: dcg over the ideal dcg, 0 for a sample without gain.

    Needs at least two labels, as scikit-learn does.
    """
    key = "ndcg" if k is None else f"ndcg@{k}"
    scores = _untied(y_score) if ignore_ties else y_score
    return _value(key, y_true, scores, sample_weight)
