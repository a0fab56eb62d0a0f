"""TREC run and qrels files read into the long table, line by line as trec_eval 10.0 reads them.

A run file holds ``qid iter docno rank score tag`` and a qrels file ``qid iter docno rel``:
fields separated by any run of spaces and tabs (C's ``isspace``: space, tab, vertical tab, form
feed, carriage return), string fields without whitespace. The rules of trec_eval 10.0's
``get_trec_results.c`` and ``get_qrels.c``, which these readers keep:

- run files: a line of whitespace alone is skipped; a line whose first character other than
  whitespace is ``#`` is a comment; a line needs at least 6 fields, and fields after the sixth
  are ignored;
- qrels files: a line whose first character is ``#`` is a comment (a ``#`` after leading
  whitespace is not); a line needs exactly 4 fields, so a blank line is malformed;
- a docno twice in one topic of a run, or of the qrels, is an error.

Where trec_eval 10.0 reads silently what is not a number (``atof``, ``atol``: 0 for ``x``),
these readers refuse the line, and they refuse a rank that is not an integer (trec_eval ignores
the rank column: it orders by score, then docno). trec_eval 10.0 misreads a qrels comment that
follows another comment, and one on the last line without a final newline; both are comments
here.
"""

from __future__ import annotations

import glob
import mmap
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import BinaryIO

import polars as pl

from polars_rankmetrics.inputs.sizes import parse_size

# C's isspace other than the newline that ends a line: the fields' separators (not Unicode
# whitespace: a no-break space is part of a docno, as in trec_eval).
_OTHER_SPACES = ["\t", "\x0b", "\x0c", "\r"]
# The 64-bit hash that finds a docno seen twice in a topic without holding the strings; a
# collision only costs the exact search that follows it.
_SEED = 0x7E5C
# How many lines' hashes the duplicate check counts in memory at once (about 60 bytes each), and
# the bytes of text a line takes at least, which tell from a file's size whether it may hold
# more.
_KEYS_AT_ONCE = 4_000_000
_LINE_BYTES = 25
_COMPRESSED = (b"\x1f\x8b", b"\x28\xb5\x2f\xfd")  # gzip's and zstd's magic numbers
# Files of at most this much text, each line well formed the simplest way, are read into memory
# at once by the CSV reader (:func:`_well_formed`); the others are scanned line by line. Under a
# memory budget, at most this share of it: parsed, the frame and the reader's buffers take about
# four times the text. The bytes that rule that way out: the other whitespace characters and the
# comment sign.
_IN_MEMORY_BYTES = 2**30
_IN_MEMORY_SHARE = 0.25
_SPECIAL = "".join(_OTHER_SPACES).encode() + b"#"
# The text of a bucket of topics that :meth:`TrecRun.buckets` reads at once: parsed and
# evaluated, a bucket takes some thirty times its text.
_BUCKET_BYTES = 2**24

TrecPaths = str | PathLike[str] | Sequence[str | PathLike[str]]


@dataclass(frozen=True)
class _Layout:
    """One file kind: its name in messages, its fields, and how trec_eval skips lines."""

    kind: str
    fields: tuple[str, ...]
    exact: bool  # exactly len(fields) fields (qrels) or at least (run)
    # run: a blank line is skipped, and a "#" after leading whitespace starts a comment;
    # qrels: a comment starts with "#" in the first column, a blank line is malformed.
    lenient: bool


_RUN = _Layout(
    "run",
    ("qid", "iter", "docno", "rank", "score", "tag"),
    exact=False,
    lenient=True,
)
_QRELS = _Layout(
    "qrels",
    ("qid", "iter", "docno", "rel"),
    exact=True,
    lenient=False,
)


