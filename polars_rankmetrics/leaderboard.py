"""``leaderboard``: the models ranked per metric, each with its interval and the letters of the
groups it is not significantly different from (a compact letter display over
:func:`~polars_rankmetrics.compare`'s pairs)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Unpack

import polars as pl

from polars_rankmetrics.compare import compare
from polars_rankmetrics.evaluate import evaluate
from polars_rankmetrics.inference.intervals import check_level
from polars_rankmetrics.inference.letters import compact_letters
from polars_rankmetrics.inference.pairs import other
from polars_rankmetrics.inputs.columns import by_names
from polars_rankmetrics.metrics.registry import parse_keys
from polars_rankmetrics.options import Options, documented
from polars_rankmetrics.states import finalize, is_state

LEADERBOARD_COLUMNS = ("metric", "value", "value_lo", "value_hi", "rank", "group")


@documented(Options)
def leaderboard(
    data: Any,
    metrics: str | Sequence[str] | None = None,
    *,
    by: str | Sequence[str] = "model",
    test: str = "permutation",
    alpha: float = 0.05,
    ci: float = 0.95,
    seed: int | None = 0,
    correction: str | None = "auto",
    n_resamples: int = 10_000,
    n_boot: int = 1000,
    bootstrap: str = "multinomial",
    on_missing: str = "error",
    truth_table: Any = None,
    n_labels: int | None = None,
    propensities: Any = None,
    log_base: float = 2,
    threshold: float = 0.5,
    beta: float = 1.0,
    zero_division: float | str = "warn",
    ties: str | None = None,
    relevance_level: int = 1,
    max_docs: int | None = None,
    judged_only: bool = False,
    complete: bool = False,
    **options: Unpack[Options],
) -> pl.DataFrame:
    """Rank the models (values of ``by``) per metric, with each model's interval and a compact
    letter display of which models are significantly different.

    Parameters
    ----------
    data
        As for :func:`~polars_rankmetrics.compare` (a long table of every model, a top-k table
        with ``truth_table``, or states kept with ``intervals=True``).
    metrics
        Metric keys averaged over samples, as for :func:`~polars_rankmetrics.compare`.
    by
        The column(s) naming the model.
    test, correction, n_resamples, bootstrap, on_missing
        The pairs' test and its correction, as :func:`~polars_rankmetrics.compare` with
        ``baseline=None`` runs them (``correction="auto"``: Holm's over every pair and metric
        for the paired tests, none for ``tukey_hsd`` and ``randomized_tukey``).
    alpha
        The significance level of the letters: two models share a letter exactly when their
        pair's ``p_adjusted`` is at least ``alpha`` (a pair whose p is undefined, NaN, counts
        as not significant).
    ci, n_boot, seed
        The level, replicates and seed of each model's interval (as
        ``evaluate(ci=ci, n_boot=n_boot, seed=seed, bootstrap=bootstrap)``) and of the pairs'
        draws.
    truth_table, n_labels, propensities, log_base, threshold, beta, zero_division, ties
        As for :func:`~polars_rankmetrics.evaluate`.
    relevance_level, max_docs, judged_only, complete
        The TREC keys' options, as for :func:`~polars_rankmetrics.evaluate`.
    **options

    Returns
    -------
    polars.DataFrame
        One row per (model, metric): the ``by`` column(s), ``metric``, ``value`` (the model's
        value over all its samples), ``value_lo``, ``value_hi`` (its bootstrap interval),
        ``rank`` (1 = best by the metric's direction; equal values share the lower rank; a
        model whose value is undefined is ranked last, null), and ``group`` (the model's
        letters: ``a`` for the best model's group, then ``b``, ... as
        :func:`polars_rankmetrics.inference.letters.compact_letters` names them). Rows sorted
        by metric, then rank.

    Raises
    ------
    ValueError
        As :func:`~polars_rankmetrics.compare` (fewer than two models among them), and for
        ``alpha`` outside (0, 1).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as rm
    >>> truth = [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0]] * 3
    >>> df = pl.concat([
    ...     rm.from_dense(truth, [[0.9, 0.1, 0.2], [0.1, 0.8, 0.3], [0.2, 0.1, 0.9],
    ...                           [0.7, 0.6, 0.1]] * 3).with_columns(model=pl.lit("good")),
    ...     rm.from_dense(truth, [[0.1, 0.9, 0.2], [0.8, 0.1, 0.3], [0.9, 0.1, 0.2],
    ...                           [0.1, 0.2, 0.9]] * 3).with_columns(model=pl.lit("bad")),
    ... ])
    >>> rm.leaderboard(df, ["lrap"], test="t").select("model", "rank", "group").rows()
    [('good', 1, 'a'), ('bad', 2, 'b')]
    """
    if not (isinstance(alpha, float | int) and 0 < alpha < 1):
        raise ValueError(f"alpha must be a number in (0, 1), not {alpha!r}")
    check_level(ci)
    by_columns = by_names(by)
    evaluation = {
        "truth_table": truth_table, "n_labels": n_labels, "propensities": propensities,
        "log_base": log_base, "threshold": threshold, "beta": beta,
        "zero_division": zero_division, "ties": ties, "relevance_level": relevance_level,
        "max_docs": max_docs, "judged_only": judged_only, "complete": complete,
    }  # fmt: skip
    pairs = compare(
        data, metrics, by=by_columns, baseline=None, test=test, correction=correction,
        n_resamples=n_resamples, n_boot=n_boot, ci=ci, seed=seed, bootstrap=bootstrap,
        on_missing=on_missing, **evaluation, **options,
    )  # fmt: skip
    if is_state(data):
        values = finalize(data, metrics, by=by_columns, ci=ci, n_boot=n_boot, seed=seed)
        keys = list(dict.fromkeys(pairs["metric"]))
    else:
        keys = [str(k) for k in parse_keys(metrics)]
        values = evaluate(
            data, keys, by=by_columns, ci=ci, n_boot=n_boot, seed=seed, bootstrap=bootstrap,
            **evaluation, **options,
        )  # fmt: skip
    frames = [ranked(values, pairs, by_columns, key, alpha=alpha) for key in keys]
    return pl.concat(frames).sort("metric", "rank", *by_columns, nulls_last=True)


def ranked(
    values: pl.DataFrame, pairs: pl.DataFrame, by: Sequence[str], key: str, *, alpha: float
) -> pl.DataFrame:
    """One metric's rows of the leaderboard from the evaluation's ``values`` (a row per model:
    ``key``, ``key_lo``, ``key_hi``) and ``compare``'s ``pairs``."""
    higher = parse_keys([key])[0].metric.better == "higher"
    value = pl.col(key).cast(pl.Float64).fill_nan(None)
    rows = values.select(
        *by, pl.lit(key).alias("metric"), value.alias("value"),
        pl.col(f"{key}_lo").cast(pl.Float64).alias("value_lo"),
        pl.col(f"{key}_hi").cast(pl.Float64).alias("value_hi"),
        value.rank("min", descending=higher).cast(pl.Int64).alias("rank"),
    ).sort("rank", *by, nulls_last=True)  # fmt: skip
    models = rows.select(by).rows()
    index = {model: i for i, model in enumerate(models)}
    significant = []
    for row in pairs.filter(pl.col("metric") == key).iter_rows(named=True):
        p = row["p_adjusted"]
        if p is not None and not math.isnan(p) and p < alpha:
            a = index[tuple(row[b] for b in by)]
            b_ = index[tuple(row[other(b)] for b in by)]
            significant.append((a, b_))
    group = compact_letters(len(models), significant)
    return rows.with_columns(pl.Series("group", group, dtype=pl.String)).select(
        *by, *LEADERBOARD_COLUMNS
    )
