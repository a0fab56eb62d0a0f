"""Ill-defined metrics: where a value is a convention rather than a measurement, and the warning
that says so.

As scikit-learn 1.9.1, a score is ill-defined where its formula divides by zero or its curve
has one class only:

==================  ==================================  =========================================
score               ill-defined for a label or sample   value given
==================  ==================================  =========================================
precision           with no predicted cells (tp+fp=0)   ``zero_division`` (0 for ``"warn"``)
recall              with no true cells (tp+fn=0)        ``zero_division``
F-beta (f1, fbeta)  with neither (tp+fp+fn=0)           ``zero_division``
Jaccard             with neither (tp+fp+fn=0)           ``zero_division``
average precision   without positives                   0
ROC AUC             with one class only                 NaN (the mean over labels: see below)
==================  ==================================  =========================================

The set scores warn only with ``zero_division="warn"`` (the default, giving 0); any other
``zero_division`` is the user's choice of value and silences them. The curves always warn, as
scikit-learn does. A ``_micro`` average is ill-defined where the counts pooled over a group's
labels are; a ``_samples`` average where some sample's value is; ``_macro`` and ``_weighted``
where some label's value is.

Every count comes from the tables the metrics are computed from (the label counts, the score
counts, the additive sums): nothing is read again, and counts of buckets add up, so a run in
buckets warns once, with the totals. :func:`warn` issues one :class:`UndefinedMetricWarning` per
call, naming each affected key, how many labels or samples, a few of them, and how to silence
it.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import polars as pl

from polars_rankmetrics.metrics.probabilities import CALIBRATION
from polars_rankmetrics.metrics.probabilities import KINDS as LOSSES
from polars_rankmetrics.metrics.registry import Context, MetricKey

Unit = Literal["label", "sample", "pooled"]

# The condition a sample's set score or average precision is ill-defined under, over the
# per-sample facts: its positives, its predicted labels and its weight. As scikit-learn weights a
# sample's counts, a set score of a sample of weight 0 is a 0/0 too.
N_POSITIVES = "__n_positives"
N_PREDICTED = "__n_predicted"
# Per condition: its test over a per-sample view's columns (SQL: rankmetrics_set_per_sample has
# tp, fp, fn, n_positives and weight; every ranking view n_positives), and what scikit-learn says
# the sample or label has "no" of.
CONDITIONS: dict[str, tuple[str, str]] = {
    "no_predicted": ("tp + fp = 0 OR weight = 0", "predicted"),
    "no_true": ("n_positives = 0 OR weight = 0", "true"),
    "neither": ("tp + fp + fn = 0 OR weight = 0", "true nor predicted"),
    "no_positives": ("n_positives = 0", "positive"),
    "one_class": ("roc_auc IS NULL", "one class only"),
}
# The set scores' conditions, which warn only with zero_division="warn".
ZERO_DIVISION_CONDITIONS = frozenset({"no_predicted", "no_true", "neither"})
# The ill-defined condition of each set score (scikit-learn's _prf_divide).
SCORE_CONDITIONS = {
    "precision": "no_predicted",
    "recall": "no_true",
    "f1": "neither",
    "fbeta": "neither",
    "jaccard": "neither",
}
_SCORE_NAMES = {"f1": "f-score", "fbeta": "f-score"}
_EXAMPLES = 3


class UndefinedMetricWarning(UserWarning):
    """A metric was ill-defined for some labels or samples and was given a conventional value.

    ``cases`` holds one :class:`IllDefined` per affected result column. Filter it as any
    warning: ``warnings.simplefilter("ignore", rm.UndefinedMetricWarning)``; the set scores'
    warnings also go with an explicit ``zero_division`` (0, 1 or ``"nan"``).
    """

    def __init__(self, message: str, cases: Sequence[IllDefined] = ()) -> None:
        super().__init__(message)
        self.cases = tuple(cases)


@dataclass(frozen=True)
class IllDefined:
    """One result column's ill-defined values.

    ``key``: the column (``precision_macro``, ``f1_samples``; a per-label table's
    ``precision``). ``score``: ``precision``, ``recall``, ``f-score``, ``jaccard``,
    ``average_precision`` or ``roc_auc``. ``unit``: what is ill-defined, a ``label``, a
    ``sample`` or the counts ``pooled`` over a group's labels (a ``_micro`` average).
    ``count`` of how many (summed over the ``by`` groups) out of ``total`` (None where the run
    does not count them). ``examples``: a few of the labels (``more``: there are others).
    ``value``: what they were given.
    """

    key: str
    score: str
    unit: Unit
    count: int
    total: int | None
    examples: tuple[object, ...]
    value: float
    more: bool = False

    @property
    def reason(self) -> str:
        """What the affected labels or samples lack, in scikit-learn's words ("no predicted
        samples" for a label, "no predicted labels" for a sample)."""
        if self.score == "roc_auc":
            return "one class only"
        condition = (
            "no_positives"
            if self.score == "average_precision"
            else SCORE_CONDITIONS[_SCORE_KINDS[self.score]]
        )
        cells = {"label": "samples", "sample": "labels", "pooled": "cells"}[self.unit]
        return f"no {CONDITIONS[condition][1]} {cells}"

    def __str__(self) -> str:
        value = "NaN" if math.isnan(self.value) else f"{self.value:g}"
        if self.unit == "pooled":
            groups = "group" if self.count == 1 else "groups"
            return f"{self.key} has {self.reason} in {self.count} {groups}, set to {value}"
        noun = self.unit if self.count == 1 and self.total is None else f"{self.unit}s"
        of = f" of {self.total}" if self.total is not None else ""
        shown = ", ".join(repr(e) for e in self.examples)
        more = ", ..." if self.more else ""
        examples = f" ({shown}{more})" if self.examples else ""
        return f"{self.key} on {self.count}{of} {noun}{examples} with {self.reason}, set to {value}"


