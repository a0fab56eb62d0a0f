"""The bucket driver: one evaluation, the same steps on every engine.

1. The whole-table checks, once: the row checks, each group's label set, the label counts the
   metrics need.
2. The split: a table too large for the memory budget is written once, by the engine, as buckets
   of whole samples (a hash of the ``by`` columns and the sample id) to a directory the library
   manages. Every metric is computed within a sample, so each bucket is evaluated alone. A table
   that fits is one bucket, read where it is.
3. Per bucket: the per-sample checks against the whole table's label sets, then additive sums
   (:mod:`polars_rankmetrics.metrics.sums`) or per-sample rows.
4. The weight totals over all buckets, and the means.

Progress is reported per step (``progress(done, total)``, ``total`` = buckets + 1), and within a
step from the engine's own estimate where it has one. Spill and bucket files live in
``rankmetrics-<pid>-*`` under ``temp_dir`` (the system's temporary directory by default), removed
when the run ends however it ends; one left by a process that no longer runs (killed) is removed
when the next run starts.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import polars as pl

from polars_rankmetrics.checks import validation
from polars_rankmetrics.engines import topk
from polars_rankmetrics.engines.base import Engine, Progress, Session, Settings, get_engine
from polars_rankmetrics.engines.memory import (
    automatic_limit,
    bucket_count,
    check_budget,
    engine_share,
    polars_bytes_per_row,
)
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.inputs.media import explained
from polars_rankmetrics.inputs.sources import Source
from polars_rankmetrics.metrics.label_averages import combine, label_means
from polars_rankmetrics.metrics.registry import Context, MetricKey, Rows
from polars_rankmetrics.metrics.sums import means, undefined_as_nan, weight_column
from polars_rankmetrics.metrics.undefined import label_cases, sample_cases, warn

_OWNED = re.compile(r"^rankmetrics-([0-9]+)-")


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale(parent: Path) -> None:
    """Remove the directories of ``parent`` that runs of processes no longer alive left."""
    for entry in parent.iterdir():
        owner = _OWNED.match(entry.name)
        if owner and entry.is_dir() and not _running(int(owner.group(1))):
            shutil.rmtree(entry, ignore_errors=True)


@contextmanager
def managed_directory(temp_dir: str | os.PathLike[str] | None) -> Iterator[Path]:
    """A new directory for this run's spill and bucket files, removed when the block ends."""
    parent = Path(temp_dir) if temp_dir is not None else Path(tempfile.gettempdir())
    if not parent.is_dir():
        raise ValueError(f"temp_dir {str(parent)!r} is not a directory")
    remove_stale(parent)
    path = Path(tempfile.mkdtemp(prefix=f"rankmetrics-{os.getpid()}-", dir=parent))
    try:
        yield path
    except ValueError:  # the checks refused the input: no engine is writing
        _remove(path)
        raise
    except BaseException:  # an engine's or the system's error, or an interrupt
        _remove(path, settle=True)
        raise
    _remove(path)


def _remove(path: Path, *, settle: bool = False) -> None:
    """Remove ``path`` and everything under it. After an engine's failure (``settle``), its
    writer threads may still finish or start a file as the error arrives (a full disk fails one
    partition of a sink while the others write, creating their directories), so the removal is
    repeated until the directory has stayed absent for 0.3 s, for up to 3 s."""
    absent_since = None
    for _ in range(60 if settle else 1):
        shutil.rmtree(path, ignore_errors=True)
        now = time.monotonic()
        if path.exists():
            absent_since = None
        elif absent_since is None:
            absent_since = now
        if not settle or (absent_since is not None and now - absent_since >= 0.3):
            return
        time.sleep(0.05)


class Reporter:
    """Reports ``progress(done, total)`` after each step, and within a step from the session's
    ``query_progress()`` (polled twice a second) where the engine can tell."""

    def __init__(self, progress: Progress | None, total: int) -> None:
        self.progress, self.total = progress, total

    @contextmanager
    def step(self, index: int, session: Session) -> Iterator[None]:
        if self.progress is None:
            yield
            return
        report, stop = self.progress, threading.Event()

        def poll() -> None:
            while not stop.wait(0.5):
                share = session.query_progress()
                if share is not None:
                    report(index + min(max(share, 0.0), 1.0), self.total)

        watcher = threading.Thread(target=poll, daemon=True)
        watcher.start()
        try:
            yield
        finally:
            stop.set()
            watcher.join()
        report(index + 1, self.total)


