"""The arguments the drop-ins share with scikit-learn: their checks, as scikit-learn makes them
for multilabel indicator input, and their numpydoc entries."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from polars_rankmetrics.sklearn.undefined import caller_level

Function = TypeVar("Function", bound=Callable[..., Any])

AVERAGES = ("micro", "macro", "weighted", "samples")
PRF = ("precision", "recall", "f-score")

_PARAMETERS = {
    "y_true": """\
    y_true
        The truth, (samples x labels) of 0 and 1: a numpy array, nested lists or a scipy
        sparse matrix.""",
    "y_pred": """\
    y_pred
        The predictions, of the same shape and kind.""",
    "labels": """\
    labels
        The label columns to score, in this order (None: all). Column indices in
        [0, n labels).""",
    "pos_label": """\
    pos_label
        Ignored for multilabel input, as in scikit-learn, which says so in a ``UserWarning``
        for a value other than 1 or None.""",
    "average": """\
    average
        ``"micro"`` (the counts pooled over the labels), ``"macro"`` (the mean over labels),
        ``"weighted"`` (weighted by the labels' support), ``"samples"`` (per sample, then the
        weighted mean) or None (one value per label). ``"binary"`` (the default, as in
        scikit-learn) is refused: it needs binary targets.""",
    "sample_weight": """\
    sample_weight
        One weight per sample (None: every sample weighs 1).""",
    "zero_division": """\
    zero_division
        The value of a 0/0: ``"warn"`` (0, with scikit-learn's ``UndefinedMetricWarning``),
        0, 1 or ``numpy.nan`` (the label or sample drops out of the average).""",
    "normalize": """\
    normalize
        True: the (weighted) share of samples; False: their (weighted) number.""",
    "engine": """\
    engine
        The engine that computes it: ``"polars"``, ``"duckdb"`` or ``"spark"``.""",
}
_RAISES = """\
    ValueError
        For input that is not two multilabel indicator matrices of one shape (binary or
        multiclass targets: use scikit-learn's own), a ``labels`` entry outside the columns, an
        unknown ``average``, or a bad ``sample_weight`` or ``zero_division``."""


def documented(*names: str) -> Callable[[Function], Function]:
    """Write the shared parameters ``names`` (in this order) where the docstring has the line
    ``<parameters>``, and the shared errors where it has ``<raises>``."""

    def add(function: Function) -> Function:
        entries = "\n".join(_PARAMETERS[name] for name in names)
        doc = (function.__doc__ or "").replace("    <parameters>", entries, 1)
        function.__doc__ = doc.replace("    <raises>", _RAISES, 1)
        return function

    return add


def check_average(average: str | None) -> None:
    """``average`` one of scikit-learn's for multilabel input, or None; ``"binary"`` refused with
    scikit-learn's message."""
    if average == "binary":
        raise ValueError(
            "Target is multilabel-indicator but average='binary'. Please choose another average "
            f"setting, one of {[None, *AVERAGES]!r}."
        )
    if average is not None and average not in AVERAGES:
        raise ValueError(f"average has to be one of {(None, *AVERAGES)!r}")


def zero_division_of(value: object, *, nan: bool = True) -> float | str:
    """``zero_division`` as :func:`~polars_rankmetrics.evaluate` takes it."""
    if isinstance(value, str) and value == "warn":
        return value
    if isinstance(value, int | float) and (value in (0, 1) or (nan and math.isnan(value))):
        return float(value)
    allowed = "'warn', 0, 1 or numpy.nan" if nan else "'warn', 0 or 1"
    raise ValueError(f"zero_division must be {allowed}, not {value!r}")


def note_pos_label(pos_label: object, average: str | None) -> None:
    """scikit-learn's note that ``pos_label`` means nothing beside an ``average``."""
    if pos_label not in (None, 1):
        warnings.warn(
            f"Note that pos_label (set to {pos_label!r}) is ignored when average != 'binary' "
            f"(got {average!r}). You may use labels=[pos_label] to specify a single positive "
            "class.",
            UserWarning,
            stacklevel=caller_level(),
        )
