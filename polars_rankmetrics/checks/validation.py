"""Checks on the long table, run once at the edge, before any metric is computed.

Every failure is a ``ValueError`` that names the column, the problem, and one offending sample,
so that a user can find the row. Nothing is dropped or coerced silently.

The checks run in three steps, each a query an engine answers
(:mod:`polars_rankmetrics.engines.base`) and this module judges, so that every engine raises the
same errors:

1. row checks, over the whole table: one example row per problem id of :func:`row_problems`;
2. the group labels, over the whole table: how many distinct labels each ``by`` group has;
3. the sample summary, per bucket of whole samples: per group, the summed sample weights, the
   fewest labels a sample has, and an example sample with a repeated label or a varying weight.
   :func:`check_samples` compares it with step 2; :func:`check_weight_totals` adds the buckets'
   weights up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from polars_rankmetrics.checks.types import is_exact_in_float64, raise_empty, ruled_out
from polars_rankmetrics.inputs.collectors import Collector
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.ranks import ordered_by, starts_run
from polars_rankmetrics.metrics.registry import MetricKey, min_labels
from polars_rankmetrics.metrics.retrieval import PROPENSITY


def check_result_names(cols: Columns, results: Sequence[str]) -> None:
    """No ``by`` column (named as the user names it) is named like a column of the result."""
    for name in cols.in_source().by:
        if name in results:
            raise ValueError(
                f"by column {name!r} has the name of a result column ({', '.join(results)}); "
                "rename the column"
            )


def row_problems(cols: Columns, keys: Sequence[MetricKey]) -> dict[str, str]:
    """The problems a single row can show, by id, with their messages, in the order checked.
    On a top-k table each message names the table the column is read from."""
    either, predictions, truth_table = (
        (" (predictions or truth table)", " of the predictions", " of the truth table")
        if cols.top_k
        else ("", "", "")
    )
    problems = {
        f"null_by_{i}": f"column {name!r}{either} has a null" for i, name in enumerate(cols.by)
    }
    problems |= {
        "null_sample": f"column {cols.sample!r}{either} has a null",
        "null_label": f"column {cols.label!r}{either} has a null",
        "null_score": f"column {cols.score!r} (score){predictions} has a null",
        "nan_score": f"column {cols.score!r} (score){predictions} has a NaN",
        "inexact_score": (
            f"column {cols.score!r} (score){predictions} has a value that a 64-bit float cannot "
            "hold exactly, so it could tie with a neighbour on some engines; cast the column to "
            "Float64 first if that is intended"
        ),
        "null_truth": f"column {cols.truth!r} (truth){truth_table} has a null",
        "nan_truth": f"column {cols.truth!r} (truth){truth_table} has a NaN or infinite value",
    }
    probabilities = [str(k) for k in keys if k.metric.probabilities]
    if probabilities:
        problems["score_outside_unit"] = (
            f"column {cols.score!r} (score){predictions} must hold probabilities in [0, 1] for "
            f"{', '.join(probabilities)}, but has another value"
        )
    binary = [str(k) for k in keys if k.is_binary]
    if binary:
        problems["non_binary_truth"] = (
            f"column {cols.truth!r} (truth){truth_table} must be 0 or 1 for "
            f"{', '.join(binary)}, but has a value outside {{0, 1}}"
        )
        if any(key.metric.family == "retrieval" for key in keys):
            # Graded qrels: trec_eval's measures read the grade (relevant at or above a level).
            problems["non_binary_truth"] += (
                "; for graded qrels, trec_eval's measures (AP, P_5, ndcg_cut_10, ... with "
                "ties='trec_eval') read the grade as trec_eval does"
            )
    problems["negative_truth"] = f"column {cols.truth!r} (truth){truth_table} has a negative value"
    if cols.weight is not None:
        problems["null_weight"] = f"column {cols.weight!r} (weight){predictions} has a null"
        problems["bad_weight"] = (
            f"column {cols.weight!r} (weight){predictions} has a negative, NaN or infinite value"
        )
    if any(key.metric.needs_propensities for key in keys):
        problems["missing_propensity"] = (
            "the propensity table has no row for a true label; give every label a propensity "
            "(a label unseen in training: label_propensities(..., labels=...) gives it count 0)"
        )
        problems["bad_propensity"] = (
            "column 'propensity' of the propensity table must be in (0, 1], but a true label "
            "has another value"
        )
    if cols.pred is not None:
        problems["null_pred"] = f"column {cols.pred!r} (pred) has a null"
        problems["non_binary_pred"] = (
            f"column {cols.pred!r} (pred) must be 0 or 1 (or bool), but has another value"
        )
    return problems


# The problems whose example shows the offending value besides where it is, by the role of the
# column holding it (a field of Columns).
VALUE_SHOWN = {"score_outside_unit": "score"}


def describe(where: Mapping[str, object]) -> str:
    """``sample=3, label='dog'``: how messages point at the offending row or sample."""
    return ", ".join(f"{name}={value!r}" for name, value in where.items())


def raise_row_problem(message: str, where: Mapping[str, object]) -> None:
    raise ValueError(f"{message} (at {describe(where)})")


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


def raise_too_few_labels(cols: Columns, metric: str, needed: int) -> None:
    raise ValueError(
        f"{metric} needs at least {needed} labels per sample; column {cols.label!r} has fewer"
    )


GROUP = "__group"  # the one group of a table evaluated without by=
PREDICTED = "__predicted"  # top-k tables: true on the rows the predictions table has

# The columns of the group labels and the sample summary, by their names in the SQL views
# (rankmetrics_group_labels, rankmetrics_sample_checks): internal names, so that a by column
# may be called "weight".
SUMMARY_NAMES = {
    name: f"__rm_{name}"
    for name in (
        "group_labels", "weight", "min_labels", "short_sample", "repeated_sample",
        "varying_weight_sample", "max_labels", "long_sample", "unweighted_sample",
    )
}  # fmt: skip
(
    GROUP_LABELS, SUMMARY_WEIGHT, MIN_LABELS, SHORT_SAMPLE, REPEATED_SAMPLE,
    VARYING_WEIGHT_SAMPLE, MAX_LABELS, LONG_SAMPLE, UNWEIGHTED_SAMPLE,
) = SUMMARY_NAMES.values()  # fmt: skip


def group_keys(cols: Columns) -> list[str]:
    """The columns of a per-group frame: the ``by`` columns, or ``__group`` without ``by``."""
    return list(cols.by) or [GROUP]


def _group_exprs(cols: Columns) -> list[pl.Expr]:
    return [pl.col(b) for b in cols.by] or [pl.lit(0).alias(GROUP)]


def _row_conditions(
    schema: pl.Schema, cols: Columns, keys: Sequence[MetricKey]
) -> dict[str, pl.Expr]:
    """Per problem id, the rows showing it; a problem the column types rule out
    (:func:`ruled_out`), or that no key of ``keys`` checks (a score outside [0, 1] matters to
    the probability metrics alone), is ``False`` outright, so that the pass spends nothing on
    it."""
    never = pl.lit(False)
    probabilities = any(key.metric.probabilities for key in keys)
    score, truth = pl.col(cols.score), pl.col(cols.truth).cast(pl.Float64)
    weight = pl.col(cols.weight).cast(pl.Float64) if cols.weight else None
    pred = pl.col(cols.pred).cast(pl.Float64) if cols.pred else None
    # On a top-k table, a row that only the truth table has carries no score and no weight.
    predicted = pl.col(PREDICTED).is_not_null() if cols.top_k else pl.lit(True)
    propensity = pl.col(PROPENSITY) if PROPENSITY in schema else None
    score_type = schema[cols.score]
    conditions = {f"null_by_{i}": pl.col(name).is_null() for i, name in enumerate(cols.by)}
    conditions |= {
        "null_sample": pl.col(cols.sample).is_null(),
        "null_label": pl.col(cols.label).is_null(),
        "null_score": score.is_null() & predicted,
        "nan_score": score.is_nan(),
        "score_outside_unit": (score < 0) | (score > 1) if probabilities else never,
        "inexact_score": (
            never if score_type.is_float() or score_type == pl.Boolean
            else score.is_not_null() & ~is_exact_in_float64(score, score_type)
        ),  # fmt: skip
        "null_truth": truth.is_null(),
        "nan_truth": ~truth.is_finite(),
        "non_binary_truth": ~truth.is_in([0.0, 1.0]),
        "negative_truth": truth < 0,
        "null_weight": weight.is_null() & predicted if weight is not None else never,
        "bad_weight": ~weight.is_finite() | (weight < 0) if weight is not None else never,
        "missing_propensity": (truth > 0) & propensity.is_null() if propensity is not None
        else never,
        "bad_propensity": (truth > 0) & ~((propensity > 0) & (propensity <= 1))
        if propensity is not None else never,
        "null_pred": pred.is_null() if pred is not None else never,
        "non_binary_pred": ~pred.is_in([0.0, 1.0]) if pred is not None else never,
    }  # fmt: skip
    ruled = ruled_out(schema, cols)
    return {pid: never if pid in ruled else condition for pid, condition in conditions.items()}


@dataclass(frozen=True)
class RowFacts:
    """What the row checks learn about a table: its row count, whether every truth value is 0
    or 1 (dcg/ndcg accept graded truth), and whether no sample can repeat a label because the
    rows are strictly ordered by the sample keys and the label (``unique_labels``: then a
    sample's distinct labels are its rows, and the per-sample distinct count, the dearest of
    the checks, is not needed; an engine that does not look says False); where asked, the
    smallest and the largest label of integer labels (``label_range``, as :func:`label_range`
    gives them; None for other labels or where not asked)."""

    rows: int
    binary_truth: bool
    unique_labels: bool = False
    label_range: tuple[int, int] | None = None


def judge_rows(
    found: Mapping[str, object], cols: Columns, keys: Sequence[MetricKey], rows: int
) -> None:
    """Raise the first problem of :func:`row_problems` that ``found`` holds an example of.

    ``found`` must answer every problem id (a missing id is an engine bug, not a pass).
    """
    if rows == 0:
        raise_empty()
    for pid, message in row_problems(cols, keys).items():
        example = found[pid]
        if example is not None:
            raise_row_problem(message, example)  # type: ignore[arg-type]


def check_rows(
    lf: pl.LazyFrame, cols: Columns, keys: Sequence[MetricKey], *, ordered: bool = False,
    with_label_range: bool = False, engine: Collector = "auto",
) -> RowFacts:  # fmt: skip
    """Nulls, NaNs and out-of-range values, in one pass over the table; with ``ordered``, also
    whether the rows are strictly ordered by sample and label (:class:`RowFacts`), which is
    cheaper than the distinct count it spares but holds the key columns in memory (the streaming
    engine does not compare a row with the one before it): for a table evaluated in one piece;
    with ``with_label_range``, also the range of integer labels, in the same pass."""
    schema = lf.collect_schema()
    ranged = with_label_range and schema[cols.label].is_integer()
    label = pl.col(cols.label)
    extent = [label.min().alias("__lowest"), label.max().alias("__highest")] if ranged else []
    conditions = _row_conditions(schema, cols, keys)
    in_order = (
        ordered_by(schema, [*cols.sample_keys, cols.label])
        if ordered and not cols.top_k
        else pl.lit(False)
    )
    found = lf.select(
        pl.len().alias("__rows"),
        conditions["non_binary_truth"].any().alias("__graded"),
        in_order.alias("__ordered"),
        *extent,
        *(condition.any().alias(pid) for pid, condition in conditions.items()),
    ).collect(engine=engine)
    facts = found.row(0, named=True)
    # An example row for each problem found (a second pass, only over a table with problems).
    names = list(dict.fromkeys([*cols.sample_keys, cols.label]))
    problems = [pid for pid in conditions if facts[pid]]
    examples = lf.select(
        pl.struct(names + ([getattr(cols, VALUE_SHOWN[pid])] if pid in VALUE_SHOWN else []))
        .filter(conditions[pid]).first().alias(pid)
        for pid in problems
    )  # fmt: skip
    judge_rows(
        dict.fromkeys(conditions)
        | (examples.collect(engine=engine).row(0, named=True) if problems else {}),
        cols, keys, facts["__rows"],
    )  # fmt: skip
    return RowFacts(
        facts["__rows"], not facts["__graded"], bool(facts["__ordered"]),
        (facts["__lowest"], facts["__highest"]) if ranged else None,
    )  # fmt: skip


def group_labels(lf: pl.LazyFrame, cols: Columns, *, engine: Collector = "auto") -> pl.DataFrame:
    """How many distinct labels each group has (``group_keys`` and :data:`GROUP_LABELS`)."""
    return (
        lf.group_by(_group_exprs(cols))
        .agg(pl.col(cols.label).n_unique().alias(GROUP_LABELS))
        .collect(engine=engine)
    )


def label_range(
    lf: pl.LazyFrame, cols: Columns, *, engine: Collector = "auto"
) -> tuple[int, int] | None:
    """The smallest and the largest label of integer labels; None for other labels or no
    rows."""
    if not lf.collect_schema()[cols.label].is_integer():
        return None
    label = pl.col(cols.label)
    found = lf.select(label.min(), label.max().alias("__max")).collect(engine=engine)
    lowest, highest = found.row(0)
    return None if lowest is None else (lowest, highest)


def span_labels(lowest: int, highest: int, rows: int) -> pl.DataFrame:
    """A bound on the label count of a table without ``by`` columns, as :func:`group_labels`
    gives the count: ``highest - lowest + 1`` for integer labels, capped at its ``rows``. It is
    the count where some sample carries that many distinct labels (:func:`reach_labels`), and
    says as the count does whether a table has fewer than 2 labels (``lowest == highest``)."""
    bound = min(highest - lowest + 1, rows)
    return pl.DataFrame({GROUP: pl.Series([0], dtype=pl.Int32), GROUP_LABELS: [bound]})


def reach_labels(summary: pl.DataFrame, labels: pl.DataFrame, cols: Columns) -> bool:
    """Whether every sample of ``summary`` (a :func:`sample_summary`) carries as many distinct
    labels as its group's entry of ``labels`` says (a :func:`span_labels` bound confirmed)."""
    if not cols.by:
        count = _the_group_labels(labels)
        return count is None or bool((summary[MIN_LABELS] == count).all())
    joined = summary.join(labels, on=group_keys(cols), how="left", nulls_equal=True)
    return bool((joined[MIN_LABELS] == joined[GROUP_LABELS]).all())