_SCORE_KINDS = {"precision": "precision", "recall": "recall", "f-score": "f1", "jaccard": "jaccard"}


def applies(condition: str | None, context: Context) -> bool:
    """Whether ``condition`` is counted in a run with ``context``: the set scores' only with
    ``zero_division="warn"``."""
    if condition is None:
        return False
    return condition not in ZERO_DIVISION_CONDITIONS or context.warn_zero_division


def sample_condition(condition: str, weight: str, value: str) -> pl.Expr:
    """``condition`` over a per-sample frame's facts (``__n_positives``, ``__n_predicted`` and
    the sample weight, ``weight``) and the key's ``value`` column."""
    positives, predicted = pl.col(N_POSITIVES), pl.col(N_PREDICTED)
    if condition == "no_positives":
        return positives == 0
    if condition == "one_class":
        return pl.col(value).is_null()
    lacking = {
        "no_predicted": predicted == 0,
        "no_true": positives == 0,
        "neither": (positives == 0) & (predicted == 0),
    }[condition]
    return lacking | (pl.col(weight) == 0)


def ill_defined_column(key: MetricKey) -> str:
    """The sums' count of a key's samples whose value is ill-defined."""
    return f"{key}/i"


def score_of(name: str) -> str:
    """scikit-learn's name of a set score or curve (``f1`` and ``fbeta`` are the ``f-score``)."""
    return _SCORE_NAMES.get(name, name)


def sample_cases(
    sums: pl.DataFrame, keys: Sequence[MetricKey], context: Context
) -> list[IllDefined]:
    """The ``_samples`` keys' cases from additive sums rows: their ``key/i`` counts."""
    cases = []
    for key in keys:
        condition, column = key.metric.ill_defined, ill_defined_column(key)
        if condition is None or not applies(condition, context) or column not in sums.columns:
            continue
        value = _value(condition, context)
        count = int(sums.get_column(column).sum())
        if count:
            cases.append(IllDefined(str(key), _sample_score(key), "sample", count, None, (), value))
    return cases


def _sample_score(key: MetricKey) -> str:
    """The score a ``_samples`` key averages."""
    return score_of(key.name.removesuffix("_samples"))


def _value(condition: str, context: Context) -> float:
    if condition == "one_class":
        return math.nan
    return context.zero_division if condition in ZERO_DIVISION_CONDITIONS else 0.0


