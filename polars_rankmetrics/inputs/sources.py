"""Turning what users pass as ``data`` into Polars: frames, or paths, globs and directories of
Parquet, CSV or NDJSON files, local or remote (URLs: s3://, gs://, https://, file://).

Other dataframes come in through the Arrow PyCapsule stream interface (``__arrow_c_stream__``),
which pandas (2.2 and later), pyarrow tables and record batch readers, DuckDB relations and
every Arrow-native library implement: Polars reads the stream without copying where Arrow
allows, and no compatibility layer is needed. A pyarrow dataset is scanned lazily.
"""

from __future__ import annotations

import csv
import glob
import re
from collections.abc import Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

import polars as pl

# File formats by extension (compressed CSV and NDJSON too).
_FORMATS = {
    ".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".csv.gz": "csv",
    ".ndjson": "ndjson", ".jsonl": "ndjson", ".ndjson.gz": "ndjson", ".jsonl.gz": "ndjson",
}  # fmt: skip


def _format_of(path: str) -> str | None:
    name = path.lower()
    for suffix, kind in sorted(_FORMATS.items(), key=lambda item: -len(item[0])):
        if name.endswith(suffix):
            return kind
    return None


@dataclass(frozen=True)
class Files:
    """The data files a path argument names: their format (``parquet``, ``csv`` or
    ``ndjson``), the paths, and whether they sit in hive partitions (``key=value`` directories,
    whose keys become columns)."""

    format: str
    paths: list[str]
    hive: bool


def data_files(data: str | PathLike[str] | Sequence[str | PathLike[str]]) -> Files:
    """Expand paths, globs and directories (every data file below one, hive partitions
    included) to the files they name, sorted per pattern. The format comes from the extension
    and must be the same for all.

    Raises ``ValueError`` when a pattern matches no data file, naming what was tried, or when
    the formats differ or are not known.
    """
    patterns = [data] if isinstance(data, str | PathLike) else list(data)
    if not patterns:
        raise ValueError("no data path given")
    paths: list[str] = []
    hive = False
    for pattern in patterns:
        text = str(pattern)
        if text.startswith("file://"):
            text = unquote(urlsplit(text).path)
        if is_url(text):
            paths.append(text)  # read, globs expanded, by the engine
            continue
        if Path(text).is_dir():
            found = sorted(str(p) for p in Path(text).rglob("*") if p.is_file())
            found = [p for p in found if _format_of(p) is not None]
            hive = hive or any(
                "=" in part for p in found for part in Path(p).relative_to(text).parts[:-1]
            )
            tried = f"the data files ({', '.join(sorted(_FORMATS))}) under the directory {text!r}"
        else:
            found = [text] if Path(text).is_file() else sorted(glob.glob(text))
            found = [p for p in found if Path(p).is_file()]
            tried = f"the file or glob {text!r}"
        if not found:
            raise ValueError(f"no data file matches {tried}")
        paths.extend(found)
    formats = {_format_of(p) for p in paths}
    if None in formats:
        unknown = next(p for p in paths if _format_of(p) is None)
        raise ValueError(
            f"{unknown!r} is not a data file this library reads: the extension must be one of "
            f"{', '.join(sorted(_FORMATS))}"
        )
    if len(formats) > 1:
        raise ValueError(f"the paths mix formats ({', '.join(sorted(formats))}); give one")  # type: ignore[arg-type]
    if len({is_url(p) for p in paths}) > 1:
        raise ValueError("the paths mix local files and URLs; give one kind")
    return Files(formats.pop(), paths, hive)  # type: ignore[arg-type]


def is_url(path: str) -> bool:
    """Whether ``path`` is a URL with a scheme other than ``file://`` (s3://, gs://, az://,
    https://, ...), which the engine reads itself: Polars through its object store, DuckDB
    through its httpfs extension (installed on first use where the network allows)."""
    return re.match(r"[A-Za-z][A-Za-z0-9+.-]+://", path) is not None


# The URL schemes of the object stores and web servers Polars reads (its cloud storage: S3,
# Google Cloud Storage, Azure, Hugging Face, HTTP). A scheme of another filesystem (hdfs://,
# viewfs://, dbfs:/) is for an engine that reads it itself, such as Spark through Hadoop.
_POLARS_SCHEMES = frozenset({
    "s3", "s3a", "gs", "gcs", "gcp", "az", "azure", "abfs", "abfss", "adl", "hf", "http", "https",
})  # fmt: skip


