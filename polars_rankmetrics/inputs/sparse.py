"""Extreme classification's predictions, never densified: a sparse (or dense, or ragged) score
matrix and a truth matrix to the top-k table and the truth table that
:func:`~polars_rankmetrics.evaluate` reads (``truth_table=``).

Each sample's best k stored entries are found by partial selection (``numpy.partition`` on
blocks of rows of one length, never a full sort of a row), so the memory held grows with the
stored entries and the rows kept, never with samples x labels.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from polars_rankmetrics.inputs.stored import Stored, stored

# Stored entries gathered into one block at a time: the selection's working memory.
_BLOCK = 1 << 20


def from_sparse(
    y_score: object,
    y_true: object,
    *,
    k: int | None = None,
    sample_ids: Sequence[object] | None = None,
    label_ids: Sequence[object] | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The top-k table and the truth table of extreme classification's matrices, never
    densified.

    Only the stored entries of a sparse score matrix are candidates, as in pyxclib: a label
    without a stored score is not predicted (an explicitly stored 0 is a prediction).

    Parameters
    ----------
    y_score
        The scores, (samples x labels): a scipy sparse matrix or array of any format, a numpy
        array (every cell a candidate), pyxclib's dict ``{'indices': ..., 'scores': ...}`` (two
        (samples x m) arrays: row i's labels and their scores), or napkinXC's lists (a Python
        list holding, per sample, its labels in rank order, the label at position r scoring
        1 / r, or its (label, score) tuples).
    y_true
        The truth, of as many samples: a scipy sparse matrix or array, a numpy array or
        napkinXC's lists of labels. Its entries that are not 0 are the true labels, their
        values the gains (1 for a binary truth).
    k
        Keep each sample's ``k`` best stored entries (None: all of them): the highest scores,
        ties broken by the lower label id (column index), as PECOS breaks them.
    sample_ids, label_ids
        The ids of the rows and of the columns (labels), in order; default: the row and column
        indices. Each id once.

    Returns
    -------
    predictions : polars.DataFrame
        ``sample``, ``label``, ``score`` (Float64): one row per kept entry, by sample and then
        in rank order (descending score, then ascending label index).
    truth_table : polars.DataFrame
        ``sample``, ``label``: one row per true label, by sample; with a ``truth`` column
        (Float64, the gain) only where a true label's value is not 1.

    Notes
    -----
    :func:`~polars_rankmetrics.evaluate` counts the samples of either table: a sample with no
    stored score and no true label is in neither, and counts in no mean.

    Raises
    ------
    ValueError
        For a shape the module does not take, matrices of different numbers of samples (or of
        labels, where both have a number), a NaN, a label stored twice in one sample, a label
        that is not a column index (a non-negative integer, below the number of labels), a
        negative truth, a ``k`` that is not a positive integer, or ids of the wrong number or
        repeated; each names the argument and, for a value, a sample.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from polars_rankmetrics import from_sparse
    >>> y_score = sp.csr_array([[0.9, 0.0, 0.4], [0.0, 0.7, 0.0]])
    >>> y_true = sp.csr_array([[0, 0, 1], [0, 1, 0]])
    >>> predictions, truth = from_sparse(y_score, y_true, k=1)
    >>> predictions
    shape: (2, 3)
    ┌────────┬───────┬───────┐
    │ sample ┆ label ┆ score │
    │ ---    ┆ ---   ┆ ---   │
    │ i64    ┆ i64   ┆ f64   │
    ╞════════╪═══════╪═══════╡
    │ 0      ┆ 0     ┆ 0.9   │
    │ 1      ┆ 1     ┆ 0.7   │
    └────────┴───────┴───────┘
    >>> truth.rows()
    [(0, 2), (1, 1)]
    """
    if k is not None and (isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1):
        raise ValueError(f"k must be a positive integer or None, not {k!r}")
    scores, truth = stored(y_score, "y_score"), stored(y_true, "y_true", truth=True)
    n_labels = _check_shapes(scores, truth, label_ids)
    rows, labels, values = top_k(scores, None if k is None else int(k), keep_ties=False)
    true_rows, true_labels, gains = truth.nonzero()
    _check_labels(scores, labels, rows, n_labels)
    _check_labels(truth, true_labels, true_rows, n_labels)
    _check_gains(gains, true_rows, true_labels)
    samples = _ids(sample_ids, scores.n_rows, "sample_ids")
    names = _ids(label_ids, n_labels, "label_ids")
    predictions = pl.DataFrame({
        "sample": _named(rows, samples), "label": _named(labels, names),
        "score": pl.Series(values, dtype=pl.Float64),
    })  # fmt: skip
    table = {"sample": _named(true_rows, samples), "label": _named(true_labels, names)}
    if (gains != 1).any():
        table["truth"] = pl.Series(gains, dtype=pl.Float64)
    return predictions, pl.DataFrame(table)


