"""The rank table: the one tie-aware rank computation every ranking metric is built on.

:func:`rank_table` sorts the long table by sample and descending score and adds, to every row,
where it stands in its sample's ranking. Each metric in :mod:`polars_rankmetrics.metrics.ranking` is
then a short aggregation of these columns over one sample's rows. The SQL views build the same
columns (``sql/01_rank_table.sql``) with window functions over each row:
``count(*) OVER (PARTITION BY grp, sample ORDER BY score DESC)`` is rank "max" (the default
RANGE frame takes in the tied peers), the same count of positives is the positive rank, and
``rank()`` is the block start.

Columns added (1-based positions, highest score first):

``rm_rank``
    ``#{k : f_k >= f_j}``: how many labels score at least as high. A tied block shares its largest
    rank (rank "max", scikit-learn's pessimistic tie rule).
``rm_block_start``
    ``1 + #{k : f_k > f_j}``: the first position of the row's tied block.
``rm_positive_rank``
    ``#{k positive : f_k >= f_j}``: the same rank counted among the positives (truth > 0).
``rm_position``
    The row's position in the sorted sample (ties in arbitrary order); positions run 1..L.
``rm_positive_block_start``
    ``1 + #{k positive : f_k > f_j}``: where the row's block starts among the positives.
``rm_first_hit``
    The chance that the sample's first scored positive is at ``rm_position``, over the orders
    of its tied block: what mrr and hit rate sum. On rows of their own, a row per position of
    each sample's first block holding a positive (:func:`first_hits`).
``rm_discount_to``, ``rm_discount_before``, ``rm_position_discount``
    Cumulative dcg discounts ``D(m) = sum over r = 1..m of 1 / ln(r + 1)`` at ``rm_rank``, at
    ``rm_block_start - 1`` and at ``rm_position``: a tied block spanning positions a..b sums the
    discounts ``D(b) - D(a - 1)``.
``rm_ideal_discount``
    ``D(n)`` for the sample's n positive labels (truth > 0): the ideal dcg of binary truth, read
    without a sort.
``rm_lowest_positive``
    The sample's lowest positive score (null without a scored positive), joined to its rows
    (added by :func:`with_lowest_positive`): what coverage error reads when nothing else ranks;
    per sample (:func:`positive_counts`), what bounds the rows :func:`positive_ranks` ranks.
``rm_scored``, ``rm_labels``
    The sample's scored labels and its rows (per sample, :func:`positive_counts`; the rows on
    :func:`positive_ranks`' positive rows too, where they are not all the sample's rows).
``rm_harmonic_to``, ``rm_harmonic_before``
    Harmonic numbers ``H(m) = sum over r = 1..m of 1 / r`` at ``rm_rank`` and at
    ``rm_block_start - 1`` (added by :func:`with_harmonics`): what map's expected precisions
    over a tied block sum.


**Top-k tables** (:mod:`polars_rankmetrics.engines.topk`): a row without a score is a true label
that was not predicted. It ranks below every scored label of its sample, tied with all the sample's
other unscored labels, of which only the true ones have rows; ``n_labels``, the size of the label
space, places that block at positions ``s + 1 .. n_labels`` (``s`` the sample's scored labels): its
``rm_rank`` is ``n_labels`` and its ``rm_discount_to`` is ``D(n_labels)``, computed here in
closed form rather than from rows. Without ``n_labels`` those two are null (the retrieval
metrics never read them).
"""

from __future__ import annotations

import decimal
import functools
import math
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Literal

import polars as pl

RANK = "rm_rank"
BLOCK_START = "rm_block_start"
POSITIVE_RANK = "rm_positive_rank"
POSITIVE_BLOCK_START = "rm_positive_block_start"
POSITION = "rm_position"
DISCOUNT_TO = "rm_discount_to"
DISCOUNT_BEFORE = "rm_discount_before"
POSITION_DISCOUNT = "rm_position_discount"
IDEAL_DISCOUNT = "rm_ideal_discount"
HARMONIC_TO = "rm_harmonic_to"
HARMONIC_BEFORE = "rm_harmonic_before"
FIRST_HIT = "rm_first_hit"
LOWEST_POSITIVE = "rm_lowest_positive"
SCORED = "rm_scored"
LABELS = "rm_labels"
POSITIVES = "rm_positives"
COLUMNS = (
    RANK,
    BLOCK_START,
    POSITIVE_RANK,
    POSITIVE_BLOCK_START,
    POSITION,
    DISCOUNT_TO,
    DISCOUNT_BEFORE,
    POSITION_DISCOUNT,
    IDEAL_DISCOUNT,
    HARMONIC_TO,
    HARMONIC_BEFORE,
    FIRST_HIT,
    LOWEST_POSITIVE,
    SCORED,
    LABELS,
)


