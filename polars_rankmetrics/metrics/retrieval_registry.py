"""The registry's records of the retrieval family (:mod:`polars_rankmetrics.metrics.retrieval`):
trec_eval's and ranx's measures of a ranked list cut at K, and extreme classification's
propensity-scored ones, registered by :mod:`polars_rankmetrics.metrics.registry` in its order.

The propensity-scored keys come in three kinds: ``psprecision@K`` and ``psndcg@K`` (Jain et al.'s
per-sample values, averaged), their ``_norm`` variants (each sample's value over its best, those
ratios averaged) and the ``_ratio`` keys (pyxclib's and napkinXC's PSP@K, PSnDCG@K and PSR@K: the
sum over samples of the value over the same sum for the best rankings, a weighted mean of the
per-sample ratios with ``weighting="ideal"``).
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from polars_rankmetrics.metrics import retrieval as qx
from polars_rankmetrics.metrics.registry import (
    FIRST_HITS_VIEW,
    HITS_VIEW,
    MAP_VIEW,
    PROPENSITY_VIEW,
    PSNDCG_VIEW,
    PSPRECISION_VIEW,
    R_PRECISION_VIEW,
    TOPK_LABEL_VIEW,
    Context,
    Metric,
    MetricKey,
    _k,
    register,
)


def _retrieval(
    name: str, description: str, view: str, *, polars: Callable[[MetricKey, Context], pl.Expr],
    takes_k: bool = False, requires_k: bool = False, needs_propensities: bool = False,
    ideal: Callable[[MetricKey, Context], pl.Expr] | None = None, sql_ideal: str = "",
) -> None:  # fmt: skip
    register(Metric(
        name, description, "higher", polars, view, name, family="retrieval",
        takes_k=takes_k, requires_k=requires_k, needs_propensities=needs_propensities,
        weighting="sample" if ideal is None else "ideal", ideal=ideal, sql_ideal=sql_ideal,
    ))  # fmt: skip


_retrieval(
    "precision", "true labels among the top K, over K", HITS_VIEW, requires_k=True, takes_k=True,
    polars=lambda key, c: qx.precision_at(_k(key), c.truth, score=c.score),
)  # fmt: skip
_retrieval(
    "recall", "true labels among the top K, over the sample's true labels", HITS_VIEW,
    requires_k=True,
    takes_k=True, polars=lambda key, c: qx.recall_at(_k(key), c.truth, score=c.score),
)  # fmt: skip
_retrieval(
    "hit_rate", "1 if a true label is among the top K", FIRST_HITS_VIEW, requires_k=True,
    takes_k=True,
    polars=lambda key, c: qx.hit_rate_at(_k(key)),
)  # fmt: skip
_retrieval(
    "mrr", "reciprocal rank of the first true label (0 if none is scored or within K)",
    FIRST_HITS_VIEW, takes_k=True,
    polars=lambda key, c: qx.mrr(k=key.k),
)  # fmt: skip
_retrieval(
    "map", "sum of precision@r at the ranks r <= K of true labels, over the true labels",
    MAP_VIEW, takes_k=True,
    polars=lambda key, c: qx.average_precision_at(c.truth, score=c.score, k=key.k),
)  # fmt: skip
_retrieval(
    "r_precision",
    "precision among the top R, R the sample's true labels (@K: hits in the top K over min(K, R))",
    R_PRECISION_VIEW, takes_k=True,
    polars=lambda key, c: qx.r_precision(c.truth, score=c.score, k=key.k),
)  # fmt: skip
_retrieval(
    "hits", "number of true labels among the top K", HITS_VIEW, requires_k=True, takes_k=True,
    polars=lambda key, c: qx.hits_at(_k(key), c.truth, score=c.score),
)  # fmt: skip


def _propensity_scored(
    metric: Callable[..., pl.Expr], normalised: bool
) -> Callable[[MetricKey, Context], pl.Expr]:
    def expression(key: MetricKey, c: Context) -> pl.Expr:
        return metric(_k(key), c.truth, score=c.score, normalised=normalised)

    return expression


# psprecision and psndcg have views of their own: only their _norm variants sort the true labels
# by propensity (rankmetrics_propensity_per_sample).
_PROPENSITY_VIEWS = {
    "psprecision": PSPRECISION_VIEW, "psndcg": PSNDCG_VIEW,
    "psprecision_norm": PROPENSITY_VIEW, "psndcg_norm": PROPENSITY_VIEW,
}  # fmt: skip
for _normalised, _suffix, _how in ((False, "", "Jain et al."), (True, "_norm", "over the best")):
    _retrieval(
        f"psprecision{_suffix}", f"propensity-scored precision@K ({_how})",
        _PROPENSITY_VIEWS[f"psprecision{_suffix}"],
        requires_k=True,
        takes_k=True, needs_propensities=True,
        polars=_propensity_scored(qx.ps_precision_at, _normalised),
    )  # fmt: skip
    _retrieval(
        f"psndcg{_suffix}", f"propensity-scored nDCG@K ({_how})",
        _PROPENSITY_VIEWS[f"psndcg{_suffix}"],
        requires_k=True, takes_k=True,
        needs_propensities=True,
        polars=_propensity_scored(qx.ps_ndcg_at, _normalised),
    )  # fmt: skip


def _ratio(kind: str) -> Callable[[MetricKey, Context], pl.Expr]:
    return lambda key, c: qx.ps_ratio(kind, _k(key), c.truth, score=c.score)


def _ideal(kind: str) -> Callable[[MetricKey, Context], pl.Expr]:
    return lambda key, c: qx.ps_ideal(kind, _k(key), c.truth)


_RATIO_NAMES = {
    "psprecision": "PSP@K", "psrecall": "PSR@K", "psndcg": "PSnDCG@K",
}  # fmt: skip
for _kind in qx.RATIOS:
    _retrieval(
        f"{_kind}_ratio",
        f"pyxclib's {_RATIO_NAMES[_kind]}: the propensity-scored {_kind.removeprefix('ps')}@K "
        "summed over samples, over the same sum for the best rankings",
        PROPENSITY_VIEW, requires_k=True, takes_k=True, needs_propensities=True,
        polars=_ratio(_kind), ideal=_ideal(_kind), sql_ideal=f"best_{_kind}",
    )  # fmt: skip


# Over labels (metrics.label_averages.topk_label_scores): no per-sample value.
_LABEL_KEYS = {
    "label_coverage": ("coverage", "labels with a true prediction in some sample's top K, over "
                       "the labels with a true sample (napkinXC's coverage@k)"),
    "macro_precision": ("precision", "per label, its true predictions within the top K over its "
                        "predictions within the top K, averaged over the labels predicted"),
    "macro_recall": ("recall", "per label, its true predictions within the top K over its true "
                     "samples, averaged over the labels with a true sample"),
}  # fmt: skip
for _name, (_score, _text) in _LABEL_KEYS.items():
    register(Metric(
        _name, _text, "higher", None, TOPK_LABEL_VIEW, "", family="retrieval",
        takes_k=True, requires_k=True, reduction="topk_labels", label_score=(_score, "topk"),
    ))  # fmt: skip
