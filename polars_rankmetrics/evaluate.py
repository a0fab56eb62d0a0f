"""``evaluate``: many metrics over a long table in one pass, on the Polars or the DuckDB engine."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import polars as pl

from polars_rankmetrics.buckets import automatic_limit, evaluate_in_buckets
from polars_rankmetrics.columns import Columns
from polars_rankmetrics.keys import MetricKey, parse_keys
from polars_rankmetrics.polars_engine import evaluate_polars
from polars_rankmetrics.sources import Source, to_lazy
from polars_rankmetrics.validation import validate

ENGINES = ("polars", "duckdb")


def plan(
    data: pl.DataFrame | pl.LazyFrame,
    keys: Sequence[MetricKey],
    cols: Columns,
    *,
    per_sample: bool = False,
    log_base: float = 2,
) -> pl.LazyFrame:
    """Validate ``data`` (eagerly: one scan) and return the lazy Polars plan for ``keys``."""
    lf = to_lazy(data)
    binary_truth = validate(lf, cols, keys)
    return evaluate_polars(
        lf, cols, keys, per_sample_output=per_sample, log_base=log_base, binary_truth=binary_truth
    )


def evaluate(
    data: Source,
    metrics: str | Sequence[str] | None = None,
    *,
    by: str | Sequence[str] | None = None,
    per_sample: bool = False,
    weight: str | None = None,
    engine: str = "polars",
    sample: str = "sample",
    label: str = "label",
    score: str = "score",
    truth: str = "truth",
    log_base: float = 2,
    memory_limit: str | None = None,
    progress: Callable[[float, float], None] | None = None,
) -> pl.DataFrame:
    """Compute several ranking metrics over a long table in one pass.

    Parameters
    ----------
    data
        A DataFrame or LazyFrame with one row per (sample, label), or the path of a Parquet file,
        a glob, or a list of paths.
    metrics
        Metric keys: ``coverage_error``, ``lrap``, ``ranking_loss``, ``lwlrap``, ``dcg``,
        ``ndcg``, and ``dcg@K`` / ``ndcg@K`` for any K >= 1. Default: the six ranking metrics.
    by
        Column(s) splitting the table into independent evaluations (one result row each).
    per_sample
        Return one row per sample (with the ``by`` and sample columns) instead of the means.
        lwlrap's per-sample value is the sample's mean precision (null without positives).
    weight
        Column of sample weights, constant within a sample. The mean over samples is weighted.
    engine
        ``"polars"`` or ``"duckdb"``; both return the same frame.
    sample, label, score, truth
        Column names. ``truth`` is 0/1 (bool or numeric); graded non-negative gains are allowed
        when only dcg/ndcg are asked for.
    log_base
        Base of dcg's logarithmic discount (ndcg does not depend on it).
    memory_limit
        A memory budget for the whole process, such as ``"1GB"``, for tables larger than memory.
        DuckDB takes its share of it and spills to a temporary directory (removed afterwards);
        Polars evaluates the samples in hash buckets sized to fit, one at a time. Without it,
        a Parquet source too large to rank in the memory available is evaluated in buckets
        anyway (within three quarters of the available memory) instead of exhausting it.
    progress
        Called as ``progress(done, total)`` while a long evaluation runs (buckets on Polars with
        a memory limit, DuckDB's progress estimate on DuckDB).

    Returns
    -------
    polars.DataFrame
        One column per metric key (named by the key), after the ``by`` columns, sorted by them.

    Raises
    ------
    ValueError
        For input that the metrics are not defined on: a missing column, a non-numeric score,
        null or NaN in score or truth, truth outside {0, 1} for the binary metrics, negative truth,
        a label repeated within a sample, samples with different label sets, an empty table,
        sample weights that are not constant within a sample or sum to 0.
    """
    keys = parse_keys(metrics)
    cols = Columns.of(sample=sample, label=label, score=score, truth=truth, weight=weight, by=by)
    if engine == "polars":
        if memory_limit is None and not isinstance(data, pl.DataFrame | pl.LazyFrame):
            memory_limit = automatic_limit(to_lazy(data).select(pl.len()).collect().item())
        if memory_limit is None:
            return plan(data, keys, cols, per_sample=per_sample, log_base=log_base).collect()
        return evaluate_in_buckets(
            to_lazy(data), cols, keys, memory_limit=memory_limit, per_sample_output=per_sample,
            log_base=log_base, progress=progress,
        )  # fmt: skip
    if engine == "duckdb":
        from polars_rankmetrics.duckdb_engine import evaluate_duckdb

        return evaluate_duckdb(
            data, cols, keys, per_sample=per_sample, log_base=log_base,
            memory_limit=memory_limit, progress=progress,
        )  # fmt: skip
    raise ValueError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
