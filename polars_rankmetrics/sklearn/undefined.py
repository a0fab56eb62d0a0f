"""scikit-learn's warnings for ill-defined metrics, in place of this library's.

A drop-in computes inside :func:`with_sklearn_warnings`: the
:class:`~polars_rankmetrics.UndefinedMetricWarning` the evaluation emits (one per call, its
``cases`` naming each affected result column) becomes the warnings scikit-learn 1.9.1 gives on
the same call, with its class and wording:

=================  =========================================================  ==================
score              scikit-learn's message                                     class
=================  =========================================================  ==================
precision, recall  "Precision is ill-defined and being set to 0.0 in labels   UndefinedMetric-
F-score, Jaccard   with no predicted samples. Use `zero_division` ..."        Warning
                   (``_warn_prf``: "due to" for a single result, "in samples
                   with no predicted labels" for ``average="samples"``)
roc_auc            "Only one class is present in y_true. ROC AUC score is     UndefinedMetric-
                   not defined in that case."                                 Warning
average_precision  "No positive class found in y_true, recall is set to one   UserWarning
                   for all thresholds."
=================  =========================================================  ==================

scikit-learn's rules decide which of them a call gives: a set score warns only where the function
asks for it (``warn_for``: ``f1_score`` for the F-score alone, ``precision_recall_fscore_support``
for all three), and a ``weighted`` curve average over labels without positives returns 0
before any curve is computed, so without a warning. scikit-learn repeats a curve's warning for
every label or sample affected; a drop-in gives each message once a call. Other warnings pass
through unchanged. Without scikit-learn installed, the library's own warning is given, holding
the cases scikit-learn's rules keep.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TypeVar

from polars_rankmetrics.metrics.undefined import IllDefined, UndefinedMetricWarning
from polars_rankmetrics.metrics.undefined import warn as warn_ours

SET_SCORES = {
    "precision": "predicted", "recall": "true", "f-score": "true nor predicted",
    "jaccard": "true or predicted",
}  # fmt: skip
CURVES = ("roc_auc", "average_precision")
_PRF = (
    "{start} ill-defined and being set to 0.0 {where} no {modifier} {axis0}s. Use "
    "`zero_division` parameter to control this behavior."
)
ROC_AUC = "Only one class is present in y_true. ROC AUC score is not defined in that case."
# roc_curve's, where each class is present but one has zero weight.
NO_POSITIVE = "No positive samples in y_true, true positive value should be meaningless"
NO_NEGATIVE = "No negative samples in y_true, false positive value should be meaningless"
AVERAGE_PRECISION = "No positive class found in y_true, recall is set to one for all thresholds."
_AVERAGES = ("micro", "macro", "weighted", "samples")
T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """What scikit-learn's warnings depend on in one call: the scores it warns for
    (``warn_for``, including the curves a curve function computes), the number of samples and
    of labels (a single result says "due to"), whether its curves stay quiet (a ``weighted``
    average over labels without positives), and the messages an undefined ROC AUC stands for
    (``roc_auc``: "Only one class ..." where a curve's truth has one class, ``roc_curve``'s
    where a class has zero weight)."""

    warn_for: Collection[str]
    n_samples: int
    n_labels: int
    quiet_curves: bool = False
    roc_auc: tuple[str, ...] = (ROC_AUC,)

    def warns(self, case: IllDefined) -> bool:
        """Whether scikit-learn warns for ``case`` in this call."""
        return case.score in self.warn_for and not (case.score in CURVES and self.quiet_curves)

    def messages(self, case: IllDefined) -> list[tuple[type[Warning], str]]:
        """scikit-learn's warnings for ``case`` (a set score or a curve)."""
        if case.score == "roc_auc":
            return [(_sklearn_warning(), text) for text in self.roc_auc]
        if case.score == "average_precision":
            return [(UserWarning, AVERAGE_PRECISION)]
        average = _average(case.key)
        size = {"micro": 1, "samples": self.n_samples}.get(average or "", self.n_labels)
        axis0, axis1 = ("label", "sample") if average == "samples" else ("sample", "label")
        text = _PRF.format(
            start=f"{case.score.capitalize()} is", modifier=SET_SCORES[case.score], axis0=axis0,
            where="due to" if size == 1 else f"in {axis1}s with",
        )  # fmt: skip
        return [(_sklearn_warning(), text)]


def _known(case: IllDefined) -> bool:
    """Whether scikit-learn has words for ``case``'s score."""
    return case.score in SET_SCORES or case.score in CURVES


def _average(key: str) -> str | None:
    """The average of a result column (``precision_micro``); None for a per-label column."""
    return next((a for a in _AVERAGES if key.endswith(f"_{a}")), None)


def _sklearn_warning() -> type[Warning]:
    """scikit-learn's ``UndefinedMetricWarning`` (this library's without scikit-learn)."""
    try:
        from sklearn.exceptions import (  # type: ignore[import-untyped]
            UndefinedMetricWarning as SklearnWarning,
        )
    except ImportError:  # pragma: no cover - scikit-learn is in the test extras
        return UndefinedMetricWarning
    return SklearnWarning  # type: ignore[no-any-return]


def caller_level() -> int:
    """The ``stacklevel`` that attributes a warning issued by the caller of this function to the
    first frame outside the package: the drop-in's caller."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1  # type: ignore[assignment]
    return level


def with_sklearn_warnings(call: Call, compute: Callable[[], T]) -> T:
    """``compute()`` (a drop-in's evaluation), then scikit-learn's warnings for what it found
    ill-defined (:class:`Call` says which); other warnings pass through."""
    with warnings.catch_warnings(record=True) as caught:
        # Recorded whatever the caller's filters say; they apply when given again below.
        warnings.simplefilter("always")
        result = compute()
    cases: list[IllDefined] = []
    for record in caught:
        if isinstance(record.message, UndefinedMetricWarning):
            cases.extend(record.message.cases)
        else:
            warnings.warn_explicit(record.message, record.category, record.filename,
                                   record.lineno, source=record.source)  # fmt: skip
    unknown = [case for case in cases if not _known(case)]
    kept = [case for case in cases if _known(case) and call.warns(case)]
    if _sklearn_warning() is UndefinedMetricWarning:
        warn_ours(unknown + kept)
        return result
    warn_ours(unknown)  # a score scikit-learn has no words for: the library's own
    for category, text in dict.fromkeys(m for case in kept for m in call.messages(case)):
        warnings.warn(text, category, stacklevel=caller_level())
    return result