def _the_group_labels(labels: pl.DataFrame) -> object:
    """The label count of the one group of a table without ``by`` columns (None without rows,
    as a join finds none), read without a join: these checks run on every evaluation."""
    return labels[GROUP_LABELS][0] if labels.height else None


def check_label_count(labels: pl.DataFrame, cols: Columns, keys: Sequence[MetricKey]) -> None:
    """Every group has as many labels as the metrics need (``labels`` from
    :func:`group_labels` or :func:`span_labels`; ndcg needs two)."""
    needed, metric = min_labels(keys)
    if labels.height and labels[GROUP_LABELS].min() < needed:  # type: ignore[operator]
        raise_too_few_labels(cols, metric, needed)


# The per-sample facts the sample summary is made of.
SAMPLE_ROWS, SAMPLE_LABELS, SAMPLE_WEIGHT_VARIES, SAMPLE_WEIGHT = (
    "__rows", "__labels", "__weight_varies", "__weight",
)  # fmt: skip


def sample_facts(cols: Columns, *, unique_labels: bool = False) -> list[pl.Expr]:
    """Aggregations over one sample's rows: its row count, distinct labels (its rows, when the
    row checks found that no sample repeats a label: ``unique_labels``), whether its weight
    varies (smallest below largest: no distinct count needed) and weight (the first), which
    :func:`summarise_samples` reduces per group. (A top-k table's rows of true labels without a
    prediction have no weight: the sample's weight is that of its predictions.)"""
    weight = pl.col(cols.weight).drop_nulls() if cols.weight else None
    return [
        pl.len().alias(SAMPLE_ROWS),
        (pl.len() if unique_labels else pl.col(cols.label).n_unique()).alias(SAMPLE_LABELS),
        (weight.min() < weight.max() if weight is not None else pl.lit(False)).alias(
            SAMPLE_WEIGHT_VARIES
        ),
        (weight.first().cast(pl.Float64) if weight is not None else pl.lit(1.0)).alias(
            SAMPLE_WEIGHT
        ),
    ]


