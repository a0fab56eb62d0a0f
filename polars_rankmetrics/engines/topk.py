"""Top-k tables: the predictions for some labels of each sample (the top k that extreme
classification, retrieval and recommender systems write), with the true labels in a table of
their own (a run and its qrels), evaluated without densifying.

The two tables are joined on (``by`` columns, sample, label) into one long table with a row per
scored or true label: the score is null where a true label was not predicted, the truth 0 where a
prediction is not a true label (or the truth table's gain where it is; 1 without a gain column).
The samples evaluated are those of either table. A truth table without some or all of the ``by``
columns is shared by the groups (one qrels for several runs): each of its rows is a true label of
every group of the predictions that it matches on the ``by`` columns it has (:func:`shared_truth`).

**Semantics.** A label without a score ranks below every scored label of its sample, all the
sample's unscored labels tied (as if scored minus infinity). With that rule every ranking metric
is defined on a top-k table and equals scikit-learn's value on the dense matrix in which every
unscored cell holds a score below all scored ones. Those metrics need the size of the label
space, ``n_labels`` (:data:`LABEL_SPACE_METRICS`): the unscored block's labels without a row are
counted in closed form, never materialised, so the cost grows with the rows of the two tables and
never with samples x ``n_labels``. The retrieval metrics (precision@K, recall@K, mrr, map, ...)
count only scored labels as retrieved, as trec_eval and ranx do, and need no ``n_labels``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from polars_rankmetrics.checks import types, validation
from polars_rankmetrics.engines.memory import write_buckets
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.inputs.sources import to_lazy
from polars_rankmetrics.metrics.ranks import in_rank_order, scanned_ranks, starts_run
from polars_rankmetrics.metrics.registry import MAX_INT64, REGISTRY, MetricKey
from polars_rankmetrics.metrics.retrieval import PROPENSITY
from polars_rankmetrics.metrics.trec import JUDGED, NONPOOL, code

LABEL_SPACE_METRICS = tuple(name for name, m in REGISTRY.items() if m.needs_label_space)
_TRUE = "__true"


def check_request(keys: Sequence[MetricKey], n_labels: int | None) -> None:
    """``n_labels`` is a positive integer up to :data:`~polars_rankmetrics.metrics.registry.
    MAX_INT64` where given, and given where a metric needs it; the metrics are defined on top-k
    tables."""
    if n_labels is not None and (
        isinstance(n_labels, bool) or not isinstance(n_labels, int) or n_labels < 1
    ):
        raise ValueError(f"n_labels must be a positive integer, not {n_labels!r}")
    if n_labels is not None and n_labels > MAX_INT64:
        raise ValueError(
            f"n_labels must be at most 2**63 - 1 ({MAX_INT64}), the largest integer every "
            f"engine stores, not {n_labels}"
        )
    for key in keys:
        metric = key.metric
        if metric.family == "classification" and not metric.needs_label_space:
            raise ValueError(
                f"{key} is not defined on top-k tables (truth_table=); the ranking and "
                "retrieval metrics are"
            )
        if metric.needs_label_space and n_labels is None:
            raise ValueError(
                f"{key} counts the unscored labels of a top-k table: give n_labels, the size of "
                f"the label space (the metrics that need it: {', '.join(LABEL_SPACE_METRICS)})"
            )
        if metric.min_labels > (n_labels or 0) and metric.needs_label_space:
            raise ValueError(f"{key} needs n_labels >= {metric.min_labels}")


def _check_schema(
    schema: pl.Schema, names: Sequence[str], table: str, lf: pl.LazyFrame | None = None
) -> None:
    """Every column of ``names`` is in ``schema``; a table without rows (``lf``) and without
    them is empty (an empty NDJSON file has no columns)."""
    missing = [name for name in names if name not in schema]
    if missing and lf is not None and lf.select(pl.len()).collect().item() == 0:
        types.raise_empty()
    if missing:
        raise ValueError(
            f"column {missing[0]!r} not found in the {table}; it has columns {list(schema.names())}"
        )


def check_tables(predictions: pl.LazyFrame, truth_table: pl.LazyFrame, cols: Columns) -> None:
    """Each table has the columns :func:`joined` reads (the truth table's gain column and its
    ``by`` columns are optional: :func:`shared_truth`); refuses a missing column, naming the
    table, and a key column of two types."""
    schema = truth_table.collect_schema()
    keys = [*_truth_by(cols, schema), cols.sample, cols.label]
    _check_schema(predictions.collect_schema(), _read(cols), "predictions", predictions)
    _check_schema(schema, keys, "truth table", truth_table)
    check_key_types(predictions.collect_schema(), schema, keys, ("predictions", "truth table"))


def _truth_by(cols: Columns, schema: pl.Schema) -> list[str]:
    """The ``by`` columns that a truth table of ``schema`` has."""
    return [b for b in cols.by if b in schema]


def shared_truth(
    predictions: pl.LazyFrame, truth_table: pl.LazyFrame, cols: Columns,
    groups: pl.LazyFrame | None = None,
) -> pl.LazyFrame:  # fmt: skip
    """``truth_table`` with every ``by`` column: as given where it has them all; otherwise each
    row once for every group (the distinct ``by`` values of the predictions, or ``groups``)
    that has its values of the ``by`` columns it has (every group where it has none), so that
    one truth table (one qrels) serves several groups (runs). A row that matches no group is
    left out: a group is known by its predictions. Without ``by`` columns, the truth table."""
    schema = truth_table.collect_schema()
    present = _truth_by(cols, schema)
    if len(present) == len(cols.by):
        return truth_table
    groups = predictions.select(cols.by).unique() if groups is None else groups
    if present:
        return groups.join(truth_table, on=present, how="inner")
    return groups.join(truth_table, how="cross")


def shared_groups(
    predictions: pl.LazyFrame, truth_table: pl.LazyFrame, cols: Columns
) -> pl.LazyFrame | None:
    """The groups of the predictions (their distinct ``by`` values), found once, by the
    streaming engine (the predictions may be larger than memory), where the truth table lacks
    a ``by`` column and so serves several groups (:func:`shared_truth`); None otherwise. Given
    to :func:`shared_truth`, they keep a plan that reads the predictions for something else
    from reading them twice (a plan that reads one scan twice holds it whole). None too where
    the predictions lack a ``by`` column, which the checks refuse by name."""
    if len(_truth_by(cols, truth_table.collect_schema())) == len(cols.by):
        return None
    if any(b not in predictions.collect_schema() for b in cols.by):
        return None
    return predictions.select(cols.by).unique().collect(engine="streaming").lazy()


def check_key_types(
    left: pl.Schema, right: pl.Schema, names: Sequence[str], tables: tuple[str, str]
) -> None:
    """The columns two tables are joined on have one type in both (a join matches no string
    with an integer, and casting either silently could match what differs)."""
    for name in names:
        if left[name] != right[name]:
            raise ValueError(
                f"column {name!r} is {left[name]} in the {tables[0]} and {right[name]} in the "
                f"{tables[1]}, which are joined on it: give both the same type (for example "
                f"pl.col({name!r}).cast(pl.{left[name]}) on the {tables[1]})"
            )


def _read(cols: Columns) -> list[str]:
    """The columns of the predictions a top-k evaluation reads."""
    return [*cols.by, cols.sample, cols.label, cols.score, *([cols.weight] if cols.weight else [])]


Frame = pl.DataFrame | pl.LazyFrame


def joined(
    predictions: Frame, truth_table: Frame, cols: Columns, propensities: pl.LazyFrame | None = None
) -> pl.LazyFrame:
    """The long table of a top-k evaluation: the predictions (``cols.score``, ``cols.weight``)
    and the truth table (``cols.truth``, optional) joined on the ``by`` columns, sample and
    label, with the ``propensities`` (a :func:`propensity_table`) where given; ``cols`` must
    have ``top_k`` set, and the tables the columns it reads (:func:`check_tables`)."""
    pred, true = _inputs(predictions, truth_table, cols)
    keys = [*cols.by, cols.sample, cols.label]
    both = pred.with_columns(pl.lit(True).alias(validation.PREDICTED)).join(
        true.with_columns(pl.lit(True).alias(_TRUE)), on=keys, how="full", coalesce=True
    )
    truth = pl.when(pl.col(_TRUE).is_null()).then(0).otherwise(pl.col(cols.truth))
    table = both.with_columns(truth.alias(cols.truth)).drop(_TRUE)
    return table if propensities is None else with_propensities(table, propensities, cols)


def _inputs(
    predictions: Frame, truth_table: Frame, cols: Columns
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """The columns :func:`joined` reads from each table (the truth table's gain as
    ``cols.truth``, 1 without a gain column; a shared truth table repeated for every group:
    :func:`shared_truth`)."""
    pred = predictions.lazy()
    true = shared_truth(pred, truth_table.lazy(), cols)
    keys = [*cols.by, cols.sample, cols.label]
    gain = pl.col(cols.truth) if cols.truth in true.collect_schema() else pl.lit(1, pl.Int64)
    return pred.select(_read(cols)), true.select(*keys, gain.alias(cols.truth))


@dataclass(frozen=True)
class Joined:
    """A top-k piece joined in memory (:meth:`Piece.join`): the table; whether no sample
    repeats a label in either table (then a sample's distinct labels are its rows); and whether
    the scored rows carry ``rm_rank`` and ``rm_block_start``
    (:func:`~polars_rankmetrics.metrics.ranks.scanned_ranks`; the unscored rows carry nulls)."""

    table: pl.DataFrame
    unique_labels: bool = False
    ranked: bool = False


@dataclass(frozen=True)
class Piece:
    """The predictions and the truth table of a bucket of whole samples, or of every sample."""

    predictions: pl.LazyFrame
    truth_table: pl.LazyFrame
    cols: Columns
    propensities: pl.LazyFrame | None = None  # a propensity_table

    def lazy(self) -> pl.LazyFrame:
        """The :func:`joined` table, lazily."""
        return joined(self.predictions, self.truth_table, self.cols, self.propensities)

    def join(self, *, rank_order: bool = False, ranked: bool = True) -> Joined:
        """The :func:`joined` table in memory. With ``rank_order`` (the Polars engine), joined
        by :func:`_scattered`, and predictions that come in rank order (sorted by sample and
        descending score, the order in which top-k predictions are written:
        :func:`~polars_rankmetrics.metrics.ranks.in_rank_order`) are shown to repeat no label
        within a sample by runs of rows and, with ``ranked`` (the metrics' plan reads ranks),
        ranked by scans before the join: what the Polars engine reads instead of a distinct count
        and windows over the joined rows."""
        if not rank_order:
            return Joined(self.lazy().collect())
        cols, sample = self.cols, self.cols.sample_keys
        pred, true = _inputs(self.predictions, self.truth_table, cols)
        predictions, truth = pred.collect(), true.collect()
        if validation.repeats_a_label(truth, sample, cols.label):
            # Joined by keys, the repeat is in the table, where the sample checks find it.
            return Joined(joined(predictions, truth, cols, self.propensities).collect())
        in_order = in_rank_order(predictions, sample, cols.score)
        unique = in_order and not validation.repeats_a_label(
            predictions, sample, cols.label, in_order=True
        )
        if in_order and ranked:
            predictions = scanned_ranks(predictions, sample, cols.score)
        if self.propensities is not None:
            truth = with_propensities(truth.lazy(), self.propensities, cols).collect()
        table = _scattered(predictions, truth, cols)
        return Joined(table, unique, ranked=in_order and ranked)


def _scattered(predictions: pl.DataFrame, truth: pl.DataFrame, cols: Columns) -> pl.DataFrame:
    """The table of :func:`joined` (``truth`` from :func:`_inputs`, repeating no label within
    a sample, maybe with its labels' propensities): the prediction rows in their order, each
    true one's gain (and propensity) scattered in, then the true labels without a prediction.
    Only the true labels are matched to the predictions, and no prediction column is gathered
    (cheaper than a hash join, which gathers every row). A prediction that is not a true
    label has no propensity: no metric or check reads a negative row's (the propensity-scored
    gain is 0 there)."""
    keys = [*cols.by, cols.sample, cols.label]
    # The gains in the type joined() gives them (0 where a label is not true).
    gain = pl.when(False).then(0).otherwise(pl.col(cols.truth)).alias(cols.truth)
    carried = [c for c in truth.columns if c not in (*keys, cols.truth)]
    true, pred = truth.lazy().with_row_index("__t"), predictions.lazy()
    packed = _packed_key([predictions, truth], keys)
    on = keys
    if packed is not None:
        true, pred, on = true.with_columns(packed), pred.with_columns(packed), [_KEY]
    hits = (
        true.join(pred.select(on).with_row_index("__p"), on=on, how="inner")
        .select("__t", "__p", gain, *carried)
        .collect()
    )
    n, at = predictions.height, hits["__p"]
    gains = pl.zeros(n, dtype=hits.schema[cols.truth], eager=True).scatter(at, hits[cols.truth])
    scored = predictions.with_columns(
        pl.lit(True).alias(validation.PREDICTED),
        gains.alias(cols.truth),
        *(pl.repeat(None, n, dtype=hits.schema[c], eager=True).scatter(at, hits[c]).alias(c)
          for c in carried),
    )  # fmt: skip
    unscored = truth.filter(~pl.int_range(pl.len()).is_in(hits["__t"].implode()))
    # In the predictions' columns and types, so that the rows are appended, not copied (a
    # diagonal concatenation rewrites every row).
    unscored = unscored.select(
        pl.col(c).cast(t) if c in unscored.columns else pl.lit(None, t).alias(c)
        for c, t in scored.schema.items()
    )
    return pl.concat([scored, unscored], how="vertical", rechunk=False)


_KEY = "__key"
TOPIC = "__topic"
"""A topic's number in the sorted run (:func:`trec_tables`, :func:`trec_rows`)."""


def _packed_key(tables: Sequence[pl.DataFrame], keys: Sequence[str]) -> pl.Expr | None:
    """One Int64 key (``__key``), equal where the ``keys`` of two rows of ``tables`` are equal
    (null where one is null): the keys' offsets from their smallest value in mixed radix, where
    every key is an integer (of one type in every table) and the product of their ranges fits;
    None otherwise. A join hashes the one column instead of several."""
    types = [{table.schema[key] for table in tables} for key in keys]
    if not all(len(kinds) == 1 and next(iter(kinds)).is_integer() for kinds in types):
        return None
    ends = [
        table.select(*(pl.col(k).min().alias(f"{k}<") for k in keys),
                     *(pl.col(k).max().alias(f"{k}>") for k in keys)).row(0, named=True)
        for table in tables
    ]  # fmt: skip
    packed, stride = pl.lit(0, pl.Int64), 1
    for key, kinds in reversed(list(zip(keys, types, strict=True))):
        lows = [end[f"{key}<"] for end in ends if end[f"{key}<"] is not None]
        if not lows:
            return None
        lowest = min(lows)
        highest = max(end[f"{key}>"] for end in ends if end[f"{key}>"] is not None)
        # The offset taken in the key's own type only where it cannot overflow there.
        column = pl.col(key) if pl.UInt64 in kinds else pl.col(key).cast(pl.Int64)
        packed = packed + (column - lowest).cast(pl.Int64) * stride
        stride *= highest - lowest + 1
        if stride >= 2**63:
            return None
    return packed.alias(_KEY)


Preparation = Callable[[pl.LazyFrame, pl.LazyFrame, Columns], tuple[pl.LazyFrame, pl.LazyFrame]]
"""What the metrics read of the predictions and truth table of a piece of whole samples, made
from the tables as given (:class:`TrecPreparation`). It works within each sample, so that it
gives the same rows whether applied to the whole tables or to each bucket of whole samples; it
keeps or drops rows and never adds any, and leaves no prediction where it leaves no truth."""


def split(
    predictions: pl.LazyFrame, truth_table: pl.LazyFrame, cols: Columns,
    propensities: pl.LazyFrame | None, n: int, directory: Path, *,
    groups: pl.LazyFrame | None = None, preparation: Preparation | None = None,
) -> list[Piece | None]:  # fmt: skip
    """The two tables as ``n`` pieces of whole samples (None: a bucket without any row); for
    ``n`` > 1 written apart as buckets to ``directory`` (the same hash of the sample keys that
    the truth table has, so that a sample of every group is in one bucket), so that a join
    never holds more than a bucket. A shared truth table (:func:`shared_truth`) is written
    once, and each bucket's rows repeated for the groups of all the predictions (a group
    need not have predictions in every bucket): ``groups``, the predictions' groups where the
    truth table lacks a ``by`` column (:func:`shared_groups`). The ``preparation`` (a
    :data:`Preparation`) is applied to each piece: the tables are written as given, so that
    no step before the buckets holds more than a bucket (trec_eval's order sorts each bucket,
    never the whole run)."""
    if n == 1:
        truth = shared_truth(predictions, truth_table, cols, groups)
        return [_prepared(predictions, truth, cols, propensities, preparation)]
    schema = truth_table.collect_schema()
    by = _truth_by(cols, schema)
    # The columns the pieces read, alone written (a run's rank column is not).
    gain = [cols.truth] if cols.truth in schema else []
    tables = [
        predictions.select(_read(cols)),
        truth_table.select(*by, cols.sample, cols.label, *gain),
    ]
    files = [
        write_buckets(table, [*by, cols.sample], n, directory / name)
        for table, name in zip(tables, ("predictions", "truth"), strict=True)
    ]
    pieces: list[Piece | None] = []
    for i in range(n):
        if not files[0][i] and not files[1][i]:
            pieces.append(None)
            continue
        pred_i, true_i = (
            pl.scan_parquet(bucket[i]) if bucket[i] else table.clear()
            for table, bucket in zip(tables, files, strict=True)
        )
        true_i = shared_truth(pred_i, true_i, cols, groups)
        piece = _prepared(pred_i, true_i, cols, propensities, preparation)
        # A prepared bucket without truth has no row (Preparation): qrels whose topics the
        # run lacks, a run's topics the qrels lack.
        truth = piece.truth_table
        empty = preparation is not None and truth.select(pl.len()).collect().item() == 0
        pieces.append(None if empty else piece)
    return pieces


def _prepared(
    predictions: pl.LazyFrame, truth_table: pl.LazyFrame, cols: Columns,
    propensities: pl.LazyFrame | None, preparation: Preparation | None,
) -> Piece:  # fmt: skip
    """The piece of the two tables, with the ``preparation`` applied where there is one."""
    if preparation is not None:
        predictions, truth_table = preparation(predictions, truth_table, cols)
    return Piece(predictions, truth_table, cols, propensities)


def propensity_table(propensities: pl.LazyFrame, cols: Columns) -> pl.LazyFrame:
    """The label column and each label's propensity (column ``__propensity``) of a table of
    (label column, ``propensity``) rows such as :func:`label_propensities` returns; refuses a
    missing column, naming the table."""
    schema = propensities.collect_schema()
    _check_schema(schema, [cols.label, "propensity"], "propensity table")
    return propensities.select(cols.label, pl.col("propensity").cast(pl.Float64).alias(PROPENSITY))


def with_propensities(
    data: pl.LazyFrame, propensities: pl.LazyFrame, cols: Columns
) -> pl.LazyFrame:
    """``data`` with each row's label propensity (column ``__propensity``), from a
    :func:`propensity_table`."""
    check_key_types(data.collect_schema(), propensities.collect_schema(), [cols.label],
                    ("table", "propensity table"))  # fmt: skip
    return data.join(propensities, on=cols.label, how="left")


def check_samples(
    summary: pl.DataFrame,
    cols: Columns,
    n_labels: int | None,
    repeated_label: Callable[[Mapping[str, object]], tuple[object, str]],
) -> None:
    """Per bucket: no (sample, label) pair twice in a table, at most ``n_labels`` distinct labels
    in a sample's predictions and truth, and a weight for every weighted sample.
    ``repeated_label(where)`` names a repeated label of sample ``where`` and its table."""
    for row in summary.sort(validation.group_keys(cols)).iter_rows(named=True):
        group = {b: row[b] for b in cols.by}
        if row[validation.REPEATED_SAMPLE] is not None:
            where = group | {cols.sample: row[validation.REPEATED_SAMPLE]}
            label, table = repeated_label(where)
            raise ValueError(
                f"column {cols.label!r} of the {table} repeats label {label!r} within one sample "
                f"({validation.describe(where)}); each (sample, label) pair must appear once "
                "(a table of several runs, models or slices is evaluated with by=)"
            )
        if n_labels is not None and row[validation.MAX_LABELS] > n_labels:
            where = group | {cols.sample: row[validation.LONG_SAMPLE]}
            raise ValueError(
                f"{validation.describe(where)} has {row[validation.MAX_LABELS]} distinct labels "
                f"in its predictions and truth (column {cols.label!r}), more than "
                f"n_labels={n_labels}"
            )
        if row[validation.VARYING_WEIGHT_SAMPLE] is not None:
            where = group | {cols.sample: row[validation.VARYING_WEIGHT_SAMPLE]}
            validation.raise_varying_weight(cols, where)
        if cols.weight is not None and row[validation.UNWEIGHTED_SAMPLE] is not None:
            where = group | {cols.sample: row[validation.UNWEIGHTED_SAMPLE]}
            raise ValueError(
                f"{validation.describe(where)} has true labels but no prediction, so no weight "
                f"(column {cols.weight!r} is read from the predictions)"
            )


def repeated_in(
    predictions: pl.LazyFrame, truth_table: pl.LazyFrame, cols: Columns,
    where: Mapping[str, object],
) -> tuple[object, str]:  # fmt: skip
    """A label repeated within sample ``where``, and which table repeats it (a shared truth
    table is matched on the ``by`` columns it has)."""
    for table, data in (("predictions", predictions), ("truth table", truth_table)):
        schema = data.collect_schema()
        match = pl.all_horizontal(pl.col(k).eq_missing(v) for k, v in where.items() if k in schema)
        repeated = data.filter(match).group_by(cols.label).len().filter(pl.col("len") > 1)
        found = repeated.sort(cols.label).head(1).collect()
        if found.height:
            return found[cols.label][0], table
    raise AssertionError(f"no repeated label in sample {where}")


PROPENSITY_PRESETS: dict[str, tuple[float, float]] = {
    "wikipedia": (0.5, 0.4),
    "amazon": (0.6, 2.6),
    "other": (0.55, 1.5),
}
"""The Extreme Classification Repository's (A, B) of the propensity model per kind of data set:
Wikipedia (WikiLSHTC-325K, WikipediaLarge-500K), Amazon (Amazon-670K, Amazon-3M) and every
other data set."""


def label_propensities(
    train: Any,
    *,
    dataset: str | None = None,
    a: float | None = None,
    b: float | None = None,
    labels: Sequence[object] | pl.Series | None = None,
    n_samples: int | None = None,
    sample: str = "sample",
    label: str = "label",
) -> pl.DataFrame:
    """Label propensities from a training set's true labels, by Jain, Prabhu and Varma's model
    (KDD 2016), as the Extreme Classification Repository computes them:
    ``p = 1 / (1 + C (N_l + B)^-A)``, ``C = (ln N - 1) (B + 1)^A``, where ``N`` is the number of
    training samples and ``N_l`` those with label l. ``1 / p`` is pyxclib's
    ``compute_inv_propesity(train, A, B)`` and napkinXC's ``Jain_et_al_inverse_propensity``.

    Parameters
    ----------
    train
        The training set's true labels: one row per (sample, label) pair, as a truth table (a
        frame or path).
    dataset
        The repository's preset (A, B) (:data:`PROPENSITY_PRESETS`): ``"wikipedia"`` (0.5,
        0.4), ``"amazon"`` (0.6, 2.6) or ``"other"`` (0.55, 1.5, also the default without
        ``dataset``, ``a`` or ``b``).
    a, b
        The model's A and B, instead of a preset (one given alone takes the other's default).
    labels
        Every label to give a propensity, including those never seen in training (count 0);
        default: the labels of ``train``.
    n_samples
        ``N``, the number of training samples, where some have no label (and so no row in
        ``train``): pyxclib and napkinXC count the rows of the training matrix. Default: the
        distinct samples of ``train``.

    Returns
    -------
    polars.DataFrame
        One row per label: the label column and ``propensity``, sorted by label.

    Raises
    ------
    ValueError
        For an unknown ``dataset``, ``dataset`` given with ``a`` or ``b``, fewer than 2
        training samples, or ``n_samples`` below the distinct samples of ``train``.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as rm
    >>> train = pl.DataFrame({"sample": [1, 1, 2, 3], "label": ["a", "b", "a", "a"]})
    >>> rm.label_propensities(train)
    shape: (2, 2)
    ┌───────┬────────────┐
    │ label ┆ propensity │
    │ ---   ┆ ---        │
    │ str   ┆ f64        │
    ╞═══════╪════════════╡
    │ a     ┆ 0.933382   │
    │ b     ┆ 0.910239   │
    └───────┴────────────┘
    """
    a, b = _model(dataset, a, b)
    table = to_lazy(train).select(sample, label)
    counts = table.group_by(label).agg(pl.len().alias("__count"))
    if labels is not None:
        every = pl.LazyFrame({label: pl.Series(labels)}).unique()
        counts = every.join(counts, on=label, how="left").with_columns(
            pl.col("__count").fill_null(0)
        )
    seen = table.select(pl.col(sample).n_unique()).collect().item()
    if n_samples is not None and (isinstance(n_samples, bool) or n_samples < seen):
        raise ValueError(
            f"n_samples={n_samples!r} is below the {seen} distinct samples of column {sample!r}"
        )
    n = seen if n_samples is None else n_samples
    if n < 2:
        raise ValueError(f"column {sample!r}: label_propensities needs at least 2 training samples")
    c = (math.log(n) - 1.0) * (b + 1.0) ** a
    p = 1.0 / (1.0 + c * (pl.col("__count").cast(pl.Float64) + b).pow(-a))
    return counts.select(label, p.alias("propensity")).sort(label).collect()


def _model(dataset: str | None, a: float | None, b: float | None) -> tuple[float, float]:
    """The (A, B) of :func:`label_propensities`' arguments."""
    if dataset is None:
        default_a, default_b = PROPENSITY_PRESETS["other"]
        return default_a if a is None else a, default_b if b is None else b
    if a is not None or b is not None:
        raise ValueError(f"give dataset={dataset!r} or a= and b=, not both")
    if dataset not in PROPENSITY_PRESETS:
        raise ValueError(
            f"unknown dataset {dataset!r}; the presets are {', '.join(PROPENSITY_PRESETS)}"
        )
    return PROPENSITY_PRESETS[dataset]


TIES = ("average", "trec_eval")
"""The tie rules of ``evaluate(ties=)``: the expected value over the orders of each tied block
(``"average"``), or trec_eval's order (``"trec_eval"``: score descending, then label
descending as text)."""


_TOGETHER = "__trec_together"


def trec_order(predictions: pl.LazyFrame, cols: Columns, *, together: bool = False) -> pl.LazyFrame:
    """``predictions`` with each score replaced by minus its position in trec_eval's order
    within its sample (``form_res_rels.c``: score descending, then the label descending,
    compared as text byte by byte), so that no two scores of a sample tie: every metric then
    takes that one order. A null or NaN score is kept, for the checks to refuse. With
    ``together``, each sample's rows come one after another already (as in a run file in
    topic order): the samples keep their order, numbered by a scan, and the sort reads the
    number instead of the sample's columns."""
    score = pl.col(cols.score)
    keys = cols.sample_keys
    if together:
        predictions = predictions.with_columns(starts_run(keys).cum_sum().alias(_TOGETHER))
    by = [_TOGETHER] if together else keys
    ordered = predictions.sort(
        [*by, cols.score, pl.col(cols.label).cast(pl.String)],
        descending=[False] * len(by) + [True, True], nulls_last=True,
    )  # fmt: skip
    if together:
        ordered = ordered.drop(_TOGETHER)
    # Positions by a scan of the sorted rows (a window over the samples costs twice as much).
    row = pl.int_range(pl.len(), dtype=pl.Int64)
    first = pl.when(starts_run(keys)).then(row).forward_fill()
    position = (row - first + 1).cast(pl.Float64)
    unordered = score.is_null() | score.cast(pl.Float64).is_nan()
    return ordered.with_columns(
        pl.when(unordered).then(score).otherwise(-position).alias(cols.score)
    )


def trec_tables(
    predictions: pl.LazyFrame, qrels: pl.LazyFrame, cols: Columns, *,
    max_docs: int | None = None, judged_only: bool = False, complete: bool = False,
    together: bool = False,
) -> tuple[pl.LazyFrame, pl.LazyFrame]:  # fmt: skip
    """A run and its qrels as the TREC keys read them (:mod:`polars_rankmetrics.metrics.trec`):
    the run's documents in trec_eval's order (:func:`trec_order`), the first ``max_docs`` of
    each topic (``-M``), then, with ``judged_only`` (``-J``), the judged ones alone (a
    relevance >= 0), renumbered; the qrels' relevance as its code
    (:func:`~polars_rankmetrics.metrics.trec.code`). The topics are those of the qrels that the
    run has (trec_eval 9 and pytrec_eval; trec_eval 10.0 stops instead), or with ``complete``
    (``-c``) every topic of the qrels, those missing from the run retrieving nothing. A ``by``
    column that the qrels lack (the run tag of several runs) gives every group the same qrels
    (:func:`shared_truth`). ``together``: each topic's rows of the run come one after
    another (:func:`trec_order`).

    Raises ``ValueError`` for a relevance that is not an integer, naming the column and a
    sample."""
    keys = [*cols.by, cols.sample, cols.label]
    _check_schema(predictions.collect_schema(), [*keys, cols.score], "run")
    schema = qrels.collect_schema()
    _check_schema(schema, [cols.sample, cols.label, cols.truth], "qrels")
    relevance = pl.col(cols.truth)
    if not schema[cols.truth].is_integer():
        bad = qrels.filter(relevance.cast(pl.Float64).round() != relevance.cast(pl.Float64))
        found = bad.select(cols.sample, cols.truth).head(1).collect()
        if found.height or not schema[cols.truth].is_numeric():
            where = f" (sample {found[cols.sample][0]!r})" if found.height else ""
            raise ValueError(
                f"column {cols.truth!r} (relevance) of the qrels must hold integers{where}"
            )
    qrels = shared_truth(predictions, qrels, cols).select(
        *keys, code(relevance.cast(pl.Int64)).alias(cols.truth)
    )
    topic = cols.sample_keys
    # Sorted first, each topic a run of rows numbered by a scan: the qrels' topics are kept
    # by the run's topics, one row each, then by number (hashing each row's keys costs more).
    starts = starts_run(topic)
    ordered = trec_order(predictions, cols, together=together)
    ordered = ordered.with_columns(starts.cum_sum().alias(TOPIC))
    kept = (
        ordered.filter(starts)
        .select(TOPIC, *topic)
        .join(qrels.select(topic).unique(), on=topic, how="semi")
    )
    run = ordered.join(kept.select(TOPIC), on=TOPIC, how="semi", maintain_order="left")
    run = run.drop(TOPIC)
    if not complete:
        # The run's topics before any document is cut: a topic that -M or -J empties counts.
        # Taken from the unsorted run: a plan of the qrels that read the sorted one would sort
        # it again where both tables are collected together.
        qrels = qrels.join(predictions.select(topic).unique(), on=topic, how="semi")
    position = -pl.col(cols.score)
    if max_docs is not None:
        run = run.filter(position <= max_docs)
    if judged_only:
        judged = qrels.filter(pl.col(cols.truth) >= JUDGED).select(keys)
        run = trec_order(run.join(judged, on=keys, how="semi"), cols)
    return run, qrels


@dataclass(frozen=True)
class TrecPreparation:
    """trec_eval's options as a :data:`Preparation`: :func:`trec_tables` with them. Every step
    of it works within a topic (the order, ``-M``, ``-J``, the topics kept, with ``-c`` those of
    the qrels alone), so a bucket of whole topics is prepared as the whole run is."""

    max_docs: int | None = None
    judged_only: bool = False
    complete: bool = False

    def __call__(
        self, predictions: pl.LazyFrame, qrels: pl.LazyFrame, cols: Columns
    ) -> tuple[pl.LazyFrame, pl.LazyFrame]:
        return trec_tables(predictions, qrels, cols, max_docs=self.max_docs,
                           judged_only=self.judged_only, complete=self.complete)  # fmt: skip


@dataclass(frozen=True)
class Qrels:
    """A truth table read as qrels: the table as given (a frame, path, ...) and the
    :class:`TrecPreparation` that each piece of whole topics of the run and it take."""

    table: Any
    preparation: TrecPreparation


def trec_rows(run: pl.DataFrame, qrels: pl.DataFrame, cols: Columns) -> pl.DataFrame:
    """The run and qrels of :func:`trec_tables` joined without a sort: the run's rows in their
    order (each topic's in position order), each with its code (``NONPOOL`` where the qrels do
    not name the document), then the judged documents that the run does not retrieve (a null
    score); the topic's columns and its number (:data:`TOPIC`: the run's topics numbered from
    1 in their order, then those of the qrels alone), the score and the code, not the
    document's id, which no measure reads. The rows the TREC keys read in position order
    (:func:`~polars_rankmetrics.metrics.trec.in_position_order`), grouped by the number (one
    integer hashes faster than the topic's columns). Only the qrels are matched to the run,
    and each code scattered to its row (cheaper than a join that gathers every row of the
    run, or hashes it twice)."""
    keys, topic = [*cols.by, cols.sample, cols.label], cols.sample_keys
    hits = (
        qrels.lazy()
        .select(*keys, cols.truth)
        .with_row_index("__q")
        .join(run.lazy().select(keys).with_row_index("__r"), on=keys, how="inner")
        .select("__q", "__r", cols.truth)
        .collect()
    )
    codes = pl.repeat(NONPOOL, run.height, dtype=pl.Int64, eager=True)
    starts = starts_run(topic)
    retrieved = run.select(
        *topic,
        starts.cum_sum().cast(pl.Int64).alias(TOPIC),
        cols.score,
        codes.scatter(hits["__r"], hits[cols.truth].cast(pl.Int64)).alias(cols.truth),
    )
    missed = qrels.filter(~pl.int_range(pl.len()).is_in(hits["__q"].implode()))
    numbers = retrieved.filter(starts).select(*topic, TOPIC)
    alone = missed.select(topic).unique().join(numbers, on=topic, how="anti")
    numbers = pl.concat(
        [numbers, alone.with_row_index(TOPIC, offset=numbers.height + 1).select(*topic, TOPIC)],
        how="vertical_relaxed",
    )
    missed = missed.join(numbers, on=topic, how="left").select(
        *topic, TOPIC, pl.lit(None, pl.Float64).alias(cols.score), cols.truth
    )
    return pl.concat([retrieved, missed.cast(retrieved.schema)], how="vertical")