def is_positive(truth: str, dtype: pl.DataType | None = None) -> pl.Expr:
    """Whether a row's label is positive: ``truth > 0``; a Boolean truth column (``dtype``) is
    its own answer, read without the cast to an integer that comparing it with 0 costs."""
    column = pl.col(truth)
    return column if dtype == pl.Boolean else column > 0


@functools.cache
def cumulative_discount(m: int) -> float:
    """``D(m) = sum over r = 1..m of 1 / ln(r + 1)`` (the discount of a position past every row:
    ``D(n_labels)``, ``D(k)``). Up to :data:`ORDERED_TERMS` terms, summed in the order the rank
    table sums it, so that it equals the table's ``D(m)`` bit for bit; beyond, in closed form
    (:func:`expanded_sum`): the exact sum rounded to double precision, at a cost that does not
    grow with m (any m up to 2**63 - 1)."""
    if m <= ORDERED_TERMS:
        return _ordered_sum(m, lambda r: 1.0 / (r + 1.0).log())
    return expanded_sum(m, "discount")


@functools.cache
def harmonic(m: int) -> float:
    """``H(m) = sum over r = 1..m of 1 / r``: up to :data:`ORDERED_TERMS` terms summed in the
    order the rank table sums it, beyond in closed form (:func:`expanded_sum`), as
    :func:`cumulative_discount`."""
    if m <= ORDERED_TERMS:
        return _ordered_sum(m, lambda r: 1.0 / r)
    return expanded_sum(m, "harmonic")


_CHUNK = 1 << 20
ORDERED_TERMS = 4 * _CHUNK
"""The most terms :func:`cumulative_discount` and :func:`harmonic` add one by one (a few
hundredths of a second, once, for the largest)."""
_HEAD = 4096
_DIGITS = 50


def expanded_sum(m: int, series: Literal["discount", "harmonic"]) -> float:
    """``D(m)`` (``series="discount"``, terms ``1 / ln(r + 1)``) or ``H(m)`` (``"harmonic"``,
    terms ``1 / r``) for any m >= 0, in constant time: the exact sum rounded to double
    precision (within a unit in the last place).

    The first 4096 terms are added with one rounding (:func:`math.fsum`); the rest, r = a..m with
    a = 4097, by the Euler-Maclaurin formula to the third derivative, in 50-digit decimals::

        sum f(r) = integral_a^m f + (f(a) + f(m)) / 2 + (f'(m) - f'(a)) / 12
                   - (f'''(m) - f'''(a)) / 720 + R,   |R| <= 2 zeta(4) / (2 pi)^4 |f'''(a)|

    (every derivative of either series keeps one sign): |R| is below 1e-15, under 1e-17 of
    either sum. The integral of ``1 / r`` is ``ln(m / a)``; that of ``1 / ln(r + 1)`` is
    ``Ei(ln(m + 1)) - Ei(ln(a + 1))``, from the exponential integral's series
    ``Ei(z) = gamma + ln z + sum over j >= 1 of z^j / (j j!)``, whose terms are positive.
    """
    if m <= _HEAD:
        if series == "discount":
            return math.fsum(1.0 / math.log(r + 1.0) for r in range(1, m + 1))
        return math.fsum(1.0 / r for r in range(1, m + 1))
    with decimal.localcontext(prec=_DIGITS):
        head = Decimal(expanded_sum(_HEAD, series))
        a, b = Decimal(_HEAD + 1), Decimal(m)
        if series == "discount":
            f, d1, d3 = _discount, _discount_d1, _discount_d3
            integral = _ei_difference((a + 1).ln(), (b + 1).ln())
        else:
            f, d1, d3 = _reciprocal, _reciprocal_d1, _reciprocal_d3
            integral = (b / a).ln()
        tail = integral + (f(a) + f(b)) / 2 + (d1(b) - d1(a)) / 12 - (d3(b) - d3(a)) / 720
        return float(head + tail)


def _discount(x: Decimal) -> Decimal:
    return 1 / (x + 1).ln()


def _discount_d1(x: Decimal) -> Decimal:
    """The first derivative of ``1 / ln(x + 1)``: ``-1 / (u L^2)``, u = x + 1, L = ln u."""
    u = x + 1
    return -1 / (u * u.ln() ** 2)


def _discount_d3(x: Decimal) -> Decimal:
    """The third derivative of ``1 / ln(x + 1)``: ``-(2 L^2 + 6 L + 6) / (u^3 L^4)``."""
    u = x + 1
    log = u.ln()
    return -(2 * log**2 + 6 * log + 6) / (u**3 * log**4)


def _reciprocal(x: Decimal) -> Decimal:
    return 1 / x


def _reciprocal_d1(x: Decimal) -> Decimal:
    return -1 / x**2


def _reciprocal_d3(x: Decimal) -> Decimal:
    return -6 / x**4