def polars_reads(path: str) -> bool:
    """Whether Polars can read ``path``: a local path, or a URL of a scheme its cloud storage
    knows (``s3://``, ``gs://``, ``az://``, ``https://``, ...)."""
    if not is_url(path):
        return True
    return path.split("://", 1)[0].lower() in _POLARS_SCHEMES


ACCEPTED = (
    "a polars DataFrame or LazyFrame, a pandas DataFrame, a pyarrow Table, RecordBatchReader or "
    "Dataset, a DuckDB relation, any object with the Arrow stream interface "
    "(__arrow_c_stream__), or paths, globs or directories of Parquet, CSV or NDJSON files"
)


# Where a user holding matrices is sent: the long table is one row per (sample, label).
MATRICES = (
    "a matrix (samples x labels) of truth and one of scores become the long table with "
    "rm.from_dense(y_true, y_score), and polars_rankmetrics.sklearn takes scikit-learn's "
    "calls, metric(y_true, y_score)"
)


def matrix_hint(data: object) -> str:
    """For ``data`` that looks like a matrix (a numpy array, a scipy sparse matrix, a list of
    rows), where matrices go; else nothing."""
    looks_like = (
        type(data).__module__.startswith(("numpy", "scipy"))
        or hasattr(data, "toarray")
        or (isinstance(data, list | tuple) and bool(data) and isinstance(data[0], list | tuple))
    )
    return f": {MATRICES}" if looks_like else ""


def is_paths(data: object) -> bool:
    """Whether ``data`` is a path or a list of paths."""
    if isinstance(data, str | PathLike):
        return True
    return isinstance(data, list | tuple) and all(isinstance(p, str | PathLike) for p in data)


Kind = Literal["frame", "paths", "dataset", "duckdb", "spark"]


class Source:
    """What a caller passed as ``data``, classified once and handed on whole.

    ``kind``: ``"frame"`` (a Polars DataFrame or LazyFrame, or another library's frame read
    through the Arrow stream interface, converted once), ``"paths"`` (paths, globs or
    directories, expanded to :attr:`files` once, on first use: a string is a table name first
    on an engine that has tables), ``"dataset"`` (a pyarrow dataset, scanned lazily),
    ``"duckdb"`` (a DuckDB relation) or ``"spark"`` (a Spark DataFrame): the last two are read
    natively by their engine and converted for any other. ``TypeError`` naming what is
    accepted for anything else.
    """

    def __init__(self, data: object) -> None:
        self.data = data
        self._files: Files | None = None
        self._polars: pl.DataFrame | pl.LazyFrame | None = None
        self.kind: Kind
        if isinstance(data, pl.DataFrame | pl.LazyFrame):
            self.kind, self._polars = "frame", data
        elif is_paths(data):
            self.kind = "paths"
        elif type(data).__module__.startswith("pyarrow") and hasattr(data, "scanner"):
            self.kind = "dataset"
        elif type(data).__module__.startswith("duckdb") and hasattr(data, "pl"):
            self.kind = "duckdb"
        elif type(data).__module__.startswith("pyspark"):
            self.kind = "spark"
        elif hasattr(data, "__arrow_c_stream__"):
            self.kind, self._polars = "frame", _from_stream(data)
        else:
            raise TypeError(
                f"data must be {ACCEPTED}, not {type(data).__name__}" + matrix_hint(data)
            )

    @classmethod
    def of(cls, data: object) -> Source:
        """``data`` classified, or ``data`` itself when it is a :class:`Source` already."""
        return data if isinstance(data, Source) else cls(data)

    @property
    def files(self) -> Files:
        """The data files of a ``"paths"`` source (:func:`data_files`), expanded once."""
        if self._files is None:
            self._files = data_files(self.data)  # type: ignore[arg-type]
        return self._files

    @property
    def eager(self) -> bool:
        """Whether the rows are held in memory (a result from them is a DataFrame, not a
        LazyFrame)."""
        return not isinstance(self.data, pl.LazyFrame) and self.kind not in ("paths", "dataset")

    def polars(self) -> pl.DataFrame | pl.LazyFrame:
        """The rows as Polars: a frame as it is; files and datasets scanned, not read; a
        DuckDB relation or a Spark DataFrame read into memory, once."""
        if self._polars is None:
            if self.kind == "paths":
                self._polars = _scan(self.files)
            elif self.kind == "dataset":
                self._polars = pl.scan_pyarrow_dataset(self.data)
            elif self.kind == "duckdb":
                # A DuckDB relation's own conversion: through its stream capsule, duckdb 2.0
                # leaves objects that its bindings report as leaked when the interpreter exits.
                self._polars = self.data.pl()  # type: ignore[attr-defined]
            elif hasattr(self.data, "toArrow"):
                self._polars = pl.from_arrow(self.data.toArrow())  # type: ignore[assignment]
            else:
                raise TypeError(f"data must be {ACCEPTED}, not {type(self.data).__name__}")
        assert self._polars is not None
        return self._polars

    def lazy(self) -> pl.LazyFrame:
        """The rows as a LazyFrame (:meth:`polars`)."""
        return self.polars().lazy()

    def in_memory(self) -> pl.DataFrame:
        """The rows as a DataFrame, for an engine that reads frames from Arrow."""
        frame = self.polars()
        return frame.collect() if isinstance(frame, pl.LazyFrame) else frame


