"""The state's table, format 2: one long table whose rows add up.

Columns, in order: the ``by`` columns, then

- ``rm_part``: what a row belongs to (:data:`PARTS`);
- ``rm_label``: the label (parts ``labels``, ``curves``, ``precisions``, ``topk_labels``,
  ``labelset``), else null;
- ``rm_score``: the distinct score, ``-0.0`` as ``0.0`` (part ``curves``), else null;
- ``rm_unit``: the resampling unit (part ``units``), the sample hash (part ``sketch``) or the
  fingerprint of the label set (part ``labelset``), else null
  (:mod:`polars_rankmetrics.inference.hashing`);
- ``rm_name`` and ``rm_value``: a number and what it is;
- ``rm_format`` (:data:`FORMAT`) and ``rm_params``: the parameters the numbers were computed
  with, as canonical JSON (:func:`.recorded.text`), on every row, so that a table of states in a
  warehouse carries them.

The parts:

- ``sums``, per group: for each key averaged over samples, ``key`` (the sum of weight x
  value), ``key/w`` (the sum of the weights), ``key/x`` (the null values of samples of positive
  weight) and, where counted, ``key/i`` (the ill-defined samples), as in
  :mod:`polars_rankmetrics.metrics.sums`; and ``samples``, the number of samples;
- ``units``, per group and resampling unit, the same sums over the unit's samples (a state
  kept for intervals and paired tests);
- ``labels``, per group and label: ``tp``, ``fp``, ``fn``; ``curves``, per group, label and
  score: ``pos``, ``neg``; ``precisions``, per group and label: the label precisions of lwlrap
  (:mod:`polars_rankmetrics.metrics.label_averages`); ``topk_labels``, per group and label,
  the counts of the keys over labels of a top-k table (``label_coverage@K``,
  ``macro_precision@K``, ``macro_recall@K``): ``support``, the label's true samples, and at
  each of their cut-offs K ``tp@K`` and ``fp@K``, its expected true and false predictions
  within its samples' top K, each summed with the sample weights
  (``rankmetrics_topk_label_counts``). Sums over disjoint samples, so the merge is exact: a
  label's ``tp@K`` is positive in the union where it is in some state (the coverage's count);
- ``sketch``, per group: the :data:`SKETCH` smallest distinct sample hashes, each with
  ``samples`` = how many of the merged states hold that sample;
- ``labelset``, per group of a dense table (a top-k table's label space is ``n_labels``, and its
  samples carry label sets of their own): each label of the group, with the fingerprint of the
  group's label set in ``rm_unit`` and ``states`` = how many of the merged states hold that
  (label, label set). A row per label, as the ``labels`` part has three: the label itself, so
  that states whose label sets differ are refused naming a label, and the fingerprint, so that
  after any merge each label set is still told apart.

Merging (:func:`merged`) concatenates, sums ``rm_value`` over every other column (a ``by``
column merged over is dropped first) and keeps the :data:`SKETCH` smallest hashes of each
group's sketch: exact, since a hash among the smallest of a union is among the smallest of
every part that holds it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from polars_rankmetrics.inference import recorded

FORMAT, SKETCH = recorded.FORMAT, recorded.SKETCH
PART, LABEL, SCORE, UNIT, NAME, VALUE = (
    "rm_part", "rm_label", "rm_score", "rm_unit", "rm_name", "rm_value",
)  # fmt: skip
FORMAT_COLUMN, PARAMS = "rm_format", "rm_params"
IDENTITY = (PART, LABEL, SCORE, UNIT, NAME)
COLUMNS = (*IDENTITY, VALUE, FORMAT_COLUMN, PARAMS)
PARTS = ("sums", "units", "labels", "curves", "precisions", "topk_labels", "sketch", "labelset")
SAMPLES, STATES = "samples", "states"


def check_by_names(by: Sequence[str]) -> None:
    """A ``by`` column may not take a name of the state's own columns (``rm_...``)."""
    for name in by:
        if name.startswith("rm_"):
            raise ValueError(
                f"by column {name!r}: names starting with 'rm_' are the state's own columns; "
                "rename it"
            )


def long_rows(
    frame: pl.DataFrame, by: Sequence[str], part: str, names: Sequence[str],
    *, label: str | None = None, score: str | None = None, unit: str | None = None,
) -> pl.DataFrame:  # fmt: skip
    """The rows of ``part`` from a wide table: one row per row of ``frame`` and name of
    ``names`` (each a Float64 column), its ``label``, ``score`` and ``unit`` columns as the
    identity columns of the state (null where not given)."""
    identity = [
        pl.lit(part).alias(PART),
        (pl.col(label) if label else pl.lit(None)).alias(LABEL),
        (pl.col(score).cast(pl.Float64) if score else pl.lit(None, pl.Float64)).alias(SCORE),
        (pl.col(unit).cast(pl.Int64) if unit else pl.lit(None, pl.Int64)).alias(UNIT),
    ]
    wide = frame.select(*by, *identity, *(pl.col(n).cast(pl.Float64) for n in names))
    return wide.unpivot(index=[*by, PART, LABEL, SCORE, UNIT], variable_name=NAME,
                        value_name=VALUE)  # fmt: skip


def finished(
    parts: Sequence[pl.DataFrame], by: Sequence[str], params: Mapping[str, Any],
    label_type: pl.DataType,
) -> pl.DataFrame:  # fmt: skip
    """The state from its parts' rows: the format and parameters on every row, the columns in
    order, the rows in a canonical order."""
    rows = pl.concat([p.with_columns(pl.col(LABEL).cast(label_type)) for p in parts])
    return (
        rows.with_columns(
            pl.lit(FORMAT, pl.Int32).alias(FORMAT_COLUMN),
            pl.lit(recorded.text(params)).alias(PARAMS),
        )
        .sort([*by, PART, LABEL, SCORE, UNIT, NAME], nulls_last=True)
        .select(*by, *COLUMNS)
    )


def merged(rows: pl.LazyFrame, by: Sequence[str]) -> pl.LazyFrame:
    """States' rows (the ``by`` columns, the identity columns and ``rm_value``; their format and
    parameters found equal) merged per ``by`` group: ``rm_value`` summed per identity, each
    group's sketch cut to its :data:`SKETCH` smallest hashes."""
    keys = [*by, *IDENTITY]
    summed = rows.group_by(keys).agg(pl.col(VALUE).sum())
    sketch = pl.col(PART) == "sketch"
    rank = pl.col(UNIT).rank("ordinal")
    kept = (rank.over(list(by)) if by else rank) <= SKETCH
    return pl.concat([summed.filter(~sketch), summed.filter(sketch).filter(kept)])
