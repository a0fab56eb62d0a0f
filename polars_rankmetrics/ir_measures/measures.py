"""ir_measures' measures as this library's TREC keys (:func:`~polars_rankmetrics.evaluate`),
each with the semantics of the provider that serves it in ir_measures' default pipeline:
pytrec_eval's (trec_eval's rules: ties by document id descending), the ``judged`` provider's
for ``Judged@k`` and gdeval's for ``ERR@k``.

A measure's name is parsed by :func:`~polars_rankmetrics.metrics.registry.trec_key` (ir_measures'
names: ``P@5``, ``AP``, ``nDCG@10``, ``IPrec@0.5``, ...); the parameters ir_measures' names
leave out (``rel``, ``gains``, ``beta``) are added to the key, and ``judged_only`` is
``evaluate``'s option of that name.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ir_measures import measures
from ir_measures.measures.base import Measure
from ir_measures.providers.base import Any as Given
from ir_measures.providers.base import Choices

from polars_rankmetrics.metrics.registry import MetricKey, trec_key

NOT_PROVIDED = measures.base._NOT_PROVIDED

# What the provider computes: the measure and the parameter values it takes
# (ir_measures.providers.Provider.supports reads them).
SUPPORTED_MEASURES = [
    measures._P(cutoff=Given(required=True), rel=Given(), judged_only=Given()),
    measures._R(cutoff=Given(required=True), rel=Given(), judged_only=Given()),
    measures._Success(cutoff=Given(required=True), rel=Given(), judged_only=Given()),
    measures._AP(cutoff=Given(), rel=Given(), judged_only=Given()),
    measures._RR(cutoff=Choices(NOT_PROVIDED), rel=Given(), judged_only=Given()),
    measures._Rprec(rel=Given(), judged_only=Given()),
    measures._nDCG(cutoff=Given(), dcg=Choices("log2"), gains=Given(), judged_only=Given()),
    measures._Bpref(rel=Given()),
    measures._infAP(rel=Given()),
    measures._NumRet(rel=Given()),
    measures._NumQ(),
    measures._NumRel(rel=Choices(1)),
    measures._SetAP(rel=Given(), judged_only=Given()),
    measures._SetF(rel=Given(), beta=Given(), judged_only=Given()),
    measures._SetP(rel=Given(), relative=Given(), judged_only=Given()),
    measures._SetR(rel=Given()),
    measures._IPrec(recall=Given(required=True), rel=Given(), judged_only=Given()),
    measures._Judged(cutoff=Given()),
    measures._ERR(cutoff=Given(required=True)),
]

# The measures whose ir_measures name is their own, with the cut-off as @k.
_CUT = {"P", "R", "Success", "AP", "nDCG", "Judged", "ERR"}
_PLAIN = {"RR", "Rprec", "Bpref", "infAP", "NumQ", "NumRel", "SetAP", "SetR", "SetF"}


def key(measure: Measure) -> MetricKey:
    """The TREC key that computes ``measure``, named ``str(measure)``. ``Judged`` without a
    cut-off is keyed ``Judged@1`` here: :func:`judged_cutoff` sets it per evaluation."""
    if not supported(measure):
        raise ValueError(f"unsupported measure {measure}")
    name = measure.NAME
    params: dict[str, object] = {}
    if name in _CUT:
        cutoff = _param(measure, "cutoff")
        text = name if cutoff is None else f"{name}@{cutoff}"
        if name == "Judged" and cutoff is None:
            text = "Judged@1"
    elif name in _PLAIN:
        text = name
    elif name == "NumRet":
        text = "NumRet" if _param(measure, "rel") is None else "NumRelRet"
    elif name == "SetP":
        text = "set_relative_P" if measure["relative"] else "SetP"
    elif name == "IPrec":
        text = f"IPrec@{float(measure['recall'])}"
    else:
        raise ValueError(f"unsupported measure {measure}")
    found = trec_key(text)
    if found is None:
        raise ValueError(f"unsupported measure {measure}")
    rel = _param(measure, "rel")
    if rel is not None and rel != 1:
        params["rel"] = int(rel)
    if name == "SetF":
        params["beta"] = float(measure["beta"])
    gains = _param(measure, "gains")
    if gains is not None:
        params["gains"] = tuple(sorted((int(level), float(g)) for level, g in gains.items()))
    return dataclasses.replace(found, params=(*found.params, *params.items()), alias=str(measure))


def supported(measure: Measure) -> bool:
    """Whether ``measure`` and its parameters are among :data:`SUPPORTED_MEASURES` (the rule
    of ``ir_measures.providers.Provider.supports``)."""
    return any(
        spec.NAME == measure.NAME
        and all(rule.validate(measure[name]) for name, rule in spec.params.items())
        for spec in SUPPORTED_MEASURES
    )


def judged_only(measure: Measure) -> bool:
    """Whether ``measure`` reads the judged documents alone (trec_eval's ``-J``)."""
    return bool(_param(measure, "judged_only"))


def judged_cutoff(measure: Measure) -> int | None:
    """The cut-off of a ``Judged`` measure (None: the run's length), or None for another."""
    return _param(measure, "cutoff") if measure.NAME == "Judged" else None


def _param(measure: Measure, name: str) -> Any:
    """``measure``'s value of parameter ``name``, None where it has none or it is not given."""
    if name not in measure.SUPPORTED_PARAMS:
        return None
    value = measure[name]
    return None if value is NOT_PROVIDED else value
