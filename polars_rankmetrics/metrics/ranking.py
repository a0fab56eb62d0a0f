"""Ranking metrics as Polars expressions: one value per sample, aggregated over its rank table rows.

Build the rank table once (:func:`~polars_rankmetrics.metrics.ranks.rank_table`), then any metrics
compose in one ``group_by(...).agg(...)``; extra group keys, such as a model column, just come
along::

    >>> import polars as pl
    >>> from polars_rankmetrics import expressions as rx, rank_table
    >>> df = pl.DataFrame({
    ...     "sample": [0, 0, 0, 1, 1, 1],
    ...     "label": ["a", "b", "c"] * 2,
    ...     "score": [0.75, 0.5, 1.0, 1.0, 0.2, 0.1],
    ...     "truth": [1, 0, 0, 0, 0, 1],
    ... })
    >>> (rank_table(df).group_by("sample").agg(rx.coverage_error(), rx.lrap())
    ...  .sort("sample").collect())
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
No expression depends on row order.
"""

from __future__ import annotations

import math
from typing import Literal

import polars as pl

from polars_rankmetrics.metrics.ranks import (
    BLOCK_START,
    DISCOUNT_BEFORE,
    DISCOUNT_TO,
    IDEAL_DISCOUNT,
    LABELS,
    LOWEST_POSITIVE,
    POSITION_DISCOUNT,
    POSITIVE_RANK,
    RANK,
    cumulative_discount,
)

_rank, _positive_rank = pl.col(RANK), pl.col(POSITIVE_RANK)


def _positive(truth: str) -> pl.Expr:
    return pl.col(truth) > 0


def n_positives(truth: str = "truth") -> pl.Expr:
    """The number of positive labels of one sample (lwlrap's weight).

    Parameters
    ----------
    truth
        The truth column: a label is positive where its truth is > 0.

    Returns
    -------
    polars.Expr
        The aggregation ``n_positives`` (UInt32).

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics import expressions as rx, rank_table
    >>> one_sample = pl.DataFrame(
    ...     {"sample": [0, 0, 0], "score": [0.75, 0.5, 1.0], "truth": [1, 0, 0]}
    ... )
    >>> rank_table(one_sample).select(rx.n_positives()).collect().item()
    1
    """
    return _positive(truth).sum().alias("n_positives")


def label_count(n_labels: int | None = None, *, positives_only: bool = False) -> pl.Expr:
    """L, the number of labels of one sample: its rows, or ``n_labels`` on a top-k table (where
    only the scored and the true labels have rows). ``positives_only``: the rows are the
    sample's positive rows of :func:`~polars_rankmetrics.metrics.ranks.positive_ranks`, which carry
    its row count.

    Parameters
    ----------
    n_labels
        The label space L of a top-k table, whose samples have rows for their scored and true labels
        only (None: every label has a row).
    positives_only
        The rows are the sample's positive rows alone
        (:func:`~polars_rankmetrics.metrics.ranks.positive_ranks`), which carry its label count.

    Returns
    -------
    polars.Expr
        The aggregation L, a Float64.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics import expressions as rx, rank_table
    >>> one_sample = pl.DataFrame(
    ...     {"sample": [0, 0, 0], "score": [0.75, 0.5, 1.0], "truth": [1, 0, 0]}
    ... )
    >>> rank_table(one_sample).select(rx.label_count()).collect().item()
    3.0
    """
    if n_labels is not None:
        return pl.lit(float(n_labels))
    return (pl.col(LABELS).first() if positives_only else pl.len()).cast(pl.Float64)