def summarise_samples(per_sample: pl.LazyFrame, cols: Columns) -> pl.LazyFrame:
    """The sample summary from per-sample rows holding the ``by`` columns, the sample id and
    :func:`sample_facts`: see :func:`sample_summary`."""
    sample, labels = pl.col(cols.sample), pl.col(SAMPLE_LABELS)
    summary = [
        pl.col(SAMPLE_WEIGHT).sum().alias(SUMMARY_WEIGHT),
        labels.min().alias(MIN_LABELS),
        sample.filter(labels == labels.min()).min().alias(SHORT_SAMPLE),
        sample.filter(pl.col(SAMPLE_ROWS) > labels).min().alias(REPEATED_SAMPLE),
        sample.filter(pl.col(SAMPLE_WEIGHT_VARIES)).min().alias(VARYING_WEIGHT_SAMPLE),
        labels.max().alias(MAX_LABELS),
        sample.filter(labels == labels.max()).min().alias(LONG_SAMPLE),
        sample.filter(pl.col(SAMPLE_WEIGHT).is_null()).min().alias(UNWEIGHTED_SAMPLE),
    ]
    if cols.by:
        return per_sample.group_by(list(cols.by)).agg(summary)
    return per_sample.select(summary).with_columns(pl.lit(0).alias(GROUP))


