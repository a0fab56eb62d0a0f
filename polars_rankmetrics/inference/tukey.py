"""Tukey's HSD on the two-way ANOVA without replication: systems x samples, the samples as
blocks.

With ``m`` models scored on the same ``n`` samples, ``x[i, s]`` the value of sample ``i`` for
model ``s``, the residual of the additive model (a sample effect plus a system effect) is
``r[i, s] = x[i, s] - mean_s(x[i]) - mean_i(x[:, s]) + mean(x)``, and

- ``V_E = sum(r ** 2) / ((m - 1)(n - 1))``, the residual mean square, with
  ``df = (m - 1)(n - 1)`` degrees of freedom;
- for a pair (A, B) with ``delta = mean(x[:, A]) - mean(x[:, B])``,
  ``q = |delta| / sqrt(V_E / n)`` and ``p = P(Q >= q)``, ``Q`` the studentized range of ``m``
  means with ``df`` degrees of freedom (``scipy.stats.studentized_range``'s distribution,
  every pair's at once: :mod:`.studentized`);
- the simultaneous interval ``delta +- q_crit * sqrt(V_E / n)``, ``q_crit`` the ``ci``
  quantile of that distribution;
- Sakai's effect size ``ES_E = delta / sqrt(V_E)`` (NaN where ``V_E`` is 0).

Degenerate cases: a pair of equal means has ``q = 0`` and ``p = 1``; where ``V_E`` is 0 (every
residual 0) a pair of different means has ``p = 0``; with one sample (no degree of freedom)
every number but the means is NaN.

The blocks take the samples' difficulty out of the error: scipy's ``tukey_hsd`` (one-way) counts
it as noise, and misses differences that are consistent sample by sample. With two models the
test is the paired t test (``q = sqrt(2) |t|``).

Samples whose value is undefined for any model take no part for that key. The values are
unweighted: sample weights are refused, and so are keys weighted by each sample's positives
(lwlrap).

References
----------
Tukey, J. W. (1949). Comparing individual means in the analysis of variance. Biometrics 5(2).
Sakai, T. (2018). Laboratory Experiments in Information Retrieval, ch. 4 (ES_E).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np
import polars as pl

from polars_rankmetrics.inference import studentized
from polars_rankmetrics.inference.paired import tally
from polars_rankmetrics.inference.samples import values
from polars_rankmetrics.metrics.registry import MetricKey

Model = tuple[Any, ...]
PairNumbers = dict[tuple[Model, Model, MetricKey], dict[str, Any]]
# Differences are rounded to this many decimals before they are judged (as the paired tests'):
# float noise must not make equal systems differ.
_DECIMALS = 12


def check_unweighted(keys: Sequence[MetricKey], test: str) -> None:
    """Refuse the keys whose mean weighs each sample (by its positives, or its best value):
    the Tukey tests compare unweighted means."""
    for key in keys:
        if key.metric.weighting != "sample":
            by = "its positives" if key.metric.weighting == "positives" else "its best value"
            raise ValueError(
                f"test={test!r} compares unweighted means over samples, and {key} weighs each "
                f"sample by {by}: use test='permutation' or test='bootstrap' for it"
            )


def matrix(models: dict[Model, pl.DataFrame], key: MetricKey) -> tuple[np.ndarray, np.ndarray]:
    """Samples x models: one key's per-sample values (every model's rows of the same samples
    in the same order) of the samples every model defines, and which samples those are."""
    x = np.stack([values(frame, key) for frame in models.values()], axis=1)
    kept = ~np.isnan(x).any(axis=1)
    return x[kept], kept


def pair_numbers(
    x: np.ndarray, names: list[Model], key: MetricKey, delta_lo: np.ndarray,
    delta_hi: np.ndarray, p: np.ndarray, effect: np.ndarray,
) -> PairNumbers:  # fmt: skip
    """The numbers of every pair (A before B) of one key from the model means of ``x`` and
    the pairs' intervals, p-values and effect sizes (in the order of
    ``itertools.combinations``)."""
    mean = x.mean(axis=0) if x.shape[0] else np.full(x.shape[1], math.nan)
    out: PairNumbers = {}
    for q, (a, b) in enumerate(combinations(range(len(names)), 2)):
        d = np.round(x[:, a] - x[:, b], _DECIMALS)
        wins, ties, losses = tally(d, key)
        out[names[a], names[b], key] = {
            "value": float(mean[a]), "other_value": float(mean[b]),
            "delta": float(mean[a] - mean[b]), "delta_lo": float(delta_lo[q]),
            "delta_hi": float(delta_hi[q]), "p_value": float(p[q]),
            "effect_size": float(effect[q]), "wins": wins, "ties": ties, "losses": losses,
        }  # fmt: skip
    return out


def deltas(x: np.ndarray) -> np.ndarray:
    """Per pair (A before B), the difference of the two models' means over the rows of
    ``x``, rounded to :data:`_DECIMALS`."""
    mean = x.mean(axis=0)
    a, b = np.array(list(combinations(range(x.shape[1]), 2))).T
    return np.asarray(np.round(mean[a] - mean[b], _DECIMALS))


def residual_variance(x: np.ndarray) -> tuple[float, int]:
    """``V_E`` and its degrees of freedom (see the module) of samples x models ``x``; NaN
    with no degree of freedom."""
    n, m = x.shape
    df = (m - 1) * (n - 1)
    if df <= 0:
        return math.nan, df
    r = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0) + x.mean()
    return float(np.sum(r * r)) / df, df


def tukey_hsd(
    models: dict[Model, pl.DataFrame], keys: Sequence[MetricKey], *, level: float, **_: Any
) -> PairNumbers:
    """Every pair's numbers (see the module) per key, from each model's per-sample rows of
    the same samples in the same order."""
    check_unweighted(keys, "tukey_hsd")
    names = list(models)
    m = len(names)
    out: PairNumbers = {}
    for key in keys:
        x, _kept = matrix(models, key)
        n = x.shape[0]
        pairs = m * (m - 1) // 2
        v_e, df = residual_variance(x)
        if math.isnan(v_e):
            nan = np.full(pairs, math.nan)
            out |= pair_numbers(x, names, key, nan, nan, nan, nan)
            continue
        delta = deltas(x)
        se = math.sqrt(v_e / n)
        with np.errstate(invalid="ignore", divide="ignore"):
            q = np.where(delta == 0, 0.0, np.abs(delta) / se)
            effect = delta / math.sqrt(v_e) if v_e > 0 else np.full(pairs, math.nan)
        p = np.ones(pairs)
        moving = q > 0
        if se == 0:
            p[moving] = 0.0
        elif moving.any():
            p[moving] = studentized.sf(q[moving], m, df)
        half = studentized.ppf(level, m, df) * se
        out |= pair_numbers(x, names, key, delta - half, delta + half, p, effect)
    return out
