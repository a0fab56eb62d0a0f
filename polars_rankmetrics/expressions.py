"""Ranking metrics as Polars expressions over the long table, one value per sample.

Each function returns an aggregation over the rows of one sample, so it composes in
``group_by(sample).agg(...)`` (any extra group keys, such as a model column, just come along)::

    >>> import polars as pl
    >>> from polars_rankmetrics import expressions as rx
    >>> df = pl.DataFrame({
    ...     "sample": [0, 0, 0, 1, 1, 1],
    ...     "label": ["a", "b", "c"] * 2,
    ...     "score": [0.75, 0.5, 1.0, 1.0, 0.2, 0.1],
    ...     "truth": [1, 0, 0, 0, 0, 1],
    ... })
    >>> df.group_by("sample").agg(rx.coverage_error(), rx.lrap()).sort("sample")
    shape: (2, 3)
    ┌────────┬────────────────┬──────────┐
    │ sample ┆ coverage_error ┆ lrap     │
    │ ---    ┆ ---            ┆ ---      │
    │ i64    ┆ f64            ┆ f64      │
    ╞════════╪════════════════╪══════════╡
    │ 0      ┆ 2.0            ┆ 0.5      │
    │ 1      ┆ 3.0            ┆ 0.333333 │
    └────────┴────────────────┴──────────┘

The expressions do not validate their input; the frame functions and :func:`evaluate` do (NaN
scores, truth outside {0, 1}, repeated labels, ...). Binary metrics treat ``truth > 0`` as positive.
"""

from __future__ import annotations

import polars as pl

from polars_rankmetrics.ranks import block_start, descending_rank, positive_rank


def _inputs(score: str, truth: str) -> tuple[pl.Expr, pl.Expr]:
    return pl.col(score), pl.col(truth).cast(pl.Float64)


def coverage_error(score: str = "score", truth: str = "truth") -> pl.Expr:
    """Coverage error of one sample: the largest rank of a positive label.

    How many top-scored labels must be predicted to include every true one; ties take the largest
    rank. 0 when the sample has no positive label; L (the number of labels) when all are positive.
    Lower is better.
    """
    s, y = _inputs(score, truth)
    return (
        descending_rank(s).filter(y > 0).max().fill_null(0).cast(pl.Float64).alias("coverage_error")
    )


def _precisions(s: pl.Expr, y: pl.Expr) -> pl.Expr:
    """Per positive label j: the share of positives among the labels ranked at or above j."""
    positive = y > 0
    return (positive_rank(s, positive) / descending_rank(s)).filter(positive)


def lrap(score: str = "score", truth: str = "truth") -> pl.Expr:
    """Label ranking average precision of one sample.

    The mean over positive labels j of ``#{positive k : f_k >= f_j} / #{k : f_k >= f_j}``.
    1 when the sample has no positive label or no negative one (the ranking cannot be wrong).
    Higher is better; scikit-learn's ``label_ranking_average_precision_score``.
    """
    s, y = _inputs(score, truth)
    return _precisions(s, y).mean().fill_null(1.0).alias("lrap")


def lwlrap(score: str = "score", truth: str = "truth") -> pl.Expr:
    """One sample's contribution to label-weighted LRAP: the mean precision over its positives.

    Null when the sample has no positive label: it carries no weight in lwlrap, which averages
    these values with weight ``n_positives`` (times any sample weight). Unlike the Freesound 2019
    reference notebook, ties are not broken by sort order: a tie counts pessimistically, as in lrap.
    """
    s, y = _inputs(score, truth)
    return _precisions(s, y).mean().alias("lwlrap")


def n_positives(truth: str = "truth") -> pl.Expr:
    """The number of positive labels of one sample (lwlrap's weight)."""
    return (pl.col(truth) > 0).sum().alias("n_positives")


def ranking_loss(score: str = "score", truth: str = "truth") -> pl.Expr:
    """Ranking loss of one sample: the share of (positive, negative) pairs ordered wrongly.

    A pair is wrong when the positive scores lower than **or equal to** the negative (a tie counts
    as an error, as in scikit-learn's ``label_ranking_loss``). 0 when the sample has no positive or
    no negative label. Lower is better.
    """
    s, y = _inputs(score, truth)
    positive = y > 0
    wrong = (descending_rank(s) - positive_rank(s, positive)).filter(positive).sum()
    n_pos = positive.sum().cast(pl.Float64)
    pairs = n_pos * (pl.len().cast(pl.Float64) - n_pos)
    return (
        pl.when(pairs > 0).then(wrong.cast(pl.Float64) / pairs).otherwise(0.0).alias("ranking_loss")
    )


def _discounts(n: pl.Expr, k: int | None, log_base: float) -> pl.Expr:
    """``1 / log_b(r + 1)`` for positions r = 0..n, with position 0 and positions past k at 0."""
    r = pl.int_range(0, n + 1, dtype=pl.Int64)
    weight = pl.lit(float(log_base)).log() / (r + 1).cast(pl.Float64).log()
    keep = r >= 1 if k is None else (r >= 1) & (r <= k)
    return pl.when(keep).then(weight).otherwise(0.0)


def _tie_averaged_dcg(s: pl.Expr, y: pl.Expr, k: int | None, log_base: float) -> pl.Expr:
    # A tied block spanning positions a..b contributes mean(gain) * sum of discounts over a..b
    # (McSherry & Najork): each row adds gain * span_discount / block_size.
    cumulative = _discounts(pl.len(), k, log_base).cum_sum()
    last, first = descending_rank(s), block_start(s)
    span = cumulative.gather(last) - cumulative.gather(first - 1)
    size = (last - first + 1).cast(pl.Float64)
    return (y * span / size).sum()


def _ideal_dcg(y: pl.Expr, k: int | None, log_base: float) -> pl.Expr:
    return (y.sort(descending=True) * _discounts(pl.len(), k, log_base).slice(1)).sum()


def dcg(
    score: str = "score", truth: str = "truth", *, k: int | None = None, log_base: float = 2
) -> pl.Expr:
    """Discounted cumulative gain of one sample, tie-averaged, optionally cut at ``k``.

    ``sum over positions r <= k of gain_r / log_b(r + 1)`` with the truth as linear gain. Tied
    scores get the average over all their orders: a tied block takes its mean gain times the sum of
    the discounts of the positions it spans, also when the block straddles ``k``. 0 when every gain
    is 0. ``k`` larger than the number of labels means no cut.
    """
    s, y = _inputs(score, truth)
    name = "dcg" if k is None else f"dcg@{k}"
    return _tie_averaged_dcg(s, y, k, log_base).alias(name)


def ndcg(score: str = "score", truth: str = "truth", *, k: int | None = None) -> pl.Expr:
    """Normalized DCG of one sample: tie-averaged dcg@k over the ideal dcg@k.

    The ideal ranks the truth by itself. 0 when the ideal is 0 (no positive gain). In [0, 1];
    higher is better. Needs at least two labels per sample and non-negative truth (checked by the
    frame functions, as scikit-learn does).
    """
    s, y = _inputs(score, truth)
    name = "ndcg" if k is None else f"ndcg@{k}"
    ideal = _ideal_dcg(y, k, 2)
    actual = _tie_averaged_dcg(s, y, k, 2)
    return pl.when(ideal > 0).then(actual / ideal).otherwise(0.0).alias(name)
