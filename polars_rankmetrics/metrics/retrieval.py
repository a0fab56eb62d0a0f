"""Retrieval metrics of each sample's ranked list cut at K, as Polars expressions over its ranked
rows (:func:`~polars_rankmetrics.metrics.ranks.window_ranks` with ``blocks=True``, or the rank
table).

These are trec_eval's and ranx's measures (``P_K``, ``recall_K``, ``success_K``,
``recip_rank``, ``map_cut_K``, ``Rprec``) and the propensity-scored precision and nDCG of extreme
classification (Jain, Prabhu and Varma, KDD 2016). Only scored labels are retrieved: a true label
without a score (a top-k table, :mod:`polars_rankmetrics.engines.topk`) is never among the top K,
so these metrics need no ``n_labels``; it still counts among the sample's true labels (recall's and
map's denominator, the ideal of the normalised metrics).

**Ties.** A result never depends on row order: a tied block of scores takes the expected value
over all orders of the block, as dcg does. A block spanning positions a..b, with p positives among
its n = b - a + 1 labels, puts a positive at each of its positions with probability p / n; cut at
K, it contributes ``p * (min(b, K) - a + 1) / n`` expected hits. The first positive's position
(mrr, hit rate) follows the hypergeometric law within the first block holding a positive, and a
positive's expected precision (map) at position r of its block counts the positives above the
block, itself, and ``(r - a) (p - 1) / (n - 1)`` expected positives before it within the block.
On untied scores every value is the plain one. That is ``evaluate(ties="average")``, the
default of these keys; ``ties="trec_eval"`` orders each sample's labels as trec_eval does
(score descending, then label descending as text) before any metric reads them, so no two
scores tie and each value is that one order's (:func:`~polars_rankmetrics.engines.topk.
trec_order`; the TREC keys, :mod:`polars_rankmetrics.metrics.trec`, always use it).
:func:`~polars_rankmetrics.tie_report` counts the samples where the two rules can differ.

**Degenerate cases.** A sample without a true label scores 0 on every metric here (recall,
map and R-precision divide by its true labels; ranx and trec_eval leave such queries out). A K
past the sample's scored labels: precision@K still divides by K.
"""

from __future__ import annotations

import polars as pl

from polars_rankmetrics.metrics import ranking as rx
from polars_rankmetrics.metrics.ranks import (
    BLOCK_START,
    FIRST_HIT,
    HARMONIC_BEFORE,
    HARMONIC_TO,
    POSITION,
    POSITIVE_BLOCK_START,
    POSITIVE_RANK,
    RANK,
    harmonic,
)

PROPENSITY = "__propensity"
"""The column holding each row's label propensity (joined in for the propensity-scored keys)."""
GAIN_RANK = "rm_gain_rank"
"""A true label's position in its sample's best ranking (its true labels by descending
1 / propensity, 1 first; null on the other rows): :func:`with_gain_ranks`."""

_start, _end = pl.col(BLOCK_START), pl.col(RANK)
# The most rows a sample can have: the largest value of Polars' row index type.
_LARGEST_INDEX = 2**32 - 1 if pl.get_index_type() == pl.UInt32 else 2**64 - 1
_size = (_end - _start + 1).cast(pl.Float64)


def _true(truth: str) -> pl.Expr:
    return pl.col(truth) > 0


def _hit(truth: str, score: str) -> pl.Expr:
    """A true label that is scored (retrieved)."""
    return _true(truth) & pl.col(score).is_not_null()


def _n_true(truth: str) -> pl.Expr:
    return _true(truth).sum().cast(pl.Float64)


def _share_within(k: int | pl.Expr | None) -> pl.Expr:
    """The share of a row's tied block within the top ``k``: the probability that the row's
    label is among the top ``k`` over the orders of its block."""
    if k is None:
        return pl.lit(1.0)
    within = pl.min_horizontal(_end, k) - _start + 1
    return within.clip(lower_bound=0).cast(pl.Float64) / _size


def _per_true(value: pl.Expr, truth: str) -> pl.Expr:
    n_true = _n_true(truth)
    return pl.when(n_true > 0).then(value / n_true).otherwise(0.0)


def expected_hits(truth: str, score: str, k: int | pl.Expr | None) -> pl.Expr:
    """The expected number of true labels among the top ``k``."""
    return _share_within(k).filter(_hit(truth, score)).sum()


def precision_at(k: int, truth: str = "truth", *, score: str = "score") -> pl.Expr:
    """precision@K: expected true labels among the top K, over K (also when fewer than K labels
    are scored). 0 without a true label scored.
    Ties: averaged over the orders of each tied block, or trec_eval's order with
    ``ties="trec_eval"``.
    """
    return (expected_hits(truth, score, k) / k).alias(f"precision@{k}")


def recall_at(k: int, truth: str = "truth", *, score: str = "score") -> pl.Expr:
    """recall@K: expected true labels among the top K, over the sample's true labels; 0 for a
    sample without any.
    Ties: averaged over the orders of each tied block, or trec_eval's order with
    ``ties="trec_eval"``.
    """
    return _per_true(expected_hits(truth, score, k), truth).alias(f"recall@{k}")