@dataclass(frozen=True)
class Checked:
    """What the whole-table checks found: the row facts and each group's label count, or
    (``exact`` False) a bound on it that the sample checks confirm or replace."""

    facts: validation.RowFacts
    labels: pl.DataFrame | None
    exact: bool = True


def check_table(
    session: Session, cols: Columns, keys: Sequence[MetricKey], *, whole: bool = False
) -> Checked:
    """Step 1: the checks that need the whole table. A table evaluated in one piece (``whole``)
    is also asked whether its rows are strictly ordered, and, without ``by`` columns, its label
    count is first bounded by its integer labels' range
    (:func:`~polars_rankmetrics.checks.validation.span_labels`, which a file's statistics
    answer, where a distinct count scans the column). (A top-k table's samples carry label sets
    of their own: no group label count.)"""
    facts = session.check_rows(keys, ordered=whole)
    if cols.top_k:
        return Checked(facts, None)
    span = session.label_range() if whole and not cols.by else None
    labels = session.group_labels() if span is None else validation.span_labels(*span, facts.rows)
    validation.check_label_count(labels, cols, keys)
    return Checked(facts, labels, exact=span is None)


def check_piece(session: Session, cols: Columns, checked: Checked) -> pl.DataFrame:
    """Step 3's checks on a bucket of whole samples; returns its sample summary (weights)."""
    summary = session.sample_summary()
    _check_samples(session, cols, checked, summary)
    return summary


def _check_samples(
    session: Session, cols: Columns, checked: Checked, summary: pl.DataFrame
) -> None:
    """The sample checks against the group label counts; a bound that some group's samples do
    not all reach is replaced by the count (the session is then the whole table's)."""
    labels = checked.labels
    assert labels is not None  # a dense table
    if not checked.exact and not validation.reach_labels(summary, labels, cols):
        labels = session.group_labels()
    validation.check_samples(summary, labels, cols, session.repeated_label)


def check_all(session: Session, cols: Columns, keys: Sequence[MetricKey]) -> Context:
    """Every check on a source evaluated in one piece; the context its metrics need."""
    validation.check_schema(session.schema(), cols, session.count_rows)
    checked = check_table(session, cols, keys)
    validation.check_weight_totals(check_piece(session, cols, checked), cols)
    return Context(cols.truth, binary_truth=checked.facts.binary_truth, score=cols.score)


@dataclass(frozen=True)
class TopK:
    """A top-k evaluation's extra inputs (:mod:`polars_rankmetrics.engines.topk`): the truth
    table (None: the data is a dense table; a :class:`Source` once :func:`run` has it) and the
    size of the label space; and, for the propensity-scored metrics on either shape, the
    propensity table."""

    truth_table: Any = None
    n_labels: int | None = None
    propensities: Any = None


@dataclass(frozen=True)
class Prepared:
    """The table to evaluate (a top-k table's predictions joined with its truth table, and
    propensities joined in where asked for) and its columns; for a top-k table, the per-bucket
    sample check, a bound on its rows (the two tables' rows: counting the joined rows would run
    the join) and how it splits into buckets (each table apart, joined per bucket), and the
    bytes a row of a bucket needs at least (a top-k bucket is joined in memory by Polars,
    whatever the engine)."""

    data: Source
    cols: Columns
    check: Callable[..., None] | None = None
    rows: int | None = None
    split: Callable[[int, Path], list[Any]] | None = None
    bytes_per_row: float = 0.0


