"""Steps 1 to 3 on an open table: the whole-table checks and the buckets the memory budget needs
(written once, by the engine, as buckets of whole samples), then each piece evaluated alone (the
sample checks, then the tables), and the weight totals over every piece.

Every metric is computed within a sample, so each bucket of whole samples (a hash of the ``by``
columns and the sample id) is evaluated alone; a table that fits is one piece, read where it is.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import polars as pl

from polars_rankmetrics.checks import types, validation
from polars_rankmetrics.engines import topk
from polars_rankmetrics.engines.base import (
    Engine,
    Opener,
    OpensPieces,
    Progress,
    Session,
    Settings,
)
from polars_rankmetrics.engines.driver.checks import Checked, check_samples, check_table
from polars_rankmetrics.engines.driver.per_sample import PerSampleRows
from polars_rankmetrics.engines.driver.preparation import Prepared
from polars_rankmetrics.engines.driver.progress import Reporter
from polars_rankmetrics.engines.driver.reduction import add
from polars_rankmetrics.engines.memory import (
    automatic_limit,
    bucket_count,
    check_budget,
    engine_share,
)
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.inputs.sources import Source
from polars_rankmetrics.metrics.registry import Context, MetricKey, Rows
from polars_rankmetrics.metrics.sums import weight_column
from polars_rankmetrics.metrics.undefined import sample_cases, warn


def check_limit(engine: Engine, memory_limit: str | None) -> None:
    """A memory limit applies to an engine the driver splits, and is one it can keep."""
    if memory_limit is None:
        return
    if not engine.splits:
        raise ValueError(
            f"memory_limit does not apply to the {engine.name} engine, which manages its own memory"
        )
    check_budget(memory_limit)


@dataclass
class Split:
    """How a table is evaluated: ``n`` buckets (``pieces``: each bucket's files or top-k
    piece; None: the whole table in one piece), the whole-table checks (None for a top-k
    table, checked per bucket) and the progress reporter."""

    n: int
    pieces: list[Any] | None
    checked: Checked | None
    reporter: Reporter


def split(
    engine: Engine, whole: Session, prepared: Prepared, cols: Columns, keys: Sequence[MetricKey],
    settings: Settings, progress: Progress | None,
) -> Split:  # fmt: skip
    """Steps 1 and 2: the source's columns (checked here, once, for every engine: an engine
    opens a source without judging it), the whole-table checks, and the buckets the budget needs
    (by the rows and, once the label sets are known, the largest sample), written once."""
    assert settings.spill_dir is not None  # a managed directory
    types.check_schema(whole.schema(), cols, whole.count_rows)
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
                types.raise_empty()
            return Split(n, prepared.split(n, buckets), None, reporter)
        if n == 1:
            whole.hold()
        checked = check_table(whole, cols, keys, whole=n == 1)
        if budget is not None and checked.labels is not None:
            sample_rows = int(checked.labels[validation.GROUP_LABELS].max())  # type: ignore[arg-type]
            n = bucket_count(rows, budget, bytes_per_row, sample_rows, share=share)
        pieces = list(whole.split(n, buckets)) if n > 1 else None
        return Split(n, pieces, checked, reporter)


def evaluate_pieces(
    engine: Engine, whole: Session, split: Split, prepared: Prepared, cols: Columns,
    tables: Sequence[str], settings: Settings,
) -> tuple[dict[str, list[pl.DataFrame]], Context]:  # fmt: skip
    """Step 3 per piece (the sample checks, then the tables), and step 4's weight totals."""
    keys, parameters = settings.keys, settings.context
    collected: dict[str, list[pl.DataFrame]] = {table: [] for table in tables}
    summaries, binary = [], []
    pieces = split.pieces
    per_sample = PerSampleRows(
        cols, settings.spill_dir if pieces is not None else None, [weight_column(k) for k in keys]
    )
    opening = _opener(engine, cols.opened(), settings, shared=pieces is not None)
    with opening as open_piece:
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
            opened = _reuse(whole) if pieces is None else open_piece(Source(piece))
            with opened as session, split.reporter.step(i + 1, session):
                if joined is not None:
                    # The piece is the session's whole table: its checks and its metrics read
                    # it in turn.
                    session.hold(unique_labels=joined.unique_labels)
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
                check = prepared.check or partial(check_samples, session, cols, bucket_checked)
                summary, frames = session.piece(tables, keys, context, check)
                summaries.append(summary)
                for table, frame in frames.items():
                    if table == "per_sample":
                        per_sample.hold(frame)
                    else:
                        add(collected, table, frame, cols)
    validation.check_weight_totals(pl.concat(summaries), cols)
    if "per_sample" in collected:
        collected["per_sample"] = per_sample.groups()
        warn(sample_cases(pl.DataFrame(per_sample.ill_defined), keys, parameters))
    return collected, replace(parameters, binary_truth=all(binary))


@contextmanager
def _reuse(session: Session) -> Iterator[Session]:
    yield session


@contextmanager
def _opener(engine: Engine, cols: Columns, settings: Settings, *, shared: bool) -> Iterator[Opener]:
    """What opens each bucket's session: over what the buckets share where the engine sets it
    up once (:class:`~polars_rankmetrics.engines.base.OpensPieces`, and ``shared``: there are
    buckets), else :meth:`Engine.open` per bucket."""
    if shared and isinstance(engine, OpensPieces):
        with engine.open_pieces(cols, settings) as opener:
            yield opener
    else:
        yield lambda data: engine.open(data, cols, settings)
