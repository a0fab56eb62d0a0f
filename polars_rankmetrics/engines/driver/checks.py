"""The order of the checks on any engine: the whole-table checks (rows, each group's label set)
once, then the sample checks per piece, against the whole table's label sets.

What each check judges is :mod:`polars_rankmetrics.checks.validation`'s; the sessions answer
the queries (:class:`~polars_rankmetrics.engines.base.Session`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from polars_rankmetrics.checks import types, validation
from polars_rankmetrics.engines.base import Session
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.registry import Context, MetricKey


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
    check_samples(session, cols, checked, summary)
    return summary


def check_samples(session: Session, cols: Columns, checked: Checked, summary: pl.DataFrame) -> None:
    """The sample checks against the group label counts; a bound that some group's samples do
    not all reach is replaced by the count (the session is then the whole table's)."""
    labels = checked.labels
    assert labels is not None  # a dense table
    if not checked.exact and not validation.reach_labels(summary, labels, cols):
        labels = session.group_labels()
    validation.check_samples(summary, labels, cols, session.repeated_label)


def check_all(session: Session, cols: Columns, keys: Sequence[MetricKey]) -> Context:
    """Every check on a source evaluated in one piece; the context its metrics need."""
    types.check_schema(session.schema(), cols, session.count_rows)
    checked = check_table(session, cols, keys)
    validation.check_weight_totals(check_piece(session, cols, checked), cols)
    return Context(cols.truth, binary_truth=checked.facts.binary_truth, score=cols.score)
