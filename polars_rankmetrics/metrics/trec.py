"""trec_eval's measures (``P_5``, ``map``, ``bpref``, ``infAP``, ``ndcg_cut_10``, ...) as Polars
expressions over one topic's rows: its retrieved documents and its qrels, joined
(:mod:`polars_rankmetrics.engines.topk`, :func:`~polars_rankmetrics.engines.topk.trec_tables`).

**The rows.** A topic's rows are its retrieved documents (a score) and its judged documents
that were not retrieved (no score). Each row's score is minus its position in trec_eval's order
(score descending, then document id descending as text: ``form_res_rels.c``), after the
``max_docs`` cut and, for ``judged_only``, with the unjudged documents left out: positions are
1, 2, 3, ... without ties, so every measure here is trec_eval's plain value. The truth column
holds a code (:func:`code`): 0 for a retrieved document that the qrels do not name
(trec_eval's ``RELVALUE_NONPOOL``), 1 for one the qrels give a negative relevance (in the pool
but unjudged, ``RELVALUE_UNJUDGED``), ``r + 2`` for a judged relevance ``r >= 0``.

The SQL engines read the same rows in ``sql/19_trec_per_sample.sql``, which computes every key
with its parameters and relevance level (read from the relations
:func:`~polars_rankmetrics.engines.sql.export.trec_queries` defines).

**Relevance.** A document is relevant when judged with ``r >= relevance_level`` (trec_eval's
``-l``, default 1), judged non-relevant when judged with ``r < relevance_level``; every measure
that counts relevant documents reads this, and R (``num_rel``) counts the topic's relevant
judged documents, retrieved or not. The gains of ``ndcg`` and ``ndcg_cut`` are the relevance
values themselves (or ``ndcg``'s gain parameters), whatever the level, as in trec_eval.

**Degenerate cases.** A topic without a relevant document scores 0 on every measure that
divides by R (map, Rprec, recall, bpref, infAP, ndcg's ideal), as trec_eval gives; P_K divides
by K also when fewer than K documents are retrieved; ``gm_map`` and ``gm_bpref`` take each
topic's value at least 1e-5 (trec_eval's ``MIN_GEO_MEAN``) before the geometric mean.
``iprec_at_recall_0.00`` of a topic missing from the run with ``complete`` is 0, as trec_eval
gives; where ``judged_only`` leaves a topic nothing, ``iprec_at_recall_X`` at the points where
``lround(X * R)`` is 0 and ``11pt_avg`` are null, trec_eval's 0 / 0 (it prints ``-nan``).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

NONPOOL = 0
"""The code of a retrieved document the qrels do not name."""
UNJUDGED = 1
"""The code of a document the qrels give a negative relevance (in the pool, unjudged)."""
JUDGED = 2
"""The code of a judged relevance ``r >= 0`` is ``r + JUDGED``."""
MIN_GEO_MEAN = 1e-5
"""The floor of each topic's value before a geometric mean (trec_eval's ``MIN_GEO_MEAN``)."""
INFAP_EPSILON = 1e-5
"""The smoothing of infAP's estimated precision (trec_eval's ``INFAP_EPSILON``)."""
POSITION = "__trec_position"
"""The score column's name that says a topic's rows come in position order (the rows of
:func:`in_position_order`): the column holds the position itself (null where not retrieved),
and no measure sorts."""
IDEAL_GAIN = "__trec_ideal_gain"
"""In the rows of :func:`in_position_order`: at the topic's i-th row, the i-th largest gain of
its judged documents (0 past them), the ideal ranking that ndcg-like measures read."""
_ROW = "__trec_row"  # the row's number within its topic, from 1
_IDEAL_DCG = "__trec_ideal_dcg"  # IDEAL_GAIN / log2(row + 1)
_DCG = "__trec_dcg"  # a retrieved document's relevance (0 if not judged) / log2(position + 1)
_LARGEST = "__trec_largest"  # the topic's largest judged relevance (0 without one)
_RET = "__trec_ret"  # the topic's documents retrieved
_KINDS = ("relevant", "nonrelevant", "unjudged")


def code(relevance: pl.Expr) -> pl.Expr:
    """The truth code of a qrels relevance (see the module's notes): 1 where negative,
    ``r + 2`` otherwise. A document absent from the qrels gets 0 from the join."""
    return pl.when(relevance < 0).then(UNJUDGED).otherwise(relevance + JUDGED).cast(pl.Int64)


def in_position_order(
    rows: pl.LazyFrame, topic: Sequence[str], truth: str, score: str, levels: Sequence[int]
) -> pl.LazyFrame:
    """A run's rows joined with its qrels as the measures read them without sorting: ``rows``
    holds each topic's retrieved documents in position order (``score`` minus the position,
    as :func:`~polars_rankmetrics.engines.topk.trec_rows` gives), then its judged documents
    not retrieved (a null score); ``truth`` the code. Returned with the position in column
    :data:`POSITION` (pass it as the score column), the ideal gains in :data:`IDEAL_GAIN`
    (each topic's one sort) and their discounted values, the topic's largest relevance on every
    row, and at each relevance level of ``levels`` the running counts of :meth:`Topic.counted`
    and the topic's relevant and judged non-relevant documents on every row
    (:meth:`Topic.each_topic`), and its documents retrieved: computed once for every measure,
    so that a measure reduces
    each topic with sums, minima and maxima of values on its rows, never a filter or a topic's
    value spread over its rows (several times slower in a grouped aggregation)."""
    relevance = pl.when(pl.col(truth) >= JUDGED).then(pl.col(truth) - JUDGED).otherwise(0)
    row = pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(topic)
    ideal = relevance.cast(pl.Float64).sort(descending=True).over(topic)
    retrieved = pl.col(score).is_not_null().sum().over(topic).cast(pl.Int64)
    counts = [relevance.max().over(topic).cast(pl.Float64).alias(_LARGEST), retrieved.alias(_RET)]
    for level in sorted(set(levels)):
        t = Topic(truth, score, level)
        for kind in _KINDS:
            retrieved = (t.retrieved & t.kind(kind)).cast(pl.Int64)
            counts.append(retrieved.cum_sum().over(topic).alias(_running(kind, level)))
        for kind in _KINDS[:2]:
            total = t.kind(kind).sum().over(topic).cast(pl.Float64)
            counts.append(total.alias(_total(kind, level)))
    return (
        rows.with_columns(row.alias(_ROW), ideal.alias(IDEAL_GAIN), *counts)
        .with_columns(
            (-pl.col(score)).alias(POSITION),
            (pl.col(IDEAL_GAIN) / (pl.col(_ROW) + 1.0).log(2)).alias(_IDEAL_DCG),
            (relevance.cast(pl.Float64) / (1.0 - pl.col(score)).log(2)).alias(_DCG),
        )
        .drop(score)
    )


def _running(kind: str, level: int) -> str:
    return f"__trec_{kind}_{level}"


def _total(kind: str, level: int) -> str:
    return f"__trec_{kind}_total_{level}"


class Topic:
    """The columns of one topic's rows that the measures read: ``score`` holds minus the
    position (null where not retrieved), or, named :data:`POSITION`, the position of rows in
    position order (:func:`in_position_order`); ``truth`` the code."""

    def __init__(self, truth: str, score: str, level: int) -> None:
        self.ordered = score == POSITION
        self.level = level
        self.code = pl.col(truth)
        self.position = pl.col(score) if self.ordered else -pl.col(score)
        self.retrieved = pl.col(score).is_not_null()
        self.judged = self.code >= JUDGED
        self.relevant = self.code >= level + JUDGED
        self.nonrelevant = self.judged & ~self.relevant
        self.unjudged = self.code == UNJUDGED
        self.hit = self.relevant & self.retrieved

    def num_rel(self) -> pl.Expr:
        """R: the topic's relevant judged documents, retrieved or not."""
        if self.ordered:  # also on the rows of gain_rows
            return pl.col(_total("relevant", self.level)).first()
        return self.relevant.sum().cast(pl.Float64)

    def each_topic(self, kind: str) -> pl.Expr:
        """The topic's documents of ``kind`` (``"relevant"``: R, or ``"nonrelevant"``: judged
        non-relevant), to combine with values on its rows: on every row in position order,
        the topic's count spread over its rows otherwise."""
        if self.ordered:
            return pl.col(_total(kind, self.level))
        return self.kind(kind).sum().cast(pl.Float64)

    def only(self, value: pl.Expr, keep: pl.Expr) -> pl.Expr:
        """``value`` (on every row) where ``keep``, for a sum, minimum or maximum: null
        elsewhere in position order (a reduction skips it), filtered otherwise."""
        return pl.when(keep).then(value) if self.ordered else value.filter(keep)

    def at_hits(self, value: pl.Expr) -> pl.Expr:
        """A value of :meth:`hit_positions`' and :meth:`counted`'s form (on every row in
        position order, on the relevant documents retrieved otherwise) on the relevant
        documents retrieved alone, for a sum, minimum or maximum (:meth:`only`)."""
        return pl.when(self.hit).then(value) if self.ordered else value

    def hit_positions(self) -> pl.Expr:
        """The positions of the relevant documents retrieved, beside :meth:`counted` (in
        position order, every row's: read through :meth:`at_hits`)."""
        return self.position if self.ordered else self.positions(self.relevant)

    def per_rel(self, value: pl.Expr) -> pl.Expr:
        """``value`` over R; 0 without a relevant document."""
        r = self.num_rel()
        return pl.when(r > 0).then(value / r).otherwise(0.0)

    def hits_within(self, k: int | pl.Expr) -> pl.Expr:
        """The relevant documents retrieved within the first ``k`` positions."""
        return (self.hit & (self.position <= k)).sum().cast(pl.Float64)

    def in_order(self, value: pl.Expr, keep: pl.Expr) -> pl.Expr:
        """``value`` on the retrieved rows that ``keep`` selects, in position order."""
        rows = self.retrieved & keep
        if self.ordered:
            return value.filter(rows)
        return value.filter(rows).sort_by(self.position.filter(rows))

    def positions(self, keep: pl.Expr) -> pl.Expr:
        """The positions of the retrieved rows that ``keep`` selects, ascending."""
        return self.in_order(self.position, keep)

    def kind(self, name: str) -> pl.Expr:
        """Whether a row is ``"relevant"``, ``"nonrelevant"`` (judged) or ``"unjudged"``
        (pooled)."""
        kinds = {"relevant": self.relevant, "nonrelevant": self.nonrelevant,
                 "unjudged": self.unjudged}  # fmt: skip
        return kinds[name]

    def counted(self, kind: str) -> pl.Expr:
        """For each relevant document retrieved, in position order: the retrieved documents
        of ``kind`` (:meth:`kind`) at or above it, itself included (for ``"relevant"``: its
        number among them, from 1), beside :meth:`hit_positions`."""
        if self.ordered:  # every row's count: read through at_hits
            return pl.col(_running(kind, self.level)).cast(pl.Float64)
        rows = self.in_order(self.kind(kind), pl.lit(True)).cast(pl.Int64).cum_sum()
        return rows.filter(self.in_order(self.relevant, pl.lit(True))).cast(pl.Float64)

    def nth_hit(self) -> pl.Expr:
        """Beside :meth:`hit_positions`: each relevant document retrieved's number among them
        in position order (1 for the first)."""
        return self.counted("relevant")

    def dcg(self, gain: pl.Expr, gains: Sequence[tuple[int, float]], k: int | None) -> pl.Expr:
        """The dcg of the documents retrieved (``gain`` at each, :func:`_gain` with
        ``gains``), within the first ``k`` positions."""
        if self.ordered and not gains:
            dcg = pl.col(_DCG)
            return (dcg if k is None else self.only(dcg, self.position <= k)).sum()
        shown = self.retrieved & (gain != 0)
        if k is not None:
            shown = shown & (self.position <= k)
        return (gain.filter(shown) / (self.position.filter(shown) + 1.0).log(2)).sum()

    def ideal_dcg(
        self, gain: pl.Expr, gains: Sequence[tuple[int, float]], k: int | None
    ) -> pl.Expr:
        """The dcg of the ideal ranking (:meth:`ideal`), within its first ``k`` positions."""
        if self.ordered and not gains:
            dcg = pl.col(_IDEAL_DCG)
            return (dcg if k is None else self.only(dcg, pl.col(_ROW) <= k)).sum()
        best = self.ideal(gain, gains)
        if k is not None:
            best = best.head(k)
        positions = pl.int_range(1, best.len() + 1).cast(pl.Float64)
        return (best / (positions + 1.0).log(2)).sum()

    def ideal(self, gain: pl.Expr, gains: Sequence[tuple[int, float]]) -> pl.Expr:
        """The positive values of ``gain`` (:func:`_gain` with ``gains``) in descending
        order: the ideal ranking's gains."""
        if self.ordered and not gains:
            return pl.col(IDEAL_GAIN).filter(pl.col(IDEAL_GAIN) > 0)
        return gain.filter(gain > 0).sort(descending=True)


def count(kind: str, truth: str, score: str, level: int) -> pl.Expr:
    """``num_ret``, ``num_rel``, ``num_rel_ret``, ``num_nonrel_judged_ret`` or ``num_q`` of one
    topic."""
    t = Topic(truth, score, level)
    counted = {
        "num_ret": t.retrieved,
        "num_rel": t.relevant,
        "num_rel_ret": t.hit,
        "num_nonrel_judged_ret": t.nonrelevant & t.retrieved,
    }
    if kind == "num_q":
        return pl.lit(1.0)
    return counted[kind].sum().cast(pl.Float64)


def precision(truth: str, score: str, level: int, k: int) -> pl.Expr:
    """``P_K``: the relevant documents among the first K retrieved, over K."""
    return Topic(truth, score, level).hits_within(k) / k


def recall(truth: str, score: str, level: int, k: int) -> pl.Expr:
    """``recall_K``: the relevant documents among the first K retrieved, over R."""
    t = Topic(truth, score, level)
    return t.per_rel(t.hits_within(k))


def success(truth: str, score: str, level: int, k: int) -> pl.Expr:
    """``success_K``: 1 if a relevant document is among the first K retrieved."""
    return (Topic(truth, score, level).hits_within(k) > 0).cast(pl.Float64)


def r_precision(truth: str, score: str, level: int) -> pl.Expr:
    """``Rprec``: the relevant documents among the first R retrieved, over R."""
    t = Topic(truth, score, level)
    return t.per_rel(t.hits_within(t.each_topic("relevant")))


def reciprocal_rank(truth: str, score: str, level: int) -> pl.Expr:
    """``recip_rank``: 1 over the position of the first relevant document retrieved; 0 without
    one."""
    t = Topic(truth, score, level)
    return (1.0 / t.at_hits(t.hit_positions()).min()).fill_null(0.0)


def average_precision(truth: str, score: str, level: int, k: int | None = None) -> pl.Expr:
    """``map`` (``k`` None) and ``map_cut_K``: the sum of the precisions at the positions
    (within K) of the relevant documents retrieved, over R. The i-th relevant document
    retrieved, at position p, has precision i / p."""
    t = Topic(truth, score, level)
    at = t.hit_positions()
    precisions = t.nth_hit() / at
    if k is not None:
        precisions = pl.when(at <= k).then(precisions)
    return t.per_rel(t.at_hits(precisions).sum())


def geometric(value: pl.Expr) -> pl.Expr:
    """The logarithm of a topic's value floored at ``MIN_GEO_MEAN``: the mean of these is the
    logarithm of ``gm_map``'s or ``gm_bpref``'s geometric mean."""
    return pl.max_horizontal(value, pl.lit(MIN_GEO_MEAN)).log()


def bpref(truth: str, score: str, level: int) -> pl.Expr:
    """``bpref`` (Buckley and Voorhees, SIGIR 2004): over the relevant documents retrieved,
    ``1 - min(n, R) / min(N, R)``, n the judged non-relevant documents retrieved above it and N
    those of the topic (1 where n = 0), summed over R. Unjudged documents are skipped."""
    t = Topic(truth, score, level)
    above = t.counted("nonrelevant")
    r, n = t.each_topic("relevant"), t.each_topic("nonrelevant")
    share = pl.min_horizontal(above, r) / pl.min_horizontal(n, r)
    return t.per_rel(t.at_hits(pl.when(above > 0).then(1.0 - share).otherwise(1.0)).sum())


def inferred_ap(truth: str, score: str, level: int) -> pl.Expr:
    """``infAP`` (Yilmaz and Aslam, CIKM 2006): at each relevant document retrieved, at 0-based
    position j > 0, ``1 / (j + 1) + j / (j + 1) * (above / j) * (rel + e) / (rel + nonrel +
    2e)``, where ``above`` counts the judged and pooled-unjudged documents above it, ``rel`` and
    ``nonrel`` the judged relevant and non-relevant ones, e = 1e-5; 1 at j = 0; summed over R.
    Documents outside the pool count only through j."""
    t = Topic(truth, score, level)
    j = t.hit_positions() - 1.0
    rel = t.counted("relevant") - 1.0
    nonrel, unjudged = t.counted("nonrelevant"), t.counted("unjudged")
    above = rel + nonrel + unjudged
    e = INFAP_EPSILON
    estimate = 1.0 / (j + 1.0) + (j / (j + 1.0)) * (above / j) * (
        (rel + e) / (rel + nonrel + 2 * e)
    )
    return t.per_rel(t.at_hits(pl.when(j == 0).then(1.0).otherwise(estimate)).sum())


def interpolated_precision(
    truth: str, score: str, level: int, recall: float, *, empty_nan: bool = False
) -> pl.Expr:
    """``iprec_at_recall_X``: the largest precision at or after the position where the topic
    reaches ``lround(X * R)`` relevant documents retrieved (the first relevant one for a count
    of 0); 0 where it never does. With ``empty_nan`` (``judged_only``), on a topic left
    without a document retrieved, at a point where ``lround(X * R)`` is 0: null, as trec_eval
    divides 0 by 0 there and prints ``-nan``, which makes the mean NaN. Without it such a topic
    (one missing from the run, with ``complete``) scores 0: trec_eval ranks one placeholder
    document for it, which ``-J`` alone removes."""
    t = Topic(truth, score, level)
    nth = t.nth_hit()
    precisions = nth / t.hit_positions()
    wanted = (recall * t.num_rel() + 0.5).floor()
    from_ = pl.max_horizontal((recall * t.each_topic("relevant") + 0.5).floor(), pl.lit(1.0))
    found = t.hit.sum().cast(pl.Float64)
    best = t.at_hits(pl.when(nth >= from_).then(precisions)).max()
    value = pl.when((wanted > found) | (found == 0)).then(0.0).otherwise(best)
    if not empty_nan:
        return value
    retrieved = pl.col(_RET).first() if t.ordered else t.retrieved.sum()
    return pl.when((retrieved == 0) & (wanted == 0)).then(None).otherwise(value)


ELEVEN_POINTS = tuple(i / 10 for i in range(11))


def eleven_point_average(
    truth: str, score: str, level: int, points: Sequence[float] = ELEVEN_POINTS, *,
    empty_nan: bool = False,
) -> pl.Expr:  # fmt: skip
    """``11pt_avg``: the mean of ``iprec_at_recall`` at recall 0.0, 0.1, ..., 1.0 (or at
    ``points``, ``11pt_avg.0.25,0.5``); null where one of them is (``empty_nan``)."""
    values = [interpolated_precision(truth, score, level, x, empty_nan=empty_nan) for x in points]
    # A sum that stays null where a point is (trec_eval's NaN), as sum_horizontal would not.
    total = values[0]
    for value in values[1:]:
        total = total + value
    return total / len(values)


def _gain(t: Topic, gains: Sequence[tuple[int, float]]) -> pl.Expr:
    """A judged document's gain: its relevance, or the gain ``gains`` gives its relevance;
    0 where unjudged."""
    relevance = (t.code - JUDGED).cast(pl.Float64)
    if gains:
        levels, values = zip(*gains, strict=True)
        relevance = relevance.replace([float(v) for v in levels], list(values))
    return pl.when(t.judged).then(relevance).otherwise(0.0)


def ndcg(
    truth: str, score: str, level: int, k: int | None = None,
    gains: Sequence[tuple[int, float]] = (),
) -> pl.Expr:  # fmt: skip
    """``ndcg`` (``k`` None) and ``ndcg_cut_K``: ``sum of gain / log2(p + 1)`` over the
    documents retrieved at positions p (within K), over the same sum for the topic's judged
    documents of positive gain in descending gain order (0 where that ideal is 0). The gain is
    the relevance value, or ``gains``' value for a relevance it names (``ndcg.1=3,2=9``)."""
    t = Topic(truth, score, level)
    gain = _gain(t, gains)
    actual = t.dcg(gain, gains, k)
    ideal = t.ideal_dcg(gain, gains, k)
    return pl.when(ideal > 0).then(actual / ideal).otherwise(0.0)


def relative_precision(truth: str, score: str, level: int, k: int) -> pl.Expr:
    """``relative_P_K``: the relevant documents among the first K retrieved, over min(K, R);
    0 without a relevant document."""
    t = Topic(truth, score, level)
    best = pl.min_horizontal(t.num_rel(), pl.lit(float(k)))
    return pl.when(best > 0).then(t.hits_within(k) / best).otherwise(0.0)


def r_precision_multiple(truth: str, score: str, level: int, fraction: float) -> pl.Expr:
    """``Rprec_mult_X``: precision after ``int(X * R + 0.9)`` documents (trec_eval 10.0 still
    truncates here), dividing by that count also past the documents retrieved; 0 for a count
    of 0."""
    t = Topic(truth, score, level)
    cut = (fraction * t.num_rel() + 0.9).floor()
    hits = t.hits_within((fraction * t.each_topic("relevant") + 0.9).floor())
    return pl.when(cut > 0).then(hits / cut).otherwise(0.0)


def set_measure(kind: str, truth: str, score: str, level: int, beta: float = 1.0) -> pl.Expr:
    """The measures of the retrieved set, unranked (0 where a denominator is 0):
    ``set_P`` = rel_ret / ret, ``set_recall`` = rel_ret / R, ``set_relative_P`` = rel_ret /
    min(ret, R), ``set_map`` = rel_ret^2 / (ret R), ``set_F`` = (beta + 1) P R / (beta P + R)
    (trec_eval's weighting: ``beta`` as given, not squared)."""
    t = Topic(truth, score, level)
    found, ret, r = t.hit.sum().cast(pl.Float64), t.retrieved.sum().cast(pl.Float64), t.num_rel()
    precision, recall_ = found / ret, found / r
    values = {
        "set_P": (ret > 0, precision),
        "set_recall": (r > 0, recall_),
        "set_relative_P": ((ret > 0) & (r > 0), found / pl.min_horizontal(ret, r)),
        "set_map": ((ret > 0) & (r > 0), found * found / (ret * r)),
        "set_F": (found > 0, (beta + 1.0) * precision * recall_ / (beta * precision + recall_)),
    }
    defined, value = values[kind]
    return pl.when(defined).then(value).otherwise(0.0)


def utility(
    truth: str, score: str, level: int, coefficients: Sequence[float] = (1.0, -1.0, 0.0, 0.0)
) -> pl.Expr:
    """``utility``: ``a rel_ret + b (ret - rel_ret) + c (R - rel_ret) + d (N + rel_ret - ret -
    R)`` with trec_eval's coefficients (a, b, c, d) = (1, -1, 0, 0) by default, N (``-N``,
    the collection size) 0."""
    t = Topic(truth, score, level)
    found, ret, r = t.hit.sum().cast(pl.Float64), t.retrieved.sum().cast(pl.Float64), t.num_rel()
    a, b, c, d = coefficients
    return a * found + b * (ret - found) + c * (r - found) + d * (found - ret - r)


def binary_gain(truth: str, score: str, level: int) -> pl.Expr:
    """``binG``: over R, the sum over the relevant documents retrieved of ``1 / log2(2 + n)``,
    n the non-relevant (or unjudged) documents retrieved above it."""
    t = Topic(truth, score, level)
    above = t.hit_positions() - t.nth_hit()
    return t.per_rel(t.at_hits(1.0 / (above + 2.0).log(2)).sum())


def unjudged(truth: str, score: str, level: int, k: int) -> pl.Expr:
    """``unj_K``: the documents the qrels do not judge (absent, or a negative relevance)
    among the first K retrieved, over K."""
    t = Topic(truth, score, level)
    return (t.retrieved & ~t.judged & (t.position <= k)).sum().cast(pl.Float64) / k


def judged(truth: str, score: str, k: int) -> pl.Expr:
    """ir_measures' ``Judged@K``: the documents the qrels name (any relevance) among the first
    K retrieved, over K."""
    t = Topic(truth, score, 1)
    return (t.retrieved & (t.code >= UNJUDGED) & (t.position <= k)).sum().cast(pl.Float64) / k


def rank_biased_precision(truth: str, score: str, level: int, p: float) -> pl.Expr:
    """``rbp`` (Moffat and Zobel, TOIS 2008): ``(1 - p) sum of gain p^(position - 1)`` over the
    documents retrieved, the gain being the relevance over the topic's largest judged
    relevance where that exceeds 1 (so gains lie in [0, 1]), else the relevance."""
    t = Topic(truth, score, level)
    relevance = pl.when(t.judged).then(t.code - JUDGED).otherwise(0).cast(pl.Float64)
    largest = pl.col(_LARGEST) if t.ordered else relevance.max()
    gained = t.retrieved & (relevance > 0)
    shown = relevance * p ** (t.position - 1.0)
    return (1.0 - p) * t.only(
        pl.when(largest > 1).then(shown / largest).otherwise(shown), gained
    ).sum()


def rank_biased_residual(truth: str, score: str, level: int, p: float) -> pl.Expr:
    """``rbp_resid``: how much ``rbp`` could rise if every unjudged document retrieved were of
    full gain and the ranking went on with full gain: ``p^ret + (1 - p) sum of p^(position -
    1)`` over the unjudged documents retrieved; 0 without one."""
    t = Topic(truth, score, level)
    open_ = t.retrieved & ~t.judged
    tail = pl.lit(p) ** t.retrieved.sum().cast(pl.Float64)
    value = tail + (1.0 - p) * t.only(p ** (t.position - 1.0), open_).sum()
    return pl.when(open_.any()).then(value).otherwise(0.0)


ERR_MAX_GRADE = 4
"""The largest grade of ``ERR@K``'s gains, gdeval's ``$MAX_JUDGMENT``."""


def expected_reciprocal_rank(truth: str, score: str, k: int) -> pl.Expr:
    """ir_measures' ``ERR@K`` (Chapelle, Metzler, Zhang and Grinspan, CIKM 2009), as the TREC Web
    track's gdeval computes it: a user reads down the ranking and stops at a document of
    relevance ``g`` with chance ``R = (2^g - 1) / 2^4``; ERR is the expected reciprocal of the
    position where the user stops, ``sum over the first K documents retrieved of R / position
    times the product of (1 - R) over the documents above``, in trec_eval's order (gdeval's
    too: score descending, then docno descending).

    The grade is the judged relevance, 0 for a document not judged or judged below 0; a grade
    above 4, which gdeval refuses in the qrels, counts as 4. 0 when nothing relevant is
    retrieved within K. It reads no relevance level. gdeval leaves out of its mean a topic
    without a relevance above 0; here, as for every TREC key, a topic counts where trec_eval
    counts it (0 for such a topic)."""
    t = Topic(truth, score, 1)
    grade = pl.when(t.judged).then(t.code - JUDGED).otherwise(0).clip(0, ERR_MAX_GRADE)
    stop = (2.0 ** grade.cast(pl.Float64) - 1.0) / 2.0**ERR_MAX_GRADE
    within = t.position <= k
    chance, position = t.in_order(stop, within), t.in_order(t.position, within)
    # The chance of reaching each document: the product of (1 - R) above it (R <= 15/16).
    reach = (1.0 - chance).log().cum_sum().shift(1, fill_value=0.0).exp()
    return (chance * reach / position.cast(pl.Float64)).sum()


def gain_rows(rows: pl.LazyFrame, truth: str) -> pl.LazyFrame:
    """The rows of :func:`in_position_order` that ``G``, ``ndcg_rel`` and ``Rndcg`` read
    without gain parameters: the documents judged relevant (a relevance above 0, retrieved
    or not), the first rows of each topic, where the ideal gains are positive, and its first
    row (a topic without a document of positive gain keeps its values); in their order (a
    tenth of a run's rows, or less, where most documents retrieved are not judged
    relevant)."""
    keep = (pl.col(truth) > JUDGED) | (pl.col(IDEAL_GAIN) > 0) | (pl.col(_ROW) == 1)
    return rows.filter(keep)


def _prefix(values: pl.Expr) -> pl.Expr:
    """The prefix sums of ``values`` with 0 first: read at m, the sum of the first m."""
    return pl.lit(0.0).append(values.cum_sum())


class _Gains:
    """What ``G``, ``ndcg_rel`` and ``Rndcg`` read: the documents retrieved with a gain other
    than 0 (the others add nothing to any sum here), their positions and gains in position
    order and their dcg prefix sums; the ideal: the judged documents' positive gains in
    descending order (n of them) and its dcg prefix sums."""

    def __init__(self, t: Topic, gains: Sequence[tuple[int, float]]) -> None:
        gain = _gain(t, gains)
        self.at = t.positions(gain != 0)
        self.shown = t.in_order(gain, gain != 0)
        # In position order also on the rows of gain_rows alone.
        self.ret = pl.col(_RET).first() if t.ordered and not gains else t.retrieved.sum()
        self.ret = self.ret.cast(pl.Int64)
        self.dcg = _prefix(self.shown / (self.at + 1.0).log(2))
        self.best = t.ideal(gain, gains)
        self.n = self.best.len().cast(pl.Int64)
        places = pl.int_range(1, self.best.len() + 1, dtype=pl.Int64).cast(pl.Float64)
        self.ideal = _prefix(self.best / (places + 1.0).log(2))

    def dcg_to(self, m: pl.Expr) -> pl.Expr:
        """The run's dcg over its first ``m`` positions."""
        return self.dcg.gather(self.at.search_sorted(m.cast(pl.Float64), side="right"))


def gain_measure(
    truth: str, score: str, level: int, gains: Sequence[tuple[int, float]] = ()
) -> pl.Expr:
    """``G`` (trec_eval's experimental normalised gain): over the ideal gains' sum, the sum
    over the documents retrieved of ``gain / log2(2 + cost - got)``, where ``got`` sums the
    gains retrieved up to the document and ``cost`` sums ``max(ideal gain, 1)`` over the
    positions up to it (an ideal gain being 0 past the ideal's documents). 0 where the ideal
    sums to 0."""
    g = _Gains(Topic(truth, score, level), gains)
    costs = _prefix(pl.max_horizontal(g.best, pl.lit(1.0)))
    at = g.at.cast(pl.Int64)
    cost = costs.gather(pl.min_horizontal(at, g.n)) + (at - g.n).clip(lower_bound=0)
    got = g.shown.cum_sum()
    value = (g.shown / (2.0 + cost - got).log(2)).sum()
    total = g.best.sum()
    return pl.when(total > 0).then(value / total).otherwise(0.0)


def ndcg_over_relevant(
    truth: str, score: str, level: int, gains: Sequence[tuple[int, float]] = ()
) -> pl.Expr:
    """``ndcg_rel``: the mean over the n documents of positive gain of ndcg at each one's
    position where retrieved (dcg to it over the ideal dcg to it, the ideal cut at n), and
    the whole run's dcg over the whole ideal for each one not retrieved. 0 where that sum is
    not positive (or there is no such document)."""
    g = _Gains(Topic(truth, score, level), gains)
    positive = g.shown > 0
    at = g.at.cast(pl.Int64).filter(positive)
    here = g.dcg.slice(1).filter(positive) / g.ideal.gather(pl.min_horizontal(at, g.n))
    missed = (g.n - positive.sum()).cast(pl.Float64)
    total = here.sum() + missed * g.dcg.last() / g.ideal.last()
    return pl.when((g.n > 0) & (total > 0)).then(total / g.n.cast(pl.Float64)).otherwise(0.0)


def ndcg_at_levels(
    truth: str, score: str, level: int, gains: Sequence[tuple[int, float]] = ()
) -> pl.Expr:
    """``Rndcg``: the mean of ndcg at the positions b where the ideal gain changes value
    (after the last document of each gain in the ideal, the last of them included), the run's
    dcg read at min(b, ret), and once more at the run's end where it retrieved more than
    n + 1 documents (n those of the ideal: trec_eval reads that point after position n + 1).
    0 without a relevant document (R, at the relevance level); NaN, as trec_eval's 0 / 0,
    where R > 0 but no judged document has a positive gain (a relevance level of 0 on a topic
    judged 0 throughout)."""
    t = Topic(truth, score, level)
    g = _Gains(t, gains)
    ends = pl.int_range(1, g.best.len() + 1, dtype=pl.Int64).filter(
        g.best.ne_missing(g.best.shift(-1))
    )
    points = g.dcg_to(pl.min_horizontal(ends, g.ret)) / g.ideal.gather(ends)
    beyond = g.ret > g.n + 1
    extra = pl.when(beyond).then(g.dcg.last() / g.ideal.last()).otherwise(0.0)
    count = ends.len() + beyond.cast(pl.UInt32)
    value = (points.sum() + extra) / count.cast(pl.Float64)
    return pl.when(t.num_rel() > 0).then(value).otherwise(0.0)
