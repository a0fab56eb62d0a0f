"""How the Polars engine runs each metric's per-sample expression: the ranks it computes first
and the rows the expression aggregates.

A metric's definition (:class:`~polars_rankmetrics.metrics.registry.Metric`) says what a
sample's value is; a :class:`Plan` says how little of the rank table the Polars planner may build
for it. A metric without a plan here is computed over every row of the full rank table
(:func:`~polars_rankmetrics.metrics.ranks.rank_table`), which serves any expression; a plan
is an optimisation, declared with :func:`plan`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

import polars as pl

from polars_rankmetrics.metrics import classification
from polars_rankmetrics.metrics.classification import exact_match, set_score, wrong_share
from polars_rankmetrics.metrics.registry import (
    CLASSIFICATION_METRICS,
    REGISTRY,
    TREC_METRICS,
    Context,
    MetricKey,
)

RankPlan = Literal["none", "lowest", "window", "blocks", "table"]
# From the cheapest to the fullest: a plan serves every plan before it.
RANK_PLANS: tuple[RankPlan, ...] = ("none", "lowest", "window", "blocks", "table")


@dataclass(frozen=True)
class Plan:
    """What a metric's Polars expression reads.

    ``ranks``: "none" (the rows as they are), "lowest" (each sample's lowest positive score
    joined to its rows: ``ranks.with_lowest_positive``), "window" (the rank "max" and the
    positives' rank: ``ranks.window_ranks``, no sort), "blocks" (also where tied blocks start:
    ``window_ranks(blocks=True)``) or "table" (the sorted rank table and its discounts:
    ``ranks.rank_table``). ``graded_ranks``: the plan when the truth is graded, where the
    expression needs more (ndcg's ideal sorts the gains over the table's positions).
    ``extras``: columns added to the ranks, "harmonics" (``ranks.with_harmonics``) or
    "discounts" (dcg's cumulative discounts: ``ranks.with_discounts``) or "gain_ranks" (each
    true label's position in its sample's best propensity-scored ranking:
    ``retrieval.with_gain_ranks``).
    ``rows``: the rows the expression aggregates: "all" of the sample; "positives" (the positive
    rows only, whose ranks are still among all the sample's rows, so a set of such keys is ranked
    by ``ranks.positive_ranks``; a sample without a positive row is worth ``without_positives``,
    None: no value); or "first_hits" (a row per position of the first tied block holding a
    scored positive, ``ranks.first_hits``; 0 for a sample without).
    """

    ranks: RankPlan = "table"
    graded_ranks: Literal["table"] | None = None
    extras: tuple[Literal["harmonics", "discounts", "gain_ranks"], ...] = ()
    rows: Literal["all", "positives", "first_hits"] = "all"
    without_positives: float | None = 0.0

    def ranks_for(self, binary_truth: bool) -> RankPlan:
        """The ranks to compute: ``graded_ranks`` where set and the truth is graded."""
        return self.graded_ranks if self.graded_ranks and not binary_truth else self.ranks


PLANS: dict[str, Plan] = {}


def plan(name: str, metric_plan: Plan) -> None:
    """Declare how the Polars engine runs the registered metric ``name``."""
    if name not in REGISTRY:
        raise ValueError(f"unknown metric {name!r}: register it first")
    PLANS[name] = metric_plan


def plan_of(key: MetricKey) -> Plan:
    """The plan of ``key``'s metric: its declared one, or the full rank table over all rows."""
    return PLANS.get(key.name, Plan())


_POSITIVES = Plan(ranks="window", rows="positives")
_GAINS = Plan(ranks="blocks", extras=("discounts",), rows="positives")
_RETRIEVAL = Plan(ranks="blocks", rows="positives")
# The ratio keys' best values read each sample's best ranking, ranked once for every K.
_PS_RATIO = Plan(ranks="blocks", extras=("gain_ranks",), rows="positives", without_positives=None)
_PS_NDCG_RATIO = replace(_PS_RATIO, extras=("discounts", "gain_ranks"))