def _ei_difference(low: Decimal, high: Decimal) -> Decimal:
    """``Ei(high) - Ei(low)`` for 0 < low <= high: ``ln(high / low)`` plus the series' terms
    ``(high^j - low^j) / (j j!)``, added until they fall below the sum's last digit (past
    j = 2 high, where each is under half the one before)."""
    total = (high / low).ln()
    power_low = power_high = Decimal(1)
    j = 0
    while True:
        j += 1
        power_low, power_high = power_low * low / j, power_high * high / j
        term = (power_high - power_low) / j
        total += term
        if j > 2 * high and term <= total.scaleb(-_DIGITS):
            return total


def _ordered_sum(m: int, term: Callable[[pl.Expr], pl.Expr]) -> float:
    """``sum over r = 1..m of term(r)`` (``r`` a Float64 expression), added in order by the
    cumulative sum the rank table adds with, a million terms at a time: memory stays small for
    a label space of any size (the sum carried into each chunk's cumulative sum keeps the order
    of one cumulative sum over all the terms)."""
    total = 0.0
    for start in range(1, m + 1, _CHUNK):
        r = pl.int_range(start, min(start + _CHUNK, m + 1), dtype=pl.Int64).cast(pl.Float64)
        total = pl.select(pl.lit(total).append(term(r)).cum_sum().last()).item()
    return total


def _unscored_rank(n_labels: int | None) -> pl.Expr:
    return pl.lit(n_labels, dtype=pl.Int64)


def _prefix_at(column: str, m: pl.Expr) -> pl.Expr:
    """The prefix sum that ``column`` holds (its value for m = 1..N at index m - 1) at ``m``:
    0 for m <= 0. ``m`` must not exceed the table's rows."""
    at = pl.col(column).gather((m - 1).clip(0, pl.len() - 1))
    return pl.when(m > 0).then(at).otherwise(0.0)


def rank_table(
    data: pl.DataFrame | pl.LazyFrame,
    *,
    sample: str | Sequence[str] = "sample",
    score: str = "score",
    truth: str = "truth",
    n_labels: int | None = None,
) -> pl.LazyFrame:
    """The long table sorted by sample and descending score, with the rank columns added.

    Scores must not be NaN (the frame functions check that first); a null score is an unscored
    label of a top-k table, ranked last (see the module's notes).

    Parameters
    ----------
    data
        The long table (a DataFrame or LazyFrame).
    sample
        The sample column, or several (a model column and the sample id): a sample is every row
        sharing them.
    score, truth
        The score column, and the truth column (cast to Float64 once, here).
    n_labels
        The size of a top-k table's label space: where the unscored labels without a row rank.

    Returns
    -------
    polars.LazyFrame
        Every input column and the rank columns of the module's list (``rm_rank``,
        ``rm_block_start``, ``rm_positive_rank``, the cumulative discounts, ...).

    Raises
    ------
    ValueError
        For an input column named like a rank column.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics.metrics.ranks import rank_table
    >>> df = pl.DataFrame({"sample": [1, 1, 1], "score": [0.5, 0.9, 0.5], "truth": [1, 0, 1]})
    >>> rank_table(df).select("score", "rm_rank", "rm_block_start", "rm_positive_rank").collect()
    shape: (3, 4)
    ┌───────┬─────────┬────────────────┬──────────────────┐
    │ score ┆ rm_rank ┆ rm_block_start ┆ rm_positive_rank │
    │ ---   ┆ ---     ┆ ---            ┆ ---              │
    │ f64   ┆ i64     ┆ i64            ┆ i64              │
    ╞═══════╪═════════╪════════════════╪══════════════════╡
    │ 0.9   ┆ 1       ┆ 1              ┆ 0                │
    │ 0.5   ┆ 3       ┆ 2              ┆ 2                │
    │ 0.5   ┆ 3       ┆ 2              ┆ 2                │
    └───────┴─────────┴────────────────┴──────────────────┘
    """
    keys = [sample] if isinstance(sample, str) else list(sample)
    lf = data.lazy()
    clash = [c for c in COLUMNS if c in lf.collect_schema()]
    if clash:
        raise ValueError(f"column {clash[0]!r} is reserved for the rank table; rename it")
    s = pl.col(score)
    positive = (pl.col(truth) > 0).cast(pl.Int64)
    row = pl.col(_ROW)
    first, last, start = pl.col(_FIRST), pl.col(_LAST), pl.col(_START)
    # Cumulative discount D(m) for m = 1..N lives at index m - 1 of __discount (D(0) = 0).
    term = 1.0 / (row + 2).cast(pl.Float64).log()
    unscored = s.is_null()

    def discount_at(m: pl.Expr) -> pl.Expr:
        return _prefix_at("__discount", m)

    return (
        _sorted_blocks(lf.with_columns(pl.col(truth).cast(pl.Float64)), keys, score)
        .with_columns(term.cum_sum().alias("__discount"), positive.cum_sum().alias("__positives"))
        .with_columns(
            (last - start + 1).alias(RANK),
            (first - start + 1).alias(BLOCK_START),
            (
                pl.col("__positives").gather(last)
                - pl.col("__positives").gather(start)
                + positive.gather(start)
            ).alias(POSITIVE_RANK),
            (
                pl.col("__positives").gather(first)
                - positive.gather(first)
                - pl.col("__positives").gather(start)
                + positive.gather(start)
                + 1
            ).alias(POSITIVE_BLOCK_START),
            (row - start + 1).alias(POSITION),
        )
        .with_columns(
            pl.when(unscored)
            .then(pl.lit(n_labels and cumulative_discount(n_labels), dtype=pl.Float64))
            .otherwise(discount_at(pl.col(RANK)))
            .alias(DISCOUNT_TO),
            discount_at(pl.col(BLOCK_START) - 1).alias(DISCOUNT_BEFORE),
            discount_at(pl.col(POSITION)).alias(POSITION_DISCOUNT),
            discount_at(positive.sum().over(keys)).alias(IDEAL_DISCOUNT),
        )
        .with_columns(pl.when(unscored).then(_unscored_rank(n_labels)).otherwise(RANK).alias(RANK))
        .drop(*_BLOCK_COLUMNS, "__discount", "__positives")
    )