def _from_stream(data: Any) -> pl.DataFrame:
    """A frame read through the Arrow stream; a column that Arrow cannot give one type (a
    pandas object column mixing strings and numbers) refused naming it, which Arrow's own
    error does not."""
    try:
        return pl.DataFrame(data)
    except (TypeError, ValueError) as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        for column in getattr(data, "columns", ()):
            try:
                pl.DataFrame(data[[column]])
            except (TypeError, ValueError):
                raise ValueError(
                    f"column {column!r} cannot be read as one type ({reason}): give its values "
                    "one type first (strings for ids, numbers for scores)"
                ) from error
        raise


def _scan(files: Files) -> pl.LazyFrame:
    # Local paths are expanded already (a '[' in a file name is not a glob pattern again);
    # URLs are expanded by Polars.
    remote = is_url(files.paths[0])
    if files.format == "csv":
        return _scan_csv(files.paths, remote)
    if files.format == "ndjson":
        if not remote and all(Path(p).stat().st_size == 0 for p in files.paths):
            return pl.LazyFrame()  # no rows and so no columns, which Polars cannot scan
        return pl.scan_ndjson(files.paths)
    return pl.scan_parquet(files.paths, glob=remote, hive_partitioning=files.hive)


# A number written with a leading zero (01, 007, 01.5): an id padded with zeros, not a number.
_PADDED = r"^0[0-9]"


def _scan_csv(paths: list[str], remote: bool) -> pl.LazyFrame:
    """CSV files as every engine reads them (:func:`csv_schema` types each column).

    RFC 4180's dialect: a field's spaces are part of it (`` 0.9`` is text, `` label`` a column
    named with a space), quotes doubled inside a quoted field (in the header too), ``""`` an
    empty string and an empty field a null. A blank line (such as the last line of most files)
    is no row; a record of empty fields (``,,,``) is refused by :func:`csv_schema`, so the rows
    of nulls left here are blank lines, which Polars reads as rows of nulls."""
    schema = csv_schema(paths, remote)
    frame = pl.scan_csv(
        paths, glob=remote, new_columns=list(schema), schema_overrides=schema, infer_schema=False,
    )  # fmt: skip
    return frame.filter(~pl.all_horizontal(pl.all().is_null()))


def csv_schema(paths: list[str], remote: bool) -> pl.Schema:
    """The columns of CSV files and their types, which every engine reads them with: each
    column's type inferred from all its values (a float or a text on the last row is seen), a
    column holding any number written with a leading zero read as text (``01`` and ``1`` are
    two ids, which a number would merge), and the header's names as the CSV dialect spells
    them (Polars keeps a header's doubled quotes).

    Every local file's header is read: the files are read by position, as one table, so each
    must list the first's columns in the first's order. Remote files (URLs) are not opened
    here: their engine reads them, by the first file's header.

    Raises ``ValueError`` naming the file and the column when a local file's header names a
    column twice or leaves one without a name; naming both files and both headers when a
    local file's header is not the first's; naming the file, the line and the first column
    when a local file holds a record of empty fields (``,,,``), a row of nulls that a blank
    line is not.
    """
    names = None if remote else _same_headers(paths)
    if names is not None:
        _refuse_empty_records(paths, names)
    frame = pl.scan_csv(
        paths, glob=remote, infer_schema_length=None,
        with_column_names=None if names is None else (lambda found: _renamed(found, names)),
    )  # fmt: skip
    schema = frame.collect_schema()
    numeric = [name for name, dtype in schema.items() if dtype.is_numeric()]
    if not numeric:
        return schema
    text = pl.scan_csv(paths, glob=remote, infer_schema=False, new_columns=list(schema))
    text = text.select(numeric)
    padded = text.select(pl.col(numeric).str.contains(_PADDED).any()).collect().row(0)
    ids = {name for name, found in zip(numeric, padded, strict=True) if found}
    return pl.Schema({name: pl.String if name in ids else dtype for name, dtype in schema.items()})