def r_precision(truth: str = "truth", *, score: str = "score", k: int | None = None) -> pl.Expr:
    """R-precision: precision@R, R being the sample's number of true labels; 0 without any.
    With ``k`` (LibMultiLabel's RP@K): expected true labels among the top K, over min(K, R),
    so 1 is reached by every sample whose top K holds min(K, R) true labels.
    Ties: averaged over the orders of each tied block, or trec_eval's order with
    ``ties="trec_eval"``.
    """
    n_true = _true(truth).sum()
    if k is None:
        return _per_true(expected_hits(truth, score, n_true), truth).alias("r_precision")
    best = pl.min_horizontal(n_true.cast(pl.Float64), float(k))
    hits = expected_hits(truth, score, k)
    return pl.when(best > 0).then(hits / best).otherwise(0.0).alias(f"r_precision@{k}")


def hits_at(k: int, truth: str = "truth", *, score: str = "score") -> pl.Expr:
    """hits@K: the expected number of true labels among the top K (precision@K times K); 0
    without a true label scored.
    Ties: averaged over the orders of each tied block, or trec_eval's order with
    ``ties="trec_eval"``.
    """
    return expected_hits(truth, score, k).cast(pl.Float64).alias(f"hits@{k}")


def hit_rate_at(k: int) -> pl.Expr:
    """hit_rate@K (trec_eval's ``success_K``): 1 if a true label is among the top K; with a
    tied block straddling K, the probability that one of its true labels falls within K.
    Aggregates a sample's first-hit rows (:func:`~polars_rankmetrics.metrics.ranks.first_hits`;
    0 for a sample without any).
    Ties: averaged over the orders of each tied block, or trec_eval's order with
    ``ties="trec_eval"``.
    """
    return pl.col(FIRST_HIT).filter(pl.col(POSITION) <= k).sum().alias(f"hit_rate@{k}")


def mrr(*, k: int | None = None) -> pl.Expr:
    """Reciprocal rank of the first true label (expected over the orders of its tied block); 0
    when no true label is scored, or none within ``k``. Aggregates a sample's first-hit rows.
    Ties: averaged over the orders of each tied block, or trec_eval's order with
    ``ties="trec_eval"``.
    """
    reciprocal = pl.col(FIRST_HIT) / pl.col(POSITION).cast(pl.Float64)
    if k is not None:
        reciprocal = reciprocal.filter(pl.col(POSITION) <= k)
    return reciprocal.sum().alias("mrr" if k is None else f"mrr@{k}")


def average_precision_at(
    truth: str = "truth", *, score: str = "score", k: int | None = None
) -> pl.Expr:
    """map@K for one sample (trec_eval's ``map_cut_K``): the sum of precision@r over the ranks
    r <= K holding a true label, over the sample's true labels (0 without any); ``k=None``:
    every scored rank (trec_eval's ``map``).
    Ties: averaged over the orders of each tied block, or trec_eval's order with
    ``ties="trec_eval"``.
    """
    positive_start = pl.col(POSITIVE_BLOCK_START)
    above = (positive_start - 1).cast(pl.Float64)
    p = (pl.col(POSITIVE_RANK) - positive_start + 1).cast(pl.Float64)
    slope = pl.when(_size > 1).then((p - 1) / (_size - 1)).otherwise(0.0)
    end = _end if k is None else pl.min_horizontal(_end, k)
    to = pl.col(HARMONIC_TO)
    if k is not None:
        to = pl.min_horizontal(to, pl.lit(harmonic(k)))
    harmonic_span = to - pl.col(HARMONIC_BEFORE)
    # sum over r = a..end of (above + 1 + (r - a) * slope) / r, over the block's n positions.
    value = ((above + 1 - slope * _start) * harmonic_span + slope * (end - _start + 1)) / _size
    value = pl.when(end >= _start).then(value).otherwise(0.0)
    name = "map" if k is None else f"map@{k}"
    return _per_true(value.filter(_hit(truth, score)).sum(), truth).alias(name)


def _gain(truth: str) -> pl.Expr:
    """A true label's propensity-scored gain, 1 / propensity (0 for the others)."""
    return pl.when(_true(truth)).then(1.0 / pl.col(PROPENSITY)).otherwise(0.0)


def _ps_hits(truth: str, score: str, k: int) -> pl.Expr:
    return (_gain(truth) * _share_within(k)).filter(_hit(truth, score)).sum()


def ps_precision_at(
    k: int, truth: str = "truth", *, score: str = "score", normalised: bool = False
) -> pl.Expr:
    """psprecision@K: the sum of 1 / propensity over the true labels among the top K, over K.
    ``normalised``: over the best achievable value instead (the K true labels of largest
    1 / propensity ranked first), so 1 is perfect; 0 without a true label.
    Ties: averaged over the orders of each tied block, or trec_eval's order with
    ``ties="trec_eval"``.
    """
    hits = _ps_hits(truth, score, k)
    if not normalised:
        return (hits / k).alias(f"psprecision@{k}")
    # top_k takes a row count (Polars' index type): a K past every sample's rows keeps them all.
    best = _gain(truth).filter(_true(truth)).top_k(min(k, _LARGEST_INDEX)).sum()
    return pl.when(best > 0).then(hits / best).otherwise(0.0).alias(f"psprecision_norm@{k}")


