"""Step 4: the tables of every bucket reduced to the result: the weighted means over samples
(:mod:`polars_rankmetrics.metrics.sums`), the means over labels
(:mod:`polars_rankmetrics.metrics.label_averages`) and the one warning of the ill-defined
values (:mod:`polars_rankmetrics.metrics.undefined`), or the per-sample rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_rankmetrics.checks import validation
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.label_averages import combine, label_means
from polars_rankmetrics.metrics.registry import Context, MetricKey
from polars_rankmetrics.metrics.sums import means, undefined_as_nan, weight_column
from polars_rankmetrics.metrics.undefined import label_cases, sample_cases, warn

# The per-label tables a reduction over labels reads, and their keys besides the group.
LABEL_TABLES = {"labels": ("label",), "curves": ("label", "score"), "topk_labels": ("label",)}
# Every table that adds up over buckets, with its keys besides the group: each bucket's is added
# to the running total as it comes, so that many buckets do not hold many tables (the score
# counts of 100 labels with 1,001 distinct scores are 100k rows a bucket and model).
ADDITIVE_TABLES = {**LABEL_TABLES, "precisions": ("label",)}


def _by_reduction(keys: Sequence[MetricKey]) -> dict[str, list[MetricKey]]:
    """``keys`` by how they reduce: over samples, or over the labels of a table."""
    return {
        reduction: [k for k in keys if k.metric.reduction == reduction]
        for reduction in ("samples", *LABEL_TABLES)
    }


def tables_read(keys: Sequence[MetricKey], *, per_sample: bool) -> list[str]:
    """The tables a run of ``keys`` collects (``per_sample``: the per-sample rows instead of the
    sums); refuses a key averaged over labels with ``per_sample``."""
    by_reduction = _by_reduction(keys)
    label_keys = [k for k in keys if k.metric.reduction != "samples"]
    if per_sample and label_keys:
        raise ValueError(
            f"{label_keys[0]} is averaged over labels: it has no per-sample value (per_sample)"
        )
    tables = ["per_sample" if per_sample else "sums"] if by_reduction["samples"] else []
    return tables + [reduction for reduction in LABEL_TABLES if by_reduction[reduction]]


def add(collected: dict[str, list[pl.DataFrame]], table: str, frame: pl.DataFrame,
        cols: Columns) -> None:  # fmt: skip
    """Add a bucket's ``frame`` of ``table`` to ``collected``: to the running total for an
    additive table (:data:`ADDITIVE_TABLES`), beside the others' for any other."""
    if table in ADDITIVE_TABLES and collected[table]:
        keys_of = [*(cols.by or [validation.GROUP]), *ADDITIVE_TABLES[table]]
        frame = combine([collected[table].pop(), frame], keys_of).select(frame.columns)
    collected[table].append(frame)


def per_sample_rows(
    collected: dict[str, list[pl.DataFrame]], cols: Columns, keys: Sequence[MetricKey],
    *, sample_weights: bool,
) -> pl.DataFrame:  # fmt: skip
    """The per-sample result: the sample keys and a column per key (an undefined value NaN);
    with ``sample_weights``, each key's weight in the mean beside it (``key/w``)."""
    rows = undefined_as_nan(pl.concat(collected["per_sample"]), keys)
    weights = [weight_column(k) for k in keys] if sample_weights else []
    # The groups come sorted by sample, in sorted order: the rows are sorted as they are.
    return rows.select(*cols.sample_keys, *(str(k) for k in keys), *weights)


def reduced(
    collected: dict[str, list[pl.DataFrame]], cols: Columns, keys: Sequence[MetricKey],
    context: Context,
) -> pl.DataFrame:  # fmt: skip
    """One row per group (sorted by the ``by`` columns) and a column per key: the means over
    samples and over labels; warns once of the ill-defined values."""
    by_reduction = _by_reduction(keys)
    label_keys = [k for k in keys if k.metric.reduction != "samples"]
    group = list(cols.by) or [validation.GROUP]
    results, cases = [], []
    if by_reduction["samples"]:
        sums = pl.concat(collected["sums"])
        totals = means(sums, cols, by_reduction["samples"])
        results.append(totals if cols.by else totals.with_columns(pl.lit(0).alias(group[0])))
        cases += sample_cases(sums, by_reduction["samples"], context)
    if label_keys:
        combined = {
            reduction: combine(collected[reduction], [*group, *LABEL_TABLES[reduction]])
            for reduction in LABEL_TABLES
            if reduction in collected
        }
        results.append(label_means(combined, group, label_keys, context))
        cases += label_cases(combined, group, label_keys, context)
    warn(cases)
    result = results[0]
    for part in results[1:]:
        result = result.join(part, on=group, nulls_equal=True)
    if cols.by:
        result = result.sort(list(cols.by))
    return result.select(*cols.by, *(str(k) for k in keys))