def coverage_error(
    truth: str = "truth",
    *,
    score: str = "score",
    n_labels: int | None = None,
    using: Literal["scores", "lowest", "ranks"] = "scores",
) -> pl.Expr:
    """Coverage error of one sample: the largest rank of a positive label.

    How many top-scored labels must be predicted to include every true one; ties take the largest
    rank. 0 when the sample has no positive label; L (the number of labels) when all are positive,
    or (top-k table, ``n_labels`` = L) when a positive label is unscored. Lower is better. It needs
    no rank table: the largest rank "max" of a positive is the number of labels scoring at least
    the lowest positive score. ``using`` says where that score comes from: ``"scores"``, the
    sample's rows, inside the aggregation (any rows); ``"lowest"``, the rows'
    ``rm_lowest_positive`` (:func:`~polars_rankmetrics.metrics.ranks.with_lowest_positive`, a join:
    cheaper than the comparison with an aggregate). ``"ranks"`` reads the rows' ``rm_rank``
    instead (window ranks or the rank table, where other metrics need them).

    Parameters
    ----------
    truth
        The truth column: a label is positive where its truth is > 0.
    score
        The score column.
    n_labels
        The label space L of a top-k table, whose samples have rows for their scored and true labels
        only (None: every label has a row).
    using
        Where the lowest positive score comes from (see above).

    Returns
    -------
    polars.Expr
        The aggregation ``coverage_error``.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics import expressions as rx, rank_table
    >>> one_sample = pl.DataFrame(
    ...     {"sample": [0, 0, 0], "score": [0.75, 0.5, 1.0], "truth": [1, 0, 0]}
    ... )
    >>> rank_table(one_sample).select(rx.coverage_error()).collect().item()
    2.0
    """
    if using == "ranks":
        return (
            _rank.filter(_positive(truth))
            .max()
            .cast(pl.Float64)
            .fill_null(0.0)
            .alias("coverage_error")
        )
    s = pl.col(score)
    lowest_positive = (
        pl.col(LOWEST_POSITIVE) if using == "lowest" else s.filter(_positive(truth)).min()
    )
    covered = (s >= lowest_positive).sum().cast(pl.Float64)
    if n_labels is not None:
        unscored_positive = (_positive(truth) & s.is_null()).any()
        covered = pl.when(unscored_positive).then(float(n_labels)).otherwise(covered)
    return covered.alias("coverage_error")


def label_precision(truth: str = "truth") -> pl.Expr:
    """Per row: the LRAP precision of a positive label, null for a negative one.

    ``#{positive k : f_k >= f_j} / #{k : f_k >= f_j}``, the share of positives among the labels
    ranked at or above label j. A row-wise expression (no aggregation): averaged per sample it is
    lrap, per label it is per-class lwlrap (see :func:`~polars_rankmetrics.lwlrap_per_class`).

    Parameters
    ----------
    truth
        The truth column: a label is positive where its truth is > 0.

    Returns
    -------
    polars.Expr
        The row-wise expression ``label_precision`` over rank-table rows.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics import expressions as rx, rank_table
    >>> one_sample = pl.DataFrame(
    ...     {"sample": [0, 0, 0], "score": [0.75, 0.5, 1.0], "truth": [1, 0, 0]}
    ... )
    >>> rank_table(one_sample).select(rx.label_precision()).collect().to_series().to_list()
    [None, 0.5, None]
    """
    return pl.when(_positive(truth)).then(_positive_rank / _rank).alias("label_precision")


def _precisions(truth: str) -> pl.Expr:
    """The precisions of the sample's positive labels."""
    return label_precision(truth).drop_nulls()


def lrap(truth: str = "truth") -> pl.Expr:
    """Label ranking average precision of one sample.

    The mean over positive labels j of ``#{positive k : f_k >= f_j} / #{k : f_k >= f_j}``.
    1 when the sample has no positive label or no negative one (the ranking cannot be wrong).
    Higher is better; scikit-learn's ``label_ranking_average_precision_score``.

    Parameters
    ----------
    truth
        The truth column: a label is positive where its truth is > 0.

    Returns
    -------
    polars.Expr
        The aggregation ``lrap``.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics import expressions as rx, rank_table
    >>> one_sample = pl.DataFrame(
    ...     {"sample": [0, 0, 0], "score": [0.75, 0.5, 1.0], "truth": [1, 0, 0]}
    ... )
    >>> rank_table(one_sample).select(rx.lrap()).collect().item()
    0.5
    """
    return _precisions(truth).mean().fill_null(1.0).alias("lrap")