_ROW, _START, _FIRST, _LAST = "__row", "__start", "__first", "__last"
_BLOCK_COLUMNS = (_ROW, _START, _FIRST, _LAST)


def _sorted_blocks(lf: pl.LazyFrame, keys: Sequence[str], score: str) -> pl.LazyFrame:
    """``lf`` sorted by ``keys`` and descending ``score`` (nulls last, tied with each other),
    with the columns of :func:`_blocks`."""
    descending = [False] * len(keys) + [True]
    return _blocks(lf.sort([*keys, score], descending=descending, nulls_last=True), keys, score)


def _blocks(
    lf: pl.LazyFrame,
    keys: Sequence[str],
    score: str,
    index: type[pl.datatypes.IntegerType] = pl.Int64,
) -> pl.LazyFrame:
    """``lf``, in rank order (sorted by ``keys`` and descending ``score``), with each row's
    index (``__row``, of type ``index``) and those of its sample's first row (``__start``) and
    of its tied block's first and last rows (``__first``, ``__last``): a row's rank "max" in
    its sample is ``__last - __start + 1``, its rank "min" ``__first - __start + 1``."""
    s, row = pl.col(score), pl.col(_ROW)
    new_block = pl.col("__new_sample") | s.ne_missing(s.shift(1))
    return (
        lf.with_columns(
            pl.int_range(pl.len(), dtype=index).alias(_ROW), starts_run(keys).alias("__new_sample")
        )
        .with_columns(new_block.alias("__new_block"))
        .with_columns(
            pl.when("__new_sample").then(row).forward_fill().alias(_START),
            pl.when("__new_block").then(row).forward_fill().alias(_FIRST),
            pl.when(pl.col("__new_block").shift(-1, fill_value=True))
            .then(row)
            .backward_fill()
            .alias(_LAST),
        )
        .drop("__new_sample", "__new_block")
    )


def starts_run(keys: Sequence[str]) -> pl.Expr:
    """Whether a row's ``keys`` differ from the previous row's (nulls compared as values): in
    rows sorted by ``keys``, the first row of each sample."""
    return pl.any_horizontal(pl.col(k).ne_missing(pl.col(k).shift(1)) for k in keys)


def orderable(dtype: pl.DataType) -> bool:
    """Whether ``>`` orders values of ``dtype`` exactly as they group: integers, strings,
    booleans and dates and times (not floats: -0.0 and 0.0 are one group key)."""
    return dtype.is_integer() or dtype.is_temporal() or dtype in (pl.String, pl.Boolean)


def ordered_by(schema: pl.Schema, keys: Sequence[str], *, descending: str | None = None) -> pl.Expr:
    """Whether every row's ``keys`` come after the previous row's, compared left to right, or
    equal them where the column ``descending`` does not increase (None: never, so that no two
    rows share the keys); False where a key's type has no plain order (:func:`orderable`) or a
    value compared is null. Each row is compared with the one before by two zero-copy slices
    of a column, not a shifted copy, which would copy the column."""
    if not all(orderable(schema[key]) for key in keys):
        return pl.lit(False)

    def this_and_previous(name: str) -> tuple[pl.Expr, pl.Expr]:
        return pl.col(name).slice(1), pl.col(name).slice(0, pl.len() - 1)

    after = pl.lit(False)
    if descending is not None:
        this, previous = this_and_previous(descending)
        after = this <= previous
    for key in reversed(keys):
        this, previous = this_and_previous(key)
        after = (this > previous) | ((this == previous) & after)
    return after.fill_null(False).all()