def prepare(
    engine: Engine, data: Source, cols: Columns, keys: Sequence[MetricKey], inputs: TopK
) -> Prepared:
    """What :func:`collect` evaluates: see :class:`Prepared`."""
    if inputs.truth_table is None and inputs.n_labels is not None:
        raise ValueError("n_labels is the label space of a top-k table: give truth_table= too")
    ps_keys = [key for key in keys if key.metric.needs_propensities]
    if ps_keys and inputs.propensities is None:
        raise ValueError(
            f"{ps_keys[0]} needs label propensities: give propensities= (a table of label and "
            "propensity, for example from label_propensities())"
        )
    if inputs.truth_table is None and not ps_keys:
        return Prepared(data, cols)
    if inputs.truth_table is None:
        return Prepared(
            Source(topk.with_propensities(data.lazy(), inputs.propensities, cols)), cols
        )
    topk.check_request(keys, inputs.n_labels)
    predictions, truth_table = (
        Source.of(table).lazy().rename(dict(cols.aliases), strict=False)
        for table in (data, inputs.truth_table)
    )
    cols = replace(cols.opened(), top_k=True)
    propensities = inputs.propensities if ps_keys else None
    joined = topk.joined(predictions, truth_table, cols, propensities)
    return Prepared(
        Source(joined),
        cols,
        check=partial(
            topk.check_samples, cols=cols, n_labels=inputs.n_labels,
            repeated_label=partial(topk.repeated_in, predictions, truth_table, cols),
        ),
        rows=sum(t.select(pl.len()).collect().item() for t in (predictions, truth_table)),
        split=partial(topk.split, predictions, truth_table, cols, propensities),
        bytes_per_row=polars_bytes_per_row(joined.collect_schema(), cols),
    )  # fmt: skip


def run(
    engine: Engine,
    data: Any,
    cols: Columns,
    keys: Sequence[MetricKey],
    *,
    inputs: TopK = TopK(),
    per_sample: bool = False,
    sample_weights: bool = False,
    parameters: Context | None = None,
    memory_limit: str | None = None,
    temp_dir: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
) -> pl.DataFrame:
    """Evaluate ``keys`` over ``data`` on ``engine``; see :func:`polars_rankmetrics.evaluate`.

    ``parameters`` holds the metrics' parameters (log base, threshold, ...); its columns and
    ``binary_truth`` are set here. ``sample_weights`` (with ``per_sample``): each key's weight
    in the mean beside its value (``key/w``, 0 where the value is undefined), which resampling
    reads.
    """
    by_reduction = {
        reduction: [k for k in keys if k.metric.reduction == reduction]
        for reduction in ("samples", *LABEL_TABLES)
    }
    label_keys = [k for k in keys if k.metric.reduction != "samples"]
    if per_sample and label_keys:
        raise ValueError(
            f"{label_keys[0]} is averaged over labels: it has no per-sample value (per_sample)"
        )
    tables = ["per_sample" if per_sample else "sums"] if by_reduction["samples"] else []
    tables += [reduction for reduction in LABEL_TABLES if by_reduction[reduction]]
    validation.check_result_names(cols, [str(k) for k in keys])
    with inside_names(cols) as inner:
        collected, context = collect(
            engine, data, inner, keys, tables, parameters=parameters or Context(),
            inputs=inputs, memory_limit=memory_limit, temp_dir=temp_dir, progress=progress,
        )  # fmt: skip
    cols = inner  # the by columns keep their inside names until the result is restored
    if per_sample:
        rows = undefined_as_nan(pl.concat(collected["per_sample"]), keys)
        weights = [weight_column(k) for k in keys] if sample_weights else []
        # The groups come sorted by sample, in sorted order: the rows are sorted as they are.
        rows = rows.select(*cols.sample_keys, *(str(k) for k in keys), *weights)
        return cols.restored(rows)
    group = list(cols.by) or [validation.GROUP]
    results, cases = [], []
    if by_reduction["samples"]:
        sums = pl.concat(collected["sums"])
        totals = means(sums, cols, by_reduction["samples"])
        results.append(totals if cols.by else totals.with_columns(pl.lit(0).alias(group[0])))
        cases += sample_cases(sums, by_reduction["samples"], context)
    if label_keys:
        combined = {
            reduction: combine(collected[reduction], [*group, *LABEL_TABLES[reduction]])
            for reduction in LABEL_TABLES
            if reduction in collected
        }
        results.append(label_means(combined, group, label_keys, context))
        cases += label_cases(combined, group, label_keys, context)
    warn(cases)
    result = results[0]
    for part in results[1:]:
        result = result.join(part, on=group, nulls_equal=True)
    if cols.by:
        result = result.sort(list(cols.by))
    return cols.restored(result.select(*cols.by, *(str(k) for k in keys)))


@contextmanager
def inside_names(cols: Columns) -> Iterator[Columns]:
    """``cols`` as an evaluation names them inside (:meth:`.Columns.inside`); a ``ValueError``
    raised in the block is raised again with the user's names for the ``by`` columns."""
    inner = cols.inside()
    try:
        yield inner
    except ValueError as error:
        raise ValueError(inner.shown(str(error))) from None


