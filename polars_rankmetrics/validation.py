"""Checks on the long table, run once at the edge, before any metric is computed.

Every failure is a ``ValueError`` that names the column, the problem, and one offending sample,
so that a user can find the row. Nothing is dropped or coerced silently. The messages are shared
by both engines: the Polars checks live here, the DuckDB ones in ``sql/06_checks.sql``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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


def row_problems(cols: Columns, keys: Sequence[MetricKey]) -> dict[str, str]:
    """The problems a single row can show, by id, with their messages, in the order checked."""
    problems = {f"null_by_{i}": f"column {name!r} has a null" for i, name in enumerate(cols.by)}
    problems |= {
        "null_sample": f"column {cols.sample!r} has a null",
        "null_label": f"column {cols.label!r} has a null",
        "null_score": f"column {cols.score!r} (score) has a null",
        "nan_score": f"column {cols.score!r} (score) has a NaN",
        "null_truth": f"column {cols.truth!r} (truth) has a null",
        "nan_truth": f"column {cols.truth!r} (truth) has a NaN or infinite value",
    }
    binary = [str(k) for k in keys if k.is_binary]
    if binary:
        problems["non_binary_truth"] = (
            f"column {cols.truth!r} (truth) must be 0 or 1 for {', '.join(binary)}, "
            "but has a value outside {0, 1}"
        )
    problems["negative_truth"] = f"column {cols.truth!r} (truth) has a negative value"
    if cols.weight is not None:
        problems["null_weight"] = f"column {cols.weight!r} (weight) has a null"
        problems["bad_weight"] = (
            f"column {cols.weight!r} (weight) has a negative, NaN or infinite value"
        )
    return problems


def describe(where: Mapping[str, object]) -> str:
    """``sample=3, label='dog'``: how messages point at the offending row or sample."""
    return ", ".join(f"{name}={value!r}" for name, value in where.items())


def raise_row_problem(message: str, where: Mapping[str, object]) -> None:
    raise ValueError(f"{message} (at {describe(where)})")


def raise_empty() -> None:
    raise ValueError("the table is empty: there is no row to evaluate")


def raise_repeated_label(cols: Columns, label: object, where: Mapping[str, object]) -> None:
    raise ValueError(
        f"column {cols.label!r} repeats label {label!r} within one sample ({describe(where)}); "
        "each (sample, label) pair must appear once (a table of several models or slices "
        "is evaluated with by=)"
    )


def raise_label_sets(cols: Columns, where: Mapping[str, object], n: int, group_n: int) -> None:
    raise ValueError(
        f"samples have different label sets: {describe(where)} has {n} labels in column "
        f"{cols.label!r} but the table has {group_n} distinct labels; every sample must carry "
        "the same labels"
    )


def raise_varying_weight(cols: Columns, where: Mapping[str, object]) -> None:
    raise ValueError(
        f"column {cols.weight!r} (weight) is not constant within a sample ({describe(where)})"
    )


def raise_zero_weight(cols: Columns, group: Mapping[str, object]) -> None:
    where = describe(group) if group else "the table"
    raise ValueError(f"column {cols.weight!r} (weight): the sample weights of {where} sum to 0")


def raise_single_label(cols: Columns) -> None:
    raise ValueError(
        f"ndcg needs at least two labels per sample; column {cols.label!r} has only one"
    )


def _row_conditions(schema: pl.Schema, cols: Columns) -> dict[str, pl.Expr]:
    score, truth = pl.col(cols.score), pl.col(cols.truth).cast(pl.Float64)
    weight = pl.col(cols.weight).cast(pl.Float64) if cols.weight else pl.lit(1.0)
    conditions = {f"null_by_{i}": pl.col(name).is_null() for i, name in enumerate(cols.by)}
    return conditions | {
        "null_sample": pl.col(cols.sample).is_null(),
        "null_label": pl.col(cols.label).is_null(),
        "null_score": score.is_null(),
        "nan_score": score.is_nan() if schema[cols.score].is_float() else pl.lit(False),
        "null_truth": truth.is_null(),
        "nan_truth": ~truth.is_finite(),
        "non_binary_truth": ~truth.is_in([0.0, 1.0]),
        "negative_truth": truth < 0,
        "null_weight": weight.is_null(),
        "bad_weight": ~weight.is_finite() | (weight < 0),
    }


def check_rows(lf: pl.LazyFrame, cols: Columns, keys: Sequence[MetricKey]) -> bool:
    """Nulls, NaNs and out-of-range values, in one pass over the table.

    Returns whether every truth value is 0 or 1 (dcg/ndcg accept graded truth).
    """
    conditions = _row_conditions(lf.collect_schema(), cols)
    problems = row_problems(cols, keys)
    where = pl.struct(list(dict.fromkeys([*cols.sample_keys, cols.label])))
    found = lf.select(
        pl.len().alias("__rows"),
        conditions["non_binary_truth"].any().alias("__graded"),
        *(where.filter(conditions[pid]).first().alias(pid) for pid in problems),
    ).collect()
    if found["__rows"][0] == 0:
        raise_empty()
    for pid, value in found.drop("__rows", "__graded").row(0, named=True).items():
        if value is not None:
            raise_row_problem(problems[pid], value)
    return not found["__graded"][0]


def group_labels(lf: pl.LazyFrame, cols: Columns) -> pl.DataFrame:
    """How many distinct labels each ``by`` group has (one row, ``__all``, without ``by``)."""
    group_keys = list(cols.by) or [pl.lit(0).alias("__all")]
    return lf.group_by(group_keys).agg(group_labels=pl.col(cols.label).n_unique()).collect()


def check_sample_labels(lf: pl.LazyFrame, cols: Columns, labels: pl.DataFrame) -> pl.DataFrame:
    """Each sample carries its group's full label set once and one weight.

    ``labels`` is :func:`group_labels` of the whole table (``lf`` may be a part of it holding
    whole samples). Returns the summed sample weights per group, for
    :func:`check_weight_totals`.
    """
    per_sample = lf.group_by(cols.sample_keys).agg(
        rows=pl.len(),
        labels=pl.col(cols.label).n_unique(),
        weights=pl.col(cols.weight).n_unique() if cols.weight else pl.lit(1, pl.UInt32),
        weight=pl.col(cols.weight).first().cast(pl.Float64) if cols.weight else pl.lit(1.0),
    )
    if cols.by:
        joined = per_sample.join(labels.lazy(), on=list(cols.by), nulls_equal=True)
    else:
        joined = per_sample.join(labels.lazy().drop("__all"), how="cross")
    bad_sample = (
        (pl.col("rows") != pl.col("labels"))
        | (pl.col("labels") != pl.col("group_labels"))
        | (pl.col("weights") > 1)
    )
    group_keys = list(cols.by) or [pl.lit(0).alias("__all")]
    samples, weights = pl.collect_all(
        [joined.filter(bad_sample).head(1), joined.group_by(group_keys).agg(pl.col("weight").sum())]
    )
    if samples.height:
        bad = samples.row(0, named=True)
        where = {k: bad[k] for k in cols.sample_keys}
        if bad["rows"] != bad["labels"]:
            raise_repeated_label(cols, _repeated_label(lf, cols, where), where)
        if bad["labels"] != bad["group_labels"]:
            raise_label_sets(cols, where, bad["labels"], bad["group_labels"])
        raise_varying_weight(cols, where)
    return weights


def check_weight_totals(weights: pl.DataFrame, cols: Columns) -> None:
    """The sample weights of each group (from :func:`check_sample_labels`) add up to more than 0."""
    totals = weights.group_by(list(cols.by) or ["__all"]).agg(pl.col("weight").sum())
    zero = totals.filter(pl.col("weight") <= 0)
    if zero.height:
        raise_zero_weight(cols, {k: zero[k][0] for k in cols.by})


def check_label_count(labels: pl.DataFrame, cols: Columns, keys: Sequence[MetricKey]) -> None:
    """ndcg needs two labels or more (``labels`` from :func:`group_labels`)."""
    if any(k.name == "ndcg" for k in keys) and labels["group_labels"].min() < 2:
        raise_single_label(cols)


def check_samples(lf: pl.LazyFrame, cols: Columns, keys: Sequence[MetricKey]) -> None:
    """The per-sample and per-group checks over the whole table at once."""
    labels = group_labels(lf, cols)
    check_weight_totals(check_sample_labels(lf, cols, labels), cols)
    check_label_count(labels, cols, keys)


def _repeated_label(lf: pl.LazyFrame, cols: Columns, where: Mapping[str, object]) -> object:
    match = pl.all_horizontal(pl.col(k).eq_missing(v) for k, v in where.items())
    repeated = lf.filter(match).group_by(cols.label).len().filter(pl.col("len") > 1)
    return repeated.head(1).collect()[cols.label][0]


def validate(lf: pl.LazyFrame, cols: Columns, keys: Sequence[MetricKey]) -> bool:
    """Run every check; raise ``ValueError`` at the first problem found.

    Returns whether the truth is binary (every value 0 or 1).
    """
    check_schema(lf.collect_schema(), cols)
    binary_truth = check_rows(lf, cols, keys)
    check_samples(lf, cols, keys)
    return binary_truth