def sample_summary(lf: pl.LazyFrame, cols: Columns, *, engine: Collector = "auto") -> pl.DataFrame:
    """Per group (columns named by :data:`SUMMARY_NAMES`): ``weight`` (the summed sample
    weights), ``min_labels`` (the fewest distinct labels a sample has) and ``short_sample`` (one
    such sample), ``repeated_sample`` (a sample with a repeated label) and
    ``varying_weight_sample`` (a sample whose weight varies), null
    when there is none. Examples are the smallest such sample id, as in the SQL."""
    per_sample = lf.group_by(cols.sample_keys).agg(sample_facts(cols))
    return summarise_samples(per_sample, cols).collect(engine=engine)


def check_samples(
    summary: pl.DataFrame,
    labels: pl.DataFrame,
    cols: Columns,
    repeated_label: Callable[[Mapping[str, object]], object],
) -> None:
    """Each sample carries its group's whole label set once, and one weight.

    ``summary`` is a :func:`sample_summary` (of the whole table or of a bucket of whole samples),
    ``labels`` the :func:`group_labels` of the whole table; ``repeated_label(where)`` finds the
    label that a sample repeats, for the message.
    """
    keys = group_keys(cols)
    if cols.by:
        joined = summary.join(labels, on=keys, how="left", nulls_equal=True).sort(keys)
        rows = joined.iter_rows(named=True)
    else:
        count = _the_group_labels(labels)
        rows = (row | {GROUP_LABELS: count} for row in summary.iter_rows(named=True))
    for row in rows:
        group = {b: row[b] for b in cols.by}
        if row[REPEATED_SAMPLE] is not None:
            where = group | {cols.sample: row[REPEATED_SAMPLE]}
            raise_repeated_label(cols, repeated_label(where), where)
        if row[MIN_LABELS] != row[GROUP_LABELS]:
            where = group | {cols.sample: row[SHORT_SAMPLE]}
            raise_label_sets(cols, where, row[MIN_LABELS], row[GROUP_LABELS])
        if row[VARYING_WEIGHT_SAMPLE] is not None:
            raise_varying_weight(cols, group | {cols.sample: row[VARYING_WEIGHT_SAMPLE]})


