"""``calibration_table``: the reliability table of each label's probabilities, the answer to
scikit-learn's ``calibration_curve`` for the long table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

import polars as pl

from polars_rankmetrics.checks import validation
from polars_rankmetrics.engines import driver
from polars_rankmetrics.metrics.label_averages import LABEL, combine
from polars_rankmetrics.metrics.parameters import parameters
from polars_rankmetrics.metrics.probabilities import N_BINS, STRATEGIES, calibration_bins
from polars_rankmetrics.metrics.registry import MetricKey
from polars_rankmetrics.options import Options, Run, documented

CALIBRATION_COLUMNS = ("bin", "count", "mean_score", "observed")
# What the table needs checked: binary truth and scores in [0, 1], as the calibration keys.
_KEYS = [MetricKey("ece_macro")]


@documented(Options)
def calibration_table(
    data: Any,
    *,
    by: str | Sequence[str] | None = None,
    n_bins: int = N_BINS,
    strategy: str = "uniform",
    **options: Unpack[Options],
) -> pl.DataFrame:
    """The reliability table of the scores read as probabilities: per label (and all labels
    pooled), per bin of the scores, how many cells, their mean score and their share of
    positives.

    Parameters
    ----------
    data, by
        As for :func:`~polars_rankmetrics.evaluate`; the table is checked the same way (binary
        truth, and every score in [0, 1] as for the probability keys).
    n_bins
        The number of bins (default 15, as ``ece_macro``).
    strategy
        ``"uniform"``: equal-width bins of [0, 1], a score on an edge in the bin below it, as
        scikit-learn's ``calibration_curve(strategy="uniform")`` (the bins of ``ece_*``).
        ``"quantile"``: equal-mass bins, their edges the percentiles of the scores of each
        label (of all labels for the pooled rows), as ``calibration_curve(strategy="quantile")``
        (the bins of ``ece_quantile_*``). Where tied scores straddle an edge, or edges
        coincide, fewer bins are non-empty. The sample weights count as repetitions of the
        sample: with whole weights the edges are those of the table with each sample repeated
        that many times
        (:func:`~polars_rankmetrics.metrics.probabilities.quantile_edges`). Both are exact on
        every engine and out of core: the bins are computed from the per-label score counts,
        which add up over buckets of samples.
    **options

    Returns
    -------
    polars.DataFrame
        The ``by`` columns, the label column (null on the rows pooling every label: the bins
        of ``ece_micro``), then per non-empty bin: ``bin`` (0 to ``n_bins - 1``), ``count``
        (the cells, weighted by the sample weights), ``mean_score`` (their weighted mean score)
        and ``observed`` (their weighted share of positives). Per label without weights,
        ``observed`` and ``mean_score`` are ``calibration_curve(y[:, j], p[:, j],
        n_bins=n_bins, strategy=strategy)``'s ``prob_true`` and ``prob_pred``. Sorted by the
        ``by`` columns, the label (pooled first) and the bin.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as rm
    >>> df = rm.from_dense([[1, 0], [0, 1], [1, 1]], [[0.9, 0.2], [0.6, 0.7], [0.4, 0.8]])
    >>> rm.calibration_table(df, n_bins=2).filter(pl.col("label").is_not_null())
    shape: (4, 5)
    ┌───────┬─────┬───────┬────────────┬──────────┐
    │ label ┆ bin ┆ count ┆ mean_score ┆ observed │
    │ ---   ┆ --- ┆ ---   ┆ ---        ┆ ---      │
    │ i64   ┆ i64 ┆ f64   ┆ f64        ┆ f64      │
    ╞═══════╪═════╪═══════╪════════════╪══════════╡
    │ 0     ┆ 0   ┆ 1.0   ┆ 0.4        ┆ 1.0      │
    │ 0     ┆ 1   ┆ 2.0   ┆ 0.75       ┆ 0.5      │
    │ 1     ┆ 0   ┆ 1.0   ┆ 0.2        ┆ 0.0      │
    │ 1     ┆ 1   ┆ 2.0   ┆ 0.75       ┆ 1.0      │
    └───────┴─────┴───────┴────────────┴──────────┘

    Equal-mass bins of every cell pooled (the median 0.65 splits the six scores in halves):

    >>> rm.calibration_table(df, n_bins=2, strategy="quantile").filter(pl.col("label").is_null())
    shape: (2, 5)
    ┌───────┬─────┬───────┬────────────┬──────────┐
    │ label ┆ bin ┆ count ┆ mean_score ┆ observed │
    │ ---   ┆ --- ┆ ---   ┆ ---        ┆ ---      │
    │ i64   ┆ i64 ┆ f64   ┆ f64        ┆ f64      │
    ╞═══════╪═════╪═══════╪════════════╪══════════╡
    │ null  ┆ 0   ┆ 3.0   ┆ 0.4        ┆ 0.333333 │
    │ null  ┆ 1   ┆ 3.0   ┆ 0.8        ┆ 1.0      │
    └───────┴─────┴───────┴────────────┴──────────┘
    """
    if isinstance(n_bins, bool) or not isinstance(n_bins, int) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, not {n_bins!r}")
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be 'uniform' or 'quantile', not {strategy!r}")
    run, cols = Run.of(options, by=by)
    validation.check_result_names(cols, CALIBRATION_COLUMNS)
    with driver.inside_names(cols) as inner:
        collected, _ = run.collect(data, inner, _KEYS, ["curves"], parameters=parameters())
        group = list(inner.by) or [validation.GROUP]
        counts = combine(collected["curves"], [*group, LABEL, "score"])
        table = pl.concat(
            [
                calibration_bins(counts, group, n_bins, strategy).with_columns(
                    pl.lit(None, counts.schema[LABEL]).alias(LABEL)
                ),
                calibration_bins(counts, [*group, LABEL], n_bins, strategy),
            ],
            how="diagonal",
        )
        weight = pl.col("weight")
        table = table.select(
            *inner.by,
            pl.col(LABEL).alias(inner.label),
            "bin",
            weight.alias("count"),
            (pl.col("score_sum") / weight).alias("mean_score"),
            (pl.col("positives") / weight).alias("observed"),
        ).sort([*inner.by, inner.label, "bin"], nulls_last=False)
    return inner.restored(table)
