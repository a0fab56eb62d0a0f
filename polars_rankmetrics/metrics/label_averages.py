"""Metrics per label and averaged over labels, from two per-label tables.

Every engine reduces a set of whole samples to these tables; tables of disjoint sets of samples
add up, so buckets combine by addition (:func:`combine`):

- **label counts**, per group and label: ``tp``, ``fp`` and ``fn``, the true labels predicted,
  the false labels predicted and the true labels missed, summed with the sample weights;
- **score counts**, per group, label and distinct score (as Float64, ``-0.0`` as ``0.0``):
  ``pos`` and ``neg``, the positive and negative cells at that score, summed with the sample
  weights. A label's precision-recall and ROC curves are cumulative sums of these in descending
  score order, so the curves are exact and their memory is bounded by the number of distinct
  (label, score) pairs, not by the number of samples.

Per label (:func:`label_scores`, :func:`label_curves`), as scikit-learn 1.9.1 computes a binary
score with ``sample_weight``:

- precision, recall, F-beta, Jaccard: :func:`~polars_rankmetrics.metrics.classification.set_score`,
  a 0/0 being ``zero_division`` (null for NaN);
- ``average_precision``: ``sum over distinct scores n of (R_n - R_{n-1}) P_n`` (a tied block is
  one threshold, no interpolation); 0 for a label without positives (weighted);
- ``roc_auc``: the trapezoidal area, a tie counting 1/2: ``sum over distinct scores of
  neg * (positives scored higher + pos / 2) / (P N)``; NaN for a label with one class only.
- ``log_loss``, ``brier``: the weighted mean loss of the label's cells,
  :func:`~polars_rankmetrics.metrics.probabilities.label_losses` (scikit-learn's
  ``log_loss(y[:, j], p[:, j], labels=[0, 1])`` and ``brier_score_loss(y[:, j], p[:, j])``).
- ``ece``, ``mce``: the expected and maximum calibration errors of the label's cells over
  equal-width bins (``ece_quantile``, ``mce_quantile``: equal-mass bins),
  :func:`~polars_rankmetrics.metrics.probabilities.calibration_errors`.

The averages (:func:`averages`), as scikit-learn's ``average=``:

- ``micro``: the score of the counts pooled over the labels (for the curves: every cell of the
  group in one ranking);
- ``macro``: the mean of the labels' scores. A null score (0/0 with ``zero_division`` NaN) drops
  out; a NaN one (ROC AUC of a one-class label) makes the mean NaN;
- ``weighted``: the mean weighted by each label's support (weighted positives). A label without
  support weighs 0, so its NaN ROC AUC does not count. Where the labels left have no support at
  all, scikit-learn gives the plain mean of the set scores and 0 for the curves; the losses,
  which scikit-learn does not average over labels, are then their plain mean too.

A group without any score left is NaN.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

import polars as pl

from polars_rankmetrics.inputs.collectors import collector
from polars_rankmetrics.metrics.classification import set_score
from polars_rankmetrics.metrics.probabilities import (
    CALIBRATION,
    N_BINS,
    calibration_errors,
    label_losses,
)
from polars_rankmetrics.metrics.probabilities import KINDS as LOSSES
from polars_rankmetrics.metrics.ranks import is_positive
from polars_rankmetrics.metrics.registry import Context, MetricKey

LABEL = "label"
SET_COUNTS = ("tp", "fp", "fn")
_NAN = float("nan")

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)


def label_counts(
    lf: pl.LazyFrame, group: Sequence[pl.Expr], label: str, truth: str, is_predicted: pl.Expr,
    weight: pl.Expr | None,
) -> pl.LazyFrame:  # fmt: skip
    """The label counts table of ``lf`` (Polars), its label column named ``label``. ``weight``
    None: every sample weighs 1, and the rows are counted (the same Float64 sums, without a
    product per row)."""
    true = is_positive(truth, lf.collect_schema()[truth])
    cells = {"tp": true & is_predicted, "fp": ~true & is_predicted, "fn": true & ~is_predicted}
    return _summed(lf, group, [pl.col(label).alias(LABEL)], cells, weight)


def score_counts(
    lf: pl.LazyFrame, group: Sequence[pl.Expr], label: str, score: str, truth: str,
    weight: pl.Expr | None,
) -> pl.LazyFrame:  # fmt: skip
    """The score counts table of ``lf`` (Polars), its label column named ``label``. ``weight``
    None: every sample weighs 1, and the rows are counted (the same Float64 sums, without a
    product per row)."""
    true = is_positive(truth, lf.collect_schema()[truth])
    # + 0.0 turns -0.0 into 0.0: the two tie, so they must be one distinct score. The scores are
    # grouped in their own type (a Float32 key hashes faster), then cast: the cast keeps them
    # distinct.
    distinct_score = (pl.col(score) + 0.0).alias("score")
    keys = [pl.col(label).alias(LABEL), distinct_score]
    counts = _summed(lf, group, keys, {"pos": true, "neg": ~true}, weight)
    return counts.with_columns(pl.col("score").cast(pl.Float64))


def _summed(
    lf: pl.LazyFrame, group: Sequence[pl.Expr], keys: Sequence[pl.Expr],
    cells: Mapping[str, pl.Expr], weight: pl.Expr | None,
) -> pl.LazyFrame:  # fmt: skip
    """Per ``group`` and ``keys``, each of ``cells`` (a condition per row) summed with the
    weights as Float64 (``weight`` None: counted, then cast). A group of literals (the one
    group of a table without ``by`` columns) is added to the result, not hashed with the
    keys."""
    if weight is not None:
        w = weight.cast(pl.Float64)
        weighted = ((w * cell).sum().alias(name) for name, cell in cells.items())
        return lf.group_by([*group, *keys]).agg(weighted)
    constant = [g for g in group if g.meta.is_literal(allow_aliasing=True)]
    grouped = [g for g in group if not g.meta.is_literal(allow_aliasing=True)]
    summed = lf.group_by([*grouped, *keys]).agg(
        cell.sum().cast(pl.Float64).alias(name) for name, cell in cells.items()
    )
    if not constant:
        return summed
    names = [e.meta.output_name() for e in (*group, *keys)]
    return summed.with_columns(constant).select(*names, *cells)


def combine(tables: Sequence[pl.DataFrame], keys: Sequence[str]) -> pl.DataFrame:
    """Tables of disjoint sets of samples (buckets) added up per ``keys``: by the streaming
    engine past :data:`~polars_rankmetrics.inputs.collectors.IN_MEMORY_ROWS` rows, which adds
    them up in morsels (the in-memory group-by of millions of labels holds several copies of
    them at once)."""
    frame = pl.concat(tables)
    summed = frame.lazy().group_by(list(keys)).agg(pl.exclude(keys).sum())
    return summed.collect(engine=collector(frame.height))


def label_scores(
    counts: Frame, kinds: Sequence[str], *, beta: float = 1.0, zero_division: float = 0.0
) -> Frame:
    """Per row of ``counts``: ``support`` (tp + fn) and each of ``kinds`` (``precision``,
    ``recall``, ``f1``, ``fbeta``, ``jaccard``)."""
    tp, fp, fn = (pl.col(c) for c in SET_COUNTS)
    scores = [
        set_score(kind, tp, fp, fn, beta=beta, zero_division=zero_division).alias(kind)
        for kind in kinds
    ]
    return counts.with_columns((tp + fn).alias("support"), *scores)


def label_curves(counts: Frame, keys: Sequence[str]) -> Frame:
    """Per ``keys`` (group and ``label``; or the group alone, pooling the labels: micro) from
    score counts: ``support`` and ``negatives`` (weighted), ``average_precision`` and
    ``roc_auc``."""
    keys = list(keys)
    pos, neg = pl.col("pos"), pl.col("neg")
    ordered = cumulative(counts, keys)
    tp, fp = pl.col("tp"), pl.col("fp")
    precision = pl.when(tp + fp > 0).then(tp / (tp + fp)).otherwise(0.0)
    support, negatives = pl.col("support"), pl.col("negatives")
    return (
        ordered.group_by(keys)
        .agg(
            pos.sum().alias("support"),
            neg.sum().alias("negatives"),
            (pos * precision).sum().alias("__ap"),
            (neg * (tp - pos / 2)).sum().alias("__auc"),
        )
        .with_columns(
            pl.when(support > 0).then(pl.col("__ap") / support).otherwise(0.0)
            .alias("average_precision"),
            pl.when((support > 0) & (negatives > 0))
            .then(pl.col("__auc") / (support * negatives))
            .otherwise(_NAN)
            .alias("roc_auc"),
        )
        .drop("__ap", "__auc")
    )  # fmt: skip


def cumulative(counts: Frame, keys: Sequence[str]) -> Frame:
    """Per ``keys`` from score counts: one row per distinct score, highest first, with ``pos``
    and ``neg`` at that score and ``tp`` and ``fp``, the weighted positives and negatives scoring
    at least it: the points of the precision-recall and ROC curves, a tied block one step."""
    keys = list(keys)
    pos, neg = pl.col("pos"), pl.col("neg")
    return (
        counts.group_by([*keys, "score"])
        .agg(pos.sum(), neg.sum())
        .sort([*keys, "score"], descending=[False] * len(keys) + [True])
        .with_columns(pos.cum_sum().over(keys).alias("tp"), neg.cum_sum().over(keys).alias("fp"))
    )


def averages(
    per_label: Frame, group: Sequence[str], columns: Sequence[str], average: str,
    *, no_support: float | None,
) -> Frame:  # fmt: skip
    """Per ``group``: the ``macro`` or ``weighted`` average of each of ``columns`` over the
    labels of ``per_label`` (which has a ``support`` column). ``no_support`` is the weighted
    value where the labels left have no support (None: the plain mean)."""
    support = pl.col("support")
    values = []
    for name in columns:
        score = pl.col(name)
        if average == "macro":
            value = score.mean()
        else:
            counted = score.is_not_null() & (support > 0)
            kept = support.filter(counted).sum()
            weighted = (score * support).filter(counted).sum() / kept
            fallback = score.mean() if no_support is None else pl.lit(no_support)
            value = pl.when(kept > 0).then(weighted).otherwise(fallback)
        values.append(value.cast(pl.Float64).fill_null(_NAN).alias(name))
    return per_label.group_by(list(group)).agg(values)


def _cells(
    counts: pl.DataFrame, keys: Sequence[str], kinds: Sequence[str], n_bins: int
) -> pl.DataFrame:
    """Per ``keys``, from score counts: ``support`` and each loss or calibration error of
    ``kinds`` over the cells, the losses in one pass and the errors in one per binning."""
    parts = []
    losses = [kind for kind in kinds if kind in LOSSES]
    if losses:
        parts.append(label_losses(counts, keys, losses))
    for strategy in dict.fromkeys(CALIBRATION[kind] for kind in kinds if kind in CALIBRATION):
        errors = calibration_errors(counts, keys, n_bins, strategy)
        suffix = "" if strategy == "uniform" else f"_{strategy}"
        parts.append(errors.rename({"ece": f"ece{suffix}", "mce": f"mce{suffix}"}))
    result = parts[0]
    for part in parts[1:]:
        result = result.join(part.drop("support"), on=list(keys), how="left", nulls_equal=True)
    return result


def topk_label_columns(k: int) -> tuple[str, str]:
    """The columns of the top-k label counts at cut-off ``k``: ``tp@k`` and ``fp@k``, a label's
    expected true and false predictions within its samples' top k. The counts hold, per group
    and label, ``support`` (its true samples) and these at each cut-off a run asks for: a row
    per label, whatever the number of cut-offs."""
    return f"tp@{k}", f"fp@{k}"


def topk_label_scores(counts: Frame, group: Sequence[str], kind: str, k: int) -> Frame:
    """Per ``group``, one label-level top-k score (column ``kind``) at cut-off ``k`` from the
    top-k label counts (``support`` and :func:`topk_label_columns` per label): ``coverage``, the
    labels with ``tp > 0`` over those with ``support > 0`` (napkinXC's coverage@k: labels of
    the truth); ``precision``, ``tp / (tp + fp)`` averaged over the labels predicted within the
    top k; ``recall``, ``tp / support`` averaged over the labels with a true sample (the labels
    napkinXC's macro averages count). NaN where no label counts."""
    tp, fp = (pl.col(name) for name in topk_label_columns(k))
    support = pl.col("support")
    if kind == "coverage":
        true = (support > 0).sum()
        value = pl.when(true > 0).then((tp > 0).sum() / true).otherwise(_NAN)
    elif kind == "precision":
        value = (tp / (tp + fp)).filter(tp + fp > 0).mean()
    else:
        value = (tp / support).filter(support > 0).mean()
    return counts.group_by(list(group)).agg(value.cast(pl.Float64).fill_null(_NAN).alias(kind))


def label_means(
    tables: Mapping[str, pl.DataFrame], group: Sequence[str], keys: Sequence[MetricKey],
    context: Context,
) -> pl.DataFrame:  # fmt: skip
    """One row per ``group`` with a column per key, from the combined tables by reduction
    (``"labels"``: label counts, ``"curves"``: score counts, ``"topk_labels"``: top-k label
    counts)."""
    group = list(group)
    options = {"beta": context.beta, "zero_division": context.zero_division}
    # The probability keys read the score counts once per grouping and number of bins, every
    # loss and calibration error of the run at once.
    wanted: dict[tuple[bool, int], list[str]] = {}
    for key in keys:
        kind, average = key.metric.label_score  # type: ignore[misc]
        if kind in LOSSES or kind in CALIBRATION:
            n_bins = key.k or N_BINS if kind in CALIBRATION else 0
            wanted.setdefault((average == "micro", n_bins), []).append(kind)
    cells: dict[tuple[bool, int], pl.DataFrame] = {}
    parts = []
    for key in keys:
        kind, average = key.metric.label_score  # type: ignore[misc]
        table = tables[key.metric.reduction]
        value: pl.LazyFrame
        if key.metric.reduction == "topk_labels":
            assert key.k is not None  # requires_k
            value = topk_label_scores(table.lazy(), group, kind, key.k)
        elif key.metric.reduction == "labels":
            if average == "micro":
                pooled = table.lazy().group_by(group).agg(pl.col(SET_COUNTS).sum())
                value = label_scores(pooled, [kind], **options).select(*group, kind)
            else:
                per_label = label_scores(table.lazy(), [kind], **options)
                value = averages(per_label, group, [kind], average, no_support=None)
        elif kind in LOSSES or kind in CALIBRATION:
            at = (average == "micro", key.k or N_BINS if kind in CALIBRATION else 0)
            if at not in cells:
                over = group if average == "micro" else [*group, LABEL]
                cells[at] = _cells(table, over, sorted(set(wanted[at])), at[1])
            if average == "micro":
                value = cells[at].lazy().select(*group, kind)
            else:
                value = averages(cells[at].lazy(), group, [kind], average, no_support=None)
        elif average == "micro":
            value = label_curves(table.lazy(), group).select(*group, kind)
        else:
            per_label = label_curves(table.lazy(), [*group, LABEL])
            value = averages(per_label, group, [kind], average, no_support=0.0)
        parts.append(value.select(*group, pl.col(kind).fill_null(_NAN).alias(str(key))))
    result = parts[0]
    for part in parts[1:]:
        result = result.join(part, on=group, nulls_equal=True)
    # Every key in one query of the tables in memory (step by step, each step is one).
    return result.collect(engine="in-memory")
