"""The rank table: the one tie-aware rank computation every ranking metric is built on.

:func:`rank_table` sorts the long table by sample and descending score and adds, to every row,
where it stands in its sample's ranking. Each metric in :mod:`polars_rankmetrics.expressions` is
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
``rm_discount_to``, ``rm_discount_before``, ``rm_position_discount``
    Cumulative dcg discounts ``D(m) = sum over r = 1..m of 1 / ln(r + 1)`` at ``rm_rank``, at
    ``rm_block_start - 1`` and at ``rm_position``: a tied block spanning positions a..b sums the
    discounts ``D(b) - D(a - 1)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

RANK = "rm_rank"
BLOCK_START = "rm_block_start"
POSITIVE_RANK = "rm_positive_rank"
POSITION = "rm_position"
DISCOUNT_TO = "rm_discount_to"
DISCOUNT_BEFORE = "rm_discount_before"
POSITION_DISCOUNT = "rm_position_discount"
COLUMNS = (
    RANK,
    BLOCK_START,
    POSITIVE_RANK,
    POSITION,
    DISCOUNT_TO,
    DISCOUNT_BEFORE,
    POSITION_DISCOUNT,
)


def rank_table(
    data: pl.DataFrame | pl.LazyFrame,
    *,
    sample: str | Sequence[str] = "sample",
    score: str = "score",
    truth: str = "truth",
) -> pl.LazyFrame:
    """The long table sorted by sample and descending score, with the rank columns added.

    ``sample`` may name several columns (e.g. a model column and the sample id): a sample is
    every row sharing them. ``truth`` is cast to Float64 once, here. Scores must not be null or
    NaN (the frame functions check that first). Every other column is kept.

    >>> import polars as pl
    >>> from polars_rankmetrics.ranks import rank_table
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
    row = pl.col("__row")
    new_sample = pl.any_horizontal(pl.col(k).ne_missing(pl.col(k).shift(1)) for k in keys)
    new_block = pl.col("__new_sample") | s.ne(s.shift(1)).fill_null(True)
    first, last, start = pl.col("__first"), pl.col("__last"), pl.col("__start")
    # Cumulative discount D(m) for m = 1..N lives at index m - 1 of __discount (D(0) = 0).
    term = 1.0 / (row + 2).cast(pl.Float64).log()
    cumulative = pl.col("__discount")

    def discount_at(m: pl.Expr) -> pl.Expr:
        return pl.when(m > 0).then(cumulative.gather((m - 1).clip(lower_bound=0))).otherwise(0.0)

    return (
        lf.with_columns(pl.col(truth).cast(pl.Float64))
        .sort([*keys, score], descending=[False] * len(keys) + [True])
        .with_columns(
            pl.int_range(pl.len(), dtype=pl.Int64).alias("__row"), new_sample.alias("__new_sample")
        )
        .with_columns(new_block.alias("__new_block"), term.cum_sum().alias("__discount"))
        .with_columns(
            pl.when("__new_sample").then(row).forward_fill().alias("__start"),
            pl.when("__new_block").then(row).forward_fill().alias("__first"),
            pl.when(pl.col("__new_block").shift(-1, fill_value=True))
            .then(row)
            .backward_fill()
            .alias("__last"),
            positive.cum_sum().alias("__positives"),
        )
        .with_columns(
            (last - start + 1).alias(RANK),
            (first - start + 1).alias(BLOCK_START),
            (
                pl.col("__positives").gather(last)
                - pl.col("__positives").gather(start)
                + positive.gather(start)
            ).alias(POSITIVE_RANK),
            (row - start + 1).alias(POSITION),
        )
        .with_columns(
            discount_at(pl.col(RANK)).alias(DISCOUNT_TO),
            discount_at(pl.col(BLOCK_START) - 1).alias(DISCOUNT_BEFORE),
            discount_at(pl.col(POSITION)).alias(POSITION_DISCOUNT),
        )
        .drop(
            "__row",
            "__new_sample",
            "__new_block",
            "__discount",
            "__start",
            "__first",
            "__last",
            "__positives",
        )
    )


def window_ranks(
    data: pl.DataFrame | pl.LazyFrame,
    *,
    sample: str | Sequence[str] = "sample",
    score: str = "score",
    truth: str = "truth",
) -> pl.LazyFrame:
    """The long table with ``rm_rank`` and ``rm_positive_rank`` only, as window ranks over each
    sample, without sorting the table (about a third faster than :func:`rank_table` on the
    benchmark table): what lrap, lwlrap, ranking loss and average precision read.

    ``rm_rank`` is as in :func:`rank_table`; ``rm_positive_rank`` is set on the positive rows
    only (the rank "max" of the score among the sample's positives, which is
    :func:`rank_table`'s value there) and null on the others. ``truth`` is cast to Float64.
    """
    keys = [sample] if isinstance(sample, str) else list(sample)
    lf = data.lazy()
    s, positive = pl.col(score), pl.col(truth) > 0
    return lf.with_columns(pl.col(truth).cast(pl.Float64)).with_columns(
        s.rank("max", descending=True).over(keys).cast(pl.Int64).alias(RANK),
        pl.when(positive)
        .then(s)
        .rank("max", descending=True)
        .over(keys)
        .cast(pl.Int64)
        .alias(POSITIVE_RANK),
    )