def lwlrap(truth: str = "truth") -> pl.Expr:
    """One sample's contribution to label-weighted LRAP: the mean precision over its positives.

    Null when the sample has no positive label: it carries no weight in lwlrap, which averages
    these values with weight ``n_positives`` (times any sample weight). Unlike the Freesound 2019
    reference notebook, ties are not broken by sort order: a tie counts pessimistically, as in lrap.

    Parameters
    ----------
    truth
        The truth column: a label is positive where its truth is > 0.

    Returns
    -------
    polars.Expr
        The aggregation ``lwlrap``.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics import expressions as rx, rank_table
    >>> one_sample = pl.DataFrame(
    ...     {"sample": [0, 0, 0], "score": [0.75, 0.5, 1.0], "truth": [1, 0, 0]}
    ... )
    >>> rank_table(one_sample).select(rx.lwlrap()).collect().item()
    0.5
    """
    return _precisions(truth).mean().alias("lwlrap")


def ranking_loss(
    truth: str = "truth", *, n_labels: int | None = None, positives_only: bool = False
) -> pl.Expr:
    """Ranking loss of one sample: the share of (positive, negative) pairs ordered wrongly.

    A pair is wrong when the positive scores lower than **or equal to** the negative (a tie counts
    as an error, as in scikit-learn's ``label_ranking_loss``). 0 when the sample has no positive or
    no negative label. Lower is better.

    Parameters
    ----------
    truth
        The truth column: a label is positive where its truth is > 0.
    n_labels
        The label space L of a top-k table, whose samples have rows for their scored and true labels
        only (None: every label has a row).
    positives_only
        The rows are the sample's positive rows alone
        (:func:`~polars_rankmetrics.metrics.ranks.positive_ranks`), which carry its label count.

    Returns
    -------
    polars.Expr
        The aggregation ``ranking_loss``.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics import expressions as rx, rank_table
    >>> one_sample = pl.DataFrame(
    ...     {"sample": [0, 0, 0], "score": [0.75, 0.5, 1.0], "truth": [1, 0, 0]}
    ... )
    >>> rank_table(one_sample).select(rx.ranking_loss()).collect().item()
    0.5
    """
    positive = _positive(truth)
    wrong = (_rank - _positive_rank).filter(positive).sum().cast(pl.Float64)
    n_pos = positive.sum().cast(pl.Float64)
    pairs = n_pos * (label_count(n_labels, positives_only=positives_only) - n_pos)
    return pl.when(pairs > 0).then(wrong / pairs).otherwise(0.0).alias("ranking_loss")


def average_precision(truth: str = "truth") -> pl.Expr:
    """Average precision of one sample's labels, scikit-learn's ``average_precision_score`` of
    the sample's row (its ``average="samples"`` value).

    ``sum over distinct scores n of (R_n - R_{n-1}) P_n``, with no interpolation: a tied block is
    one threshold, so each positive label counts the precision at the end of its block. That is
    lrap's precision, so the value equals :func:`lrap` except without positives: then 0 (recall
    is undefined; scikit-learn gives 0), where lrap gives 1. Higher is better.

    Parameters
    ----------
    truth
        The truth column: a label is positive where its truth is > 0.

    Returns
    -------
    polars.Expr
        The aggregation ``average_precision``.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics import expressions as rx, rank_table
    >>> one_sample = pl.DataFrame(
    ...     {"sample": [0, 0, 0], "score": [0.75, 0.5, 1.0], "truth": [1, 0, 0]}
    ... )
    >>> rank_table(one_sample).select(rx.average_precision()).collect().item()
    0.5
    """
    return _precisions(truth).mean().fill_null(0.0).alias("average_precision")