for _name, _plan in {
    "coverage_error": Plan(ranks="lowest", rows="positives"),
    "lrap": Plan(ranks="window", rows="positives", without_positives=1.0),
    "ranking_loss": _POSITIVES,
    "lwlrap": Plan(ranks="window", rows="positives", without_positives=None),
    "dcg": _GAINS,
    "ndcg": Plan(ranks="blocks", graded_ranks="table", extras=("discounts",), rows="positives"),
    "average_precision_samples": _POSITIVES,
    "roc_auc_samples": Plan(rows="positives", without_positives=None),
    "precision": _RETRIEVAL,
    "recall": _RETRIEVAL,
    "hit_rate": Plan(ranks="blocks", rows="first_hits"),
    "mrr": Plan(ranks="blocks", rows="first_hits"),
    "map": Plan(ranks="blocks", extras=("harmonics",), rows="positives"),
    "r_precision": _RETRIEVAL,
    "hits": _RETRIEVAL,
    "psprecision": _RETRIEVAL,
    "psprecision_norm": _RETRIEVAL,
    "psndcg": Plan(rows="positives"),
    "psndcg_norm": Plan(rows="positives"),
    "psprecision_ratio": _PS_RATIO,
    "psrecall_ratio": _PS_RATIO,
    "psndcg_ratio": _PS_NDCG_RATIO,
}.items():
    plan(_name, _plan)
# The threshold metrics read the predicted and true sets, no rank.
for _name in CLASSIFICATION_METRICS:
    if REGISTRY[_name].reduction == "samples" and _name not in PLANS:
        plan(_name, Plan(ranks="none"))
# The TREC keys read their rows as they are: minus the position is the score (metrics.trec).
for _name in TREC_METRICS:
    plan(_name, Plan(ranks="none"))


# A threshold metric's value from its sample's counts, computed after the per-sample aggregation
# (:func:`from_counts`): an aggregation of a formula over several sums costs Polars about twice
# the CPU of the sums alone, where the formula over the aggregated sums costs nothing.
TP, FP, FN = "__tp", "__fp", "__fn"
_Formula = Callable[[pl.Expr, pl.Expr, pl.Expr, pl.Expr, Context], pl.Expr]


def _set_formula(kind: str) -> _Formula:
    return lambda tp, fp, fn, labels, c: set_score(
        kind, tp, fp, fn, beta=c.beta, zero_division=c.zero_division
    )


_COUNTED: dict[str, _Formula] = {
    "hamming_loss": lambda tp, fp, fn, labels, c: wrong_share(fp, fn, labels),
    "subset_accuracy": lambda tp, fp, fn, labels, c: exact_match(fp, fn),
    "zero_one_loss": lambda tp, fp, fn, labels, c: 1.0 - exact_match(fp, fn),
    "true_positives": lambda tp, fp, fn, labels, c: tp,
    "false_positives": lambda tp, fp, fn, labels, c: fp,
    "false_negatives": lambda tp, fp, fn, labels, c: fn,
    **{
        f"{kind}_samples": _set_formula(kind)
        for kind in ("precision", "recall", "f1", "fbeta", "jaccard")
    },
}


# The counted keys whose formula is linear in the counts for a fixed label count L: where every
# sample has L labels, their sum over the samples is the formula of the counts summed over all
# rows, which needs no per-sample aggregation.
_ROW_SUMMED = ("hamming_loss", "true_positives", "false_positives", "false_negatives")


def row_summed(key: MetricKey) -> bool:
    """Whether ``key``'s sum over samples of L labels each is :func:`from_counts` of the
    counts summed over the rows."""
    return key.name in _ROW_SUMMED


def counted(key: MetricKey) -> bool:
    """Whether ``key``'s value is a formula of its sample's counts (:func:`from_counts`)."""
    return key.name in _COUNTED


def set_counts(true: pl.Expr, is_predicted: pl.Expr) -> list[pl.Expr]:
    """:func:`~polars_rankmetrics.metrics.classification.set_counts` named ``__tp``, ``__fp``
    and ``__fn``."""
    counts = classification.set_counts(true, is_predicted)
    return [c.alias(name) for c, name in zip(counts, (TP, FP, FN), strict=True)]


def from_counts(key: MetricKey, context: Context, labels: pl.Expr) -> pl.Expr:
    """The value of a :func:`counted` key (named as the key) from the columns of
    :func:`set_counts` and ``labels``, the sample's label count L (Float64): the formulas of
    :mod:`~polars_rankmetrics.metrics.classification` (hamming loss's :func:`wrong_share`,
    subset accuracy's :func:`exact_match`, the set scores' :func:`set_score`) over the
    counts."""
    tp, fp, fn = pl.col(TP), pl.col(FP), pl.col(FN)
    return _COUNTED[key.name](tp, fp, fn, labels, context).cast(pl.Float64).alias(str(key))
