"""Errors of the medium: what an engine's failure to read the input or to write its temporary
files means for the user, as one ``ValueError`` saying what happened and what to do.

An engine reports a full disk, a truncated Parquet file or a CSV line with too many fields in
its own words ("failed to offload data block", "File out of specification", "found more fields
than defined in 'Schema'"), often without the file. Where a run fails, :func:`explained` looks
at the medium itself: the free space of the temporary directory, each Parquet file's footer,
each CSV or NDJSON file's lines. It runs only on the way out of a failed run.
"""

from __future__ import annotations

import csv
import errno
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import polars as pl

from polars_rankmetrics.inputs.sources import Files, Source, is_paths, is_url

# How the engines word a full disk: Polars and DuckDB pass the OS error on ("os error 28",
# "errno":"28"); DuckDB says it could not offload a block when its spill file cannot grow.
_OUT_OF_SPACE = ("no space left on device", "os error 28", '"errno":"28"', "failed to offload")


def out_of_space(error: BaseException) -> bool:
    """Whether ``error`` is a write that found its disk full."""
    if isinstance(error, OSError) and error.errno == errno.ENOSPC:
        return True
    text = str(error).lower()
    return any(words in text for words in _OUT_OF_SPACE)


def full_directory(parent: Path) -> str:
    return (
        f"the temporary directory {str(parent)!r} ran out of space for this run's spill and "
        "bucket files: free space there, or give a directory with more room (temp_dir=, "
        "--temp-dir)"
    )


def malformed(data: Any, formats: tuple[str, ...] = ("parquet", "csv", "ndjson")) -> str | None:
    """What is wrong with the local files of ``formats`` that ``data`` names (:class:`Files`, a
    :class:`Source` or paths), if a reader would stumble on them: a Parquet file without a
    readable footer (truncated, or not Parquet), a CSV record whose field count differs from the
    header's, an NDJSON line that is not a JSON object. None when they look sound (or ``data``
    is not local files)."""
    files = _files(data)
    if files is None or files.format not in formats:
        return None
    for path in files.paths:
        if is_url(path):
            return None
        problem = _CHECKS[files.format](Path(path))
        if problem is not None:
            return problem
    return None


def _parquet(path: Path) -> str | None:
    try:
        pl.read_parquet_schema(path)
    except (pl.exceptions.PolarsError, OSError) as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else "unreadable"
        reason = reason.removeprefix("parquet: ")
        return f"the Parquet file {str(path)!r} is corrupt or truncated: {reason}"
    return None


def _open_text(path: Path) -> Any:
    """A text file, read through gzip where its name ends in .gz."""
    if path.suffix == ".gz":
        import gzip

        return gzip.open(path, "rt", encoding="utf-8", newline="")
    return path.open(encoding="utf-8", newline="")


def csv_header(path: str | Path) -> list[str]:
    """The fields of a CSV file's first record."""
    with _open_text(Path(path)) as text:
        return next(csv.reader(text), [])


def _csv(path: Path) -> str | None:
    """The first record whose field count differs from the header's (Polars' dialect: comma,
    double quotes); its line is where the record starts."""
    with _open_text(path) as text:
        reader = csv.reader(text, strict=True)
        try:
            header = next(reader, None)
            if header is None:
                return f"the CSV file {str(path)!r} is empty: it has no header"
            line = reader.line_num
            for record in reader:
                if record and len(record) != len(header):
                    return (
                        f"the CSV file {str(path)!r} has {len(record)} fields on line "
                        f"{line + 1} where its header has {len(header)}"
                    )
                line = reader.line_num
        except csv.Error as error:
            return f"the CSV file {str(path)!r} is malformed on line {reader.line_num}: {error}"
    return None


def _ndjson(path: Path) -> str | None:
    with _open_text(path) as text:
        for number, line in enumerate(text, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line, parse_constant=_no_constant)
            except ValueError as error:
                reason = getattr(error, "msg", str(error))
                return f"the NDJSON file {str(path)!r} is not valid JSON on line {number}: {reason}"
            if not isinstance(value, dict):
                return f"the NDJSON file {str(path)!r} has no JSON object on line {number}"
    return None


def _no_constant(name: str) -> None:
    """JSON has no NaN or Infinity: Python's ``json`` writes them, no JSON reader need read
    them (Polars refuses them; write null for a missing value)."""
    raise ValueError(f"{name} is not a JSON value")


_CHECKS = {"parquet": _parquet, "csv": _csv, "ndjson": _ndjson}


@contextmanager
def explained(
    temp_parent: Path, *inputs: Any, reported: tuple[type[BaseException], ...] = ()
) -> Iterator[None]:
    """Run the block; an error of ``reported`` types (the engine's, Polars', the OS's) that a
    full ``temp_parent`` or a malformed input file explains is raised again as a ``ValueError``
    saying so. A ``ValueError`` raised on a malformed CSV or NDJSON file (a short CSV line
    is read as nulls) is replaced by what is wrong with the file."""
    try:
        yield
    except ValueError as error:
        problem = next(
            (p for p in (malformed(i, ("csv", "ndjson")) for i in inputs) if p is not None), None
        )
        if problem is None:
            raise
        raise ValueError(problem) from error
    except reported as error:
        if out_of_space(error):
            raise ValueError(full_directory(temp_parent)) from error
        problem = next((p for p in map(malformed, inputs) if p is not None), None)
        if problem is None:
            raise
        raise ValueError(problem) from error


def _files(data: Any) -> Files | None:
    """The files ``data`` names (:class:`Files`, a :class:`Source` or paths), None for anything
    else or paths that name no readable set of files."""
    if isinstance(data, Files):
        return data
    if isinstance(data, Source):
        source = data
    elif is_paths(data):
        source = Source(data)
    else:
        return None
    if source.kind != "paths":
        return None
    try:
        return source.files
    except ValueError:
        return None
