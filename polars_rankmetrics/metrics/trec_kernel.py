"""trec_eval's measures of every topic in one compiled pass (numba), as trec_eval's C code
computes them: each topic's retrieved documents are read in position order once per relevance
level, into running counts and sums that every measure then reads (``P_5`` and ``map_cut_10``
a value of them each, ``iprec_at_recall`` and ``11pt_avg`` the same interpolated precisions).

**Input.** Each topic's retrieved documents as truth codes in position order
(:mod:`polars_rankmetrics.metrics.trec`: 0 not in the pool, 1 in the pool but unjudged,
``r + 2`` judged ``r``), the offsets of each topic's codes, and the relevances (``r >= 0``) of
each topic's judged documents, retrieved or not.

**Keys.** A key is a measure (:data:`KINDS`) with its parameters (:func:`encode`): the cut-off,
the relevance level, one number (the recall point, rbp's ``p``, Rprec_mult's fraction, set_F's
beta), utility's four coefficients and 11pt_avg's recall points. Gains other than the relevance
values (``ndcg.1=3,2=9``) are not computed here (:func:`supported`).

**Sums.** Every sum is taken in trec_eval's order (down the ranking; ``11pt_avg`` from its last
recall point to its first), with the powers of rbp as running products and ``log2`` as C's, so
that the values are trec_eval's to the last bit where its code is followed. trec_eval's 0 / 0
(``iprec_at_recall`` and ``11pt_avg`` of a topic left nothing by ``-J``, ``Rndcg`` of a topic
whose relevant documents all have gain 0) is NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import polars as pl
from numba import njit

from polars_rankmetrics.metrics.registry import MetricKey, trec_row
from polars_rankmetrics.metrics.trec import JUDGED

KINDS = (
    "trec_num_q", "trec_num_ret", "trec_num_rel", "trec_num_rel_ret", "trec_map", "trec_gm_map",
    "trec_rprec", "trec_bpref", "trec_recip_rank", "trec_iprec_at_recall", "trec_p",
    "trec_recall", "trec_infap", "trec_gm_bpref", "trec_rprec_mult", "trec_utility",
    "trec_11pt_avg", "trec_bing", "trec_g", "trec_ndcg", "trec_ndcg_rel", "trec_rndcg",
    "trec_relative_p", "trec_success", "trec_set_p", "trec_set_relative_p", "trec_set_recall",
    "trec_set_map", "trec_set_f", "trec_num_nonrel_judged_ret", "trec_rbp", "trec_rbp_resid",
    "trec_unj",
)  # fmt: skip
"""The TREC metrics computed here, by their index in a key's code."""
_KIND = {name: i for i, name in enumerate(KINDS)}
_ELEVEN = tuple(i / 10 for i in range(11))
_INFAP_EPSILON = 1e-5
_MIN_GEO_MEAN = 1e-5


def supported(keys: Sequence[MetricKey]) -> bool:
    """Whether every key of ``keys`` is computed here: a metric of :data:`KINDS` without gain
    parameters."""
    return all(key.name in _KIND and not key.param("gains") for key in keys)


