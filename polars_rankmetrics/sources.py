"""Turning what users pass as ``data`` into a LazyFrame: frames, Parquet paths, globs, lists."""

from __future__ import annotations

import glob
from collections.abc import Sequence
from os import PathLike
from pathlib import Path

import polars as pl

Source = pl.DataFrame | pl.LazyFrame | str | PathLike | Sequence[str | PathLike]


def parquet_paths(data: str | PathLike | Sequence[str | PathLike]) -> list[str]:
    """Expand a path, a glob or a list of them to the Parquet files they name, sorted per pattern.

    Raises ``ValueError`` when a pattern matches no file.
    """
    patterns = [data] if isinstance(data, str | PathLike) else list(data)
    if not patterns:
        raise ValueError("no Parquet path given")
    paths: list[str] = []
    for pattern in patterns:
        text = str(pattern)
        found = [text] if Path(text).is_file() else sorted(glob.glob(text))
        found = [p for p in found if Path(p).is_file()]
        if not found:
            raise ValueError(f"no Parquet file matches {text!r}")
        paths.extend(found)
    return paths


def to_lazy(data: Source) -> pl.LazyFrame:
    """A LazyFrame over ``data``; Parquet files are scanned, not read."""
    if isinstance(data, pl.LazyFrame):
        return data
    if isinstance(data, pl.DataFrame):
        return data.lazy()
    # The paths are expanded already: a '[' in a file name is not a glob pattern again.
    return pl.scan_parquet(parquet_paths(data), glob=False)
