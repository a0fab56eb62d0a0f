"""The Polars engine: per-sample metric values over the rank table, in lazy Polars plans.

A session holds a LazyFrame over the source (a frame, or a scan of Parquet files); each query
of the :class:`~polars_rankmetrics.engines.base.Session` interface is one plan over it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl
import polars.selectors as cs

from polars_rankmetrics.checks import validation
from polars_rankmetrics.engines.base import SAMPLE_TABLES, Settings
from polars_rankmetrics.engines.memory import ENGINE_SHARE, polars_bytes_per_row, write_buckets
from polars_rankmetrics.engines.polars_plans import (
    FN,
    FP,
    RANK_PLANS,
    TP,
    counted,
    from_counts,
    plan_of,
    row_summed,
    set_counts,
)
from polars_rankmetrics.inputs.collectors import collector
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.inputs.sources import Source
from polars_rankmetrics.metrics import ranking as rx
from polars_rankmetrics.metrics.classification import predicted
from polars_rankmetrics.metrics.label_averages import (
    LABEL,
    label_counts,
    score_counts,
    topk_label_columns,
)
from polars_rankmetrics.metrics.ranks import (
    BLOCK_START,
    LABELS,
    LOWEST_POSITIVE,
    POSITIVES,
    RANK,
    SCORED,
    first_hits,
    is_positive,
    positive_counts,
    positive_ranks,
    rank_table,
    window_ranks,
    with_discounts,
    with_harmonics,
    with_lowest_positive,
)
from polars_rankmetrics.metrics.registry import IDEAL_PREFIX, Context, MetricKey, ideal_column
from polars_rankmetrics.metrics.retrieval import PROPENSITY, with_gain_ranks
from polars_rankmetrics.metrics.sums import means, undefined_column, weight_column
from polars_rankmetrics.metrics.undefined import (
    N_POSITIVES,
    N_PREDICTED,
    applies,
    ill_defined_column,
    sample_condition,
)

_WEIGHT = validation.SAMPLE_WEIGHT
_FACTS = (
    validation.SAMPLE_ROWS,
    validation.SAMPLE_LABELS,
    validation.SAMPLE_WEIGHT_VARIES,
    _WEIGHT,
)


def per_sample(
    lf: pl.LazyFrame, cols: Columns, keys: Sequence[MetricKey], context: Context
) -> pl.LazyFrame:
    """One row per sample: the ``by`` columns, the sample id, the facts the checks need
    (:func:`~polars_rankmetrics.checks.validation.sample_facts`, its weight ``__weight`` among
    them), its positive count (``__n_positives``) and one column per key.

    Keys that read only the positive rows (``Plan.rows``) are ranked and aggregated over those
    rows alone (:func:`~polars_rankmetrics.metrics.ranks.positive_ranks`) when no key needs every
    row ranked; the facts then come from an aggregation without ranks."""
    layout = context.rows
    plan = rank_plan(keys, binary_truth=context.binary_truth, sorted_samples=layout.sorted_samples)
    context = replace(context, rows=replace(layout, ranks=plan))
    by_rows = {rows: [k for k in keys if plan_of(k).rows == rows] for rows in _ROWS}
    is_predicted = predicted(context.score, pred=context.pred, threshold=context.threshold)

    def facts(true: pl.Expr) -> list[pl.Expr]:
        """The facts, over rows where ``true`` tells a positive."""
        found = [
            *validation.sample_facts(cols, unique_labels=layout.unique_labels),
            true.sum().alias(N_POSITIVES),
        ]
        if _counts_predicted(keys, context):
            # The facts the set scores' ill-defined samples are counted from (metrics.undefined).
            found.append(is_predicted.sum().alias(N_PREDICTED))
        return found

    if ranks_positives_only(keys, plan):
        context = replace(context, rows=replace(context.rows, positives_only=True))
        # Each frame below is read by several branches of the plan, which Polars' common
        # subplan elimination does not merge once their projections differ: cached, each is
        # computed once.
        truth_type = lf.collect_schema()[cols.truth]
        counts = positive_counts(score=cols.score, truth=cols.truth, truth_type=truth_type)
        true = is_positive(cols.truth, truth_type)
        samples = lf.group_by(cols.sample_keys).agg(*facts(true), *counts).cache()
        rows = positive_ranks(
            lf, samples, sample=cols.sample_keys, score=cols.score, truth=cols.truth,
            n_labels=context.n_labels, blocks=plan == "blocks", ranked=layout.carries_ranks,
        )  # fmt: skip
        rows = with_extras(rows.cache(), cols, keys, context).cache()
        values = rows.group_by(cols.sample_keys).agg(
            pl.lit(True).alias(_HAS_POSITIVES),
            *(key.expression(context) for key in by_rows["positives"]),
            *_ideals(by_rows["positives"], context),
        )
        samples = samples.drop(LOWEST_POSITIVE, SCORED, LABELS, POSITIVES).join(
            values, on=cols.sample_keys, how="left", nulls_equal=True
        )
        samples = samples.with_columns(
            pl.when(pl.col(_HAS_POSITIVES).is_null())
            .then(pl.lit(plan_of(key).without_positives, dtype=pl.Float64))
            .otherwise(pl.col(str(key)))
            .alias(str(key))
            for key in by_rows["positives"]
        ).drop(_HAS_POSITIVES)
        samples = samples.with_columns(pl.col(_ideal_columns(keys)).fill_null(0.0))
    else:
        lf = lf.drop(RANK, BLOCK_START) if layout.carries_ranks else lf
        rows = with_extras(ranked(lf, cols, context).cache(), cols, keys, context)
        # The ranks cast the truth to Float64.
        true = is_positive(cols.truth, rows.collect_schema()[cols.truth])
        aggregated = [*by_rows["all"], *by_rows["positives"]]
        # The threshold metrics' values are formulas of their sample's counts, aggregated first.
        from_sums = [key for key in aggregated if counted(key)]
        sums = set_counts(true, is_predicted) if from_sums else []
        others = [key.expression(context) for key in aggregated if not counted(key)]
        others += _ideals(aggregated, context)
        samples = rows.group_by(cols.sample_keys).agg(*facts(true), *sums, *others)
        if from_sums:
            labels = pl.col(validation.SAMPLE_ROWS).cast(pl.Float64)
            samples = samples.with_columns(
                from_counts(key, context, labels) for key in from_sums
            ).drop(TP, FP, FN)
    if not by_rows["first_hits"]:
        return samples
    hits = first_hits(rows, sample=cols.sample_keys, score=cols.score, truth=cols.truth)
    values = hits.group_by(cols.sample_keys).agg(
        key.expression(context) for key in by_rows["first_hits"]
    )
    names = [str(key) for key in by_rows["first_hits"]]
    return samples.join(values, on=cols.sample_keys, how="left", nulls_equal=True).with_columns(
        pl.col(names).fill_null(0.0)
    )


_ROWS = ("all", "positives", "first_hits")


def _ideals(keys: Sequence[MetricKey], context: Context) -> list[pl.Expr]:
    """The per-sample weights of ``keys`` weighted by ``"ideal"`` (:func:`ideal_column`)."""
    return [key.ideal_expression(context) for key in keys if key.metric.weighting == "ideal"]


def _ideal_columns(keys: Sequence[MetricKey]) -> list[str]:
    return [ideal_column(key) for key in keys if key.metric.weighting == "ideal"]


def _counts_predicted(keys: Sequence[MetricKey], context: Context) -> bool:
    """Whether some key's ill-defined samples are counted from their predicted labels."""
    return any(
        applies(key.metric.ill_defined, context)
        and key.metric.ill_defined in ("no_predicted", "neither")
        for key in keys
    )


