"""The top-k keys of a score matrix held in memory, in one compiled pass (numba) over the rows of
its stored scores, without a table: each row's best K entries are selected, ranked and matched
to its true labels in place (the pass :mod:`polars_rankmetrics.xclib` computes pyxclib's
metrics with).

The values are those of :func:`~polars_rankmetrics.evaluate` on the tables of
:func:`~polars_rankmetrics.xclib.inputs.tables` (the keys of
:mod:`polars_rankmetrics.xclib.metrics`), under the same rules: only stored entries are
retrieved; a tied block of scores spanning positions a..b takes the expected value over its
orders (a position r of the block holds the block's mean gain, and is within the top K when
r <= K); the propensity-scored values are ratios of dataset sums over each sample's best
ranking of its true labels by inverse propensity. Per sample and K it sums:

=====  =============================================================================
row    summed over the samples
=====  =============================================================================
0      hits@K / K (precision)
1      hits@K / |y| (recall; a sample without a true label adds 0)
2      dcg@K / ideal dcg of min(K, |y|) positions (ndcg)
3, 4   psprecision's numerator and denominator: the propensity-scored hits@K, and the
       sum of the K largest inverse propensities of the true labels
5, 6   psndcg's: the propensity-scored dcg@K and the dcg@K of the best ranking, each
       over the ideal dcg of min(K, |y|) gains of 1
7, 8   psrecall's: rows 3 and 4 over |y|
=====  =============================================================================

The discounts are 1 / log2(r + 1): every value is a ratio of dcgs, which the base leaves alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit

if TYPE_CHECKING:
    from polars_rankmetrics.inputs.stored import Stored

# The rows of the sums (the module's table).
_ROWS = {
    "precision": (0, None), "recall": (1, None), "ndcg": (2, None),
    "psprecision": (3, 4), "psndcg": (5, 6), "psrecall": (7, 8),
}  # fmt: skip
_N_SUMS = 9


def values(
    metrics: list[str], scores: Stored, truth: tuple[np.ndarray, np.ndarray, int],
    inv_psp: np.ndarray | None, k: int, n_samples: int,
) -> list[np.ndarray]:  # fmt: skip
    """The values of ``metrics`` (pyxclib's names: the module's table) at 1..k, from the scores'
    rows (every label below the truth's labels) and the truth's (as many): ``truth`` is its
    true pairs' rows and labels, row by row, and its number of labels; ``inv_psp``: None
    without a propensity-scored metric; the means over ``n_samples`` (every row, or the rows
    with a true label)."""
    sums = _summed(scores, truth, inv_psp, k)
    found = []
    for name in metrics:
        numerator, denominator = _ROWS[name]
        if denominator is None:
            found.append(sums[numerator] / n_samples)
        else:
            with np.errstate(invalid="ignore", divide="ignore"):
                found.append(sums[numerator] / sums[denominator])
    return found


def _summed(
    scores: Stored, truth: tuple[np.ndarray, np.ndarray, int], inv_psp: np.ndarray | None, k: int
) -> np.ndarray:
    """The module's table of sums, (9 x k); rows 3 to 8 are 0 without ``inv_psp``."""
    n_rows = scores.n_rows
    if scores.dense is not None:
        width = scores.dense.shape[1]
        data = np.ascontiguousarray(scores.dense).reshape(-1)
        indptr = np.arange(n_rows + 1, dtype=np.int64) * width
        indices = np.zeros(0, dtype=np.int64)
    else:
        assert scores.indptr is not None and scores.indices is not None
        assert scores.data is not None
        width, data, indptr, indices = 0, scores.data, scores.indptr, scores.indices
    if data.dtype not in (np.float32, np.float64):
        data = data.astype(np.float64)
    # The truth's labels by row (its pairs come row by row), as CSR.
    true_samples, true_labels, n_labels = truth
    true_ptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(true_samples, minlength=n_rows), out=true_ptr[1:])
    scored = inv_psp is not None
    gains = np.zeros(0) if inv_psp is None else np.asarray(inv_psp, dtype=np.float64)
    sums = np.zeros((_N_SUMS, k))
    _accumulate(
        indptr, indices, data, width, true_ptr, true_labels, gains, scored, k, n_labels,
        sums,
    )  # fmt: skip
    return sums


@njit(inline="always")
def _insert(top: np.ndarray, filled: int, value: float) -> int:
    """Put ``value`` into ``top`` (its ``filled`` first places in descending order, at most
    ``len(top)`` kept), after the values equal to it; the places filled."""
    size = top.size
    at = filled
    if filled == size:
        if value <= top[size - 1]:
            return filled
        at = size - 1
    while at > 0 and top[at - 1] < value:
        top[at] = top[at - 1]
        at -= 1
    top[at] = value
    return min(filled + 1, size)


