"""by_label_frequency(): a top-k evaluation by bins of labels of decreasing training frequency,
the head-to-tail view of extreme classification papers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

import polars as pl

from polars_rankmetrics.evaluate import evaluate
from polars_rankmetrics.inputs.columns import by_names
from polars_rankmetrics.inputs.sources import to_lazy
from polars_rankmetrics.metrics.registry import MetricKey
from polars_rankmetrics.options import Options, documented

BIN_COLUMNS = ("bin", "labels", "min_count", "max_count")
"""The columns that describe each bin, before the metrics."""


@documented(Options)
def by_label_frequency(
    predictions: Any,
    metrics: str | Sequence[str | MetricKey],
    *,
    truth_table: Any,
    train: Any,
    bins: int = 5,
    n_labels: int | None = None,
    propensities: Any = None,
    by: str | Sequence[str] | None = None,
    **options: Unpack[Options],
) -> pl.DataFrame:
    """Evaluate a top-k table once per bin of labels, the bins ordered from the labels most
    frequent in training (the head) to the least (the tail): each bin's row is
    :func:`~polars_rankmetrics.evaluate` of ``metrics`` with only the bin's true labels true
    (the other true labels judged non-relevant, every sample kept).

    So a bin's ``precision@K`` is its labels' share of precision@K (the bins' values add up to
    precision@K, as XMC papers plot the contribution of each bin), likewise ``psprecision@K``,
    ``hits@K`` and ``psndcg@K``; a bin's ``psprecision_ratio@K`` is the bin's own PSP@K (the
    best ranking ranks the bin's true labels), and ``recall@K`` the recall of the bin's true
    labels.

    Parameters
    ----------
    predictions
        The predictions, as for :func:`~polars_rankmetrics.evaluate` with ``truth_table``.
    metrics
        The keys, any that ``evaluate`` computes on a top-k table (``precision@5``,
        ``psprecision_ratio@5``, ...).
    truth_table
        The true labels (a gain column ``truth`` is kept: the bin's labels keep theirs).
    train
        The training set's true labels, one row per (sample, label), with the same label
        column; a label's training frequency is its number of rows.
    bins
        The number of bins: the labels of ``train`` and ``truth_table``, ordered by
        descending training frequency (label ascending among equals; a label never seen in
        training has frequency 0 and comes last), split into ``bins`` consecutive parts of
        equal size (the first ones one label larger where they do not divide evenly).
    n_labels, propensities, by
        As for :func:`~polars_rankmetrics.evaluate`.
    **options

    Returns
    -------
    polars.DataFrame
        One row per bin (and ``by`` group): the ``by`` columns, ``bin`` (0 the head),
        ``labels`` (the bin's labels), ``min_count`` and ``max_count`` (their training
        frequencies), then a column per key.

    Raises
    ------
    ValueError
        For ``bins`` below 1 or above the number of labels, and as ``evaluate`` does.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as rm
    >>> predictions = pl.DataFrame({"sample": [0, 0, 1, 1], "label": ["a", "c", "b", "a"],
    ...                             "score": [0.9, 0.5, 0.8, 0.1]})
    >>> truth = pl.DataFrame({"sample": [0, 1], "label": ["c", "a"]})
    >>> train = pl.DataFrame({"sample": [0, 1, 2, 2], "label": ["a", "a", "b", "c"]})
    >>> rm.by_label_frequency(predictions, "precision@2", truth_table=truth, train=train,
    ...                       bins=2)
    shape: (2, 5)
    ┌─────┬────────┬───────────┬───────────┬─────────────┐
    │ bin ┆ labels ┆ min_count ┆ max_count ┆ precision@2 │
    │ --- ┆ ---    ┆ ---       ┆ ---       ┆ ---         │
    │ i64 ┆ u32    ┆ i64       ┆ i64       ┆ f64         │
    ╞═════╪════════╪═══════════╪═══════════╪═════════════╡
    │ 0   ┆ 2      ┆ 1         ┆ 2         ┆ 0.25        │
    │ 1   ┆ 1      ┆ 1         ┆ 1         ┆ 0.25        │
    └─────┴────────┴───────────┴───────────┴─────────────┘
    """
    label = options.get("label", "label")
    truth_column = options.get("truth", "truth")
    truth = to_lazy(truth_table).collect()
    binned = label_bins(train, truth.select(label), bins, label=label)
    if truth_column not in truth.columns:
        truth = truth.with_columns(pl.lit(1).alias(truth_column))
    parts = []
    for b, labels in binned.group_by("bin", maintain_order=True):
        in_bin = pl.col(label).is_in(labels[label].implode())
        gain = pl.when(in_bin).then(pl.col(truth_column)).otherwise(0).alias(truth_column)
        values = evaluate(
            predictions, metrics, truth_table=truth.with_columns(gain), n_labels=n_labels,
            propensities=propensities, by=by, **options,
        )  # fmt: skip
        described = pl.DataFrame({
            "bin": [b[0]], "labels": [labels.height],
            "min_count": [labels["count"].min()], "max_count": [labels["count"].max()],
        }, schema_overrides={"labels": pl.UInt32})  # fmt: skip
        parts.append(described.join(values, how="cross"))
    groups = by_names(by)
    result = pl.concat(parts)
    return result.select(*groups, *BIN_COLUMNS, pl.exclude(*groups, *BIN_COLUMNS)).sort(
        [*groups, "bin"]
    )


def label_bins(
    train: Any, labels: pl.DataFrame, bins: int, *, label: str = "label"
) -> pl.DataFrame:
    """The label column, ``count`` (training frequency) and ``bin`` of every label of ``train``
    and ``labels``, as :func:`by_label_frequency` bins them."""
    counts = to_lazy(train).group_by(label).agg(pl.len().cast(pl.Int64).alias("count")).collect()
    every = pl.concat([counts.select(label), labels.select(label)]).unique()
    table = every.join(counts, on=label, how="left").with_columns(pl.col("count").fill_null(0))
    n = table.height
    if isinstance(bins, bool) or not isinstance(bins, int) or not 1 <= bins <= n:
        raise ValueError(f"bins must be an integer from 1 to the {n} labels, not {bins!r}")
    table = table.sort(["count", label], descending=[True, False])
    size, larger = divmod(n, bins)
    # the first `larger` bins hold size + 1 labels, the others size
    position = pl.int_range(pl.len(), dtype=pl.Int64)
    edge = larger * (size + 1)
    bin_of = (
        pl.when(position < edge)
        .then(position // (size + 1))
        .otherwise(larger + (position - edge) // size)
    )
    return table.with_columns(bin_of.alias("bin"))