def ranks_positives_only(keys: Sequence[MetricKey], plan: str | None = None) -> bool:
    """Whether :func:`per_sample` ranks the positive rows alone for ``keys`` (every key reads
    only those rows, and ranks by window: ``plan``, by default :func:`rank_plan`'s for binary
    truth): the plan that reads the ranks a top-k piece carries
    (:meth:`~polars_rankmetrics.engines.topk.Piece.join`)."""
    plan = rank_plan(keys) if plan is None else plan
    return plan in ("window", "blocks") and all(plan_of(key).rows != "all" for key in keys)


_HAS_POSITIVES = "__has_positives"


def rank_plan(
    keys: Sequence[MetricKey], *, binary_truth: bool = True, sorted_samples: bool = False
) -> str:
    """The cheapest rank plan serving every key (``Plan.ranks``, or ``Plan.graded_ranks``
    where set when the truth is graded). Over runs of samples (``sorted_samples``) "lowest" is
    "none": comparing each score with the sample's lowest positive score inside the aggregation
    spares the join back."""
    plans = [plan_of(key).ranks_for(binary_truth) for key in keys]
    plan = max(plans, key=RANK_PLANS.index, default="none")
    return "none" if plan == "lowest" and sorted_samples else plan


def ranked(lf: pl.LazyFrame, cols: Columns, context: Context) -> pl.LazyFrame:
    """Every row, with the ranks of ``context.rows.ranks`` (:func:`rank_plan`)."""
    plan = context.rows.ranks
    sample, score, truth, n_labels = cols.sample_keys, cols.score, cols.truth, context.n_labels
    if plan == "table":
        return rank_table(lf, sample=sample, score=score, truth=truth, n_labels=n_labels)
    if plan == "lowest":
        return with_lowest_positive(lf, sample=sample, score=score, truth=truth)
    if plan == "none":
        return lf
    return window_ranks(
        lf, sample=sample, score=score, truth=truth, n_labels=n_labels, blocks=plan == "blocks",
        top_k=context.top_k,
    )  # fmt: skip