def read_trec_run(paths: TrecPaths, *, memory_limit: str | None = None) -> pl.LazyFrame:
    """Read TREC run files (``qid Q0 docno rank score tag``) as a long table.

    Parameters
    ----------
    paths
        A file, a glob, or a list of them; gzip- or zstd-compressed files are read as they are.
        Every file is checked when this is called: files of at most 1 GiB in all whose lines
        are single-space separated, without comment, are read into memory then, once; the
        others are checked line by line (a scan: a file larger than memory is read in pieces,
        and the check's memory is bounded), and scanned again when the frame is collected.
    memory_limit
        The evaluation's memory budget (``"1GB"``, as :func:`~polars_rankmetrics.evaluate`
        takes it): files are then read into memory only where their text takes at most a
        quarter of it (parsed, a line takes about four times its text), and scanned
        otherwise. None: the 1 GiB bound above.

    Returns
    -------
    polars.LazyFrame
        One row per ranked document: ``run`` (String, the run's name), ``sample`` (String, the
        qid), ``label`` (String, the docno), ``score`` (Float64) and ``rank`` (Int64, as given:
        trec_eval orders by score and ignores it). A run is a file's lines of one tag: each
        file is evaluated apart, as trec_eval evaluates a file, and a file whose tag varies by
        line holds one run per tag (trec_eval would take the whole file as one run, named by
        its last line's tag). A run is named by its tag, and by tag and file name,
        ``bm25 (a.txt)``, where several files hold that tag (by tag and path where their names
        are the same too). Evaluate several with ``by="run"``. A file with no content line adds
        no row.

    Raises
    ------
    ValueError
        For a file or glob that names no file, and for the first malformed line, naming the
        file, the line number and the reason: fewer than 6 fields, a score that is not a number
        (or NaN), a rank that is not an integer, or a docno twice in one topic of a run; for a
        file given twice.

    Examples
    --------
    >>> import polars as pl, polars_rankmetrics as rm, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.txt"
    >>> _ = path.write_text("# BM25\\n301 Q0 d1 1 12.5 bm25\\n301 Q0 d2 2 12.5 bm25\\n")
    >>> rm.read_trec_run(path).sort("label").collect()
    shape: (2, 5)
    ┌──────┬────────┬───────┬───────┬──────┐
    │ run  ┆ sample ┆ label ┆ score ┆ rank │
    │ ---  ┆ ---    ┆ ---   ┆ ---   ┆ ---  │
    │ str  ┆ str    ┆ str   ┆ f64   ┆ i64  │
    ╞══════╪════════╪═══════╪═══════╪══════╡
    │ bm25 ┆ 301    ┆ d1    ┆ 12.5  ┆ 1    │
    │ bm25 ┆ 301    ┆ d2    ┆ 12.5  ┆ 2    │
    └──────┴────────┴───────┴───────┴──────┘
    """
    return _read(paths, _RUN, memory_limit)


def read_trec_qrels(paths: TrecPaths, *, memory_limit: str | None = None) -> pl.LazyFrame:
    """Read TREC qrels files (``qid iter docno rel``) as a truth table.

    Parameters
    ----------
    paths
        A file, a glob, or a list of them (their judgements together); gzip- or
        zstd-compressed files are read as they are. Checked when this is called, and read
        then or scanned when the frame is collected, as :func:`read_trec_run` does.
    memory_limit
        The evaluation's memory budget, as for :func:`read_trec_run`.

    Returns
    -------
    polars.LazyFrame
        One row per judgement: ``sample`` (String, the qid), ``label`` (String, the docno) and
        ``truth`` (Int64, the relevance as given: 0 and negative values are kept; what counts as
        relevant is the evaluation's choice, trec_eval's ``-l``). A file of comments alone adds
        no row.

    Raises
    ------
    ValueError
        For a file or glob that names no file, and for the first malformed line, naming the
        file, the line number and the reason: not exactly 4 fields (a blank line too, as in
        trec_eval), a relevance that is not an integer, or a docno judged twice in one topic.

    Examples
    --------
    >>> import polars as pl, polars_rankmetrics as rm, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
    >>> _ = path.write_text("301 0 d1 2\\n301 0 d2 -1\\n")
    >>> rm.read_trec_qrels(path).sort("label").collect()
    shape: (2, 3)
    ┌────────┬───────┬───────┐
    │ sample ┆ label ┆ truth │
    │ ---    ┆ ---   ┆ ---   │
    │ str    ┆ str   ┆ i64   │
    ╞════════╪═══════╪═══════╡
    │ 301    ┆ d1    ┆ 2     │
    │ 301    ┆ d2    ┆ -1    │
    └────────┴───────┴───────┘
    """
    return _read(paths, _QRELS, memory_limit)


class Unbucketed(Exception):
    """A run that :meth:`TrecRun.buckets` cannot read a bucket of whole topics at a time: read
    it whole (:meth:`TrecRun.read`)."""


