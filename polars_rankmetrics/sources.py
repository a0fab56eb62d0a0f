"""Turning what users pass as ``data`` into Polars: frames, Parquet paths, globs, lists.

Other dataframes come in through the Arrow PyCapsule stream interface (``__arrow_c_stream__``),
which pandas (2.2 and later), pyarrow tables and record batch readers, DuckDB relations and
every Arrow-native library implement: Polars reads the stream without copying where Arrow
allows, and no compatibility layer is needed. A pyarrow dataset is scanned lazily.
"""

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


ACCEPTED = (
    "a polars DataFrame or LazyFrame, a pandas DataFrame, a pyarrow Table, RecordBatchReader or "
    "Dataset, a DuckDB relation, any object with the Arrow stream interface "
    "(__arrow_c_stream__), or Parquet paths or globs"
)


def _is_paths(data: object) -> bool:
    if isinstance(data, str | PathLike):
        return True
    return isinstance(data, list | tuple) and all(isinstance(p, str | PathLike) for p in data)


def foreign_to_polars(data: object) -> pl.DataFrame | pl.LazyFrame | None:
    """``data`` as Polars when it is another library's frame (see the module docstring); None
    for Polars frames and paths. ``TypeError`` naming what is accepted for anything else."""
    if isinstance(data, pl.DataFrame | pl.LazyFrame) or _is_paths(data):
        return None
    if type(data).__module__.startswith("pyarrow") and hasattr(data, "scanner"):
        return pl.scan_pyarrow_dataset(data)  # type: ignore[arg-type]
    if type(data).__module__.startswith("duckdb") and hasattr(data, "pl"):
        # A DuckDB relation's own conversion: through its stream capsule, duckdb 2.0 leaves
        # objects that its bindings report as leaked when the interpreter exits.
        return data.pl()  # type: ignore[no-any-return]
    if hasattr(data, "__arrow_c_stream__"):
        return pl.DataFrame(data)
    raise TypeError(f"data must be {ACCEPTED}, not {type(data).__name__}")


def to_lazy(data: object) -> pl.LazyFrame:
    """A LazyFrame over ``data``; Parquet files are scanned, not read."""
    if isinstance(data, pl.LazyFrame):
        return data
    if isinstance(data, pl.DataFrame):
        return data.lazy()
    converted = foreign_to_polars(data)
    if converted is not None:
        return converted.lazy()
    # The paths are expanded already: a '[' in a file name is not a glob pattern again.
    return pl.scan_parquet(parquet_paths(data), glob=False)  # type: ignore[arg-type]


def is_eager(data: object) -> bool:
    """Whether ``data`` is held in memory (a result from it is a DataFrame, not a LazyFrame)."""
    return not isinstance(data, pl.LazyFrame) and not _is_paths(data)