def with_extras(
    rows: pl.LazyFrame, cols: Columns, keys: Sequence[MetricKey], context: Context
) -> pl.LazyFrame:
    """Ranked rows with the columns ``keys`` read besides the ranks (``Plan.extras``)."""
    extras = {extra for key in keys for extra in plan_of(key).extras}
    if "harmonics" in extras:
        # Cached: with_discounts reads the rows thrice.
        rows = with_harmonics(rows, score=cols.score).cache()
    if "discounts" in extras:
        # Where every dcg key is cut at some K, no discount is read past the largest K.
        cuts = [key.k for key in keys if "discounts" in plan_of(key).extras]
        known = [k for k in cuts if k is not None]
        rows = with_discounts(
            rows, sample=cols.sample_keys, score=cols.score, truth=cols.truth,
            n_labels=context.n_labels, cut=max(known) if len(known) == len(cuts) else None,
        )  # fmt: skip
    if "gain_ranks" in extras:
        rows = with_gain_ranks(rows, sample=cols.sample_keys, truth=cols.truth)
    return rows


def per_sample_result(
    samples: pl.LazyFrame, cols: Columns, keys: Sequence[MetricKey] = (),
    context: Context | None = None,
) -> pl.LazyFrame:  # fmt: skip
    """Per-sample output: the ``by`` and sample columns and the metric columns, sorted; with
    ``keys``, each key's weight in the mean beside it (``key/w``: the sample weight, times its
    positives for a key weighted by positives; 0 where the value is null), and for a key whose
    ill-defined samples ``context`` counts, whether the sample's is (``key/i``, 0 or 1)."""
    weights = [
        pl.when(pl.col(str(key)).is_not_null())
        .then(_key_weight(key))
        .otherwise(0.0)
        .cast(pl.Float64)
        .alias(weight_column(key))
        for key in keys
    ]
    ill = [
        _ill_defined(key, condition).cast(pl.Float64).alias(ill_defined_column(key))
        for key in keys
        if context is not None
        and (condition := key.metric.ill_defined) is not None
        and applies(condition, context)
    ]
    return (
        samples.with_columns(*weights, *ill)
        .drop(*_FACTS, N_POSITIVES, N_PREDICTED, strict=False)
        .drop(cs.starts_with(IDEAL_PREFIX))
        .sort(cols.sample_keys)
    )