@njit(nogil=True, cache=True)
def _accumulate(
    indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, width: int,
    true_ptr: np.ndarray, true_labels: np.ndarray, gains: np.ndarray, scored: bool, k: int,
    n_labels: int, sums: np.ndarray,
) -> None:  # fmt: skip
    """Add each row's values to ``sums`` (the module's table, 9 x k). A row's labels are
    ``indices[indptr[i]:indptr[i + 1]]``, or with ``width`` > 0 (a dense matrix) the
    positions within the row; ``gains`` are the inverse propensities, read where ``scored``.

    Per row: the K-th best stored score ``t`` by insertion into K places; the entries scoring
    at least ``t`` (the K best and every entry tied with the K-th) gathered and sorted by
    descending score (insertion); its true labels marked in a table of the labels (with the
    row's number, so that the table is never cleared); then its tied blocks walked in rank
    order while they start within the first K positions."""
    n_rows = indptr.size - 1
    mark = np.zeros(n_labels, dtype=np.int64)
    longest = 0
    for i in range(n_rows):
        longest = max(longest, indptr[i + 1] - indptr[i])
    kept_values = np.empty(longest, dtype=data.dtype)
    kept_labels = np.empty(longest, dtype=np.int64)
    top = np.empty(k, dtype=data.dtype)
    best = np.empty(k)
    # discount[r] = sum of 1 / log2(j + 1) over positions j = 1..r.
    discount = np.zeros(k + 1)
    for r in range(1, k + 1):
        discount[r] = discount[r - 1] + 1.0 / np.log2(r + 1.0)
    hits, ps_hits = np.zeros(k), np.zeros(k)
    dcg, ps_dcg = np.zeros(k), np.zeros(k)
    for i in range(n_rows):
        first_true, end_true = true_ptr[i], true_ptr[i + 1]
        n_true = end_true - first_true
        if n_true == 0:
            continue  # every value is 0, every weight 0
        filled_best = 0
        for j in range(first_true, end_true):
            mark[true_labels[j]] = i + 1
            if scored:
                filled_best = _insert(best, filled_best, gains[true_labels[j]])
        start, end = indptr[i], indptr[i + 1]
        filled = 0
        for j in range(start, end):
            filled = _insert(top, filled, data[j])
        m = 0
        if filled > 0:
            threshold = top[filled - 1]
            for j in range(start, end):
                value = data[j]
                if value >= threshold:
                    at = m
                    while at > 0 and kept_values[at - 1] < value:
                        kept_values[at] = kept_values[at - 1]
                        kept_labels[at] = kept_labels[at - 1]
                        at -= 1
                    kept_values[at] = value
                    kept_labels[at] = indices[j] if width == 0 else j - start
                    m += 1
        hits[:] = 0.0
        ps_hits[:] = 0.0
        dcg[:] = 0.0
        ps_dcg[:] = 0.0
        a = 0  # the block's first position, from 0
        while a < m and a < k:
            b = a
            positives, gain = 0.0, 0.0
            while b < m and kept_values[b] == kept_values[a]:
                label = kept_labels[b]
                if mark[label] == i + 1:
                    positives += 1.0
                    if scored:
                        gain += gains[label]
                b += 1
            size = b - a  # positions a + 1..b
            for cut in range(a + 1, k + 1):
                last = min(b, cut)
                share = (last - a) / size
                span = (discount[last] - discount[a]) / size
                hits[cut - 1] += positives * share
                dcg[cut - 1] += positives * span
                ps_hits[cut - 1] += gain * share
                ps_dcg[cut - 1] += gain * span
            a = b
        best_hits, best_dcg = 0.0, 0.0
        for cut in range(1, k + 1):
            ideal = discount[min(cut, n_true)]
            sums[0, cut - 1] += hits[cut - 1] / cut
            sums[1, cut - 1] += hits[cut - 1] / n_true
            sums[2, cut - 1] += dcg[cut - 1] / ideal
            if scored:
                if cut <= filled_best:
                    best_hits += best[cut - 1]
                    best_dcg += best[cut - 1] / np.log2(cut + 1.0)
                sums[3, cut - 1] += ps_hits[cut - 1]
                sums[4, cut - 1] += best_hits
                sums[5, cut - 1] += ps_dcg[cut - 1] / ideal
                sums[6, cut - 1] += best_dcg / ideal
                sums[7, cut - 1] += ps_hits[cut - 1] / n_true
                sums[8, cut - 1] += best_hits / n_true