def top_k(
    scores: Stored, k: int | None, *, keep_ties: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's ``k`` best stored entries (all where ``k`` is None): their rows, labels and
    scores, by row and then in rank order (descending score, ascending label). At the k-th
    best score, ties go to the lower labels; ``keep_ties``: every entry tied with it is kept
    (a row may keep more than ``k``)."""
    lengths = scores.lengths
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for length in np.unique(lengths[lengths > 0]).tolist():
        of_length = np.flatnonzero(lengths == length)
        step = max(1, _BLOCK // length)
        for first in range(0, of_length.size, step):
            rows = of_length[first : first + step]
            values, labels = scores.block(rows, length)
            local, labels, values = _best(values, labels, k, keep_ties=keep_ties)
            parts.append((rows[local], labels, values))
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0)
    rows, labels, values = (np.concatenate(column) for column in zip(*parts, strict=True))
    if len(parts) > 1:  # blocks of rows of different lengths interleave: by row, stably
        order = np.argsort(rows, kind="stable")
        rows, labels, values = rows[order], labels[order], values[order]
    return rows, labels, values


def _best(
    values: np.ndarray, labels: np.ndarray, k: int | None, *, keep_ties: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The best entries of a (rows x length) block, as :func:`top_k` keeps them: their rows
    (within the block), labels and values, in rank order."""
    n, length = values.shape
    if k is None or k >= length:
        return _ranked(values, labels)
    # The k best by partial selection; a row where more entries tie with its k-th best than
    # the selection holds (it took some of them arbitrarily) is chosen again by mask.
    chosen = np.argpartition(values, length - k, axis=1)[:, length - k :]
    best, best_labels = (np.take_along_axis(a, chosen, axis=1) for a in (values, labels))
    threshold = best.min(axis=1, keepdims=True)
    crowded = (values == threshold).sum(axis=1) > (best == threshold).sum(axis=1)
    if not crowded.any():
        return _ranked(best, best_labels)
    plain = np.flatnonzero(~crowded)
    local, ranked_labels, ranked = _ranked(best[plain], best_labels[plain])
    tied_rows = np.flatnonzero(crowded)
    kept = _kept(values[tied_rows], labels[tied_rows], k, keep_ties=keep_ties)
    within = np.broadcast_to(tied_rows[:, None], kept.shape)[kept]
    tied_values, tied_labels = values[tied_rows][kept], labels[tied_rows][kept]
    tied_order = np.lexsort((tied_labels, -tied_values, within))
    rows = np.concatenate([plain[local], within[tied_order]])
    order = np.argsort(rows, kind="stable")
    return (
        rows[order],
        np.concatenate([ranked_labels, tied_labels[tied_order]])[order],
        np.concatenate([ranked, tied_values[tied_order]])[order],
    )


def _ranked(values: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every entry of a (rows x m) block, each row in rank order: rows, labels, values."""
    order = np.lexsort((labels, -values), axis=1)
    rows = np.repeat(np.arange(values.shape[0]), values.shape[1])
    ranked_labels = np.take_along_axis(labels, order, axis=1).reshape(-1)
    return rows, ranked_labels, np.take_along_axis(values, order, axis=1).reshape(-1)


def _kept(values: np.ndarray, labels: np.ndarray, k: int, *, keep_ties: bool) -> np.ndarray:
    """The mask of each row's ``k`` best entries of a (rows x length) block, length > k."""
    length = values.shape[1]
    threshold = np.partition(values, length - k, axis=1)[:, length - k, None]
    above, tied = values > threshold, values == threshold
    kept: np.ndarray = above | tied
    if keep_ties:
        return kept
    need = k - above.sum(axis=1)
    # More entries tie at the threshold than places are left: the lowest labels take them, up
    # to the need-th lowest tied label (found by partition, one value of need at a time).
    for places in np.unique(need).tolist():
        rows = np.flatnonzero(need == places)
        tied_labels = np.where(tied[rows], labels[rows], np.iinfo(labels.dtype).max)
        last = np.partition(tied_labels, places - 1, axis=1)[:, places - 1, None]
        kept[rows] = above[rows] | (tied[rows] & (labels[rows] <= last))
    return kept


def _check_shapes(scores: Stored, truth: Stored, label_ids: Sequence[object] | None) -> int | None:
    """The number of labels (None where neither matrix nor ``label_ids`` gives one)."""
    if scores.n_rows != truth.n_rows:
        raise ValueError(
            f"y_score has {scores.n_rows} samples (rows) but y_true has {truth.n_rows}"
        )
    widths = {m.n_columns for m in (scores, truth) if m.n_columns is not None}
    if len(widths) > 1:
        raise ValueError(
            f"y_score has {scores.n_columns} labels (columns) but y_true has {truth.n_columns}"
        )
    if widths:
        return widths.pop()
    return None if label_ids is None else len(label_ids)


def _check_labels(
    matrix: Stored, labels: np.ndarray, rows: np.ndarray, n_labels: int | None
) -> None:
    if n_labels is None or matrix.n_columns is not None or labels.size == 0:
        return
    outside = np.flatnonzero(labels >= n_labels)
    if outside.size:
        at = outside[0]
        raise ValueError(
            f"{matrix.name} holds label {labels[at]} for sample {rows[at]}, past the "
            f"{n_labels} labels"
        )


def _check_gains(gains: np.ndarray, rows: np.ndarray, labels: np.ndarray) -> None:
    negative = np.flatnonzero(gains < 0)
    if negative.size:
        at = negative[0]
        raise ValueError(
            f"y_true holds {gains[at]} for sample {rows[at]}, label {labels[at]}: the truth is "
            "0/1 or a non-negative gain"
        )


def _ids(ids: Sequence[object] | None, count: int | None, name: str) -> pl.Series | None:
    if ids is None:
        return None
    series = pl.Series(name, np.asarray(ids) if isinstance(ids, np.ndarray) else list(ids))
    if count is not None and series.len() != count:
        raise ValueError(f"{name} holds {series.len()} ids for {count}")
    if series.n_unique() != series.len():
        repeated = series.filter(series.is_duplicated())[0]
        raise ValueError(f"{name} holds {repeated!r} twice: each id names one row or column")
    return series


def _named(positions: np.ndarray, ids: pl.Series | None) -> pl.Series:
    if ids is None:
        return pl.Series(positions, dtype=pl.Int64)
    return ids.gather(positions)
