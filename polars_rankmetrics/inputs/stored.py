"""The stored entries of a score or truth matrix, row by row, from every shape extreme
classification writes them in, checked once and never densified.

========================================  ===================================================
shape                                     its stored entries
========================================  ===================================================
scipy sparse matrix or array (any         the stored entries (an explicitly stored 0 too);
format)                                   a COO's repeated entries are summed, as scipy
                                          defines them
numpy array (samples x labels)            every cell
pyxclib's dict ``{'indices', 'scores'}``  each row's ``indices[i]`` with ``scores[i]``
                                          (two arrays of one shape)
napkinXC's lists (a Python list or        each sample's labels in rank order (the label at
tuple of lists)                           position r scores 1 / r), or its (label, score)
                                          pairs (tuples)
========================================  ===================================================

A label is a column index: a non-negative integer, below the matrix's number of columns where
it has one. Refused with a ``ValueError`` naming the argument and a sample: a label repeated
within a sample, a NaN, a label that is not such an integer, values that are not numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Stored:
    """A matrix's stored entries as CSR arrays (``indptr``, ``indices``, ``data``), or a dense
    array whose every cell is stored (``dense``); ``n_columns`` is None for lists and dicts,
    which have no number of columns."""

    name: str
    n_rows: int
    n_columns: int | None
    indptr: np.ndarray | None = None
    indices: np.ndarray | None = None
    data: np.ndarray | None = None
    dense: np.ndarray | None = None

    @property
    def lengths(self) -> np.ndarray:
        """The number of stored entries of each row."""
        if self.dense is not None:
            return np.full(self.n_rows, self.dense.shape[1], dtype=np.int64)
        assert self.indptr is not None
        return np.diff(self.indptr)

    def block(self, rows: np.ndarray, length: int) -> tuple[np.ndarray, np.ndarray]:
        """The values and labels of ``rows``, each of ``length`` stored entries, as two
        (rows x length) arrays."""
        if self.dense is not None:
            values = self.dense[rows]
            return values, np.broadcast_to(np.arange(length), values.shape)
        assert self.indptr is not None and self.indices is not None and self.data is not None
        if rows[-1] - rows[0] + 1 == rows.size:  # consecutive rows: a view, nothing copied
            start = self.indptr[rows[0]]
            end = start + rows.size * length
            shape = (rows.size, length)
            return self.data[start:end].reshape(shape), self.indices[start:end].reshape(shape)
        at = self.indptr[rows][:, None] + np.arange(length)
        return self.data[at], self.indices[at]

    def entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every stored entry's row, label and value, row by row."""
        if self.dense is not None:
            n, m = self.dense.shape
            return np.repeat(np.arange(n), m), np.tile(np.arange(m), n), self.dense.reshape(-1)
        assert self.indices is not None and self.data is not None
        return np.repeat(np.arange(self.n_rows), self.lengths), self.indices, self.data

    def nonzero(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The row, label and value of every stored entry that is not 0, row by row."""
        if self.dense is not None:
            rows, labels = np.nonzero(self.dense)
            return rows, labels, self.dense[rows, labels]
        rows, labels, values = self.entries()
        kept = values != 0
        return rows[kept], labels[kept], values[kept]


def stored(matrix: object, name: str, *, truth: bool = False) -> Stored:
    """``matrix`` (any shape of the module's table; for the truth, no dict) as its stored
    entries, checked; ``ValueError`` naming ``name`` otherwise."""
    import scipy.sparse as sp  # type: ignore[import-untyped]

    if sp.issparse(matrix):
        return _from_scipy(matrix, name)
    if isinstance(matrix, Mapping) and not truth:
        return _from_dict(matrix, name)
    if isinstance(matrix, list | tuple):
        return _from_lists(matrix, name, truth=truth)
    if isinstance(matrix, np.ndarray):
        dense = _numbers(matrix, name)
        if dense.ndim != 2:
            raise ValueError(f"{name} must be a 2-d matrix (samples x labels), got {dense.shape}")
        _refuse_nan(Stored(name, dense.shape[0], dense.shape[1], dense=dense))
        return Stored(name, dense.shape[0], dense.shape[1], dense=dense)
    shapes = "a scipy sparse matrix, a numpy array" + ("" if truth else ", pyxclib's dict")
    raise ValueError(
        f"{name} must be {shapes} or napkinXC's lists of labels, not {type(matrix).__name__}"
    )


def _numbers(values: np.ndarray, name: str) -> np.ndarray:
    """``values`` as numbers to compare: floats as they are, integers and booleans as float64."""
    if values.dtype.kind == "f":
        return values
    if values.dtype.kind not in "iub":
        raise ValueError(f"{name} holds {values.dtype} values, not numbers")
    return values.astype(np.float64)


def _from_scipy(matrix: Any, name: str) -> Stored:
    if len(matrix.shape) != 2:
        raise ValueError(f"{name} must be a 2-d matrix (samples x labels), got {matrix.shape}")
    csr = matrix.tocsr()
    rows = Stored(
        name, csr.shape[0], csr.shape[1], indptr=csr.indptr.astype(np.int64, copy=False),
        indices=csr.indices, data=_numbers(csr.data, name),
    )  # fmt: skip
    _refuse_nan(rows)
    if not csr.has_canonical_format:
        _refuse_repeats(rows)
    return rows


def _from_dict(matrix: Mapping[str, Any], name: str) -> Stored:
    if set(matrix) != {"indices", "scores"}:
        raise ValueError(
            f"{name} as a dict must hold 'indices' and 'scores' (pyxclib's), not {sorted(matrix)}"
        )
    indices, scores = np.asarray(matrix["indices"]), np.asarray(matrix["scores"])
    if indices.ndim != 2 or indices.shape != scores.shape:
        raise ValueError(
            f"{name}['indices'] and {name}['scores'] must be two (samples x k) arrays of one "
            f"shape, got {indices.shape} and {scores.shape}"
        )
    n, m = indices.shape
    rows = Stored(
        name, n, None, indptr=np.arange(0, n * m + 1, max(m, 1), dtype=np.int64)[: n + 1],
        indices=_labels(indices.reshape(-1), name, np.arange(n * m) // max(m, 1)),
        data=_numbers(scores.reshape(-1), name),
    )  # fmt: skip
    _refuse_nan(rows)
    _refuse_repeats(rows)
    return rows


def _from_lists(matrix: Sequence[Any], name: str, *, truth: bool) -> Stored:
    """napkinXC's lists: a list of labels per sample (in rank order), or, for the scores, of
    (label, score) tuples."""
    lengths = np.fromiter((len(row) for row in matrix), dtype=np.int64, count=len(matrix))
    flat = [entry for row in matrix for entry in row]
    owner = np.repeat(np.arange(len(matrix)), lengths)
    pairs = not truth and bool(flat) and isinstance(flat[0], tuple)
    for at, entry in enumerate(flat):
        if isinstance(entry, tuple) != pairs or (pairs and len(entry) != 2):
            kind = "(label, score) tuples" if pairs else "labels"
            raise ValueError(
                f"{name} holds {entry!r} for sample {owner[at]}: napkinXC's lists hold "
                f"either labels or (label, score) tuples, here {kind}"
            )
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    if pairs:
        labels = [label for label, _ in flat]
        data = _numbers(np.asarray([score for _, score in flat]), name)
    elif truth:
        labels, data = flat, np.ones(len(flat))
    else:
        labels = flat
        # The list is the ranking: the label at position r (from 1) scores 1 / r.
        data = 1.0 / (np.arange(len(flat)) - np.repeat(indptr[:-1], lengths) + 1)
    rows = Stored(
        name, len(matrix), None, indptr=indptr, indices=_labels(labels, name, owner), data=data
    )
    _refuse_nan(rows)
    _refuse_repeats(rows)
    return rows


def _labels(given: Sequence[Any] | np.ndarray, name: str, owner: np.ndarray) -> np.ndarray:
    """``given`` as non-negative integers (``owner``: each one's sample, for the message)."""
    labels = np.asarray(given)
    if labels.size == 0:
        return labels.astype(np.int64)
    if labels.dtype.kind not in "iu":
        integral = (int, np.integer)
        at = next(
            i for i, v in enumerate(given) if not isinstance(v, integral) or isinstance(v, bool)
        )
        raise ValueError(
            f"{name} holds label {given[at]!r} for sample {owner[at]}: a label is a column "
            "index, a non-negative integer"
        )
    negative = np.flatnonzero(labels < 0)
    if negative.size:
        at = negative[0]
        raise ValueError(
            f"{name} holds label {labels[at]} for sample {owner[at]}: a label is a column "
            "index, a non-negative integer"
        )
    return labels.astype(np.int64, copy=False)


def _refuse_nan(rows: Stored) -> None:
    values = rows.dense if rows.dense is not None else rows.data
    assert values is not None
    if values.dtype.kind == "f" and np.isnan(values).any():
        at = int(np.flatnonzero(np.isnan(values.reshape(-1)))[0])
        sample, label = _where(rows, at)
        raise ValueError(f"{rows.name} holds NaN for sample {sample} (label {label})")


def _where(rows: Stored, at: int) -> tuple[int, int]:
    """The sample and label of stored entry ``at``."""
    if rows.dense is not None:
        width = rows.dense.shape[1]
        return at // width, at % width
    assert rows.indptr is not None and rows.indices is not None
    return int(np.searchsorted(rows.indptr, at, side="right") - 1), int(rows.indices[at])


def _refuse_repeats(rows: Stored) -> None:
    """No label twice in one sample: each row's labels in order (sorted in a copy where they
    are not), neighbours compared."""
    import scipy.sparse as sp

    assert rows.indptr is not None and rows.indices is not None
    if rows.indices.size == 0:
        return
    width = int(rows.indices.max()) + 1
    marks = np.zeros(rows.indices.size, dtype=np.int8)
    csr = sp.csr_array((marks, rows.indices, rows.indptr), shape=(rows.n_rows, width))
    if csr.has_canonical_format:
        return
    if not csr.has_sorted_indices:
        csr = csr.copy()
        csr.sort_indices()
    same = csr.indices[1:] == csr.indices[:-1]
    starts = csr.indptr[1:-1]
    same[starts[(starts > 0) & (starts < same.size + 1)] - 1] = False  # not across rows
    repeated = np.flatnonzero(same)
    if repeated.size:
        at = int(repeated[0]) + 1
        sample = int(np.searchsorted(csr.indptr, at, side="right") - 1)
        raise ValueError(
            f"{rows.name} holds label {int(csr.indices[at])} twice for sample {sample}: each "
            "label is stored once per sample"
        )
