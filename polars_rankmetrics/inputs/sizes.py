"""Sizes given as text: the memory budget's ``memory_limit="1GB"``."""

from __future__ import annotations

import re

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
