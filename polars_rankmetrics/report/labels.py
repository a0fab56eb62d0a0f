"""``label_report``: one row per label, the answer to scikit-learn's ``classification_report`` for
the long table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

import polars as pl

from polars_rankmetrics.checks import validation
from polars_rankmetrics.engines import driver
from polars_rankmetrics.inference.recorded import zero_division as zero_division_param
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.label_averages import LABEL, combine, label_curves, label_scores
from polars_rankmetrics.metrics.parameters import parameters
from polars_rankmetrics.metrics.probabilities import N_BINS, calibration_errors, label_losses
from polars_rankmetrics.metrics.registry import Context, MetricKey
from polars_rankmetrics.metrics.undefined import table_case, warn
from polars_rankmetrics.options import Options, Run, documented
from polars_rankmetrics.states import is_state, merge

REPORT_COLUMNS = (
    "support", "predicted", "precision", "recall", "f1", "average_precision", "roc_auc",
    "lwlrap", "lwlrap_weight",
)  # fmt: skip
# The columns of a table of probabilities (every score in [0, 1]).
PROBABILITY_COLUMNS = ("log_loss", "brier", "ece")
# What the report needs checked: binary truth, as for every metric it holds. Asked for the
# probability columns, every score must lie in [0, 1]: checked on the score counts
# (:func:`check_probabilities`), where the refusal can name the columns asked for.
_KEYS = [MetricKey("f1_macro"), MetricKey("roc_auc_macro"), MetricKey("lwlrap")]
# The tables of driver.collect a report reads.
LABEL_TABLES = ["labels", "curves", "precisions"]


@documented(Options)
def label_report(
    data: Any,
    *,
    by: str | Sequence[str] | None = None,
    threshold: float = 0.5,
    zero_division: float | str = "warn",
    probabilities: bool | None = None,
    **options: Unpack[Options],
) -> pl.DataFrame:
    """One row per label (per ``by`` group): how well each label is predicted and ranked.

    Parameters
    ----------
    data, by, threshold, zero_division
        As for :func:`~polars_rankmetrics.evaluate`; the table is checked the same way (binary
        truth). ``data`` may also be states of :func:`~polars_rankmetrics.state` kept with
        ``per_label=True`` (as :func:`~polars_rankmetrics.finalize` takes them): the report of
        the data behind them, ``by`` among their ``by`` columns; ``threshold`` and
        ``zero_division`` must then be the states' own.
    probabilities
        Whether the scores are probabilities, which adds the columns ``log_loss``, ``brier``
        and ``ece``: None (default) where every score of the table lies in [0, 1]; True to
        require it (a score outside [0, 1] is refused, with the range of the scores and one of
        those outside); False never.
    **options

    Returns
    -------
    polars.DataFrame
        The ``by`` columns, the label column, then, with counts weighted by the sample weights:

        - ``support``: the label's positives (true cells), ``predicted``: its predicted cells;
        - ``precision``, ``recall``, ``f1`` of its predictions (scikit-learn's
          ``average=None``); a 0/0 is ``zero_division`` (NaN: NaN; ``"warn"``: 0 with an
          :class:`~polars_rankmetrics.UndefinedMetricWarning`, as in ``evaluate``);
        - ``average_precision`` and ``roc_auc`` of its scores over the samples (scikit-learn's
          ``average=None``): average precision is 0 for a label without positives, ROC AUC is
          NaN (undefined) for a label whose cells are all positive or all negative;
        - ``lwlrap`` (per-class lwlrap: the weighted mean lrap precision of its positive cells,
          null without positives) and ``lwlrap_weight`` (its share of the group's positives, NaN
          in a group without any), so that ``sum(lwlrap_weight * lwlrap)`` is the group's lwlrap.

        - with ``probabilities``: ``log_loss`` and ``brier``, the weighted mean cross-entropy
          and squared error of the label's cells (scikit-learn's ``log_loss(y[:, j], p[:, j],
          labels=[0, 1])`` and ``brier_score_loss(y[:, j], p[:, j])``), and ``ece``, the
          expected calibration error over 15 equal-width bins (NaN where the label's cells all
          weigh 0).

        Sorted by the ``by`` columns and the label. Their macro, weighted and micro averages are
        :func:`~polars_rankmetrics.evaluate`'s ``*_macro``, ``*_weighted`` and ``*_micro`` keys.

    Examples
    --------
    >>> import polars_rankmetrics as rm
    >>> df = rm.from_dense([[1, 0], [0, 1], [1, 1]], [[0.9, 0.2], [0.6, 0.7], [0.4, 0.8]])
    >>> rm.label_report(df).select("label", "support", "precision", "recall", "roc_auc")
    shape: (2, 5)
    ┌───────┬─────────┬───────────┬────────┬─────────┐
    │ label ┆ support ┆ precision ┆ recall ┆ roc_auc │
    │ ---   ┆ ---     ┆ ---       ┆ ---    ┆ ---     │
    │ i64   ┆ f64     ┆ f64       ┆ f64    ┆ f64     │
    ╞═══════╪═════════╪═══════════╪════════╪═════════╡
    │ 0     ┆ 2.0     ┆ 0.5       ┆ 0.5    ┆ 0.5     │
    │ 1     ┆ 2.0     ┆ 1.0       ┆ 1.0    ┆ 1.0     │
    └───────┴─────────┴───────────┴────────┴─────────┘
    """
    context = parameters(threshold=threshold, zero_division=zero_division)
    if is_state(data):
        merged = merge(data, by, options=options)
        merged.require("label_report", per_label=True, threshold=context.threshold,
                       zero_division=zero_division_param(context))  # fmt: skip
        validation.check_result_names(merged.cols.in_source(), _RESULT_COLUMNS)
        table = label_table(merged.tables, merged.cols, merged.context, probabilities)
        return merged.cols.restored(table)
    run, cols = Run.of(options, by=by)
    return build(run, data, cols, context, probabilities)


_RESULT_COLUMNS = (*REPORT_COLUMNS, *PROBABILITY_COLUMNS)


def build(
    run: Run, data: Any, cols: Columns, context: Context, probabilities: bool | None = None
) -> pl.DataFrame:
    """:func:`label_report` in ``run``."""
    validation.check_result_names(cols, _RESULT_COLUMNS)
    with driver.inside_names(cols) as inner:
        collected, context = run.collect(data, inner, _KEYS, LABEL_TABLES, parameters=context)
    return inner.restored(label_table(collected, inner, context, probabilities))


def reads_probabilities(score_counts: pl.DataFrame) -> bool:
    """Whether every score of a score counts table (``score``) lies in [0, 1]: the report's
    rule for showing the probability columns and the reliability diagram."""
    score = score_counts.get_column("score")
    return score.len() > 0 and bool(((score >= 0) & (score <= 1)).all())


def label_table(
    collected: dict[str, list[pl.DataFrame]], cols: Columns, context: Context,
    probabilities: bool | None = None,
) -> pl.DataFrame:  # fmt: skip
    """The per-label report from the :data:`LABEL_TABLES` of :func:`.driver.collect` (``cols``
    with the ``by`` columns under their inside names, as the tables have them), with the
    :data:`PROBABILITY_COLUMNS` where ``probabilities`` (None: where every score lies in
    [0, 1])."""
    group = list(cols.by) or [validation.GROUP]
    keys = [*group, LABEL]
    counts = combine(collected["labels"], keys)
    scores = label_scores(
        counts, ["precision", "recall", "f1"], zero_division=context.zero_division
    ).with_columns((pl.col("tp") + pl.col("fp")).alias("predicted"))
    score_counts = combine(collected["curves"], [*keys, "score"])
    if probabilities:
        check_probabilities(score_counts, cols)
    curves = label_curves(score_counts, keys)
    warn([
        case
        for table, kinds in ((counts, ("precision", "recall", "f1")),
                             (curves, ("average_precision", "roc_auc")))
        for kind in kinds
        if (case := table_case(table, kind, kind, context, label=LABEL)) is not None
    ])  # fmt: skip
    report = with_lwlrap(
        scores.join(curves.drop("support", "negatives"), on=keys, nulls_equal=True),
        combine(collected["precisions"], keys), keys, group,
    ).with_columns(pl.col("precision", "recall", "f1").fill_null(float("nan")))  # fmt: skip
    columns = list(REPORT_COLUMNS)
    if reads_probabilities(score_counts) if probabilities is None else probabilities:
        losses = label_losses(score_counts, keys, ["log_loss", "brier"]).drop("support")
        errors = calibration_errors(score_counts, keys, N_BINS).select(*keys, "ece")
        report = report.join(losses, on=keys, how="left", nulls_equal=True).join(
            errors, on=keys, how="left", nulls_equal=True
        )
        report = report.with_columns(pl.col("ece").fill_null(float("nan")))
        columns += PROBABILITY_COLUMNS
    report = report.select(*cols.by, pl.col(LABEL).alias(cols.label), *columns)
    return report.sort([*cols.by, cols.label])


def check_probabilities(score_counts: pl.DataFrame, cols: Columns) -> None:
    """Refuse a score counts table (``score`` per label) with a score outside [0, 1], naming
    the columns ``probabilities=True`` asks for, the range of the scores and the first score
    outside (by label, then score)."""
    outside = score_counts.filter(~pl.col("score").is_between(0.0, 1.0))
    if outside.height == 0:
        return
    label, score = outside.sort(LABEL, "score").select(LABEL, "score").row(0)
    score_range = pl.col("score").min().alias("low"), pl.col("score").max().alias("high")
    low, high = score_counts.select(score_range).row(0)
    raise ValueError(
        f"column {cols.score!r} must hold probabilities in [0, 1] for probabilities=True (the "
        f"columns {', '.join(PROBABILITY_COLUMNS)}), but holds scores from {low} to {high} (e.g. "
        f"{cols.label}={label!r}, {cols.score}={score}): probabilities=None leaves those columns "
        "out"
    )


def with_lwlrap(
    labels: pl.DataFrame, precisions: pl.DataFrame, keys: list[str], group: list[str]
) -> pl.DataFrame:
    """``labels`` (one row per ``keys``, with ``support``: the label's weighted positives) with
    each label's ``lwlrap`` (the weighted mean LRAP precision of its positive cells, from the
    ``precisions`` table: null without positives) and ``lwlrap_weight`` (its share of its
    ``group``'s positives: NaN in a group without any), so that ``sum(lwlrap_weight * lwlrap)``
    is the group's lwlrap."""
    support = pl.col("support")
    return labels.join(precisions, on=keys, how="left", nulls_equal=True).with_columns(
        pl.when(support > 0).then(pl.col("precision_sum") / support).alias("lwlrap"),
        (support / support.sum().over(group)).alias("lwlrap_weight"),
    )