def label_cases(
    tables: Mapping[str, pl.DataFrame], group: Sequence[str], keys: Sequence[MetricKey],
    context: Context, label: str = "label",
) -> list[IllDefined]:  # fmt: skip
    """The cases of keys averaged over labels, from the combined per-label tables (``labels``:
    tp, fp, fn per group and label; ``curves``: pos, neg per group, label and score)."""
    per_label: dict[str, pl.DataFrame] = {}
    if "labels" in tables:
        per_label["labels"] = tables["labels"]
    if "curves" in tables:
        per_label["curves"] = (
            tables["curves"]
            .group_by([*group, label])
            .agg(pl.col("pos").sum().alias("support"), pl.col("neg").sum().alias("negatives"))
        )
    cases = []
    for key in keys:
        kind, average = key.metric.label_score  # type: ignore[misc]
        if kind in LOSSES or kind in CALIBRATION:  # every cell has a loss, every bin a gap
            continue
        if key.metric.reduction == "topk_labels":  # averaged over the labels it is defined on
            continue
        table = per_label[key.metric.reduction]
        if average == "micro":
            table = table.group_by(list(group)).agg(pl.exclude(label).sum())
        elif average == "weighted" and key.metric.reduction == "curves":
            # Without any support in a group, its weighted curve is 0 with no label scored.
            table = table.filter(pl.col("support").sum().over(list(group)) > 0)
        case = table_case(
            table, str(key), kind, context, label=None if average == "micro" else label
        )
        if case is not None:
            cases.append(case)
    return cases


def table_case(
    table: pl.DataFrame, key: str, kind: str, context: Context, *, label: str | None
) -> IllDefined | None:
    """The case of one score over ``table`` (a row per label, or per group's pooled counts
    where ``label`` is None): its set counts (tp, fp, fn) or curve totals (support,
    negatives)."""
    if kind == "roc_auc":
        flags, value = (pl.col("support") <= 0) | (pl.col("negatives") <= 0), math.nan
    elif kind == "average_precision":
        flags, value = pl.col("support") <= 0, 0.0
    else:
        condition = SCORE_CONDITIONS[kind]
        if not applies(condition, context):
            return None
        tp, fp, fn = pl.col("tp"), pl.col("fp"), pl.col("fn")
        flags = {"no_predicted": tp + fp <= 0, "no_true": tp + fn <= 0,
                 "neither": tp + fp + fn <= 0}[condition]  # fmt: skip
        value = context.zero_division
    hit = table.filter(flags)
    if hit.is_empty():
        return None
    labels = () if label is None else tuple(hit.get_column(label).unique().sort())
    unit: Unit = "pooled" if label is None else "label"
    return IllDefined(
        key, score_of(kind), unit, hit.height, table.height if label else None,
        labels[:_EXAMPLES], value, more=len(labels) > _EXAMPLES,
    )  # fmt: skip


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside this package and the context managers it
    runs in (:func:`gathered`): the user's call."""
    inside = (
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        os.path.abspath(contextlib.__file__),
    )
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(inside):
        frame, level = frame.f_back, level + 1  # type: ignore[assignment]
    return level


def warn(cases: Sequence[IllDefined]) -> None:
    """One :class:`UndefinedMetricWarning` for ``cases`` (none without), attributed to the
    caller's line outside this package."""
    if not cases:
        return
    lines = "; ".join(str(case) for case in cases)
    hint = (
        " Pass zero_division=0, 1 or 'nan' to choose the value of a 0/0 and silence this."
        if any(case.score not in ("roc_auc", "average_precision") for case in cases)
        else ""
    )
    message = f"ill-defined metrics: {lines}.{hint}"
    warnings.warn(UndefinedMetricWarning(message, cases), stacklevel=_caller_level())


@contextlib.contextmanager
def gathered() -> Iterator[None]:
    """The :class:`UndefinedMetricWarning` of every step inside as one warning, for a verb that
    computes in several steps (the HTML report: per-sample values, then per-label tables).
    Other warnings pass through as they came."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    cases: list[IllDefined] = []
    for record in caught:
        if isinstance(record.message, UndefinedMetricWarning):
            cases += record.message.cases
        else:
            warnings.warn_explicit(
                record.message,
                record.category,
                record.filename,
                record.lineno,
                source=record.source,
            )
    warn(cases)
