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
    :func:`summarize`; :func:`evaluate_polars` drops them from per-sample output.
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


def summarize(samples: pl.LazyFrame, cols: Columns, keys: Sequence[MetricKey]) -> pl.LazyFrame:
    """Weighted means of the per-sample values: one row, or one per ``by`` group.

    lwlrap weighs each sample by its number of positives (times its weight); a group without any
    positive label has no lwlrap (NaN).
    """
    w = pl.col(_WEIGHT)
    aggregations = []
    for key in keys:
        name = str(key)
        sample_weight = w * pl.col(_N_POS) if key.name == "lwlrap" else w
        value = (pl.col(name) * sample_weight).sum() / sample_weight.sum()
        aggregations.append(value.alias(name))
    if cols.by:
        return samples.group_by(list(cols.by)).agg(aggregations).sort(list(cols.by))
    return samples.select(aggregations)


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
        return samples.drop(_WEIGHT, _N_POS).sort(cols.sample_keys)
    return summarize(samples, cols, keys)
