"""pyxclib's arguments as the tables :func:`~polars_rankmetrics.evaluate` reads: the predictions
``X`` and the truth ``true_labels`` as a top-k table and a truth table
(:func:`~polars_rankmetrics.inputs.sparse.top_k`), ``inv_psp`` as a propensity table.

Each sample's entries are completed to K rows by padding labels, as pyxclib pads its top K
(:func:`_padded`): pyxclib evaluates every row of ``true_labels``, also one with no stored score
and no true label, and ``ndcg@K`` (the rank table's nDCG, tie-averaged) then never reaches a
sample's unscored true labels, which is pyxclib's nDCG: only stored entries are retrieved.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from polars_rankmetrics.inputs.sparse import top_k
from polars_rankmetrics.inputs.stored import Stored, stored


@dataclass(frozen=True)
class Truth:
    """``true_labels`` (0/1, samples x labels) as its true pairs."""

    n_samples: int
    n_labels: int
    samples: np.ndarray
    labels: np.ndarray

    @classmethod
    def of(cls, true_labels: object, name: str = "true_labels") -> Truth:
        """``true_labels`` (a scipy sparse matrix or a numpy array) checked: 0 and 1 only."""
        if isinstance(true_labels, list | tuple):
            raise ValueError(f"{name} must be a scipy sparse matrix or a numpy array, as pyxclib's")
        matrix = stored(true_labels, name, truth=True)
        assert matrix.n_columns is not None
        samples, labels, values = matrix.nonzero()
        other = np.flatnonzero(values != 1)
        if other.size:
            at = other[0]
            raise ValueError(
                f"{name} holds {values[at]} for sample {samples[at]}, label {labels[at]}: "
                "pyxclib's truth is 0 and 1"
            )
        return cls(matrix.n_rows, matrix.n_columns, samples, labels)

    def valid(self) -> Truth:
        """The samples that have a true label (pyxclib's ``remove_invalid``), renumbered."""
        kept = np.unique(self.samples)
        renumbered = np.searchsorted(kept, self.samples)
        return Truth(kept.size, self.n_labels, renumbered, self.labels)

    def table(self) -> pl.DataFrame:
        return pl.DataFrame(
            {"sample": self.samples, "label": self.labels}, schema=_SCHEMA, orient="col"
        )


_SCHEMA = {"sample": pl.Int64, "label": pl.Int64}


def checked_scores(X: object, truth: Truth) -> Stored:
    """pyxclib's ``X`` (:func:`_scores`) as its stored entries, checked against the truth: as
    many samples, as many labels where ``X`` has a number of them, and no label past the
    truth's."""
    scores = _scores(X)
    if scores.n_rows != truth.n_samples:
        raise ValueError(
            f"X has {scores.n_rows} samples (rows) but true_labels has {truth.n_samples}"
        )
    if scores.n_columns is not None and scores.n_columns != truth.n_labels:
        raise ValueError(
            f"X has {scores.n_columns} labels (columns) but true_labels has {truth.n_labels}"
        )
    if scores.n_columns is None and scores.indptr is not None and scores.indices is not None:
        past = np.flatnonzero(scores.indices >= truth.n_labels)
        if past.size:
            at = past[0]
            row = np.searchsorted(scores.indptr, at, side="right") - 1
            raise ValueError(
                f"X holds label {scores.indices[at]} for sample {row}, past the "
                f"{truth.n_labels} labels"
            )
    return scores


def tables(
    scores: Stored, truth: Truth, k: int, *, remove_invalid: bool = False
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The top-k table of the scores (:func:`checked_scores`) and the truth table: the best
    ``k`` stored entries per sample, every entry tied with the k-th best kept too (so that the
    retrieval keys average over the whole tied block); ``remove_invalid``: only the samples
    with a true label."""
    rows, labels, values = top_k(scores, k, keep_ties=True)
    if remove_invalid:
        valid = np.zeros(truth.n_samples, dtype=bool)
        valid[truth.samples] = True
        chosen = valid[rows]
        rows = np.cumsum(valid)[rows[chosen]] - 1
        labels, values, truth = labels[chosen], values[chosen], truth.valid()
    rows, labels, values = _padded(rows, labels, _ranks(rows, values), truth, k)
    table = {"sample": rows, "label": labels, "score": values}
    predictions = pl.DataFrame(table, schema=_SCHEMA | {"score": pl.Float64}, orient="col")
    return predictions, truth.table()


def _ranks(rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Scores in the same order within each sample, ties kept, finite: minus the number of
    distinct (sample, score) pairs up to each entry (the entries come by sample, in rank
    order). The metrics read only the order; a finite score ranks above the padding."""
    if rows.size == 0:
        return np.zeros(0)
    changes = np.ones(rows.size, dtype=np.int64)
    changes[1:] = (rows[1:] != rows[:-1]) | (values[1:] != values[:-1])
    return -np.cumsum(changes).astype(np.float64)


def _padded(
    rows: np.ndarray, labels: np.ndarray, values: np.ndarray, truth: Truth, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each sample with fewer than ``k`` entries completed to ``k`` by the padding labels
    ``n_labels``, ``n_labels + 1``, ... (never true) scored minus infinity, as pyxclib pads
    its top k: nothing past a sample's stored entries is retrieved, and ``ndcg@K`` never
    reaches the unscored true labels. Every sample then has a row (pyxclib counts them all)."""
    counts = np.bincount(rows, minlength=truth.n_samples)
    short = np.flatnonzero(counts < k)
    if short.size == 0:
        return rows, labels, values
    missing = k - counts[short]
    pad_rows = np.repeat(short, missing)
    first = np.repeat(np.cumsum(missing) - missing, missing)
    pad_labels = truth.n_labels + np.arange(pad_rows.size) - first
    order = np.argsort(np.concatenate([rows, pad_rows]), kind="stable")  # rows by sample
    return (
        np.concatenate([rows, pad_rows])[order],
        np.concatenate([labels, pad_labels])[order],
        np.concatenate([values, np.full(pad_rows.size, -np.inf)])[order],
    )


def _scores(X: object) -> Stored:
    """pyxclib's ``X``: a scipy sparse matrix, a float array of scores, an integer array of
    each row's labels in rank order, or the dict of indices and scores."""
    if isinstance(X, np.ndarray) and X.dtype.kind in "iu" and X.ndim == 2:
        rank_scores = 1.0 / np.arange(1, X.shape[1] + 1)
        return stored({"indices": X, "scores": np.broadcast_to(rank_scores, X.shape)}, "X")
    if isinstance(X, list | tuple):
        raise ValueError("X must be a scipy sparse matrix, a numpy array or a dict, as pyxclib's")
    return stored(X, "X")


def inverse_propensities(inv_psp: object, truth: Truth) -> np.ndarray:
    """``inv_psp`` checked: one inverse propensity per label, each true label's finite and at
    least 1."""
    inverse = np.ravel(np.asarray(inv_psp, dtype=np.float64))
    if inverse.size != truth.n_labels:
        raise ValueError(
            f"inv_psp holds {inverse.size} values for the {truth.n_labels} labels of true_labels"
        )
    of_true = inverse[truth.labels]
    wrong = np.flatnonzero(~(of_true >= 1) | ~np.isfinite(of_true))
    if wrong.size:
        label = truth.labels[wrong].min()
        raise ValueError(
            f"inv_psp holds {inverse[label]} for label {label}: an inverse propensity is a "
            "finite number of at least 1 (a propensity in (0, 1])"
        )
    return inverse


def propensities(inv_psp: object, truth: Truth) -> pl.DataFrame:
    """``inv_psp`` (:func:`inverse_propensities`) as the propensity table of the true labels."""
    inverse = inverse_propensities(inv_psp, truth)
    labels = np.unique(truth.labels)
    return pl.DataFrame({"label": labels.astype(np.int64), "propensity": 1.0 / inverse[labels]})
