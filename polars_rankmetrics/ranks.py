"""The one tie-aware rank computation every ranking metric is built on.

Each function returns an expression over the rows of *one sample* (use it inside
``group_by(sample).agg(...)`` or with ``.over(sample)``). Ranks are 1-based and descending: the
highest score has rank 1, and tied scores all take the largest rank of their block (scipy's and
scikit-learn's ``rankdata(..., "max")``, i.e. ``rank_ij = #{k : f_ik >= f_ij}``).

The DuckDB views in ``sql/`` compute the same quantities with ``count(*) OVER (PARTITION BY sample
ORDER BY score DESC)``, whose default RANGE frame includes the tied peers.
"""

from __future__ import annotations

import polars as pl


def descending_rank(score: pl.Expr) -> pl.Expr:
    """``#{k : f_k >= f_j}`` for every row j: how many labels score at least as high.

    Ties share the largest rank of their block (pessimistic). Null scores keep a null rank and
    do not count, which :func:`positive_rank` relies on.
    """
    return score.rank("max", descending=True)


def positive_rank(score: pl.Expr, positive: pl.Expr) -> pl.Expr:
    """``#{k positive : f_k >= f_j}`` for every positive row j; null on negative rows.

    The same rank as :func:`descending_rank`, taken among the sample's positives only.
    """
    return descending_rank(pl.when(positive).then(score))


def block_start(score: pl.Expr) -> pl.Expr:
    """The first position of a row's tie block: ``1 + #{k : f_k > f_j}``.

    With :func:`descending_rank` (the block's last position) it gives the span of positions a tied
    block occupies, over which dcg averages its gains.
    """
    return score.rank("min", descending=True)