def _ill_defined(key: MetricKey, condition: str) -> pl.Expr:
    return sample_condition(condition, _WEIGHT, str(key))


def _key_weight(key: MetricKey) -> pl.Expr:
    """A sample's weight in ``key``'s mean."""
    weight = pl.col(_WEIGHT)
    if key.metric.weighting == "ideal":
        return weight * pl.col(ideal_column(key))
    return weight * pl.col(N_POSITIVES) if key.metric.weighting == "positives" else weight


def weighted_sums(
    samples: pl.LazyFrame, cols: Columns, keys: Sequence[MetricKey], context: Context
) -> pl.LazyFrame:
    """The sums rows of :mod:`polars_rankmetrics.metrics.sums` from :func:`per_sample` rows. A null
    value (lwlrap of a sample without positives, a 0/0 with ``zero_division`` NaN) adds nothing,
    nor does its weight. A key whose ill-defined samples ``context`` counts has their count
    (``key/i``, :mod:`polars_rankmetrics.metrics.undefined`)."""
    sums = []
    for key in keys:
        weight = _key_weight(key)
        value = pl.col(str(key))
        sums += [
            (value * weight).sum().alias(str(key)),
            weight.filter(value.is_not_null()).sum().alias(weight_column(key)),
            (value.is_null() & (weight > 0)).sum().cast(pl.Float64).alias(undefined_column(key)),
        ]
        condition = key.metric.ill_defined
        if condition is not None and applies(condition, context):
            ill = _ill_defined(key, condition).sum().cast(pl.Float64)
            sums.append(ill.alias(ill_defined_column(key)))
    return samples.group_by(list(cols.by)).agg(sums) if cols.by else samples.select(sums)


def lazy_result(
    lf: pl.LazyFrame,
    cols: Columns,
    keys: Sequence[MetricKey],
    context: Context,
    *,
    per_sample_output: bool = False,
) -> pl.LazyFrame:
    """The whole evaluation of checked input as one lazy plan (for the frame functions, which
    return a LazyFrame for a LazyFrame)."""
    samples = per_sample(lf, cols, keys, context)
    if per_sample_output:
        return per_sample_result(samples, cols)
    return means(weighted_sums(samples, cols, keys, context), cols, keys)


