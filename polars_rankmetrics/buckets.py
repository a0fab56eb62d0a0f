"""Out-of-core evaluation on the Polars engine: samples split into hash buckets, one in memory at a
time.

Polars' ``sort``, ``rank`` and ``over`` hold their whole input, so a table larger than memory
cannot be ranked in one piece. Every metric is computed within a sample, though, so the table is
cut into buckets of whole samples (by a hash of the sample keys). Each bucket is read from the
source (a filtered scan: Parquet row groups stream through, only the bucket's rows stay),
checked, ranked and reduced to per-group weighted sums; the sums of all buckets give the means.
The number of buckets follows from the row count and the memory budget.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import polars as pl

from polars_rankmetrics import validation as checks
from polars_rankmetrics.columns import Columns
from polars_rankmetrics.keys import MetricKey
from polars_rankmetrics.memory import ENGINE_SHARE, parse_size
from polars_rankmetrics.polars_engine import means, per_sample, per_sample_result, weighted_sums

# Peak bytes per row while a bucket is ranked: the raw columns, the sort's copy, the rank table's
# columns and the temporaries of the per-sample aggregation (measured in benchmarks/, with margin).
BYTES_PER_ROW = 240

Progress = Callable[[float, float], None]


def bucket_count(rows: int, memory_limit: str) -> int:
    """How many buckets keep one bucket's work within the engine's share of the budget."""
    per_bucket = parse_size(memory_limit) * ENGINE_SHARE / BYTES_PER_ROW
    return max(1, math.ceil(rows / per_bucket))


def _bucket_of(cols: Columns, n: int) -> pl.Expr:
    return pl.struct(cols.sample_keys).hash(seed=0) % n


def evaluate_in_buckets(
    lf: pl.LazyFrame,
    cols: Columns,
    keys: Sequence[MetricKey],
    *,
    memory_limit: str,
    per_sample_output: bool = False,
    log_base: float = 2,
    progress: Progress | None = None,
) -> pl.DataFrame:
    """:func:`polars_rankmetrics.evaluate` on the Polars engine within ``memory_limit``.

    The same checks and numbers as the one-piece plan; ``progress(done, total)`` is called after
    each bucket.
    """
    checks.check_schema(lf.collect_schema(), cols)
    binary_truth = checks.check_rows(lf, cols, keys)
    labels = checks.group_labels(lf, cols)
    if any(k.name == "ndcg" for k in keys) and labels["group_labels"].min() < 2:
        checks.raise_single_label(cols)
    rows = lf.select(pl.len()).collect().item()
    n = bucket_count(rows, memory_limit)
    parts, weights = [], []
    for i in range(n):
        bucket = lf.filter(_bucket_of(cols, n) == i).collect().lazy()
        weights.append(checks.check_sample_labels(bucket, cols, labels))
        samples = per_sample(bucket, cols, keys, log_base=log_base, binary_truth=binary_truth)
        if per_sample_output:
            parts.append(per_sample_result(samples, cols).collect())
        else:
            parts.append(weighted_sums(samples, cols, keys).collect())
        if progress is not None:
            progress(i + 1, n)
    checks.check_groups(pl.concat(weights), labels, cols, keys)
    if per_sample_output:
        return pl.concat(parts).sort(cols.sample_keys)
    return means(pl.concat(parts).lazy(), cols, keys).collect()