def encode(
    keys: Sequence[MetricKey], relevance_level: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The keys as the kernel reads them: per key its kind, cut-off (-1 for none), relevance
    level and offset into the points; per key one number and four coefficients (``numbers``,
    five columns); the recall points of every key one after another (``points``)."""
    kinds, cuts, levels, starts = [], [], [], [0]
    numbers: list[list[float]] = []
    points: list[float] = []
    for key in keys:
        row = trec_row(key, relevance_level)
        kinds.append(_KIND[key.name])
        cuts.append(-1 if row.cut is None else row.cut)
        levels.append(row.level)
        if key.name == "trec_11pt_avg":
            points.extend(row.points or _ELEVEN)
        elif key.name == "trec_iprec_at_recall":
            points.extend(row.points)
        starts.append(len(points))
        number = row.p if key.name in ("trec_rbp", "trec_rbp_resid") else row.beta
        if key.name == "trec_rprec_mult":
            number = row.fraction if row.fraction is not None else 0.0
        numbers.append([number, *row.coefficients])
    return (
        np.array([kinds, cuts, levels], dtype=np.int64).reshape(3, len(keys)),
        np.array(starts, dtype=np.int64),
        np.array(numbers, dtype=np.float64).reshape(len(keys), 5),
        np.array(points, dtype=np.float64),
        np.array(sorted(set(levels)), dtype=np.int64),
    )


def evaluate_topics(
    codes: np.ndarray,
    code_starts: np.ndarray,
    relevances: np.ndarray,
    relevance_spans: np.ndarray,
    keys: Sequence[MetricKey],
    relevance_level: int,
    *,
    judged_only: bool,
) -> np.ndarray:
    """Each topic's value of each key (rows: topics, columns: keys), as the TREC keys of
    :mod:`polars_rankmetrics.metrics.trec` give them (``gm_map`` and ``gm_bpref``: the value
    at least 1e-5, whose geometric mean trec_eval takes).

    Parameters
    ----------
    codes, code_starts
        The truth codes of the topics' retrieved documents, in position order, topic after
        topic: topic ``t``'s are ``codes[code_starts[t]:code_starts[t + 1]]`` (none for a
        topic that retrieves nothing).
    relevances, relevance_spans
        The relevances of each topic's judged documents, in any order: topic ``t``'s are
        ``relevances[relevance_spans[0, t]:relevance_spans[1, t]]`` (a negative one, in the
        pool but unjudged, is not read).
    keys
        The TREC keys (:func:`supported`).
    relevance_level
        The level of a key without its own (``rel``).
    judged_only
        trec_eval's ``-J``: a topic that retrieves nothing divides 0 by 0 in
        ``iprec_at_recall`` at a point whose count of relevant documents is 0.
    """
    spec, starts, numbers, points, levels = encode(keys, relevance_level)
    out = np.empty((len(code_starts) - 1, len(keys)), dtype=np.float64)
    _topics(
        codes.astype(np.int64, copy=False), code_starts.astype(np.int64, copy=False),
        relevances.astype(np.int64, copy=False), relevance_spans.astype(np.int64, copy=False),
        spec, starts, numbers, points, levels, judged_only, out,
    )  # fmt: skip
    return out


@njit(nogil=True, cache=True, error_model="numpy")
def _topics(
    codes: np.ndarray, code_starts: np.ndarray, relevances: np.ndarray,
    relevance_spans: np.ndarray, spec: np.ndarray, starts: np.ndarray, numbers: np.ndarray,
    points: np.ndarray, levels: np.ndarray, judged_only: bool, out: np.ndarray,
) -> None:  # fmt: skip
    top = 0
    for t in range(len(code_starts) - 1):
        top = max(top, code_starts[t + 1] - code_starts[t])
    # Per level: relevant and not judged documents in the first i, the sum of precisions at
    # the relevant ones, and the interpolated precision from the j-th relevant one on.
    relevant = np.zeros(top + 1, dtype=np.int64)
    open_ = np.zeros(top + 1, dtype=np.int64)
    ap = np.zeros(top + 1, dtype=np.float64)
    best = np.zeros(top + 2, dtype=np.float64)
    dcg = np.zeros(top + 1, dtype=np.float64)
    for t in range(len(code_starts) - 1):
        c = codes[code_starts[t] : code_starts[t + 1]]
        n = len(c)
        given = relevances[relevance_spans[0, t] : relevance_spans[1, t]]
        judged = given[given >= 0]
        ideal = -np.sort(-judged[judged > 0]).astype(np.float64)
        ideal_dcg = np.zeros(len(ideal) + 1, dtype=np.float64)
        for i in range(len(ideal)):
            ideal_dcg[i + 1] = ideal_dcg[i] + ideal[i] / math.log2(i + 2.0)
        largest = 0.0 if len(ideal) == 0 else ideal[0]
        for i in range(n):
            gain = c[i] - 2 if c[i] > 2 else 0
            dcg[i + 1] = dcg[i] + gain / math.log2(i + 2.0) if gain > 0 else dcg[i]
            open_[i + 1] = open_[i] + (1 if c[i] < 2 else 0)
        for level in levels:
            num_rel, num_nonrel = 0, 0
            for r in judged:
                if r >= level:
                    num_rel += 1
                else:
                    num_nonrel += 1
            r_ = float(num_rel)
            for i in range(n):
                hit = c[i] >= level + 2
                relevant[i + 1] = relevant[i] + (1 if hit else 0)
                ap[i + 1] = ap[i] + relevant[i + 1] / (i + 1.0) if hit else ap[i]
            found = relevant[n]
            # trec_eval's interpolation (m_iprec_at_recall.c): down from the last document,
            # the largest precision so far, read at each relevant document.
            precision = found / float(n)
            so_far = found
            for i in range(n, 0, -1):
                if so_far == 0:
                    break
                p = so_far / float(i)
                if precision < p:
                    precision = p
                if c[i - 1] >= level + 2:
                    best[so_far] = precision
                    so_far -= 1
            best[0] = precision
            for k in range(spec.shape[1]):
                if spec[2, k] != level:
                    continue
                out[t, k] = _value(
                    spec[0, k], spec[1, k], level, c, n, judged, r_, num_nonrel, found,
                    relevant, open_, ap, best, dcg, ideal, ideal_dcg, largest,
                    numbers[k], points[starts[k] : starts[k + 1]], judged_only,
                )  # fmt: skip


@njit(nogil=True, cache=True, error_model="numpy")
def _iprec(x: float, r: float, found: int, best: np.ndarray) -> float:
    """trec_eval's interpolated precision at recall ``x`` (0 where never reached)."""
    wanted = int(math.floor(x * r + 0.5))
    if wanted > found:
        return 0.0
    return float(best[wanted])