class PolarsSession:
    """A :class:`~polars_rankmetrics.engines.base.Session` over a LazyFrame; ``rows``, its row
    count where known without a query (a DataFrame's, whose rows are in memory)."""

    def __init__(self, lf: pl.LazyFrame, cols: Columns, rows: int | None = None) -> None:
        self.lf, self.cols = lf, cols
        self.in_memory = rows is not None
        self.sorted_samples = False  # whether check_rows flagged the sample column sorted
        self.rows = rows
        self.engine = collector(rows)  # the engine each query is collected by
        # The row facts holding the label range, where check_rows found it (the whole table of a
        # run in one piece, without by columns: the driver asks for it then).
        self.ranged: validation.RowFacts | None = None

    def _counted(self, rows: int) -> int:
        self.rows, self.engine = rows, collector(rows)
        return rows

    def schema(self) -> pl.Schema:
        return self.lf.collect_schema()

    def count_rows(self) -> int:
        if self.rows is not None:
            return self.rows
        return self._counted(int(self.lf.select(pl.len()).collect(engine=self.engine).item()))

    def hold(self, *, unique_labels: bool = False) -> None:
        """Read the columns the evaluation reads once: the checks and the metrics query them
        in turn. A frame in memory is held already."""
        if self.in_memory:
            return
        schema = self.lf.collect_schema()
        read = [c for c in (*self.cols.required, PROPENSITY) if c in schema]
        held = self.lf.select(read).collect(engine=self.engine)
        self._counted(held.height)
        self.lf = held.lazy()

    def check_rows(
        self, keys: Sequence[MetricKey], *, ordered: bool = False
    ) -> validation.RowFacts:
        """The row checks; rows found strictly ordered by one sample column (and the label)
        have that column flagged sorted, so that each per-sample aggregation reads runs of
        rows instead of hashing the ids."""
        ranged = ordered and not self.cols.by
        facts = validation.check_rows(
            self.lf, self.cols, keys, ordered=ordered, with_label_range=ranged, engine=self.engine
        )
        self.ranged = facts if ranged else None
        if facts.unique_labels and len(self.cols.sample_keys) == 1:
            self.lf = self.lf.with_columns(pl.col(self.cols.sample).set_sorted())
            self.sorted_samples = True
        return facts

    def group_labels(self) -> pl.DataFrame:
        return validation.group_labels(self.lf, self.cols, engine=self.engine)

    def label_range(self) -> tuple[int, int] | None:
        if self.ranged is not None:
            return self.ranged.label_range
        return validation.label_range(self.lf, self.cols, engine=self.engine)

    def sample_summary(self) -> pl.DataFrame:
        return validation.sample_summary(self.lf, self.cols, engine=self.engine)

    def repeated_label(self, where: Mapping[str, object]) -> object:
        return validation.repeated_label(self.lf, self.cols, where, engine=self.engine)

    def _label_table_options(self) -> tuple[list[pl.Expr], pl.Expr | None]:
        """The group keys of the per-label tables, and the weight column (None: unweighted)."""
        group = [pl.col(b) for b in self.cols.by] or [pl.lit(0).alias(validation.GROUP)]
        weight = pl.col(self.cols.weight) if self.cols.weight else None
        return group, weight

    def piece(
        self, tables: Sequence[str], keys: Sequence[MetricKey], context: Context,
        check: Callable[[pl.DataFrame], None],
    ) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:  # fmt: skip
        """One query for everything: the per-sample rows carry the facts of the checks next to
        the metrics, and the per-label tables are collected with them (one scan)."""
        sample_keys = [k for k in keys if k.metric.reduction == "samples"]
        context = replace(context, rows=replace(context.rows, sorted_samples=self.sorted_samples))
        summed = self._summed_over_rows(tables, sample_keys, context)
        if summed is not None:
            check(summed[0])
            return summed
        cuts = sorted({k.k for k in keys if k.metric.reduction == "topk_labels" and k.k})
        lazy = {t: self._label_table(t, context, cuts) for t in tables if t not in SAMPLE_TABLES}
        samples, *label_tables = pl.collect_all(
            [per_sample(self.lf, self.cols, sample_keys, context), *lazy.values()],
            engine=self.engine,
        )
        summary = validation.summarise_samples(samples.lazy(), self.cols).collect(
            engine=self.engine
        )
        check(summary)
        frames = dict(zip(lazy, label_tables, strict=True))
        if "sums" in tables:
            frames["sums"] = weighted_sums(samples.lazy(), self.cols, sample_keys, context).collect(
                engine=self.engine
            )
        if "per_sample" in tables:
            frames["per_sample"] = per_sample_result(
                samples.lazy(), self.cols, sample_keys, context
            ).collect(engine=self.engine)
        if "samples" in tables:
            frames["samples"] = samples.select(self.cols.sample_keys)
        return summary, frames

    def _summed_over_rows(
        self, tables: Sequence[str], keys: Sequence[MetricKey], context: Context
    ) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]] | None:
        """The sample summary and the sums table from one pass over the rows, without a
        per-sample aggregation, where that is exact: only the sums table, every key
        :func:`~polars_rankmetrics.engines.polars_plans.row_summed`, no ``by`` or weight
        column, integer labels, and rows strictly ordered by (sample, label) (``sorted_samples``,
        so that no sample has more labels than the label range) whose count is the samples'
        (the runs of sample ids) times the label range: then every sample has every label of
        the range, and its facts are the first sample's. None where it is not, the per-sample
        aggregation's case (a table whose samples share a label set with gaps in the range
        pays this pass first)."""
        cols = self.cols
        schema = self.lf.collect_schema()
        if (
            list(tables) != ["sums"] or not keys or not all(row_summed(key) for key in keys)
            or not self.sorted_samples or cols.by or cols.weight is not None
            or not schema[cols.label].is_integer()
        ):  # fmt: skip
            return None
        sample, label = pl.col(cols.sample), pl.col(cols.label)
        true = is_positive(cols.truth, schema[cols.truth])
        is_predicted = predicted(context.score, pred=context.pred, threshold=context.threshold)
        found = (
            self.lf.select(
                pl.len().alias("rows"),
                # Zero-copy slices: each row's sample against the one before.
                (sample.slice(1) != sample.slice(0, pl.len() - 1)).sum().alias("changes"),
                label.min().alias("lowest"),
                label.max().alias("highest"),
                *set_counts(true, is_predicted),
            )
            .collect(engine=self.engine)
            .row(0, named=True)
        )
        samples, span = found["changes"] + 1, found["highest"] - found["lowest"] + 1
        if found["rows"] != samples * span:
            return None
        first = self.lf.head(span).group_by(cols.sample_keys)
        facts = first.agg(validation.sample_facts(cols, unique_labels=True))
        summary = validation.summarise_samples(facts, cols).with_columns(
            pl.lit(float(samples)).alias(validation.SUMMARY_WEIGHT)
        )
        counts = pl.DataFrame({name: [found[name]] for name in (TP, FP, FN)})
        sums = counts.select(
            column
            for key in keys
            for column in (
                from_counts(key, context, pl.lit(float(span))),
                pl.lit(float(samples)).alias(weight_column(key)),
                pl.lit(0.0).alias(undefined_column(key)),
            )
        )
        return summary.collect(engine=self.engine), {"sums": sums}

    def _label_table(self, table: str, context: Context, cuts: Sequence[int]) -> pl.LazyFrame:
        cols = self.cols
        group, weight = self._label_table_options()
        if table == "topk_labels":
            return self._topk_label_counts(group, context, cuts)
        if table == "labels":
            is_predicted = predicted(cols.score, pred=cols.pred, threshold=context.threshold)
            return label_counts(self.lf, group, cols.label, cols.truth, is_predicted, weight)
        if table == "curves":
            return score_counts(self.lf, group, cols.label, cols.score, cols.truth, weight)
        ranked = window_ranks(self.lf, sample=cols.sample_keys, score=cols.score, truth=cols.truth)
        weighted = weight.cast(pl.Float64) if weight is not None else pl.lit(1.0)
        precision = rx.label_precision(cols.truth) * weighted
        return (
            ranked.filter(pl.col(cols.truth) > 0)
            .group_by([*group, pl.col(cols.label).alias(LABEL)])
            .agg(precision.sum().alias("precision_sum"))
        )

    def _topk_label_counts(
        self, group: list[pl.Expr], context: Context, cuts: Sequence[int]
    ) -> pl.LazyFrame:
        """Per group and label, the top-k label counts (:func:`~polars_rankmetrics.metrics.
        label_averages.topk_label_columns`): ``support``, its true samples, and at each cut-off
        K of ``cuts`` ``tp@K`` and ``fp@K``, its expected true and false predictions within its
        samples' top K (a scored row of a tied block spanning a..b lies there with chance
        (min(b, K) - a + 1) / (b - a + 1)), each summed with the sample weights (a top-k
        table's rows of true labels without a prediction take their sample's weight).

        Only the true rows and the rows whose block starts within the largest K are grouped
        (a label predicted below every K of its samples counts nothing), in one pass for every
        K; a top-k piece in rank order carries its ranks (``Rows.carries_ranks``), read instead
        of windows."""
        cols = self.cols
        lf = self.lf
        if not context.rows.carries_ranks:
            lf = window_ranks(
                lf, sample=cols.sample_keys, score=cols.score, truth=cols.truth,
                n_labels=context.n_labels, blocks=True, top_k=context.top_k,
            )  # fmt: skip
        true = is_positive(cols.truth, self.lf.collect_schema()[cols.truth])
        weight = (
            pl.col(cols.weight).cast(pl.Float64).max().over(cols.sample_keys)
            if cols.weight
            else pl.lit(1.0)
        )
        start, end = pl.col(BLOCK_START), pl.col(RANK)
        w, is_true, scored = pl.col("__w"), pl.col("__true"), pl.col(cols.score).is_not_null()
        counted = lf.with_columns(weight.alias("__w"), true.alias("__true")).filter(
            is_true | (scored & (start <= max(cuts, default=0)))
        )

        def share(k: int) -> pl.Expr:
            within = (pl.min_horizontal(end, k) - start + 1).clip(lower_bound=0).cast(pl.Float64)
            return w * pl.when(scored).then(within / (end - start + 1)).otherwise(0.0)

        named = {k: topk_label_columns(k) for k in cuts}
        return counted.group_by([*group, pl.col(cols.label).alias(LABEL)]).agg(
            w.filter(is_true).sum().alias("support"),
            *(share(k).filter(is_true).sum().alias(named[k][0]) for k in cuts),
            *(share(k).filter(~is_true).sum().alias(named[k][1]) for k in cuts),
        )  # fmt: skip

    def bytes_per_row(self) -> float:
        return polars_bytes_per_row(self.schema(), self.cols)

    def split(self, n: int, directory: Path) -> list[list[Path]]:
        return write_buckets(self.lf, self.cols.sample_keys, n, directory)

    def query_progress(self) -> float | None:
        return None