def ps_ndcg_at(
    k: int, truth: str = "truth", *, score: str = "score", normalised: bool = False
) -> pl.Expr:
    """psndcg@K: propensity-scored dcg@K (gain 1 / propensity, tie-averaged) over the dcg@K of
    the sample's true labels with gain 1 (Jain et al.'s normaliser, ``sum over r <= min(K, R)
    of 1 / log(r + 1)``). ``normalised``: over the best achievable propensity-scored dcg@K
    instead, so 1 is perfect. 0 without a true label. Reads the sorted rank table.
    Ties: averaged over the orders of each tied block, or trec_eval's order with
    ``ties="trec_eval"``.
    """
    gain = pl.when(pl.col(score).is_not_null()).then(_gain(truth)).otherwise(0.0)
    actual = rx.tie_averaged_dcg(gain, k)
    ideal = rx.ideal_dcg(_gain(truth), k, binary_truth=not normalised)
    name = f"psndcg_norm@{k}" if normalised else f"psndcg@{k}"
    return pl.when(ideal > 0).then(actual / ideal).otherwise(0.0).alias(name)


# pyxclib's and napkinXC's propensity-scored metrics are ratios of dataset sums: the sum over
# samples of the value over the same sum for the best ranking (each sample's true labels by
# descending 1 / propensity). As a weighted mean, each sample's value is its own ratio to its
# best, weighted by that best (the key's "ideal" weighting): the weighted sums are the two
# sums of the ratio. A sample without a true label has no ratio and weighs 0.
RATIOS = ("psprecision", "psrecall", "psndcg")
"""The metrics that have a ratio-of-sums key (``psprecision_ratio@K``, ...)."""


def with_gain_ranks(rows: pl.LazyFrame, *, sample: str | list[str], truth: str) -> pl.LazyFrame:
    """Add ``rm_gain_rank`` (:data:`GAIN_RANK`) to rows holding the propensities: each
    sample's best ranking, sorted once, which the best value at every K reads as a filtered sum.
    Equal gains take distinct positions in any order (the sums are the same)."""
    best_first = pl.when(_true(truth)).then(_gain(truth)).rank("ordinal", descending=True)
    return rows.with_columns(best_first.over(sample).alias(GAIN_RANK))


def _in_best(k: int) -> pl.Expr:
    """A true label among the K first of the best ranking (:data:`GAIN_RANK`)."""
    return pl.col(GAIN_RANK) <= k


def _best_hits(truth: str, k: int) -> pl.Expr:
    """The sum of the K largest 1 / propensity among the sample's true labels."""
    return _gain(truth).filter(_in_best(k)).sum()


def _best_dcg(truth: str, k: int) -> pl.Expr:
    """The natural-log dcg@K of the best ranking: the K largest gains at positions 1..K."""
    position = pl.col(GAIN_RANK).cast(pl.Float64)
    return (_gain(truth) / (position + 1.0).log()).filter(_in_best(k)).sum()


def ps_ratio(kind: str, k: int, truth: str = "truth", *, score: str = "score") -> pl.Expr:
    """One sample's share of ``kind``'s best: the ``kind``@K (``psprecision``, ``psrecall`` or
    ``psndcg``) of the ranking over that of the best ranking; null without a true label. Its
    mean weighted by :func:`ps_ideal` is pyxclib's PSP@K, PSR@K or PSnDCG@K. Reads
    :data:`GAIN_RANK` (:func:`with_gain_ranks`) and, for psndcg, dcg's discounts.
    Ties: averaged over the orders of each tied block, or trec_eval's order with
    ``ties="trec_eval"``.
    """
    if kind == "psndcg":
        gain = pl.when(pl.col(score).is_not_null()).then(_gain(truth)).otherwise(0.0)
        actual = rx.tie_averaged_dcg(gain, k)
        best = _best_dcg(truth, k)
    else:
        actual, best = _ps_hits(truth, score, k), _best_hits(truth, k)
    return pl.when(best > 0).then(actual / best).alias(f"{kind}_ratio@{k}")


def ps_ideal(kind: str, k: int, truth: str = "truth") -> pl.Expr:
    """One sample's best achievable ``kind``@K, its weight in the ratio of sums: the best
    psprecision@K (the K largest gains over K), psrecall@K (over the true labels, as pyxclib's
    and napkinXC's best PSR@K: the K largest gains, not all of them) or psndcg@K (their dcg over
    the dcg of min(K, R) gains of 1); 0 without a true label. Reads :data:`GAIN_RANK`."""
    n_true = _n_true(truth)
    if kind == "psprecision":
        return _best_hits(truth, k) / k
    if kind == "psrecall":
        return pl.when(n_true > 0).then(_best_hits(truth, k) / n_true).otherwise(0.0)
    normaliser = rx.ideal_dcg(_gain(truth), k, binary_truth=True)
    return pl.when(normaliser > 0).then(_best_dcg(truth, k) / normaliser).otherwise(0.0)