# The per-label tables a reduction over labels reads, and their keys besides the group.
LABEL_TABLES = {"labels": ("label",), "curves": ("label", "score")}
# Every table that adds up over buckets, with its keys besides the group: each bucket's is added
# to the running total as it comes, so that many buckets do not hold many tables (the score
# counts of 100 labels with 1,001 distinct scores are 100k rows a bucket and model).
ADDITIVE_TABLES = {**LABEL_TABLES, "precisions": ("label",)}


def collect(
    engine: Engine,
    data: Any,
    cols: Columns,
    keys: Sequence[MetricKey],
    tables: Sequence[str],
    *,
    parameters: Context,
    inputs: TopK = TopK(),
    memory_limit: str | None = None,
    temp_dir: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
) -> tuple[dict[str, list[pl.DataFrame]], Context]:
    """Steps 1-4 over ``data``: every check, then per bucket each of ``tables`` (``sums``,
    ``per_sample``, ``labels``: label counts, ``curves``: score counts, ``precisions``: label
    precisions); the tables of every bucket (``per_sample``: a frame per ``by`` group, sorted
    by sample), and the context the metrics were computed with (``parameters`` with the
    columns of ``cols`` and whether the truth is binary).

    In order: classify each input once (:class:`Source`, handed on as that object),
    :func:`prepare` it (a top-k table joined lazily), check the budget, open the whole table,
    :func:`_split` it (the whole-table checks, then buckets), evaluate each piece
    (:func:`_evaluate_pieces`); :func:`run` reduces the tables. A failure that the medium
    explains (a full ``temp_dir``, a malformed file) is raised as a ``ValueError`` saying so
    (:func:`~polars_rankmetrics.inputs.media.explained`)."""
    source = Source.of(data)
    if inputs.truth_table is not None:
        inputs = replace(inputs, truth_table=Source.of(inputs.truth_table))
    temp_parent = Path(temp_dir) if temp_dir is not None else Path(tempfile.gettempdir())
    reported = (*engine.errors, OSError, pl.exceptions.PolarsError)
    with explained(temp_parent, source, inputs.truth_table, reported=reported):
        return _collect(
            engine, source, cols, keys, tables, parameters, inputs, memory_limit, temp_dir,
            progress,
        )  # fmt: skip


def _collect(
    engine: Engine, source: Source, cols: Columns, keys: Sequence[MetricKey],
    tables: Sequence[str], parameters: Context, inputs: TopK, memory_limit: str | None,
    temp_dir: str | os.PathLike[str] | None, progress: Progress | None,
) -> tuple[dict[str, list[pl.DataFrame]], Context]:  # fmt: skip
    prepared = prepare(engine, source, cols, keys, inputs)
    data, cols = prepared.data, prepared.cols
    parameters = replace(
        parameters, truth=cols.truth, score=cols.score, pred=cols.pred,
        n_labels=inputs.n_labels, top_k=cols.top_k,
    )  # fmt: skip
    _check_budget(engine, memory_limit)
    with managed_directory(temp_dir) as directory:
        settings = Settings(
            memory_limit, directory, progress is not None, tuple(keys), parameters, tuple(tables)
        )
        # A top-k table is opened bucket by bucket; the whole of it only lazily, for its schema,
        # by the Polars engine (the join is Polars').
        opened = (
            engine.open(data, cols, settings)
            if prepared.split is None
            else get_engine("polars").open(data, cols, settings)
        )
        with opened as whole:
            split = _split(engine, whole, prepared, cols, keys, settings, progress)
            return _evaluate_pieces(engine, whole, split, prepared, cols, tables, settings)


def _check_budget(engine: Engine, memory_limit: str | None) -> None:
    """A memory limit applies to an engine the driver splits, and is one it can keep."""
    if memory_limit is None:
        return
    if not engine.splits:
        raise ValueError(
            f"memory_limit does not apply to the {engine.name} engine, which manages its own memory"
        )
    check_budget(memory_limit)


@dataclass
class _Split:
    """How a table is evaluated: ``n`` buckets (``pieces``: each bucket's files or top-k
    piece; None: the whole table in one piece), the whole-table checks (None for a top-k
    table, checked per bucket) and the progress reporter."""

    n: int
    pieces: list[Any] | None
    checked: Checked | None
    reporter: Reporter