def check_weight_totals(summaries: pl.DataFrame, cols: Columns) -> None:
    """The sample weights of each group (the ``weight`` of :func:`sample_summary`, maybe one
    row per bucket) add up to more than 0."""
    if not cols.by:
        if summaries.height and summaries[SUMMARY_WEIGHT].sum() <= 0:
            raise_zero_weight(cols, {})
        return
    keys = group_keys(cols)
    totals = summaries.group_by(keys).agg(pl.col(SUMMARY_WEIGHT).sum()).sort(keys)
    zero = totals.filter(pl.col(SUMMARY_WEIGHT) <= 0)
    if zero.height:
        raise_zero_weight(cols, {k: zero[k][0] for k in cols.by})


def repeated_label(
    lf: pl.LazyFrame, cols: Columns, where: Mapping[str, object], *, engine: Collector = "auto"
) -> object:
    """A label that the sample ``where`` (its ``by`` values and id) carries more than once."""
    match = pl.all_horizontal(pl.col(k).eq_missing(v) for k, v in where.items())
    repeated = lf.filter(match).group_by(cols.label).len().filter(pl.col("len") > 1)
    return repeated.sort(cols.label).head(1).collect(engine=engine)[cols.label][0]


def repeats_a_label(
    frame: pl.DataFrame, keys: Sequence[str], label: str, *, in_order: bool = False
) -> bool:
    """Whether a sample (the rows sharing ``keys``) carries a label more than once.
    ``in_order``: the rows are sorted by ``keys`` (as
    :func:`~polars_rankmetrics.metrics.ranks.ordered_by` shows), so that samples are runs of
    rows, grouped by a sorted key instead of a hash of the keys."""
    lf = frame.lazy()
    group = list(keys)
    if in_order and len(keys) == 1:
        lf = lf.with_columns(pl.col(keys[0]).set_sorted())
    elif in_order:
        run = starts_run(keys).cum_sum().set_sorted().alias("__run")
        lf, group = lf.with_columns(run), ["__run"]
    repeats = (pl.len() > pl.col(label).n_unique()).alias("__repeats")
    return bool(lf.group_by(group).agg(repeats).select(pl.col("__repeats").any()).collect().item())
