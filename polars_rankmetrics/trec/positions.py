"""Each topic's retrieved documents put in trec_eval's order and given their qrels code, in
compiled code (numba): no sort of the run's strings and no join.

A topic's documents are ordered by score descending (a stable sort of the scores, skipped
where they already come so, as in a run file), then, within each run of equal scores, by
docno descending compared byte by byte (C's ``strcmp``: ``form_res_rels.c``). Each document's
code (:mod:`polars_rankmetrics.metrics.trec`: 0 outside the qrels, 1 in the pool but
unjudged, ``r + 2`` judged ``r``) is found in a hash table of its topic's qrels docnos. Then
``-M`` keeps a topic's first documents and ``-J`` its judged ones.

The docnos are read from Arrow's string layout (offsets and bytes), as Polars exports them.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]
from numba import njit

_INSERTION = 16  # blocks of equal scores of at most this many documents: insertion sort
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


def strings(column: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where each string of a column exported to Arrow begins and ends in its bytes, and
    the bytes."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    column = column.cast(pa.large_string())
    _, offsets, data = column.buffers()
    at = np.frombuffer(offsets, dtype=np.int64)[column.offset : column.offset + len(column) + 1]
    text = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    return at[:-1], at[1:], text


@njit(nogil=True, cache=True)
def _compare(begin: np.ndarray, end: np.ndarray, data: np.ndarray, a: int, b: int) -> int:
    """strcmp of strings ``a`` and ``b``: negative, 0 or positive."""
    i, j = begin[a], begin[b]
    end_a, end_b = end[a], end[b]
    while i < end_a and j < end_b:
        if data[i] != data[j]:
            return -1 if data[i] < data[j] else 1
        i += 1
        j += 1
    return int(end_a - i) - int(end_b - j)


@njit(nogil=True, cache=True)
def _hash(begin: np.ndarray, end: np.ndarray, data: np.ndarray, a: int) -> np.uint64:
    """FNV-1a of string ``a``."""
    h = _FNV_OFFSET
    for i in range(begin[a], end[a]):
        h = (h ^ np.uint64(data[i])) * _FNV_PRIME
    return h


@njit(nogil=True, cache=True)
def _equal(begin_a: np.ndarray, end_a: np.ndarray, data_a: np.ndarray, a: int,
           begin_b: np.ndarray, end_b: np.ndarray, data_b: np.ndarray, b: int) -> bool:  # fmt: skip
    n = end_a[a] - begin_a[a]
    if n != end_b[b] - begin_b[b]:
        return False
    i, j = begin_a[a], begin_b[b]
    for k in range(n):
        if data_a[i + k] != data_b[j + k]:
            return False
    return True


@njit(nogil=True, cache=True)
def segments(places: np.ndarray, text: np.ndarray) -> np.ndarray:
    """Where each run of lines of one (qid, tag) pair starts (split_run's ``places``), and
    the number of lines last."""
    rows = places.shape[0]
    starts = np.empty(rows + 1, dtype=np.int64)
    count = 0
    for i in range(rows):
        if i == 0:
            starts[count] = 0
            count += 1
            continue
        same = True
        for field in (0, 4):
            a0, a1 = places[i, field], places[i, field + 1]
            b0, b1 = places[i - 1, field], places[i - 1, field + 1]
            if a1 - a0 != b1 - b0:
                same = False
                break
            for k in range(a1 - a0):
                if text[a0 + k] != text[b0 + k]:
                    same = False
                    break
            if not same:
                break
        if not same:
            starts[count] = i
            count += 1
    starts[count] = rows
    return starts[: count + 1].copy()


@njit(nogil=True, cache=True)
def _sort_docnos(order: np.ndarray, lo: int, hi: int, begin: np.ndarray, end: np.ndarray,
                 data: np.ndarray, scratch: np.ndarray) -> None:  # fmt: skip
    """``order[lo:hi]`` (documents of equal scores) by docno descending: insertion sort of
    short runs, then merged in passes of doubling width."""
    for first in range(lo, hi, _INSERTION):
        last = min(first + _INSERTION, hi)
        for i in range(first + 1, last):
            item = order[i]
            j = i - 1
            while j >= first and _compare(begin, end, data, order[j], item) < 0:
                order[j + 1] = order[j]
                j -= 1
            order[j + 1] = item
    width = _INSERTION
    while width < hi - lo:
        for first in range(lo, hi, 2 * width):
            middle, last = min(first + width, hi), min(first + 2 * width, hi)
            i, j, k = first, middle, first
            while i < middle and j < last:
                if _compare(begin, end, data, order[i], order[j]) >= 0:
                    scratch[k] = order[i]
                    i += 1
                else:
                    scratch[k] = order[j]
                    j += 1
                k += 1
            while i < middle:
                scratch[k] = order[i]
                i += 1
                k += 1
            while j < last:
                scratch[k] = order[j]
                j += 1
                k += 1
        order[lo:hi] = scratch[lo:hi]
        width *= 2


@njit(nogil=True, cache=True)
def _table(size: int) -> np.ndarray:
    """An empty open-addressing table of row numbers for ``size`` strings."""
    slots = 8
    while slots < 2 * size:
        slots *= 2
    return np.full(slots, -1, dtype=np.int64)


@njit(nogil=True, cache=True)
def _added(table: np.ndarray, begin: np.ndarray, end: np.ndarray, data: np.ndarray, i: int) -> bool:
    """Put string ``i`` in ``table`` (:func:`_table`); False where an equal string is there."""
    mask = np.uint64(len(table) - 1)
    slot = _hash(begin, end, data, i) & mask
    while table[slot] != -1:
        if _equal(begin, end, data, table[slot], begin, end, data, i):
            return False
        slot = (slot + np.uint64(1)) & mask
    table[slot] = i
    return True


@njit(nogil=True, cache=True)
def ranked_codes(
    starts: np.ndarray, scores: np.ndarray, run_begin: np.ndarray, run_end: np.ndarray,
    run_data: np.ndarray, qrels_spans: np.ndarray, qrels_begin: np.ndarray,
    qrels_end: np.ndarray, qrels_data: np.ndarray, relevance: np.ndarray, max_docs: int,
    judged_only: bool,
) -> tuple[np.ndarray, np.ndarray, bool]:  # fmt: skip
    """The codes of each topic's documents in trec_eval's order, after ``-M`` (``max_docs``,
    -1 for none) and ``-J``: topic ``t``'s rows of the run are ``starts[t]:starts[t + 1]``,
    its qrels ``qrels_spans[0, t]:qrels_spans[1, t]``; docno ``i`` of the run is
    ``run_data[run_begin[i]:run_end[i]]``, of the qrels likewise. Returns the codes topic
    after topic, each topic's offsets into them, and False where a score is NaN or a docno
    comes twice in a topic of the run or of the qrels (the caller's checks name it)."""
    topics = len(starts) - 1
    codes = np.empty(len(scores), dtype=np.int64)
    code_starts = np.zeros(topics + 1, dtype=np.int64)
    top = 0
    for t in range(topics):
        top = max(top, starts[t + 1] - starts[t])
    order = np.empty(top, dtype=np.int64)
    scratch = np.empty(top, dtype=np.int64)
    written = 0
    for t in range(topics):
        a, b = starts[t], starts[t + 1]
        n = b - a
        q_lo, q_hi = qrels_spans[0, t], qrels_spans[1, t]
        table = _table(q_hi - q_lo)
        mask = np.uint64(len(table) - 1)
        for q in range(q_lo, q_hi):
            if not _added(table, qrels_begin, qrels_end, qrels_data, q):
                return codes, code_starts, False
        seen = _table(n)
        ordered = True
        for i in range(a, b):
            if np.isnan(scores[i]):
                return codes, code_starts, False
            if i > a and scores[i] > scores[i - 1]:
                ordered = False
            if not _added(seen, run_begin, run_end, run_data, i):
                return codes, code_starts, False
        if ordered:
            for i in range(n):
                order[i] = a + i
        else:
            order[:n] = np.argsort(-scores[a:b], kind="mergesort") + a
        lo = 0
        for i in range(1, n + 1):
            if i == n or scores[order[i]] != scores[order[lo]]:
                if i - lo > 1:
                    _sort_docnos(order, lo, i, run_begin, run_end, run_data, scratch)
                lo = i
        kept = n if max_docs < 0 else min(n, max_docs)
        for i in range(kept):
            row = order[i]
            code = 0
            slot = _hash(run_begin, run_end, run_data, row) & mask
            while table[slot] != -1:
                if _equal(qrels_begin, qrels_end, qrels_data, table[slot],
                          run_begin, run_end, run_data, row):  # fmt: skip
                    r = relevance[table[slot]]
                    code = 1 if r < 0 else r + 2
                    break
                slot = (slot + np.uint64(1)) & mask
            if judged_only and code < 2:
                continue
            codes[written] = code
            written += 1
        code_starts[t + 1] = written
    return codes[:written], code_starts, True