@dataclass(frozen=True)
class TrecRun:
    """Run files by path, unread: read whole as :func:`read_trec_run` reads them
    (:meth:`read`), or a bucket of whole topics at a time (:meth:`buckets`), so that an
    evaluation holds one bucket's rows, not the file's."""

    paths: TrecPaths

    def read(self) -> pl.LazyFrame:
        """The run as :func:`read_trec_run` reads it (checked now, into memory)."""
        return read_trec_run(self.paths)

    def buckets(self, size: int | None = None) -> Iterator[pl.DataFrame]:
        """The run's rows, as :meth:`read` gives them, in buckets of about ``size`` bytes of
        text (None: ``_BUCKET_BYTES``), each cut where the topic id changes and holding every
        line of its topics.

        Raises :class:`Unbucketed` (before the first bucket, or at any later one) where the
        run is not one uncompressed file, where a bucket's lines are not all well formed the
        simplest way (:func:`_simplest`: another whitespace character, a comment, a blank or
        malformed line, a docno twice in a topic) or where a (tag, topic) pair comes back
        after another (a file not in topic order): what was read of it is then to be dropped.
        So each bucket holds each of its topics' rows one after another.
        The message of a malformed line is :meth:`read`'s to give."""
        files = _files(self.paths, "run")
        seen: set[tuple[str, str]] = set()
        for part in self.texts(size):
            frame = _simplest([part], _RUN)
            if frame is None:
                raise Unbucketed("a line not of the simplest form")
            pairs = set(frame.select("tag", "qid").unique().iter_rows())
            if not seen.isdisjoint(pairs) or _topic_runs(frame) != len(pairs):
                raise Unbucketed("a topic in two places of the file")
            seen |= pairs
            yield _run_columns(frame.lazy(), files).collect()

    def texts(self, size: int | None = None) -> Iterator[bytes]:
        """The run's text in pieces of whole lines of about ``size`` bytes (None:
        ``_BUCKET_BYTES``), each cut where the topic id changes, none holding a whitespace
        character other than the space and the newline, or a comment sign: what
        :meth:`buckets` parses. Raises :class:`Unbucketed` where the run is not one
        uncompressed file, or a piece holds such a character."""
        files = _files(self.paths, "run")
        if len(files) != 1 or _size(files[0]) != Path(files[0]).stat().st_size:
            raise Unbucketed("not one uncompressed file")
        if Path(files[0]).stat().st_size == 0:
            raise Unbucketed("an empty file")
        with open(files[0], "rb") as file:
            for part in _topic_texts(file, size or _BUCKET_BYTES):
                if any(bytes([c]) in part for c in _SPECIAL):
                    raise Unbucketed("a line not of the simplest form")
                yield part


def _topic_runs(frame: pl.DataFrame) -> int:
    """How many runs of lines of one (tag, topic) pair ``frame`` holds."""
    starts = pl.any_horizontal(pl.col(k).ne_missing(pl.col(k).shift(1)) for k in ("tag", "qid"))
    return int(frame.select(starts.sum()).item())


def _topic_texts(file: BinaryIO, size: int) -> Iterator[bytes]:
    """The text of ``file`` in pieces of whole lines of about ``size`` bytes each, cut where
    the topic id (a line's first field) changes: read by blocks of ``size`` bytes (not
    mapped, so that the file's pages do not stay with the process), the last topic's lines of
    a block carried into the next piece. Raises :class:`Unbucketed` where the last whole line
    of a block does not start with a field and a space."""
    carry = b""
    while True:
        block = file.read(size)
        text = carry + block
        if not block:
            if text:
                yield text
            return
        end = text.rfind(b"\n")
        if end == -1:  # no whole line yet
            carry = text
            continue
        line = text.rfind(b"\n", 0, end) + 1  # the last whole line's start
        field = text.find(b" ", line, end)
        if field <= line:  # a blank line, one field, or a leading space
            raise Unbucketed("a line not of the simplest form")
        topic = text[line : field + 1]
        cut = 0 if text.startswith(topic) else text.find(b"\n" + topic) + 1
        if cut == 0:  # one topic so far: the piece grows
            carry = text
            continue
        yield text[:cut]
        carry = text[cut:]