@njit(nogil=True, cache=True, error_model="numpy")
def _value(
    kind: int, cut: int, level: int, c: np.ndarray, n: int, judged: np.ndarray, r: float,
    num_nonrel: int, found: int, relevant: np.ndarray, open_: np.ndarray, ap: np.ndarray,
    best: np.ndarray, dcg: np.ndarray, ideal: np.ndarray, ideal_dcg: np.ndarray,
    largest: float, number: np.ndarray, points: np.ndarray, judged_only: bool,
) -> float:  # fmt: skip
    at = n if cut < 0 else min(cut, n)
    k = float(cut)
    if kind == 0:  # num_q
        return 1.0
    if kind == 1:  # num_ret
        return float(n)
    if kind == 2:  # num_rel
        return r
    if kind == 3:  # num_rel_ret
        return float(found)
    if kind == 4 or kind == 5:  # map, map_cut, gm_map
        value = ap[at] / r if r > 0 else 0.0
        return max(value, _MIN_GEO_MEAN) if kind == 5 else value
    if kind == 6:  # Rprec
        return relevant[min(int(r), n)] / r if r > 0 else 0.0
    if kind == 7 or kind == 13:  # bpref, gm_bpref
        value = _bpref(c, n, level, r, num_nonrel)
        return max(value, _MIN_GEO_MEAN) if kind == 13 else value
    if kind == 8:  # recip_rank
        for i in range(n):
            if c[i] >= level + 2:
                return 1.0 / (i + 1.0)
        return 0.0
    if kind == 9 or kind == 16:  # iprec_at_recall, 11pt_avg
        if judged_only and n == 0:
            for x in points:
                if int(math.floor(x * r + 0.5)) == 0:
                    return math.nan
        if found == 0:
            return 0.0
        total = 0.0
        for j in range(len(points) - 1, -1, -1):
            total += _iprec(points[j], r, found, best)
        return total / len(points)
    if kind == 10:  # P
        return float(relevant[at] / k)
    if kind == 11:  # recall
        return relevant[at] / r if r > 0 else 0.0
    if kind == 12:  # infAP
        return _infap(c, n, level, r)
    if kind == 14:  # Rprec_mult
        cut_at = int(math.floor(number[0] * r + 0.9))
        return relevant[min(cut_at, n)] / float(cut_at) if cut_at > 0 else 0.0
    if kind == 15:  # utility
        a, b, cc, d = number[1], number[2], number[3], number[4]
        hits, ret = float(found), float(n)
        return float(a * hits + b * (ret - hits) + cc * (r - hits) + d * (hits - ret - r))
    if kind == 17:  # binG
        total = 0.0
        so_far = 0
        for i in range(n):
            if c[i] >= level + 2:
                so_far += 1
                total += 1.0 / math.log2(3.0 + i - so_far)
        return total / r if r > 0 else 0.0
    if kind == 18:
        return _g(c, n, ideal)
    if kind == 19:  # ndcg, ndcg_cut
        norm = ideal_dcg[len(ideal) if cut < 0 else min(cut, len(ideal))]
        return dcg[at] / norm if norm > 0 else 0.0
    if kind == 20:
        return _ndcg_rel(c, n, ideal)
    if kind == 21:
        return _rndcg(c, n, ideal) if r > 0 else 0.0
    if kind == 22:  # relative_P
        least = min(r, k)
        return relevant[at] / least if least > 0 else 0.0
    if kind == 23:  # success
        return 1.0 if relevant[at] > 0 else 0.0
    hits, ret = float(found), float(n)
    if kind == 24:  # set_P
        return hits / ret if ret > 0 else 0.0
    if kind == 25:  # set_relative_P
        return hits / min(ret, r) if ret > 0 and r > 0 else 0.0
    if kind == 26:  # set_recall
        return hits / r if r > 0 else 0.0
    if kind == 27:  # set_map
        return hits * hits / (ret * r) if ret > 0 and r > 0 else 0.0
    if kind == 28:  # set_F
        if found == 0:
            return 0.0
        beta = float(number[0])
        precision, recall = hits / ret, hits / r
        return (beta + 1.0) * precision * recall / (beta * precision + recall)
    if kind == 29:  # num_nonrel_judged_ret
        count = 0
        for i in range(n):
            if 2 <= c[i] < level + 2:
                count += 1
        return float(count)
    if kind == 30:
        return _rbp(c, n, number[0], largest)
    if kind == 31:
        return _rbp_resid(c, n, number[0])
    # unj
    return float(open_[at] / k)


