"""The memory budget of an evaluation: ``memory_limit="1GB"`` bounds the whole process.

DuckDB's own ``memory_limit`` covers only its buffer manager; the Python interpreter, Polars,
Arrow and DuckDB's untracked allocations come on top. So the engine is given a share of the
budget and spills to disk beyond it, which keeps the peak resident memory of the process under
the budget (measured in ``benchmarks/``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.inputs.sizes import parse_size

ENGINE_SHARE = 0.6


def engine_share(tables: Sequence[str], per_sample_share: float) -> float:
    """The share of the budget an engine gets in a run collecting ``tables``: its
    ``per_sample_share`` where the run also collects each sample's values (intervals,
    comparisons, the HTML report), whose frames, split by group and written to disk bucket by
    bucket, leave memory in the allocators beside the engine's work, or a top-k table's counts
    per label (``topk_labels``), whose running total over the buckets, a row per label seen,
    is held beside it."""
    held = "per_sample" in tables or "topk_labels" in tables
    return per_sample_share if held else ENGINE_SHARE


# Peak bytes per row while a Polars bucket is ranked: the sort's copy of the input columns, the
# rank table's eleven 8-byte columns and the temporaries of the per-sample aggregation, calibrated
# on the benchmark table with margin (benchmarks/).
_POLARS_OVERHEAD_BYTES_PER_ROW = 172
_POLARS_INPUT_COPIES = 4


def polars_bytes_per_row(schema: pl.Schema, cols: Columns) -> float:
    """The Polars engine's peak bytes per row of a table of ``schema`` (a top-k table's joined
    buckets are held by Polars on every engine)."""
    return _POLARS_OVERHEAD_BYTES_PER_ROW + _POLARS_INPUT_COPIES * row_bytes(schema, cols)


def write_buckets(
    lf: pl.LazyFrame, keys: Sequence[str], n: int, directory: Path
) -> list[list[Path]]:
    """``lf`` split into ``n`` buckets of whole samples (a hash of ``keys``), written in one
    streaming pass (Polars' ``PartitionBy`` sink) under ``directory``; the files of each."""
    bucket = (pl.struct(list(keys)).hash(seed=0) % n).alias("__bucket")
    lf.with_columns(bucket).sink_parquet(
        pl.PartitionBy(directory, key="__bucket", include_key=False), mkdir=True
    )
    return [sorted(directory.glob(f"__bucket={i}/*.parquet")) for i in range(n)]


# Below this no engine can open a query at all (DuckDB's share would not hold its catalog).
MIN_BUDGET = 64 * 10**6


def check_budget(budget: str) -> None:
    """Refuse a budget that cannot be parsed, or that is below ``MIN_BUDGET``."""
    if parse_size(budget) < MIN_BUDGET:
        raise ValueError(
            f"memory limit {budget!r} is too small for any evaluation: give at least "
            f"{MIN_BUDGET // 10**6}MB"
        )


def engine_limit(budget: str, share: float = ENGINE_SHARE) -> str:
    """The DuckDB ``memory_limit`` setting for a process budget, in bytes (``"600000000B"``),
    the engine's ``share`` of it."""
    return f"{int(parse_size(budget) * share)}B"


MAX_BUCKETS = 1024

_WIDTHS = {
    pl.Boolean: 1, pl.Int8: 1, pl.UInt8: 1, pl.Int16: 2, pl.UInt16: 2,
    pl.Int32: 4, pl.UInt32: 4, pl.Float32: 4, pl.Date: 4,
    pl.Int64: 8, pl.UInt64: 8, pl.Float64: 8, pl.Datetime: 8, pl.Duration: 8,
}  # fmt: skip
# Strings, categoricals, decimals, structs: a view or offset plus a short payload.
_OTHER_WIDTH = 24


def row_bytes(schema: pl.Schema, cols: Columns) -> int:
    """Bytes one row of the long table takes in memory, from the types of the columns read."""
    return sum(_WIDTHS.get(schema[name].base_type(), _OTHER_WIDTH) for name in cols.required)


def bucket_count(
    rows: int, budget: str, bytes_per_row: float, sample_rows: int | None = None,
    share: float = ENGINE_SHARE,
) -> int:  # fmt: skip
    """How many buckets of whole samples keep one bucket's work within the engine's ``share``
    of ``budget``, for an engine that needs ``bytes_per_row`` of it per row of a bucket.

    A budget that would need more than ``MAX_BUCKETS`` passes, or (given ``sample_rows``, the
    largest sample's row count) cannot hold one sample in a bucket, is refused with the budget
    that would do.
    """
    per_bucket = parse_size(budget) * share / bytes_per_row
    n = max(1, math.ceil(rows / per_bucket))
    if n > MAX_BUCKETS or (sample_rows is not None and per_bucket < sample_rows):
        rows_needed = max(sample_rows or 0, rows / MAX_BUCKETS)
        least = math.ceil(rows_needed * bytes_per_row / share / 10**6)
        samples = "" if sample_rows is None else f", up to {sample_rows:,} a sample"
        raise ValueError(
            f"memory limit {budget!r} is too small for this table ({rows:,} rows{samples}): "
            f"give at least {least:,}MB"
        )
    return n


def available_memory() -> int | None:
    """Bytes the system can still hand out (``MemAvailable`` on Linux); None when unknown."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def automatic_limit(rows: int, bytes_per_row: float) -> str | None:
    """A budget for a source not yet in memory that is too large to evaluate in one piece in
    the memory available now (three quarters of it), or None when it fits or the available
    memory is unknown."""
    available = available_memory()
    if available is None or rows * bytes_per_row <= 0.75 * available * ENGINE_SHARE:
        return None
    return str(int(0.75 * available))
