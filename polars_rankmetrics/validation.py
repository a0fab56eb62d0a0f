"""Checks on the long table, run once at the edge, before any metric is computed.

Every failure is a ``ValueError`` that names the column, the problem, and one offending sample,
so that a user can find the row. Nothing is dropped or coerced silently.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_rankmetrics.columns import Columns
from polars_rankmetrics.keys import MetricKey


def check_schema(schema: pl.Schema, cols: Columns) -> None:
    """Every column exists; score, truth and weight are numeric (truth may be bool)."""
    missing = [name for name in cols.required if name not in schema]
    if missing:
        raise ValueError(
            f"column {missing[0]!r} not found; the table has columns {list(schema.names())}"
        )
    if not schema[cols.score].is_numeric():
        raise ValueError(f"column {cols.score!r} (score) must be numeric, not {schema[cols.score]}")
    truth_type = schema[cols.truth]
    if not (truth_type.is_numeric() or truth_type == pl.Boolean):
        raise ValueError(f"column {cols.truth!r} (truth) must be bool or numeric, not {truth_type}")
    if cols.weight is not None and not schema[cols.weight].is_numeric():
        raise ValueError(
            f"column {cols.weight!r} (weight) must be numeric, not {schema[cols.weight]}"
        )


def _where(cols: Columns, condition: pl.Expr) -> pl.Expr:
    """The first sample (with its by-columns and label) whose row meets ``condition``."""
    ids = [*cols.sample_keys, cols.label]
    return pl.struct(ids).filter(condition).first()


def _row_problems(schema: pl.Schema, cols: Columns, keys: Sequence[MetricKey]) -> dict[str, pl.Expr]:
    """Messages, each paired with an expression giving the first offending row (or null)."""
    score, truth = pl.col(cols.score), pl.col(cols.truth)
    y = truth.cast(pl.Float64)
    problems: dict[str, pl.Expr] = {}
    for name in [*cols.by, cols.sample, cols.label]:
        problems[f"column {name!r} has a null"] = pl.struct(cols.required).filter(
            pl.col(name).is_null()
        ).first()
    problems[f"column {cols.score!r} (score) has a null"] = _where(cols, score.is_null())
    if schema[cols.score].is_float():
        problems[f"column {cols.score!r} (score) has a NaN"] = _where(cols, score.is_nan())
    problems[f"column {cols.truth!r} (truth) has a null"] = _where(cols, truth.is_null())
    problems[f"column {cols.truth!r} (truth) has a NaN or infinite value"] = _where(
        cols, ~y.is_finite()
    )
    binary = [str(k) for k in keys if k.is_binary]
    if binary:
        problems[
            f"column {cols.truth!r} (truth) must be 0 or 1 for {', '.join(binary)}, "
            f"but has a value outside {{0, 1}}"
        ] = _where(cols, ~y.is_in([0.0, 1.0]))
    problems[f"column {cols.truth!r} (truth) has a negative value"] = _where(cols, y < 0)
    if cols.weight is not None:
        w = pl.col(cols.weight).cast(pl.Float64)
        problems[f"column {cols.weight!r} (weight) has a null"] = _where(cols, w.is_null())
        problems[
            f"column {cols.weight!r} (weight) has a negative, NaN or infinite value"
        ] = _where(cols, ~w.is_finite() | (w < 0))
    return problems


def _describe(row: dict) -> str:
    return ", ".join(f"{name}={value!r}" for name, value in row.items())


def check_rows(lf: pl.LazyFrame, cols: Columns, keys: Sequence[MetricKey]) -> None:
    """Nulls, NaNs and out-of-range values, in one pass over the table."""
    schema = lf.collect_schema()
    problems = _row_problems(schema, cols, keys)
    found = lf.select(
        pl.len().alias("__rows"), *(e.alias(m) for m, e in problems.items())
    ).collect()
    if found["__rows"][0] == 0:
        raise ValueError("the table is empty: there is no row to evaluate")
    for message, value in found.drop("__rows").row(0, named=True).items():
        if value is not None:
            raise ValueError(f"{message} (at {_describe(value)})")


def check_samples(lf: pl.LazyFrame, cols: Columns, keys: Sequence[MetricKey]) -> None:
    """Each sample carries its group's full label set once, one weight, and the weights add up."""
    label = pl.col(cols.label)
    group_keys = list(cols.by)
    per_sample = lf.group_by(cols.sample_keys).agg(
        rows=pl.len(),
        labels=label.n_unique(),
        weights=pl.col(cols.weight).n_unique() if cols.weight else pl.lit(1, pl.UInt32),
        weight=pl.col(cols.weight).first().cast(pl.Float64) if cols.weight else pl.lit(1.0),
    )
    per_group = lf.group_by(group_keys or pl.lit(0).alias("__all")).agg(
        group_labels=label.n_unique()
    )
    if group_keys:
        joined = per_sample.join(per_group, on=group_keys, nulls_equal=True)
    else:
        joined = per_sample.join(per_group.drop("__all"), how="cross")
    samples, groups = pl.collect_all(
        [
            joined.filter(
                (pl.col("rows") != pl.col("labels"))
                | (pl.col("labels") != pl.col("group_labels"))
                | (pl.col("weights") > 1)
            ).head(1),
            joined.group_by(group_keys or pl.lit(0).alias("__all")).agg(
                pl.col("weight").sum(), pl.col("group_labels").first()
            ),
        ]
    )
    if samples.height:
        bad = samples.row(0, named=True)
        where = _describe({k: bad[k] for k in cols.sample_keys})
        if bad["rows"] != bad["labels"]:
            label_value = _repeated_label(lf, cols, bad)
            raise ValueError(
                f"column {cols.label!r} repeats label {label_value!r} within one sample ({where}); "
                "each (sample, label) pair must appear once (a table of several models or slices "
                "is evaluated with by=)"
            )
        if bad["labels"] != bad["group_labels"]:
            raise ValueError(
                f"samples have different label sets: {where} has {bad['labels']} labels "
                f"in column {cols.label!r} but the table has {bad['group_labels']} distinct labels; "
                "every sample must carry the same labels"
            )
        raise ValueError(
            f"column {cols.weight!r} (weight) is not constant within a sample ({where})"
        )
    zero = groups.filter(pl.col("weight") <= 0)
    if zero.height:
        where = _describe({k: zero[k][0] for k in group_keys}) if group_keys else "the table"
        raise ValueError(f"column {cols.weight!r} (weight): the sample weights of {where} sum to 0")
    if any(k.name == "ndcg" for k in keys) and groups["group_labels"].min() < 2:
        raise ValueError(
            f"ndcg needs at least two labels per sample; column {cols.label!r} has only one"
        )


def _repeated_label(lf: pl.LazyFrame, cols: Columns, bad: dict) -> object:
    match = pl.all_horizontal(pl.col(k) == bad[k] for k in cols.sample_keys)
    repeated = (
        lf.filter(match).group_by(cols.label).len().filter(pl.col("len") > 1).head(1).collect()
    )
    return repeated[cols.label][0]


def validate(lf: pl.LazyFrame, cols: Columns, keys: Sequence[MetricKey]) -> None:
    """Run every check; raise ``ValueError`` at the first problem found."""
    check_schema(lf.collect_schema(), cols)
    check_rows(lf, cols, keys)
    check_samples(lf, cols, keys)