def in_rank_order(frame: pl.DataFrame, keys: Sequence[str], score: str) -> bool:
    """Whether ``frame``'s rows come in rank order: sorted by ``keys`` and, within a sample, by
    descending ``score`` (:func:`ordered_by`): the order top-k predictions are written in, which
    :func:`scanned_ranks` ranks by scans."""
    in_order = ordered_by(frame.schema, keys, descending=score)
    # Lazy: one pass, without a column of comparisons held.
    return bool(frame.lazy().select(in_order).collect().item())


def scanned_ranks(frame: pl.DataFrame, keys: Sequence[str], score: str) -> pl.DataFrame:
    """``frame``, whose rows come in rank order (:func:`in_rank_order`), with ``rm_rank`` and
    ``rm_block_start`` read off by scans, without a sort or a window: what
    :func:`positive_ranks` reads where the rows carry them."""
    start = pl.col(_START)
    # 32-bit positions where they fit: the table is in memory, and this halves what they add.
    index = pl.Int32 if frame.height < 2**31 else pl.Int64
    return (
        _blocks(frame.lazy(), keys, score, index)
        .with_columns(
            (pl.col(_LAST) - start + 1).alias(RANK),
            (pl.col(_FIRST) - start + 1).alias(BLOCK_START),
        )
        .drop(*_BLOCK_COLUMNS)
        .collect()
    )


def window_ranks(
    data: pl.DataFrame | pl.LazyFrame,
    *,
    sample: str | Sequence[str] = "sample",
    score: str = "score",
    truth: str = "truth",
    n_labels: int | None = None,
    blocks: bool = False,
    top_k: bool = False,
) -> pl.LazyFrame:
    """The long table with ``rm_rank`` and ``rm_positive_rank`` only, as window ranks over each
    sample, without sorting the table (cheaper than :func:`rank_table`'s sort): what lrap,
    lwlrap, ranking loss and average precision read.

    ``rm_rank`` is as in :func:`rank_table`; ``rm_positive_rank`` is set on the positive rows
    only (the rank "max" of the score among the sample's positives, which is
    :func:`rank_table`'s value there) and null on the others. ``blocks=True`` adds
    ``rm_block_start`` and ``rm_positive_block_start``
    (``rm_positive_block_start`` on positive rows only), what the retrieval metrics read.
    ``truth`` is cast to Float64. ``top_k``: the table may have unscored rows (null score, top-k
    tables), ranked as :func:`rank_table` ranks them; a dense table has none (the checks refuse
    a null score), and its plan spends nothing on them.
    """
    keys = [sample] if isinstance(sample, str) else list(sample)
    lf = data.lazy()
    s, positive = pl.col(score), is_positive(truth, lf.collect_schema()[truth])
    positive_score = pl.when(positive).then(s)

    def ranked(rank: pl.Expr, unscored: pl.Expr) -> pl.Expr:
        """``rank`` over each sample; ``unscored`` on the unscored rows of a top-k table."""
        rank = rank.over(keys).cast(pl.Int64)
        return pl.when(s.is_null()).then(unscored).otherwise(rank) if top_k else rank

    columns = [
        ranked(s.rank("max", descending=True), _unscored_rank(n_labels)).alias(RANK),
        ranked(
            positive_score.rank("max", descending=True),
            pl.when(positive).then(positive.sum().over(keys).cast(pl.Int64)),
        ).alias(POSITIVE_RANK),
    ]
    if blocks:
        columns += [
            ranked(s.rank("min", descending=True), s.count().over(keys).cast(pl.Int64) + 1)
            .alias(BLOCK_START),
            ranked(
                positive_score.rank("min", descending=True),
                pl.when(positive).then(positive_score.count().over(keys).cast(pl.Int64) + 1),
            ).alias(POSITIVE_BLOCK_START),
        ]  # fmt: skip
    return lf.with_columns(*columns, pl.col(truth).cast(pl.Float64))


