"""Carterette's randomized Tukey HSD: the permutation distribution of the range of the system
means.

With ``m`` models scored on the same samples, under the null hypothesis that the systems are
exchangeable within each sample, each of ``n_resamples`` permutations shuffles every sample's
``m`` values among the systems (each sample its own uniform permutation); the statistic of a
permutation is the range (max - min) of the permuted system means. For a pair (A, B) with
``delta = mean(A) - mean(B)``:

- ``p = (1 + #{permutations whose range >= |delta|}) / (n_resamples + 1)`` (a relative 1e-9
  slack on the comparison, so that float noise does not split a tie);
- the simultaneous interval ``delta +- the ci quantile of the permuted ranges``;
- Sakai's effect size ``ES_E = delta / sqrt(V_E)`` (:mod:`.tukey`).

One set of permutations, drawn from ``seed``, serves every pair and metric; the samples are
in the order of their ids, so that the same seed gives the same p on every engine, whole or in
buckets, and for any row order. A sample whose value is undefined for any model adds nothing
for that key (its values are left out of every mean).

From resampling units (``bootstrap="poisson"``, and states), a permutation moves whole units:
each unit's sums of weighted values and of weights (:mod:`.units`) are shuffled among the
systems, a system's mean is its ratio of sums, and effect sizes, wins, ties and losses are
null (units hold no per-sample value).

The permutations are drawn a block at a time (a sample's as the argsort of random keys), and
each block's system sums gathered a step of samples at a time: the memory does not grow with
``n_resamples`` or the samples.

References
----------
Carterette, B. (2012). Multiple testing in statistical analysis of systems-based information
retrieval experiments. ACM TOIS 30(1).
Sakai, T. (2018). Laboratory Experiments in Information Retrieval, ch. 4.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np
import polars as pl

from polars_rankmetrics.inference import resampling
from polars_rankmetrics.inference.samples import values
from polars_rankmetrics.inference.tukey import (
    Model,
    PairNumbers,
    check_unweighted,
    matrix,
    pair_numbers,
    residual_variance,
)
from polars_rankmetrics.inference.units import UnitSums, unit_table
from polars_rankmetrics.metrics.registry import MetricKey

# The stream of the permutations under the seed (apart from every other draw's).
_STREAM = 52
# Bound on the values of one step of rows (rows x models x keys: 256 KB), and on the elements
# of one block of gathered values (a step's values x permutations: 32 MB).
_STEP_ELEMENTS = 1 << 15
_BLOCK_ELEMENTS = 1 << 22


def ranges(sums: np.ndarray, weights: np.ndarray, n_resamples: int, seed: int | None) -> np.ndarray:
    """Permutations x keys: the range of the system means under each permutation. ``sums``
    and ``weights`` (rows x models x keys): per row (a sample, or a unit) each model's sum of
    weighted values and of weights; a permutation shuffles each row's models, and a model's
    mean is its ratio of sums. Where every model of a row has the same weights (per-sample
    values, or units of the same samples and every value defined) the denominators do not
    move, and only the sums are gathered."""
    rows, m, k = sums.shape
    rng = resampling.generator(resampling.entropy(seed), _STREAM)
    fixed = bool(np.all(weights == weights[:, :1, :]))
    both = sums if fixed else np.concatenate([sums, weights], axis=2)
    width = both.shape[2]
    totals = weights[:, 0, :].sum(axis=0) if fixed else None
    # Rows a step: the values of a step's rows stay in the processor's cache while a block of
    # permutations gathers them.
    step = max(1, min(rows, _STEP_ELEMENTS // max(m * width, 1)))
    block = max(1, _BLOCK_ELEMENTS // max(step * m * width, 1))
    offsets = (np.arange(step, dtype=np.intp) * m)[:, None]
    out = np.empty((n_resamples, k))
    for start in range(0, n_resamples, block):
        count = min(block, n_resamples - start)
        summed = np.zeros((count, m, width))
        for first in range(0, rows, step):
            part = np.ascontiguousarray(both[first : first + step]).reshape(-1, width)
            held = part.shape[0] // m
            # Each row's permutation: the argsort of random keys (a uniform permutation).
            order = np.argsort(rng.random((count, held, m), dtype=np.float32), axis=2)
            at = (order + offsets[:held]).reshape(count, held * m)
            summed += part[at].reshape(count, held, m, width).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = summed / totals if totals is not None else summed[..., :k] / summed[..., k:]
        out[start : start + count] = np.nanmax(means, axis=1) - np.nanmin(means, axis=1)
    return out


def _judged(
    delta: np.ndarray, permuted: np.ndarray, n_resamples: int, level: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pair, from one key's permuted ranges: the interval's bounds and the p-value."""
    observed = np.abs(delta)
    threshold = observed * (1 - 1e-9)
    ordered = np.sort(permuted)
    hits = permuted.size - np.searchsorted(ordered, threshold, side="left")
    p = (hits + 1) / (n_resamples + 1)
    half = float(np.quantile(permuted, level)) if permuted.size else math.nan
    return delta - half, delta + half, np.where(np.isnan(delta), math.nan, p)