def _files(paths: TrecPaths, kind: str) -> list[str]:
    """Each path as itself, each glob as the files it matches (sorted), in the order given."""
    patterns = [paths] if isinstance(paths, str | PathLike) else list(paths)
    if not patterns:
        raise ValueError(f"no {kind} file given")
    files: list[str] = []
    for pattern in patterns:
        text = str(pattern)
        found = [text] if Path(text).is_file() else sorted(glob.glob(text))
        found = [f for f in found if Path(f).is_file()]
        if not found:
            raise ValueError(f"no {kind} file matches {text!r}")
        files.extend(found)
    return files


def _parsed(files: list[str], layout: _Layout) -> pl.LazyFrame:
    """Every line of every file: ``file`` (its index in ``files``), ``number`` (the line's, from
    1), ``line`` (its text), ``content`` (neither a comment nor a skipped blank line), ``n`` (its
    field count) and its fields by name, as strings (null where the line has too few)."""
    per_file = [
        pl.scan_lines(path, name="line", row_index_name="number", row_index_offset=1).with_columns(
            pl.lit(i, pl.UInt32).alias("file")
        )
        for i, path in enumerate(files)
    ]
    # Literal replacements and a split: several times faster than a regular expression.
    fields = (
        pl.col("line")
        .str.replace_many(_OTHER_SPACES, [" "] * len(_OTHER_SPACES))
        .str.split(" ")
        .list.eval(pl.element().filter(pl.element() != ""))
    )
    if layout.lenient:
        first = pl.col("fields").list.first()
        skipped = first.is_null() | first.str.starts_with("#")
    else:
        skipped = pl.col("line").str.starts_with("#")
    return (
        pl.concat(per_file, how="vertical")
        .with_columns(fields.alias("fields"))
        .with_columns(
            (~skipped).alias("content"),
            pl.col("fields").list.len().alias("n"),
            *(
                pl.col("fields").list.get(i, null_on_oob=True).alias(name)
                for i, name in enumerate(layout.fields)
            ),
        )
    )


def _bad_line(layout: _Layout) -> pl.Expr:
    """Whether a content line is malformed (its reason is told by :func:`_reason`)."""
    wanted = len(layout.fields)
    count = pl.col("n") != wanted if layout.exact else pl.col("n") < wanted
    if layout is _RUN:
        score = pl.col("score").cast(pl.Float64, strict=False)
        rank = pl.col("rank").str.to_integer(strict=False)
        numbers = score.is_null() | score.is_nan() | rank.is_null()
    else:
        numbers = pl.col("rel").str.to_integer(strict=False).is_null()
    return pl.col("content") & (count | numbers)


def _reason(row: dict[str, object], layout: _Layout) -> str:
    n = row["n"]
    wanted = len(layout.fields)
    if (n != wanted) if layout.exact else (n < wanted):  # type: ignore[operator]
        expected = f"{'exactly' if layout.exact else 'at least'} {wanted} fields"
        return f"expected {expected} ({' '.join(layout.fields)}), found {n}"
    if layout is _RUN:
        score = pl.Series([row["score"]]).cast(pl.Float64, strict=False)[0]
        if score is None or score != score:
            return f"the score {row['score']!r} is not a number"
        return f"the rank {row['rank']!r} is not an integer"
    return f"the relevance {row['rel']!r} is not an integer"


def _read(paths: TrecPaths, layout: _Layout, memory_limit: str | None) -> pl.LazyFrame:
    most = _IN_MEMORY_BYTES
    if memory_limit is not None:
        most = min(most, int(parse_size(memory_limit) * _IN_MEMORY_SHARE))
    files = _files(paths, layout.kind)
    lines = _parsed(files, layout)
    fields = _well_formed(files, layout, most)
    if fields is None:
        _check(lines, files, layout)
        numbers = (
            [pl.col("score").cast(pl.Float64), pl.col("rank").str.to_integer()]
            if layout is _RUN
            else [pl.col("rel").str.to_integer()]
        )
        fields = lines.filter("content").with_columns(numbers)
    if layout is _RUN:
        return _run_columns(fields, files)
    return fields.select(
        pl.col("qid").alias("sample"),
        pl.col("docno").alias("label"),
        pl.col("rel").alias("truth"),
    )


def _run_columns(fields: pl.LazyFrame, files: list[str]) -> pl.LazyFrame:
    """A run's fields by name as the columns :func:`read_trec_run` gives, the lines of
    ``files`` (each line's ``file`` its index there)."""
    return fields.select(
        _run_name(fields, files).alias("run"),
        pl.col("qid").alias("sample"),
        pl.col("docno").alias("label"),
        "score",
        "rank",
    )