def roc_auc(
    truth: str = "truth", *, n_labels: int | None = None, positives_only: bool = False
) -> pl.Expr:
    """Area under the ROC curve of one sample's labels (scikit-learn's ``roc_auc_score`` of the
    row): the share of (positive, negative) pairs the positive wins, a tie counting 1/2.

    Computed from ascending average ranks (Mann-Whitney): a label's average rank is
    ``L + 1 - (block start + rank) / 2``. Null when the sample has no positive or no negative
    label (scikit-learn: NaN with a warning); :func:`~polars_rankmetrics.evaluate` turns that
    into a NaN mean, unless the sample's weight is 0. Higher is better.

    Parameters
    ----------
    truth
        The truth column: a label is positive where its truth is > 0.
    n_labels
        The label space L of a top-k table, whose samples have rows for their scored and true labels
        only (None: every label has a row).
    positives_only
        The rows are the sample's positive rows alone
        (:func:`~polars_rankmetrics.metrics.ranks.positive_ranks`), which carry its label count.

    Returns
    -------
    polars.Expr
        The aggregation ``roc_auc``.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics import expressions as rx, rank_table
    >>> one_sample = pl.DataFrame(
    ...     {"sample": [0, 0, 0], "score": [0.75, 0.5, 1.0], "truth": [1, 0, 0]}
    ... )
    >>> rank_table(one_sample).select(rx.roc_auc()).collect().item()
    0.5
    """
    positive = _positive(truth)
    n = label_count(n_labels, positives_only=positives_only)
    n_pos = positive.sum().cast(pl.Float64)
    average_rank = n + 1.0 - (pl.col(BLOCK_START) + _rank).cast(pl.Float64) / 2.0
    wins = average_rank.filter(positive).sum() - n_pos * (n_pos + 1.0) / 2.0
    pairs = n_pos * (n - n_pos)
    return pl.when(pairs > 0).then(wins / pairs).alias("roc_auc")


def _capped(discount: pl.Expr, k: int | None) -> pl.Expr:
    """D(min(m, k)) from a cumulative discount D(m); unchanged without a cut.

    D grows with m, so D(min(m, k)) = min(D(m), D(k)); a k past the sample's last position cuts
    nothing, and costs nothing: D(k) is a sum of at most
    :data:`~polars_rankmetrics.metrics.ranks.ORDERED_TERMS` terms, computed once, or its
    closed form past them (:func:`~polars_rankmetrics.metrics.ranks.cumulative_discount`).
    """
    if k is None:
        return discount
    return discount.clip(upper_bound=cumulative_discount(k))


def tie_averaged_dcg(gain: pl.Expr, k: int | None) -> pl.Expr:
    """Natural-log dcg@k of ``gain`` over the rank table's rows, a tied block taking the mean
    over its orders.

    Parameters
    ----------
    gain
        The gain of each row.
    k
        Cut the ranking after the k-th position (None: the whole ranking); a k past the last
        position cuts nothing.

    Returns
    -------
    polars.Expr
        An unnamed aggregation.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics import expressions as rx, rank_table
    >>> one_sample = pl.DataFrame(
    ...     {"sample": [0, 0, 0], "score": [0.75, 0.5, 1.0], "truth": [1, 0, 0]}
    ... )
    >>> rank_table(one_sample).select(rx.tie_averaged_dcg(pl.col("truth"), None)).collect().item()
    0.9102392266268375
    """
    # A tied block spanning positions a..b contributes mean(gain) * (D(b) - D(a - 1)), cut at k.
    # Each row adds its gain * that span / block size (McSherry & Najork).
    span = _capped(pl.col(DISCOUNT_TO), k) - _capped(pl.col(DISCOUNT_BEFORE), k)
    size = (_rank - pl.col(BLOCK_START) + 1).cast(pl.Float64)
    return (gain * span / size).sum()