def with_discounts(
    ranked: pl.LazyFrame,
    *,
    sample: str | Sequence[str],
    score: str,
    truth: str,
    n_labels: int | None = None,
    cut: int | None = None,
) -> pl.LazyFrame:
    """Add ``rm_discount_to``, ``rm_discount_before`` and ``rm_ideal_discount`` to window ranks
    holding ``rm_rank`` and ``rm_block_start``: what dcg and ndcg read, as :func:`rank_table`
    has them (the same sums). The rows may be any subset of the samples' rows (such as
    :func:`positive_ranks`' positives alone); the discounts are read from the prefix sums
    ``D(1) .. D(m)`` (:func:`_prefix_sums`), m the largest position the rows read (a scored
    rank, an unscored block's start, a positive count), never as long as a top-k table's label
    space (an unscored row's ``D(n_labels)`` is computed once, in constant time for a large
    label space: :func:`cumulative_discount`). ``cut``: every read of the discounts is capped
    at ``D(cut)`` (dcg@K keys, the largest K), so an unscored row takes
    ``D(min(n_labels, cut))``, which reads the same once capped.
    A rank table is returned as it is."""
    if DISCOUNT_TO in ranked.collect_schema():
        return ranked
    keys = [sample] if isinstance(sample, str) else list(sample)
    scored = pl.col(score).is_not_null()
    # The ideal from each sample's positive count, joined back: a third of the cost of a window.
    ideal = ranked.group_by(keys).agg((pl.col(truth) > 0).sum().cast(pl.Int64).alias("__n"))
    # The largest position read: a scored row's rank, an unscored row's block start - 1 (the
    # sample's scored labels, which no positive row's rank need reach); the ideal reads up to
    # the largest positive count.
    read = pl.when(scored).then(pl.col(RANK)).otherwise(pl.col(BLOCK_START) - 1)
    discount = _prefix_sums(_discount_term, read)
    ideal = ideal.with_columns(
        _prefix_sums(_discount_term, pl.col("__n"))(pl.col("__n")).alias(IDEAL_DISCOUNT)
    ).drop("__n")
    last = n_labels if cut is None or n_labels is None else min(n_labels, cut)
    unscored = pl.lit(last and cumulative_discount(last), dtype=pl.Float64)
    return ranked.with_columns(
        # An unscored row reads no rank (the label space, past the sums).
        pl.when(scored)
        .then(discount(pl.when(scored).then(RANK)))
        .otherwise(unscored)
        .alias(DISCOUNT_TO),
        discount(pl.col(BLOCK_START) - 1).alias(DISCOUNT_BEFORE),
    ).join(ideal, on=keys, how="left", nulls_equal=True)


def _discount_term(r: pl.Expr) -> pl.Expr:
    """The dcg discount of position ``r``, ``1 / ln(r + 1)``: what ``D(m)`` sums."""
    return 1.0 / (r + 1.0).log()


def _prefix_sums(
    term: Callable[[pl.Expr], pl.Expr], bound: pl.Expr
) -> Callable[[pl.Expr], pl.Expr]:
    """A reader of the prefix sums ``S(m) = sum over r = 1..m of term(r)`` (``r`` a Float64),
    added in order by one cumulative sum over r = 1 .. the largest of ``bound`` over the
    frame's rows: within the frame's expressions, no table joined. The reader gives ``S(m)``
    for m from 1 to that bound, 0 for m <= 0 or null; m beyond the bound is an error."""
    largest = bound.max().cast(pl.Int64).fill_null(0).clip(lower_bound=1)
    sums = term(pl.int_range(1, largest + 1, dtype=pl.Int64).cast(pl.Float64)).cum_sum()

    def at(m: pl.Expr) -> pl.Expr:
        m = m.cast(pl.Int64)
        return pl.when(m > 0).then(sums.gather((m - 1).clip(lower_bound=0))).otherwise(0.0)

    return at


def with_lowest_positive(
    data: pl.LazyFrame, *, sample: str | Sequence[str], score: str, truth: str
) -> pl.LazyFrame:
    """Add ``rm_lowest_positive``, each sample's lowest positive score, from a per-sample
    aggregation joined back to the rows: no sort and no window."""
    keys = [sample] if isinstance(sample, str) else list(sample)
    true = is_positive(truth, data.collect_schema()[truth])
    lowest = data.group_by(keys).agg(pl.col(score).filter(true).min().alias(LOWEST_POSITIVE))
    return data.join(lowest, on=keys, how="left", nulls_equal=True)


def with_harmonics(ranked: pl.LazyFrame, *, score: str = "score") -> pl.LazyFrame:
    """Add ``rm_harmonic_to`` and ``rm_harmonic_before`` to a table holding ``rm_rank`` and
    ``rm_block_start`` (null on unscored rows), read from the prefix sums ``H(1) .. H(m)``
    (:func:`_prefix_sums`), m the largest rank of a scored row (the rows may be any subset of
    the samples' rows, such as :func:`positive_ranks`' positives alone)."""
    scored = pl.col(score).is_not_null()
    harmonic_at = _prefix_sums(lambda r: 1.0 / r, pl.col(RANK).filter(scored))
    return ranked.with_columns(
        # An unscored row reads nothing (its rank, the label space, is past the sums).
        pl.when(scored).then(harmonic_at(pl.when(scored).then(RANK))).alias(HARMONIC_TO),
        pl.when(scored)
        .then(harmonic_at(pl.when(scored).then(pl.col(BLOCK_START) - 1)))
        .alias(HARMONIC_BEFORE),
    )