def _well_formed(files: list[str], layout: _Layout, most: int) -> pl.LazyFrame | None:
    """The fields of every line, by name (the numbers parsed), read by Polars' CSV reader into
    memory (several times faster than splitting lines, and read once) where the files hold
    at most ``most`` bytes, are uncompressed, and every line is well formed the simplest
    way (:func:`_simplest`). None otherwise: the files are then read line by line
    (:func:`_parsed`), which reads every layout trec_eval reads and names a malformed line."""
    sizes = [Path(f).stat().st_size for f in files]
    if sum(sizes) > most or any(
        size != _size(f) or _holds(f, _SPECIAL) for size, f in zip(sizes, files, strict=True)
    ):
        return None
    frame = _simplest(files, layout)
    return None if frame is None else frame.lazy()


def _simplest(texts: Sequence[str | bytes], layout: _Layout) -> pl.DataFrame | None:
    """The fields of the lines of ``texts`` (files, or text without another whitespace
    character or ``#``), by name, where every line is well formed the simplest way: the
    layout's fields separated by single spaces, none empty, numbers that :func:`_bad_line`
    accepts (the CSV reader parses them as ``str.to_integer`` and a cast to Float64 do), no
    docno twice in a topic, at least one line. None otherwise."""
    numbers = {"score": pl.Float64, "rank": pl.Int64, "rel": pl.Int64}
    schema = pl.Schema({name: numbers.get(name, pl.String) for name in layout.fields})
    try:
        frame = pl.concat(
            [
                pl.read_csv(
                    t, separator=" ", has_header=False, schema=schema, quote_char=None
                ).with_columns(pl.lit(i, pl.UInt32).alias("file"))
                for i, t in enumerate(texts)
            ],
            how="vertical",
        )
    except pl.exceptions.PolarsError:  # a line with another field count, or not a number
        return None
    score = pl.col("score").is_nan().any() if layout is _RUN else pl.lit(False)
    found = frame.select(
        pl.sum_horizontal(pl.all().null_count()).alias("nulls"),
        score.alias("nan"),
        _key_hash(layout).n_unique().alias("distinct"),
    ).row(0, named=True)
    well_formed = frame.height > 0 and found["nulls"] == 0 and not found["nan"]
    return frame if well_formed and found["distinct"] == frame.height else None


def _run_name(fields: pl.LazyFrame, files: list[str]) -> pl.Expr:
    """The name of each line's run (its file's lines of its tag): the tag, or, for a tag that
    several files hold, the tag and the file's name (``bm25 (a.txt)``), or its path where
    the names are the same too. Several files are read once more for their tags; a file
    given twice is refused."""
    if len(files) == 1:
        return pl.col("tag")
    pairs = fields.select("file", "tag").unique().collect()
    shared = pairs.group_by("tag").len().filter(pl.col("len") > 1)["tag"]
    if shared.is_empty():
        return pl.col("tag")
    twice = next((f for f in files if files.count(f) > 1), None)
    if twice is not None:
        raise ValueError(f"run file {twice!r} is given twice: each file is evaluated apart")
    names = [Path(f).name for f in files]
    shown = names if len(set(names)) == len(names) else files
    file = pl.col("file").replace_strict(range(len(files)), shown, return_dtype=pl.String)
    named = pl.format("{} ({})", pl.col("tag"), file)
    return pl.when(pl.col("tag").is_in(shared.implode())).then(named).otherwise(pl.col("tag"))


def _holds(path: str, characters: bytes) -> bool:
    """Whether the file holds a byte of ``characters`` (each searched at memchr's speed)."""
    with open(path, "rb") as file:
        if Path(path).stat().st_size == 0:
            return False
        with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as text:
            return any(text.find(bytes([c])) != -1 for c in characters)


def _keys(layout: _Layout) -> list[str]:
    """The columns a docno must be unique within: the topic, and the run (its file and tag)."""
    return ["file", "tag", "qid", "docno"] if layout is _RUN else ["qid", "docno"]