def _split(
    engine: Engine, whole: Session, prepared: Prepared, cols: Columns, keys: Sequence[MetricKey],
    settings: Settings, progress: Progress | None,
) -> _Split:  # fmt: skip
    """Steps 1 and 2: the whole-table checks, and the buckets the budget needs (by the rows
    and, once the label sets are known, the largest sample), written once."""
    assert settings.spill_dir is not None  # a managed directory
    validation.check_schema(whole.schema(), cols, whole.count_rows)
    bytes_per_row = max(whole.bytes_per_row(), prepared.bytes_per_row)
    rows = whole.count_rows() if prepared.rows is None else prepared.rows
    budget = settings.memory_limit
    if budget is None and engine.splits and not prepared.data.eager:
        budget = automatic_limit(rows, bytes_per_row)
    share = engine_share(settings.tables, engine.per_sample_share)
    n = 1 if budget is None else bucket_count(rows, budget, bytes_per_row, share=share)
    reporter = Reporter(progress, n + 1)
    buckets = settings.spill_dir / "buckets"
    with reporter.step(0, whole):
        if prepared.split is not None:
            # A top-k table is joined once per bucket, in memory, where its row checks run; one
            # too large for the budget is first split apart, table by table (the join is never
            # whole).
            if rows == 0:
                validation.raise_empty()
            return _Split(n, prepared.split(n, buckets), None, reporter)
        if n == 1:
            whole.hold()
        checked = check_table(whole, cols, keys, whole=n == 1)
        if budget is not None and checked.labels is not None:
            sample_rows = int(checked.labels[validation.GROUP_LABELS].max())  # type: ignore[arg-type]
            n = bucket_count(rows, budget, bytes_per_row, sample_rows, share=share)
        pieces = list(whole.split(n, buckets)) if n > 1 else None
        return _Split(n, pieces, checked, reporter)


def _evaluate_pieces(
    engine: Engine, whole: Session, split: _Split, prepared: Prepared, cols: Columns,
    tables: Sequence[str], settings: Settings,
) -> tuple[dict[str, list[pl.DataFrame]], Context]:  # fmt: skip
    """Step 3 per piece (the sample checks, then the tables), and step 4's weight totals."""
    keys, parameters = settings.keys, settings.context
    collected: dict[str, list[pl.DataFrame]] = {table: [] for table in tables}
    summaries, binary = [], []
    pieces = split.pieces
    per_sample = _PerSample(
        cols, settings.spill_dir if pieces is not None else None, [weight_column(k) for k in keys]
    )
    for i in range(split.n):
        if pieces is not None and (pieces[i] is None or isinstance(pieces[i], list)
                                   and not pieces[i]):  # fmt: skip
            continue  # no sample hashed to this bucket
        piece = pieces[i] if pieces is not None else None
        joined = None
        if isinstance(piece, topk.Piece):
            # A top-k bucket, joined once in memory (its size was chosen to fit) for its checks
            # and its metrics.
            joined = piece.join(
                rank_order=engine.scans_rank_order, ranked=engine.reads_scanned_ranks(keys)
            )
            piece = joined.table
        opened = (
            _reuse(whole)
            if pieces is None
            else engine.open(Source.of(piece), cols.opened(), settings)
        )
        with opened as session, split.reporter.step(i + 1, session):
            bucket_checked = split.checked or check_table(session, cols, keys)
            binary.append(bucket_checked.facts.binary_truth)
            context = replace(
                parameters, binary_truth=binary[-1],
                rows=Rows(
                    unique_labels=bucket_checked.facts.unique_labels
                    or (joined is not None and joined.unique_labels),
                    carries_ranks=joined is not None and joined.ranked,
                ),
            )  # fmt: skip
            check = prepared.check or partial(_check_samples, session, cols, bucket_checked)
            summary, frames = session.piece(tables, keys, context, check)
            summaries.append(summary)
            for table, frame in frames.items():
                if table == "per_sample":
                    per_sample.hold(frame)
                    continue
                if table in ADDITIVE_TABLES and collected[table]:
                    keys_of = [*(cols.by or [validation.GROUP]), *ADDITIVE_TABLES[table]]
                    frame = combine([collected[table].pop(), frame], keys_of).select(frame.columns)
                collected[table].append(frame)
    validation.check_weight_totals(pl.concat(summaries), cols)
    if "per_sample" in collected:
        collected["per_sample"] = per_sample.groups()
        warn(sample_cases(pl.DataFrame(per_sample.ill_defined), keys, parameters))
    return collected, replace(parameters, binary_truth=all(binary))


