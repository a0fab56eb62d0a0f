"""Out-of-core evaluation on the Polars engine: samples split into hash buckets, one in memory at a
time.

Polars' ``sort``, ``rank`` and ``over`` hold their whole input, so a table larger than memory
cannot be ranked in one piece. Every metric is computed within a sample, though, so the table is
cut into buckets of whole samples (by a hash of the sample keys): one streaming pass writes each
bucket to its own Parquet files in a temporary directory (Polars' spill, removed afterwards), then
each bucket is read back alone, checked, ranked and reduced to per-group weighted sums; the sums
of all buckets give the means. The number of buckets follows from the row count and the budget.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import polars as pl

from polars_rankmetrics import validation as checks
from polars_rankmetrics.columns import Columns
from polars_rankmetrics.keys import MetricKey
from polars_rankmetrics.memory import available_memory, bucket_count
from polars_rankmetrics.polars_engine import means, per_sample, per_sample_result, weighted_sums

# Peak bytes per row while a bucket is ranked: the raw columns, the sort's copy, the rank table's
# columns and the temporaries of the per-sample aggregation (measured in benchmarks/, with margin).
BYTES_PER_ROW = 240

Progress = Callable[[float, float], None]


def automatic_limit(rows: int) -> str | None:
    """A budget for a Parquet source too large to rank in one piece in the memory available now
    (three quarters of it), or None when it fits or the available memory is unknown."""
    available = available_memory()
    if available is None or rows * BYTES_PER_ROW <= 0.75 * available:
        return None
    return str(int(0.75 * available))


@contextmanager
def buckets(lf: pl.LazyFrame, cols: Columns, n: int) -> Iterator[list[pl.LazyFrame]]:
    """``n`` LazyFrames of whole samples that together hold ``lf``'s rows.

    With more than one bucket, one streaming pass writes them to a temporary directory, which is
    removed when the block ends.
    """
    if n == 1:
        yield [lf]
        return
    spill = Path(tempfile.mkdtemp(prefix="rankmetrics-buckets-"))
    try:
        bucket = (pl.struct(cols.sample_keys).hash(seed=0) % n).alias("__bucket")
        lf.with_columns(bucket).sink_parquet(
            pl.PartitionBy(spill, key="__bucket", include_key=False), mkdir=True
        )
        schema = lf.collect_schema()
        yield [
            pl.scan_parquet(files) if (files := sorted(spill.glob(f"__bucket={i}/*.parquet")))
            else pl.LazyFrame(schema=schema)
            for i in range(n)
        ]  # fmt: skip
    finally:
        shutil.rmtree(spill, ignore_errors=True)


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
    checks.check_label_count(labels, cols, keys)
    rows = lf.select(pl.len()).collect().item()
    n = bucket_count(rows, memory_limit, BYTES_PER_ROW)
    parts, weights = [], []
    with buckets(lf, cols, n) as pieces:
        for i, piece in enumerate(pieces):
            bucket = piece.collect().lazy()
            weights.append(checks.check_sample_labels(bucket, cols, labels))
            samples = per_sample(bucket, cols, keys, log_base=log_base, binary_truth=binary_truth)
            if per_sample_output:
                parts.append(per_sample_result(samples, cols).collect())
            else:
                parts.append(weighted_sums(samples, cols, keys).collect())
            if progress is not None:
                progress(i + 1, n)
    checks.check_weight_totals(pl.concat(weights), cols)
    if per_sample_output:
        return pl.concat(parts).sort(cols.sample_keys)
    return means(pl.concat(parts).lazy(), cols, keys).collect()