@njit(nogil=True, cache=True, error_model="numpy")
def _bpref(c: np.ndarray, n: int, level: int, r: float, num_nonrel: int) -> float:
    """m_bpref.c: unjudged documents skipped."""
    total = 0.0
    nonrel = 0
    for i in range(n):
        if c[i] < 2:
            continue
        if c[i] < level + 2:
            nonrel += 1
        elif nonrel > 0:
            total += 1.0 - min(float(nonrel), r) / min(float(num_nonrel), r)
        else:
            total += 1.0
    return total / r if r > 0 else total


@njit(nogil=True, cache=True, error_model="numpy")
def _infap(c: np.ndarray, n: int, level: int, r: float) -> float:
    """m_infap.c: documents outside the pool count through the position alone."""
    total = 0.0
    rel, nonrel, pooled = 0, 0, 0
    for j in range(n):
        if c[j] == 0:
            continue
        if c[j] == 1:
            pooled += 1
        elif c[j] < level + 2:
            nonrel += 1
        else:
            rel += 1
            if j == 0:
                total += 1.0
            else:
                fj = float(j)
                total += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (
                    (rel - 1 + nonrel + pooled) / fj
                ) * ((rel - 1 + _INFAP_EPSILON) / (rel - 1 + nonrel + 2 * _INFAP_EPSILON))
    return total / r if r > 0 else total


@njit(nogil=True, cache=True, error_model="numpy")
def _rbp(c: np.ndarray, n: int, p: float, largest: float) -> float:
    """m_rbp.c: the gains over the topic's largest relevance where that exceeds 1."""
    total, power = 0.0, 1.0
    for i in range(n):
        gain = _gain(c[i])
        if gain != 0:
            total += (gain / largest if largest > 1 else gain) * power
        power = power * p
    return (1.0 - p) * total


@njit(nogil=True, cache=True, error_model="numpy")
def _rbp_resid(c: np.ndarray, n: int, p: float) -> float:
    """m_rbp_resid.c: 0 without a document outside the judged ones."""
    total, power = 0.0, 1.0
    unjudged = 0
    for i in range(n):
        if c[i] < 2:
            unjudged += 1
            total += power
        power = power * p
    return power + (1 - p) * total if unjudged else 0.0


@njit(nogil=True, cache=True, error_model="numpy")
def _gain(code: int) -> float:
    return float(code - 2) if code > 2 else 0.0


@njit(nogil=True, cache=True, error_model="numpy")
def _g(c: np.ndarray, n: int, ideal: np.ndarray) -> float:
    """m_G.c with the relevance values as gains."""
    value, got, cost, total = 0.0, 0.0, 0.0, 0.0
    for x in ideal:
        total += x
    for i in range(n):
        gain = _gain(c[i])
        got += gain
        wanted = ideal[i] if i < len(ideal) else 0.0
        cost += wanted if wanted >= 1.0 else 1.0
        if gain != 0:
            value += gain / math.log2(2.0 + cost - got)
    return value / total if total > 0 else 0.0