def positive_counts(
    *, score: str = "score", truth: str = "truth", truth_type: pl.DataType
) -> list[pl.Expr]:
    """Aggregations over one sample's rows that :func:`positive_ranks` reads: its lowest
    scored positive score (``rm_lowest_positive``), its scored labels (``rm_scored``), its
    rows (``rm_labels``) and its positives (``rm_positives``). ``truth_type``: the truth
    column's type (:func:`is_positive`)."""
    s, true = pl.col(score), is_positive(truth, truth_type)
    return [
        s.filter(true).min().alias(LOWEST_POSITIVE),
        s.count().cast(pl.Int64).alias(SCORED),
        pl.len().cast(pl.Int64).alias(LABELS),
        true.sum().cast(pl.Int64).alias(POSITIVES),
    ]


def positive_ranks(
    data: pl.DataFrame | pl.LazyFrame,
    samples: pl.LazyFrame,
    *,
    sample: str | Sequence[str] = "sample",
    score: str = "score",
    truth: str = "truth",
    n_labels: int | None = None,
    blocks: bool = False,
    ranked: bool = False,
) -> pl.LazyFrame:
    """The positive rows alone (truth > 0), with the columns of :func:`window_ranks` as it
    computes them over all the samples' rows: what a metric reading only its positives' ranks
    needs (lrap, ndcg with binary truth, the retrieval metrics). ``samples`` has a row per
    sample with its :func:`positive_counts`; the rows carry the sample's row count
    (``rm_labels``). ``ranked``: the scored rows of ``data`` carry ``rm_rank`` and
    ``rm_block_start`` already (:func:`scanned_ranks`), and nothing is ranked over all rows.

    A row scoring below every scored positive of its sample changes no positive's ranks, so
    the rank windows run over the rows scoring at least the sample's lowest scored positive
    only, and the positives' own ranks over the positive rows. An unscored positive (top-k
    tables) is ranked in closed form: rank ``n_labels``, its block starting after the
    sample's scored labels. On the top-k benchmark (true labels mostly ranked high) the
    windows see under half of the table. On a dense table (``n_labels`` None, not ``ranked``),
    a sample with at most :data:`PAIRED_POSITIVES` positives has them ranked by pairs instead
    (:func:`_ranked_by_pairs`: a count per positive, no window and no sort).
    """
    keys = [sample] if isinstance(sample, str) else list(sample)
    lf, s = data.lazy(), pl.col(score)
    positive = is_positive(truth, lf.collect_schema()[truth])

    def over(rank: pl.Expr) -> pl.Expr:
        return rank.over(keys).cast(pl.Int64)

    if ranked:
        lf = lf.filter(positive).cache()  # one pass over every row, for both kinds of positive
        scored = lf.filter(s.is_not_null())
    else:
        lowest = samples.select(*keys, LOWEST_POSITIVE, POSITIVES)
        kept = (
            lf.join(lowest, on=keys, how="inner", nulls_equal=True)
            .filter(s >= pl.col(LOWEST_POSITIVE))
            .drop(LOWEST_POSITIVE)
        )
        paired = pl.col(POSITIVES) <= PAIRED_POSITIVES
        if n_labels is None:  # no unscored positive, which the pairs would not rank
            kept = kept.cache()
            pairs = _ranked_by_pairs(
                kept.filter(paired).drop(POSITIVES), keys, score, truth, blocks=blocks
            )
            kept = kept.filter(~paired)
        # The block starts' window only where they are read.
        starts = [over(s.rank("min", descending=True)).alias(BLOCK_START)] if blocks else []
        scored = (
            kept.drop(POSITIVES)
            .with_columns(over(s.rank("max", descending=True)).alias(RANK), *starts)
            .filter(positive)
        )
    unscored = (
        lf.filter(positive & s.is_null())
        .join(samples.select(*keys, SCORED), on=keys, how="inner", nulls_equal=True)
        .with_columns(_unscored_rank(n_labels).alias(RANK), (pl.col(SCORED) + 1).alias(BLOCK_START))
        .drop(SCORED)
    )
    if not blocks:
        scored, unscored = scored.drop(BLOCK_START, strict=False), unscored.drop(BLOCK_START)
    both = pl.concat([scored, unscored], how="vertical_relaxed")
    # Among the positives (a few a sample, where windows pay per sample, not per row): sorted,
    # an unscored one below every scored one.
    start = pl.col(_START)
    columns = [(pl.col(_LAST) - start + 1).alias(POSITIVE_RANK)]
    if blocks:
        columns.append((pl.col(_FIRST) - start + 1).alias(POSITIVE_BLOCK_START))
    both = both.join(samples.select(*keys, LABELS), on=keys, how="inner", nulls_equal=True)
    ranked_rows = (
        _sorted_blocks(both, keys, score)
        .with_columns(*columns, pl.col(truth).cast(pl.Float64))
        .drop(*_BLOCK_COLUMNS)
    )
    if ranked or n_labels is not None:
        return ranked_rows
    pairs = pairs.join(samples.select(*keys, LABELS), on=keys, how="inner", nulls_equal=True)
    pairs = pairs.with_columns(pl.col(truth).cast(pl.Float64))
    names = ranked_rows.collect_schema().names()
    return pl.concat([ranked_rows, pairs.select(names)], how="vertical_relaxed")