class _PerSample:
    """The per-sample rows of a run, held a ``by`` group at a time: each bucket's rows of each
    group as they come, in a Parquet file under ``spill_dir`` for a run in buckets (the rows of
    the buckets done are not held while the next is evaluated) or else in memory; at the end
    each group's rows in one frame, sorted by sample (the canonical order resampling reads).

    A key's weight column equal to an earlier key's in every bucket of its group (keys weighted
    alike: the sample weight, 1 without a weight column) is read back once and shared by both
    names: it takes no memory of its own. The flags of ill-defined samples (``key/i``) are
    counted as the rows come (``ill_defined``: each key's total), and not held."""

    def __init__(self, cols: Columns, spill_dir: Path | None, weights: Sequence[str]) -> None:
        self.cols, self.spill_dir, self.weights = cols, spill_dir, list(weights)
        self.ill_defined: dict[str, list[float]] = {}
        self.parts: dict[tuple[Any, ...], list[pl.DataFrame | Path]] = {}
        self.same: dict[tuple[Any, ...], dict[str, str]] = {}  # per group: column -> its twin
        self.files = 0
        self.empty: pl.DataFrame | None = None  # the columns, for a run without any sample

    def hold(self, frame: pl.DataFrame) -> None:
        by = list(self.cols.by)
        flags = [c for c in frame.columns if c.endswith("/i")]
        if flags:
            for name, total in frame.select(pl.col(flags).sum()).row(0, named=True).items():
                self.ill_defined.setdefault(name, []).append(total)
            frame = frame.drop(flags)
        self.empty = frame.clear()
        for part in frame.partition_by(by, maintain_order=True) if by else [frame]:
            if not part.height:
                continue
            key = part.select(by).row(0) if by else ()
            held = self.parts.setdefault(key, [])
            twins = _twins(part, self.weights)
            found = self.same.setdefault(key, twins)
            self.same[key] = {c: t for c, t in found.items() if twins.get(c) == t}
            if self.spill_dir is None:
                held.append(part)
                continue
            self.files += 1
            path = self.spill_dir / f"per_sample-{self.files}.parquet"
            part.write_parquet(path)
            held.append(path)

    def groups(self) -> list[pl.DataFrame]:
        """Each group's rows, sorted by sample, groups in the order Polars sorts their ``by``
        values: together, the rows sorted by ``by`` and sample."""
        out = []
        while self.parts:
            key = next(iter(self.parts))
            held, same = self.parts.pop(key), self.same.pop(key)
            files = [p for p in held if isinstance(p, Path)]
            frames = [p for p in held if isinstance(p, pl.DataFrame)]
            names = list(pl.read_parquet_schema(files[0]) if files else frames[0].schema)
            kept = [c for c in names if c not in same]
            if files:  # read and sorted in one streaming plan: the file's rows are not held
                scanned = pl.scan_parquet(files).select(kept).sort(self.cols.sample)
                rows = scanned.collect(engine="streaming")
            else:
                rows = pl.concat(frames).select(kept).sort(self.cols.sample)
            out.append(rows.with_columns(pl.col(t).alias(c) for c, t in same.items()).select(names))
            for path in files:
                path.unlink()
        if len(out) > 1:
            firsts = pl.concat([rows.select(self.cols.by).head(1) for rows in out])
            out = [out[i] for i in firsts.with_row_index().sort(self.cols.by)["index"]]
        return out or ([] if self.empty is None else [self.empty])


def _twins(part: pl.DataFrame, weights: Sequence[str]) -> dict[str, str]:
    """Each of the ``weights`` columns of ``part`` equal to an earlier one, and that one."""
    present = [c for c in weights if c in part.columns]
    twins: dict[str, str] = {}
    for i, name in enumerate(present):
        for first in present[:i]:
            if first not in twins and part[name].equals(part[first]):
                twins[name] = first
                break
    return twins


@contextmanager
def _reuse(session: Session) -> Iterator[Session]:
    yield session