class PolarsEngine:
    """Polars frames, LazyFrames, and Parquet paths or globs (scanned, not read)."""

    name = "polars"
    errors: tuple[type[Exception], ...] = (pl.exceptions.PolarsError,)
    splits = True
    per_sample_share = ENGINE_SHARE
    scans_rank_order = True

    @contextmanager
    def open(self, data: Source, cols: Columns, settings: Settings) -> Iterator[PolarsSession]:
        frame = data.polars()
        rows = frame.height if isinstance(frame, pl.DataFrame) else None
        yield PolarsSession(lazy_inside(data, cols), cols, rows)

    def reads_scanned_ranks(self, keys: Sequence[MetricKey]) -> bool:
        """The positive-rows plan of the keys over samples reads the carried ranks, and so do
        the per-label top-k counts (:meth:`PolarsSession._topk_label_counts`)."""
        over_cuts = [k for k in keys if k.metric.reduction == "topk_labels"]
        return bool(over_cuts) or ranks_positives_only([k for k in keys if k not in over_cuts])


def lazy_inside(data: Source | Any, cols: Columns) -> pl.LazyFrame:
    """``data`` (a :class:`Source`, or anything it accepts) as a LazyFrame, those of its ``by``
    columns it has renamed as ``cols`` names them inside (:meth:`.Columns.inside`); its schema
    is the caller's to check (:func:`~polars_rankmetrics.checks.types.check_schema`: a
    missing column is refused under the user's name)."""
    lf = Source.of(data).lazy()
    return lf.rename(dict(cols.aliases), strict=False) if cols.aliases else lf


ENGINE = PolarsEngine()
