"""Errors of the medium: what an engine's failure to read the input or to write its temporary
files means for the user, as one ``ValueError`` saying what happened and what to do.

An engine reports a full disk, a truncated Parquet file or a CSV line with too many fields in
its own words ("failed to offload data block", "File out of specification", "found more fields
than defined in 'Schema'"), often without the file. Where a run fails, :func:`explained` looks
at the medium itself, cause by cause: an input file removed or changed since the run started
(:class:`InputFiles`), a full temporary directory (the error's errno or wording), each Parquet
file's footer, each CSV or NDJSON file's lines. A run that ends well is checked for input files
changed under it, whose numbers would mix two versions of a file.
"""

from __future__ import annotations

import csv
import errno
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import polars as pl

from polars_rankmetrics.inputs.sources import Files, Source, is_paths, is_url, open_text

# How the engines word a full disk: Polars and DuckDB pass the OS error on ("os error 28",
# "errno":"28"). DuckDB says it "failed to offload" a block when its spill files reach
# max_temp_directory_size, which it sets from the free space of the directory they are in (a
# buffer it cannot free, a budget too small, is "could not allocate" instead).
_OUT_OF_SPACE = ("no space left on device", "os error 28", '"errno":"28"', "failed to offload")


def out_of_space(error: BaseException) -> bool:
    """Whether ``error`` is a write that found its disk full (an ``OSError`` of errno
    ``ENOSPC``, or an engine's error saying so), as opposed to memory running out."""
    if isinstance(error, OSError) and error.errno == errno.ENOSPC:
        return True
    text = str(error).lower()
    return any(words in text for words in _OUT_OF_SPACE)


def full_directory(parent: Path) -> str:
    """What to do where the temporary directory ``parent`` ran out of space."""
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
        try:
            problem = _CHECKS[files.format](Path(path))
        except OSError as error:
            problem = f"the input file {path!r} cannot be read: {error.strerror or error}"
        if problem is not None:
            return problem
    return None


class InputFiles:
    """The local input files of a run as they were when it started (size, modification time,
    inode), to tell one removed, truncated or rewritten while the run reads it.

    An engine reading such a file fails in its own words (a missing file, a footer out of
    specification, a record too short), or reads part of it without failing (a CSV file cut
    after a whole line is a shorter CSV file). Files that cannot be found when the run starts
    are left to the readers, which name them.
    """

    def __init__(self, inputs: tuple[Any, ...]) -> None:
        self.stamps: dict[str, os.stat_result] = {}
        for data in inputs:
            files = _files(data)
            for path in [] if files is None else files.paths:
                if not is_url(path):
                    try:
                        self.stamps[path] = os.stat(path)
                    except OSError:
                        pass

    def changed(self) -> str | None:
        """What happened to the first input file that is no longer as it was, or None."""
        for path, before in self.stamps.items():
            try:
                now = os.stat(path)
            except FileNotFoundError:
                return (
                    f"the input file {path!r} disappeared during the run (removed or renamed): "
                    "keep the input files in place until the run ends"
                )
            except OSError as error:
                return f"the input file {path!r} cannot be read any more: {error.strerror}"
            if _version(now) != _version(before):
                how = "was truncated" if now.st_size < before.st_size else "changed"
                return (
                    f"the input file {path!r} {how} during the run ({before.st_size:,} bytes "
                    f"when the run started, {now.st_size:,} now): evaluate it again once it "
                    "is written whole"
                )
        return None


def _version(stat: os.stat_result) -> tuple[int, int, int, int]:
    """What changes when a file is written, truncated or replaced by another."""
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns


def _parquet(path: Path) -> str | None:
    try:
        pl.read_parquet_schema(path)
    except (pl.exceptions.PolarsError, OSError) as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else "unreadable"
        reason = reason.removeprefix("parquet: ")
        return f"the Parquet file {str(path)!r} is corrupt or truncated: {reason}"
    return None


def _csv(path: Path) -> str | None:
    """The first record whose field count differs from the header's (Polars' dialect: comma,
    double quotes); its line is where the record starts."""
    with open_text(path) as text:
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
    with open_text(path, encoding="utf-8") as text:
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
    """Run the block over ``inputs`` (sources, :class:`Files`, paths, or None); an error its
    medium explains is raised again as a ``ValueError`` saying so, the first cause that holds
    deciding:

    1. any error, where an input file was removed or changed since the block started
       (:class:`InputFiles`);
    2. an error of ``reported`` types (the engine's, Polars', the OS's) that a full disk
       explains (:func:`out_of_space`): ``temp_parent``, the directory of the run's spill and
       bucket files, named;
    3. an error of ``reported`` types on a malformed input file, or a ``ValueError`` on a
       malformed CSV or NDJSON file (a short CSV line is read as nulls): the file and what is
       wrong with it.

    A block that ends well over an input file changed meanwhile raises the ``ValueError`` of 1:
    its numbers may mix two versions of the file.
    """
    files = InputFiles(inputs)
    try:
        yield
    except Exception as error:
        problem = files.changed()
        if problem is None and isinstance(error, ValueError):
            problem = next(
                (p for p in (malformed(i, ("csv", "ndjson")) for i in inputs) if p is not None),
                None,
            )
        elif problem is None and isinstance(error, reported):
            problem = (
                full_directory(temp_parent)
                if out_of_space(error)
                else next((p for p in map(malformed, inputs) if p is not None), None)
            )
        if problem is None:
            raise
        raise ValueError(problem) from error
    problem = files.changed()
    if problem is not None:
        raise ValueError(problem)


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