def open_text(path: str | Path, encoding: str = "utf-8-sig") -> Any:
    """A local text file, read through gzip where its name ends in ``.gz`` (in any case), a
    byte order mark skipped (``encoding="utf-8"`` keeps it, for formats that refuse one)."""
    if str(path).lower().endswith(".gz"):
        import gzip

        return gzip.open(path, "rt", encoding=encoding, newline="")
    return open(path, encoding=encoding, newline="")


def csv_header(path: str | Path) -> list[str]:
    """The fields of a local CSV file's header, its first record (RFC 4180: quotes doubled
    inside a quoted field); ``[]`` for an empty file. ``ValueError`` naming the file where the
    header is not UTF-8."""
    try:
        with open_text(path) as text:
            return next(csv.reader(text), [])
    except UnicodeDecodeError as error:
        raise ValueError(
            f"the CSV file {str(path)!r} is not UTF-8 text ({error.reason} in its header): "
            "save it as UTF-8"
        ) from None


def _same_headers(paths: list[str]) -> list[str]:
    """The names of the first file's header (:func:`_csv_names`), which every other file's
    header must repeat: a column reordered, added or missing would be read by position as
    another."""
    names = _csv_names(paths[0])
    for path in paths[1:]:
        other = csv_header(path)
        if other != names:
            raise ValueError(
                f"the CSV files {paths[0]!r} and {path!r} have different headers "
                f"({','.join(names)} and {','.join(other)}): give every file of one table the "
                "same columns in the same order"
            )
    return names


def _csv_names(path: str) -> list[str]:
    """The fields of a local CSV file's header; ``ValueError`` naming a column the header
    names twice, a field without a name, or a header that is not UTF-8."""
    names = csv_header(path)
    seen: set[str] = set()
    for position, name in enumerate(names, start=1):
        if not name:
            # No SQL engine can name such a column.
            raise ValueError(
                f"the CSV file {path!r} has a column without a name (field {position} of its "
                "header): name it, or remove the comma that ends the header"
            )
        if name in seen:
            raise ValueError(
                f"the CSV file {path!r} names column {name!r} twice in its header: give each "
                "column a name of its own"
            )
        seen.add(name)
    return names


# A line of commas alone: a record of empty fields, where the file has two columns or more.
_EMPTY_RECORD = r"^,+\r?$"


def _refuse_empty_records(paths: list[str], names: list[str]) -> None:
    """``ValueError`` at the first record of empty fields (``,,,``, or fewer commas) of local
    CSV files, naming the file, the line and the first column.

    Polars reads such a record and a blank line alike, as a row of nulls; the lines themselves
    tell them apart. Polars scans the lines for one of commas alone (one pass, in parallel);
    only where it finds one is the file read again as CSV records, up to that line, to tell a
    record from a line inside a quoted field that spans lines."""
    if len(names) < 2:
        return  # one column: an empty record is a blank line
    found = (
        pl.scan_lines(paths, glob=False, row_index_name="index", include_file_paths="path")
        .filter(pl.col("line").str.contains(_EMPTY_RECORD))
        .group_by("path")
        .agg(pl.col("index"))
        .collect()
    )
    lines = {path: {i + 1 for i in index} for path, index in found.iter_rows()}
    for path in paths:
        line = _first_empty_record(path, lines.get(path, set()))
        if line is not None:
            raise ValueError(
                f"the CSV file {path!r} has a record of empty fields on line {line}: column "
                f"{names[0]!r} has a null there (only a blank line is no row); remove the line "
                "or fill it"
            )


def _first_empty_record(path: str, candidates: set[int]) -> int | None:
    """The first of the lines ``candidates`` (numbered from 1) that starts a record of ``path``
    whose fields are all empty, or None."""
    if not candidates:
        return None
    last = max(candidates)
    with open_text(path) as text:
        reader = csv.reader(text)
        start = 1
        for record in reader:
            if start > last:
                break
            if start in candidates and len(record) > 1 and not any(record):
                return start
            start = reader.line_num + 1
    return None


def _renamed(found: list[str], names: list[str]) -> list[str]:
    """Polars' column names (``found``) replaced by the header's as the dialect reads it
    (``names``), where the header has as many fields."""
    return names if len(names) == len(found) else found


def to_lazy(data: object) -> pl.LazyFrame:
    """A LazyFrame over any source (:class:`Source`); Parquet files are scanned, not read."""
    return Source.of(data).lazy()
