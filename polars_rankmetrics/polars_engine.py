"""The Polars engine: per-sample metric values, then their weighted means, in one lazy plan."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_rankmetrics import expressions as rx
from polars_rankmetrics.columns import Columns
from polars_rankmetrics.keys import MetricKey
from polars_rankmetrics.ranks import rank_table

_WEIGHT = "__weight"
_N_POS = "__n_positives"


def metric_expression(
    key: MetricKey, cols: Columns, *, log_base: float = 2, binary_truth: bool = False
) -> pl.Expr:
    """The per-sample expression for one metric key, named by the key."""
    t = cols.truth
    match key.name:
        case "coverage_error":
            expression = rx.coverage_error(t)
        case "lrap":
            expression = rx.lrap(t)
        case "ranking_loss":
            expression = rx.ranking_loss(t)
        case "lwlrap":
            expression = rx.lwlrap(t)
        case "dcg":
            expression = rx.dcg(t, k=key.k, log_base=log_base)
        case "ndcg":
            expression = rx.ndcg(t, k=key.k, binary_truth=binary_truth)
        case _:
            raise ValueError(f"unknown metric {key}")
    return expression.alias(str(key))


def per_sample(
    lf: pl.LazyFrame,
    cols: Columns,
    keys: Sequence[MetricKey],
    *,
    log_base: float = 2,
    binary_truth: bool = False,
) -> pl.LazyFrame:
    """One row per sample: the ``by`` columns, the sample id, its weight and one column per key.

    The weight column (``__weight``) and lwlrap's positive count (``__n_positives``) are kept for
    :func:`weighted_sums`; :func:`evaluate_polars` drops them from per-sample output.
    """
    weight = pl.col(cols.weight).first().cast(pl.Float64) if cols.weight else pl.lit(1.0)
    ranked = rank_table(lf, sample=cols.sample_keys, score=cols.score, truth=cols.truth)
    return ranked.group_by(cols.sample_keys).agg(
        weight.alias(_WEIGHT),
        rx.n_positives(cols.truth).alias(_N_POS),
        *(
            metric_expression(key, cols, log_base=log_base, binary_truth=binary_truth)
            for key in keys
        ),
    )


def per_sample_result(samples: pl.LazyFrame, cols: Columns) -> pl.LazyFrame:
    """Per-sample output: the ``by`` and sample columns and the metric columns, sorted."""
    return samples.drop(_WEIGHT, _N_POS).sort(cols.sample_keys)


def weighted_sums(samples: pl.LazyFrame, cols: Columns, keys: Sequence[MetricKey]) -> pl.LazyFrame:
    """Per ``by`` group and key: ``sum(weight * value)`` (column ``key``) and ``sum(weight)``
    (column ``key/w``). Sums of parts of the table add up to the sums of the whole.

    lwlrap weighs each sample by its number of positives (times its weight); samples without
    positives (a null value) add nothing.
    """
    w = pl.col(_WEIGHT)
    sums = []
    for key in keys:
        name = str(key)
        sample_weight = w * pl.col(_N_POS) if key.name == "lwlrap" else w
        sums += [
            (pl.col(name) * sample_weight).sum().alias(name),
            sample_weight.sum().alias(f"{name}/w"),
        ]
    if cols.by:
        return samples.group_by(list(cols.by)).agg(sums)
    return samples.select(sums)


def means(sums: pl.LazyFrame, cols: Columns, keys: Sequence[MetricKey]) -> pl.LazyFrame:
    """Weighted means from :func:`weighted_sums`: one row, or one per ``by`` group, sorted.

    A group without any positive label has no lwlrap (0 / 0 = NaN).
    """
    by = list(cols.by)
    if by:
        sums = sums.group_by(by).agg(pl.exclude(by).sum())
    else:
        sums = sums.select(pl.all().sum())
    values = [(pl.col(str(k)) / pl.col(f"{k}/w")).alias(str(k)) for k in keys]
    result = sums.select(*by, *values)
    return result.sort(by) if by else result


def evaluate_polars(
    lf: pl.LazyFrame,
    cols: Columns,
    keys: Sequence[MetricKey],
    *,
    per_sample_output: bool = False,
    log_base: float = 2,
    binary_truth: bool = False,
) -> pl.LazyFrame:
    """The lazy plan for validated input; see :func:`polars_rankmetrics.evaluate`."""
    samples = per_sample(lf, cols, keys, log_base=log_base, binary_truth=binary_truth)
    if per_sample_output:
        return per_sample_result(samples, cols)
    return means(weighted_sums(samples, cols, keys), cols, keys)