@njit(nogil=True, cache=True, error_model="numpy")
def _ndcg_rel(c: np.ndarray, n: int, ideal: np.ndarray) -> float:
    """m_ndcg_rel.c with the relevance values as gains."""
    results, best, total = 0.0, 0.0, 0.0
    hits = 0
    m = len(ideal)
    i = 0
    while i < n and i < m:
        gain = _gain(c[i])
        if gain != 0:
            results += gain / math.log2(i + 2.0)
        best += ideal[i] / math.log2(i + 2.0)
        if gain > 0:
            total += results / best
            hits += 1
        i += 1
    while i < n:
        gain = _gain(c[i])
        if gain != 0:
            results += gain / math.log2(i + 2.0)
        if gain > 0:
            total += results / best
            hits += 1
        i += 1
    while i < m:
        best += ideal[i] / math.log2(i + 2.0)
        i += 1
    if m == 0:
        return 0.0
    total += (m - hits) * results / best
    return total / m if total > 0 else 0.0


@njit(nogil=True, cache=True, error_model="numpy")
def _rndcg(c: np.ndarray, n: int, ideal: np.ndarray) -> float:
    """m_Rndcg.c with the relevance values as gains: ndcg at each change of the ideal gain."""
    results, best, total = 0.0, 0.0, 0.0
    changes = 0
    m = len(ideal)
    previous = ideal[0] if m > 0 else 0.0
    i = 0
    while i < n and i < m:
        wanted = ideal[i]
        if previous != wanted:
            if best > 0:
                total += results / best
                changes += 1
            previous = wanted
        gain = _gain(c[i])
        if gain != 0:
            results += gain / math.log2(i + 2.0)
        best += wanted / math.log2(i + 2.0)
        i += 1
    if i < n and m > 0:
        # The ideal's end, where its gain changes to 0: m_Rndcg.c's first loop reads that
        # position too, and reads the run's end after it only where documents remain.
        if best > 0:
            total += results / best
            changes += 1
        previous = 0.0
        gain = _gain(c[i])
        if gain != 0:
            results += gain / math.log2(i + 2.0)
        i += 1
    if i < n:
        while i < n:
            gain = _gain(c[i])
            if gain != 0:
                results += gain / math.log2(i + 2.0)
            i += 1
        if best > 0:
            total += results / best
            changes += 1
    while previous > 0:
        wanted = ideal[i] if i < m else 0.0
        if previous != wanted:
            if best > 0:
                total += results / best
                changes += 1
            previous = wanted
        if wanted > 0:
            best += wanted / math.log2(i + 2.0)
        i += 1
    return total / changes


def topic_values(
    rows: pl.DataFrame, names: Sequence[str], number: str, score: str, truth: str,
    keys: Sequence[MetricKey], relevance_level: int, *, judged_only: bool,
) -> pl.DataFrame:  # fmt: skip
    """Each topic's values of ``keys`` (:func:`evaluate_topics`) from a run joined with its
    qrels as :func:`~polars_rankmetrics.engines.topk.trec_rows` gives it: each topic's
    retrieved documents in position order (a score) topic after topic, numbered in column
    ``number`` from 1, then the judged documents not retrieved (a null score); ``truth`` holds
    the code. One row per topic: its columns ``names``, then one column per key."""
    retrieved = int(rows.get_column(score).is_not_null().sum())
    ran, missed = rows.slice(0, retrieved), rows.slice(retrieved)
    topics = rows.height and int(rows.get_column(number).cast(pl.Int64).max() or 0)  # type: ignore[arg-type]
    bounds = np.arange(1, topics + 2)
    numbers = ran.get_column(number).to_numpy()
    code_starts = np.searchsorted(numbers, bounds, side="left")
    judged = (
        pl.concat([ran.select(number, truth), missed.select(number, truth)])
        .filter(pl.col(truth) >= JUDGED)
        .sort(number)
    )
    relevance_starts = np.searchsorted(judged.get_column(number).to_numpy(), bounds, "left")
    relevance_spans = np.stack([relevance_starts[:-1], relevance_starts[1:]])
    values = evaluate_topics(
        ran.get_column(truth).to_numpy(), code_starts,
        judged.get_column(truth).to_numpy() - JUDGED, relevance_spans, keys, relevance_level,
        judged_only=judged_only,
    )  # fmt: skip
    first = pl.col(number).ne_missing(pl.col(number).shift(1))
    named = pl.concat([ran.filter(first), missed.unique(number)]).unique(number).sort(number)
    table = pl.DataFrame(values, schema=[str(key) for key in keys], orient="row")
    return pl.concat([named.select(names), table], how="horizontal")