def randomized_tukey(
    models: dict[Model, pl.DataFrame],
    keys: Sequence[MetricKey],
    *,
    n_resamples: int,
    level: float,
    seed: int | None,
    sample: str,
    by_units: bool = False,
    **_: Any,
) -> PairNumbers:
    """Every pair's numbers (see the module) per key, from each model's per-sample rows of
    the same samples in the same order; ``by_units``: the permutations move resampling units
    (:func:`by_unit_sums`), and the effect sizes, wins, ties and losses still come from the
    samples."""
    check_unweighted(keys, "randomized_tukey")
    names = list(models)
    per_key = [matrix(models, key) for key in keys]
    if by_units:
        sums = {n: UnitSums.of(unit_table(f, sample, keys), keys) for n, f in models.items()}
        found = by_unit_sums(sums, keys, n_resamples=n_resamples, level=level, seed=seed)
    else:
        full = np.stack([np.stack([values(f, k) for f in models.values()], axis=1)
                         for k in keys], axis=2)  # fmt: skip
        kept = np.stack([k for _, k in per_key], axis=1)[:, None, :]
        weights = np.broadcast_to(kept, full.shape).astype(np.float64)
        permuted = ranges(np.where(kept, full, 0.0), weights, n_resamples, seed)
    out: PairNumbers = {}
    for j, key in enumerate(keys):
        x = per_key[j][0]
        v_e = residual_variance(x)[0]
        pairs = list(combinations(range(len(names)), 2))
        if by_units:
            numbers = [found[names[a], names[b], key] for a, b in pairs]
            delta = np.array([r["delta"] for r in numbers])
            lo, hi, p = (np.array([r[c] for r in numbers]) for c in ("delta_lo", "delta_hi",
                                                                    "p_value"))  # fmt: skip
        else:
            mean = x.mean(axis=0) if x.shape[0] else np.full(len(names), math.nan)
            delta = np.array([mean[a] - mean[b] for a, b in pairs])
            lo, hi, p = _judged(np.round(delta, 12), permuted[:, j], n_resamples, level)
        with np.errstate(invalid="ignore", divide="ignore"):
            effect = delta / math.sqrt(v_e) if v_e > 0 else np.full(len(pairs), math.nan)
        out |= pair_numbers(x, names, key, lo, hi, p, effect)
    return out


def by_unit_sums(
    models: dict[Model, UnitSums],
    keys: Sequence[MetricKey],
    *,
    n_resamples: int,
    level: float,
    seed: int | None,
) -> PairNumbers:
    """Every pair's numbers per key from each model's unit sums (the same samples in every
    model): the permutations move whole units; effect sizes, wins, ties and losses null."""
    check_unweighted(keys, "randomized_tukey")
    names = list(models)
    held = np.flatnonzero(np.any([s.present for s in models.values()], axis=0))
    sums = np.stack([s.weighted[held] for s in models.values()], axis=1)
    weights = np.stack([s.weights[held] for s in models.values()], axis=1)
    undefined = np.stack([s.undefined for s in models.values()])
    permuted = ranges(sums, weights, n_resamples, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums.sum(axis=0) / weights.sum(axis=0)
    for j, key in enumerate(keys):
        if key.metric.undefined == "nan":
            mean[undefined[:, j] > 0, j] = math.nan
    out: PairNumbers = {}
    pairs = list(combinations(range(len(names)), 2))
    for j, key in enumerate(keys):
        delta = np.array([mean[a, j] - mean[b, j] for a, b in pairs])
        lo, hi, p = _judged(np.round(delta, 12), permuted[:, j], n_resamples, level)
        for q, (a, b) in enumerate(pairs):
            out[names[a], names[b], key] = {
                "value": float(mean[a, j]), "other_value": float(mean[b, j]),
                "delta": float(delta[q]), "delta_lo": float(lo[q]), "delta_hi": float(hi[q]),
                "p_value": float(p[q]), "effect_size": None, "wins": None, "ties": None,
                "losses": None,
            }  # fmt: skip
    return out
