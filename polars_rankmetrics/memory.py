"""The memory budget of an evaluation: ``memory_limit="1GB"`` bounds the whole process.

DuckDB's own ``memory_limit`` covers only its buffer manager; the Python interpreter, Polars,
Arrow and DuckDB's untracked allocations come on top. So the engine is given a share of the
budget and spills to disk beyond it, which keeps the peak resident memory of the process under
the budget (measured in ``benchmarks/``).
"""

from __future__ import annotations

import math
import re

ENGINE_SHARE = 0.6

_UNITS = {
    "b": 1,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}  # fmt: skip
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-z]*)\s*$")


def parse_size(text: str) -> int:
    """Bytes in a size such as ``"1GB"`` (10**9), ``"512MiB"`` (2**29) or ``"800000000"``."""
    match = _SIZE.match(text.lower())
    unit = match.group(2) if match else None
    if match is None or (unit and unit not in _UNITS):
        raise ValueError(f"memory limit {text!r} is not a size such as 1GB, 512MiB or 800000000")
    size = int(float(match.group(1)) * _UNITS[unit or "b"])
    if size <= 0:
        raise ValueError(f"memory limit {text!r} must be positive")
    return size


def engine_limit(budget: str) -> str:
    """The DuckDB ``memory_limit`` setting for a process budget, in bytes (``"600000000B"``)."""
    return f"{int(parse_size(budget) * ENGINE_SHARE)}B"


def bucket_count(rows: int, budget: str, bytes_per_row: float) -> int:
    """How many buckets of whole samples keep one bucket's work within the engine's share of
    ``budget``, for an engine that needs ``bytes_per_row`` of it per row of a bucket."""
    per_bucket = parse_size(budget) * ENGINE_SHARE / bytes_per_row
    return max(1, math.ceil(rows / per_bucket))


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