def ideal_dcg(gain: pl.Expr, k: int | None, *, binary_truth: bool) -> pl.Expr:
    """Natural-log dcg@k of the sample's rows ordered by ``gain`` itself (every gain 0 or 1
    with ``binary_truth``, which needs no sort).

    Parameters
    ----------
    gain
        The gain of each row.
    k
        Cut the ranking after the k-th position (None: the whole ranking); a k past the last
        position cuts nothing.
    binary_truth
        Every gain is 0 or 1.

    Returns
    -------
    polars.Expr
        An unnamed aggregation.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics import expressions as rx, rank_table
    >>> one_sample = pl.DataFrame(
    ...     {"sample": [0, 0, 0], "score": [0.75, 0.5, 1.0], "truth": [1, 0, 0]}
    ... )
    >>> ideal = rx.ideal_dcg(pl.col("truth"), None, binary_truth=True)
    >>> rank_table(one_sample).select(ideal).collect().item()
    1.4426950408889634
    """
    if binary_truth:
        # n positives ranked first: D(min(n, k)).
        return _capped(pl.col(IDEAL_DISCOUNT).first(), k)
    to = _capped(pl.col(POSITION_DISCOUNT).sort(), k)
    discounts = to - to.shift(1, fill_value=0.0)
    return (gain.sort(descending=True) * discounts).sum()


def dcg(truth: str = "truth", *, k: int | None = None, log_base: float = 2) -> pl.Expr:
    """Discounted cumulative gain of one sample, tie-averaged, optionally cut at ``k``.

    ``sum over positions r <= k of gain_r / log_b(r + 1)`` with the truth as linear gain. Tied
    scores get the average over all their orders: a tied block takes its mean gain times the sum of
    the discounts of the positions it spans, also when the block straddles ``k``. 0 when every gain
    is 0. ``k`` larger than the number of labels means no cut.

    Parameters
    ----------
    truth
        The truth column, the label's gain (non-negative, graded or 0/1).
    k
        Cut the ranking after the k-th position (None: the whole ranking); a k past the last
        position cuts nothing.
    log_base
        The base of the logarithmic discount, > 1.

    Returns
    -------
    polars.Expr
        The aggregation ``dcg`` (``dcg@k`` with a cut).

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics import expressions as rx, rank_table
    >>> one_sample = pl.DataFrame(
    ...     {"sample": [0, 0, 0], "score": [0.75, 0.5, 1.0], "truth": [1, 0, 0]}
    ... )
    >>> rank_table(one_sample).select(rx.dcg()).collect().item()
    0.6309297535714575
    """
    name = "dcg" if k is None else f"dcg@{k}"
    return (tie_averaged_dcg(pl.col(truth), k) * math.log(log_base)).alias(name)


def ndcg(truth: str = "truth", *, k: int | None = None, binary_truth: bool = False) -> pl.Expr:
    """Normalized DCG of one sample: tie-averaged dcg@k over the ideal dcg@k.

    The ideal ranks the truth by itself. 0 when the ideal is 0 (no positive gain). In [0, 1];
    higher is better. Needs at least two labels per sample and non-negative truth (checked by the
    frame functions, as scikit-learn does). ``binary_truth=True`` promises truth in {0, 1}, which
    computes the ideal without sorting.

    Parameters
    ----------
    truth
        The truth column, the label's gain (non-negative, graded or 0/1).
    k
        Cut the ranking after the k-th position (None: the whole ranking); a k past the last
        position cuts nothing.
    binary_truth
        Every gain is 0 or 1 (see above).

    Returns
    -------
    polars.Expr
        The aggregation ``ndcg`` (``ndcg@k`` with a cut).

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics import expressions as rx, rank_table
    >>> one_sample = pl.DataFrame(
    ...     {"sample": [0, 0, 0], "score": [0.75, 0.5, 1.0], "truth": [1, 0, 0]}
    ... )
    >>> rank_table(one_sample).select(rx.ndcg(k=2)).collect().item()
    0.6309297535714575
    """
    name = "ndcg" if k is None else f"ndcg@{k}"
    ideal = ideal_dcg(pl.col(truth), k, binary_truth=binary_truth)
    actual = tie_averaged_dcg(pl.col(truth), k)
    return pl.when(ideal > 0).then(actual / ideal).otherwise(0.0).alias(name)