# A sample with at most this many positives has them ranked by pairs (each positive against the
# rows scoring at least its sample's lowest positive, counted), the others by windows: a pair
# costs Polars less than a row ranked by the four windows (benchmarks/floors.py's placing
# floors), and the bound keeps the pairs of a sample within this many times its rows.
PAIRED_POSITIVES = 8
_AT, _ID, _POSITIVE = "__at", "__id", "__positive"


def _ranked_by_pairs(
    kept: pl.LazyFrame, keys: Sequence[str], score: str, truth: str, *, blocks: bool
) -> pl.LazyFrame:
    """The positive rows of ``kept`` (a sample's rows scoring at least its lowest positive,
    none of them unscored) with :func:`window_ranks`' ranks, each a count over the pairs of a
    positive and a row of its sample scoring at least as high: ``rm_rank`` the rows and
    ``rm_positive_rank`` the positive ones; with ``blocks``, also ``rm_block_start``, 1 + the
    rows scoring higher, and the same over the positives."""
    s, at = pl.col(score), pl.col(_AT)
    positive = is_positive(truth, kept.collect_schema()[truth])
    positives = kept.filter(positive).with_row_index(_ID)
    others = kept.select(*keys, s, positive.alias(_POSITIVE))
    higher, other_positive = s > at, pl.col(_POSITIVE)
    counts = (
        positives.select(_ID, *keys, s.alias(_AT))
        .join(others, on=keys, how="inner", nulls_equal=True)
        .filter(s >= at)
        .group_by(_ID)
        .agg(
            pl.len().cast(pl.Int64).alias(RANK),
            other_positive.sum().cast(pl.Int64).alias(POSITIVE_RANK),
            *(
                [
                    (higher.sum() + 1).cast(pl.Int64).alias(BLOCK_START),
                    ((higher & other_positive).sum() + 1)
                    .cast(pl.Int64)
                    .alias(POSITIVE_BLOCK_START),
                ]
                if blocks
                else []
            ),
        )
    )
    return positives.join(counts, on=_ID, how="inner").drop(_ID)


def first_hits(
    positives: pl.LazyFrame, *, sample: str | Sequence[str], score: str, truth: str
) -> pl.LazyFrame:
    """A row per position of each sample's first tied block holding a scored positive, with
    ``rm_position`` and ``rm_first_hit``: for the block of n labels starting at position a, p
    of them positive, position a + j - 1 gets ``C(n - j, p - 1) / C(n, p)``, the chance that the
    first positive is there when the block's order is random. Summed over the positions up to
    K it is the chance of a positive within the top K (hit rate); divided by the position, the
    expected reciprocal rank (mrr). A sample without a scored positive has no row.

    Read from the sample's positive rows with ranks and blocks (:func:`positive_ranks` with
    ``blocks=True``, or any ranked rows: the negatives are not read): the first block holding
    a positive ends at the smallest rank of a scored positive, starts at its block start, and
    the positive rank there is p (every positive at or above it is in the block)."""
    keys = [sample] if isinstance(sample, str) else list(sample)
    hit = (pl.col(truth) > 0) & pl.col(score).is_not_null()
    a, end, p, j = pl.col("__a"), pl.col("__end"), pl.col("__p"), pl.col("__j")
    n = end - a + 1

    # ln(m!) for m = 1..N lives at index m - 1 of __log_factorial: every argument is at most
    # n, at most the rows of the exploded blocks.
    def log_factorial(m: pl.Expr) -> pl.Expr:
        return _prefix_at("__log_factorial", m)

    chance = (
        log_factorial(n - j) - log_factorial(p - 1) - log_factorial(n - j - p + 1)
        - log_factorial(n) + log_factorial(p) + log_factorial(n - p)
    ).exp()  # fmt: skip
    log_factorials = pl.int_range(1, pl.len() + 1, dtype=pl.Int64).cast(pl.Float64).log()
    return (
        positives.filter(hit)
        .group_by(keys)
        .agg(
            pl.col(BLOCK_START).min().cast(pl.Int64).alias("__a"),
            pl.col(RANK).min().cast(pl.Int64).alias("__end"),
            pl.col(POSITIVE_RANK).min().cast(pl.Int64).alias("__p"),
        )
        .with_columns(pl.int_ranges(1, n + 1, dtype=pl.Int64).alias("__j"))
        .explode("__j")
        .with_columns(log_factorials.cum_sum().alias("__log_factorial"))
        .select(
            *keys,
            (a + j - 1).alias(POSITION),
            pl.when(j <= n - p + 1).then(chance).otherwise(0.0).alias(FIRST_HIT),
        )
    )