def _check(lines: pl.LazyFrame, files: list[str], layout: _Layout) -> None:
    """Raise ``ValueError`` for the first malformed line (by file, then line), then for a docno
    twice in a topic.

    Each line is reduced to its place, whether it is malformed or content, and a 64-bit hash
    of its key (tag, qid, docno); a docno seen twice shows as a hash seen twice, and only the
    lines of such hashes are compared as text. Files too large for their hashes to be counted
    in memory at once have the hashes written to a temporary Parquet file (17 bytes a line),
    then counted in buckets of ``_KEYS_AT_ONCE`` lines.
    """
    bad = _bad_line(layout)
    keyed = lines.select(
        _position().alias("at"),
        bad.alias("bad"),
        (pl.col("content") & ~bad).alias("kept"),
        _key_hash(layout).alias("key"),
    )
    large = sum(_size(f) for f in files) > _KEYS_AT_ONCE * _LINE_BYTES
    spill = tempfile.TemporaryDirectory(prefix="rankmetrics-trec-") if large else nullcontext()
    with spill as directory:
        if directory is not None:
            spilled = Path(directory) / "keys.parquet"
            keyed.sink_parquet(spilled)
            keyed = pl.scan_parquet(spilled)
        found = (
            keyed.select(
                pl.col("at").filter("bad").min().alias("bad"),
                pl.col("kept").sum().alias("rows"),
                # Counted in this pass when the file is small: a second pass only on a repeat.
                pl.col("key").filter("kept").n_unique().alias("distinct") if not large
                else pl.lit(None).alias("distinct"),
            )
            .collect()
            .row(0, named=True)
        )  # fmt: skip
        if found["bad"] is not None:
            first = lines.filter(_position() == found["bad"]).collect().row(0, named=True)
            raise ValueError(
                f"{layout.kind} file {files[first['file']]!r}, line {first['number']}: "
                f"{_reason(first, layout)}"
            )
        if found["distinct"] == found["rows"]:
            return
        buckets = -(-found["rows"] // _KEYS_AT_ONCE)
        for bucket in range(buckets):
            part = keyed.filter("kept", pl.col("key") % buckets == bucket)
            repeated = part.group_by("key").len().filter(pl.col("len") > 1).head(1).collect()
            if repeated.height:
                twice = _key_hash(layout).is_in(repeated["key"].implode())
                _check_duplicates(lines.filter("content", twice), files, layout)


def _key_hash(layout: _Layout) -> pl.Expr:
    """The hash of a line's key (:func:`key_hash`)."""
    return key_hash(_keys(layout))


def key_hash(names: Sequence[str]) -> pl.Expr:
    """A 64-bit hash of the columns ``names`` of a row: their hashes, each with a seed of its
    own, combined by exclusive or (several times cheaper than hashing their joined text). Two
    rows with the same values hash alike; two that differ rarely do."""
    key = pl.col(names[0]).hash(_SEED)
    for i, name in enumerate(names[1:], start=1):
        key = key.xor(pl.col(name).hash(_SEED + i))
    return key


def _size(path: str) -> int:
    """What a file holds, roughly: its size, ten times that when it is compressed."""
    with open(path, "rb") as file:
        compressed = file.read(4).startswith(_COMPRESSED)
    return Path(path).stat().st_size * (10 if compressed else 1)


def _position() -> pl.Expr:
    """A line's place among all files' lines: by file, then line number."""
    return pl.col("file").cast(pl.UInt64) * 2**32 + pl.col("number")


def _check_duplicates(content: pl.LazyFrame, files: list[str], layout: _Layout) -> None:
    keys = _keys(layout)
    twice = (
        content.group_by(keys)
        .agg(pl.struct("file", "number").bottom_k_by(_position(), k=2).alias("at"))
        .filter(pl.col("at").list.len() > 1)
        .with_columns(pl.col("at").list.get(1).alias("second"))
        .drop([key for key in keys if key == "file"])  # the second line's, in "second"
        .unnest("second")
        .bottom_k(1, by=_position())
        .collect()
    )
    if twice.height == 0:  # a hash collision, no duplicate
        return
    row = twice.row(0, named=True)
    first = row["at"][0]
    where = f"line {first['number']}" + (
        "" if first["file"] == row["file"] else f" of {files[first['file']]!r}"
    )
    run = f" of run {row['tag']!r}" if layout is _RUN else ""
    raise ValueError(
        f"{layout.kind} file {files[row['file']]!r}, line {row['number']}: the docno "
        f"{row['docno']!r} appears twice in topic {row['qid']!r}{run} (also at {where}); "
        "trec_eval refuses a docno seen twice in a topic"
    )
