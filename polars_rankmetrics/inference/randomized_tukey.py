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

Each row's permutation is a Fisher-Yates shuffle driven by a counter-based generator, a
SplitMix64 stream keyed by ``seed``, the permutation's index and the row's index
(:mod:`.shuffles`, which gives the exact rule), drawn and summed into the system means in
compiled code, a group of permutations per pass over the rows, the permutations shared between
two threads: the memory does not grow with ``n_resamples``, and the draws do not depend on the
threads.

References
----------
Carterette, B. (2012). Multiple testing in statistical analysis of systems-based information
retrieval experiments. ACM TOIS 30(1).
Sakai, T. (2018). Laboratory Experiments in Information Retrieval, ch. 4.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
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
# The permutations are shared among this many threads, a chunk at a time (the kernel releases
# the GIL); the draws do not depend on them.
_THREADS = 2
_CHUNK = 256


def ranges(sums: np.ndarray, weights: np.ndarray, n_resamples: int, seed: int | None) -> np.ndarray:
    """Permutations x keys: the range of the system means under each permutation. ``sums``
    and ``weights`` (rows x models x keys): per row (a sample, or a unit) each model's sum of
    weighted values and of weights; a permutation shuffles each row's models, and a model's
    mean is its ratio of sums. Where every model of a row has the same weights (per-sample
    values, or units of the same samples and every value defined) the denominators do not
    move, and only the sums are gathered.

    Each row's permutation is drawn from ``seed``, the permutation's index and the row's index
    alone (:mod:`.shuffles`), so that the draws do not depend on the threads or on
    ``n_resamples``. No rows: every range is NaN."""
    from polars_rankmetrics.inference import shuffles

    rows, m, k = sums.shape
    key = shuffles.key(resampling.entropy(seed), _STREAM)
    bits, starts, thresholds = shuffles.plan(m)
    fixed = bool(np.all(weights == weights[:, :1, :]))
    both = sums if fixed else np.concatenate([sums, weights], axis=2)
    table = np.ascontiguousarray(np.asarray(both, dtype=np.float64).transpose(0, 2, 1))
    totals = weights[:, 0, :].sum(axis=0) if fixed else np.empty(0)
    out = np.empty((n_resamples, k))

    def run(first: int) -> None:
        part = out[first : first + _CHUNK]
        shuffles.ranges(table, totals, key, first, bits, starts, thresholds, part)

    with ThreadPoolExecutor(_THREADS) as pool:
        list(pool.map(run, range(0, n_resamples, _CHUNK)))
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
