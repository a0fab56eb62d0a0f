"""Resampling of per-sample values: bootstrap intervals of weighted means, paired tests.

Everything here reads one per-sample table in memory (a row per sample, never per label), so it
costs the same whether the table came from a DataFrame or from 100M rows evaluated in buckets.
A metric's value over a set of samples is the weighted mean ``sum(w v) / sum(w)`` of its
per-sample values ``v`` with their weights ``w`` in the mean (the sample weight, times the
positives for lwlrap; 0 where the value is undefined), so a resample of samples drawn with
repetition counts ``c`` has the value ``sum(c w v) / sum(c w)``.

Randomness comes from ``numpy.random.Generator`` seeded by :func:`generator`, and the samples
are in a canonical order (sorted by their ids) before any draw: the same seed gives the same
numbers for any row order, engine or bucket split.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from statistics import NormalDist

import numpy as np

# Bound on the elements of one block of draws (a block of replicates x samples), about 32 MB
# of float64: the memory of a resampling does not grow with its replicates.
_BLOCK_ELEMENTS = 1 << 22


def entropy(seed: int | None) -> int:
    """``seed``, or fresh entropy from the operating system for None (draws that differ from
    run to run)."""
    if seed is None:
        return int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer or None, not {seed!r}")
    return seed


def generator(seed: int, *stream: int) -> np.random.Generator:
    """The generator of one stream of draws (a ``by`` group, a compared model, a metric) under
    ``seed`` (see :func:`entropy`)."""
    return np.random.default_rng(np.random.SeedSequence([seed, *stream]))


def bootstrap_counts(n: int, replicates: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Blocks of resampling counts: per replicate (row), how many times each of ``n`` samples
    was drawn in ``n`` draws with repetition (each row sums to ``n``)."""
    block = max(1, _BLOCK_ELEMENTS // max(n, 1))
    for start in range(0, replicates, block):
        rows = min(block, replicates - start)
        draws = rng.integers(0, n, size=(rows, n), dtype=np.int32)
        counts = np.empty((rows, n))
        for row in range(rows):
            counts[row] = np.bincount(draws[row], minlength=n)
        yield counts


def weighted_means(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per column of ``values`` (samples x keys): the weighted mean; NaN where no weight."""
    totals = weights.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(totals > 0, (weights * values).sum(axis=0) / totals, np.nan)


def bootstrap_means(
    values: np.ndarray, weights: np.ndarray, replicates: int, rng: np.random.Generator
) -> np.ndarray:
    """Replicates x keys: each key's weighted mean over a resample of the samples (rows). A
    value that is undefined (NaN) has weight 0 and adds nothing."""
    weighted = np.nan_to_num(weights * values)
    out = []
    for counts in bootstrap_counts(values.shape[0], replicates, rng):
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append((counts @ weighted) / (counts @ weights))
    return np.concatenate(out) if out else np.empty((0, values.shape[1]))


def percentile_interval(replicates: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Per column: the (1 - level) / 2 and (1 + level) / 2 quantiles of the replicates (linear
    interpolation); NaN where a replicate is NaN."""
    alpha = (1 - level) / 2
    lo = np.quantile(replicates, alpha, axis=0)
    hi = np.quantile(replicates, 1 - alpha, axis=0)
    bad = np.isnan(replicates).any(axis=0)
    return np.where(bad, np.nan, lo), np.where(bad, np.nan, hi)


def bca_interval(
    replicates: np.ndarray,
    estimate: np.ndarray,
    jackknife: np.ndarray,
    level: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Per column: Efron's bias-corrected and accelerated interval. The bias correction z0 is
    the normal quantile of the share of replicates below the estimate (ties counted half); the
    acceleration comes from the leave-one-sample-out estimates ``jackknife`` (samples x keys).
    Where every replicate equals the estimate the interval is that point."""
    normal = NormalDist()
    alpha = (1 - level) / 2
    lows, highs = [], []
    for j in range(replicates.shape[1]):
        column, point, loo = replicates[:, j], estimate[j], jackknife[:, j]
        if np.isnan(column).any() or math.isnan(point):
            lows.append(math.nan)
            highs.append(math.nan)
            continue
        below = (np.sum(column < point) + 0.5 * np.sum(column == point)) / len(column)
        if below <= 0 or below >= 1:
            lows.append(float(np.min(column)) if below >= 1 else point)
            highs.append(point if below >= 1 else float(np.max(column)))
            continue
        z0 = normal.inv_cdf(float(below))
        loo = loo[~np.isnan(loo)]
        spread = loo.mean() - loo
        denominator = 6 * float(np.sum(spread**2)) ** 1.5
        accel = float(np.sum(spread**3)) / denominator if denominator > 0 else 0.0
        bounds = []
        for z in (normal.inv_cdf(alpha), normal.inv_cdf(1 - alpha)):
            shifted = z0 + (z0 + z) / (1 - accel * (z0 + z))
            bounds.append(float(np.quantile(column, normal.cdf(shifted))))
        lows.append(bounds[0])
        highs.append(bounds[1])
    return np.array(lows), np.array(highs)


def jackknife_means(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Samples x keys: each key's weighted mean without that sample (NaN where none is left)."""
    weighted = np.nan_to_num(weights * values)
    total, total_w = weighted.sum(axis=0), weights.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        left = total_w - weights
        return np.where(left > 0, (total - weighted) / left, np.nan)


Pair = tuple[np.ndarray, np.ndarray]  # (values, weights), samples x keys, NaN values weigh 0


def _weighted(pair: Pair) -> tuple[np.ndarray, np.ndarray]:
    values, weights = pair
    weights = np.where(np.isnan(values), 0.0, weights)
    return np.nan_to_num(weights * values), weights


def paired_deltas(first: Pair, second: Pair) -> np.ndarray:
    """Per key: the difference of the two weighted means over the same samples."""
    a, w1 = _weighted(first)
    b, w0 = _weighted(second)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(a.sum(axis=0) / w1.sum(axis=0) - b.sum(axis=0) / w0.sum(axis=0))


def bootstrap_deltas(
    first: Pair, second: Pair, replicates: int, rng: np.random.Generator
) -> np.ndarray:
    """The paired bootstrap, replicates x keys: per replicate, the difference of the two
    weighted means over one resample of the shared samples (the same resample for every key)."""
    k = first[0].shape[1]
    stacked = np.empty((first[0].shape[0], 4 * k))
    stacked[:, :k], stacked[:, k : 2 * k] = _weighted(first)
    stacked[:, 2 * k : 3 * k], stacked[:, 3 * k :] = _weighted(second)
    out = []
    for counts in bootstrap_counts(stacked.shape[0], replicates, rng):
        sums = counts @ stacked
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append(sums[:, :k] / sums[:, k : 2 * k] - sums[:, 2 * k : 3 * k] / sums[:, 3 * k :])
    return np.concatenate(out) if out else np.empty((0, k))


def _signs(rows: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """rows x n independent signs (+1 or -1 with probability 1/2), from random bytes."""
    packed = rng.integers(0, 256, size=(rows, (n + 7) // 8), dtype=np.uint8)
    bits = np.unpackbits(packed, axis=1, count=n)
    return bits.astype(np.float64) * 2.0 - 1.0


def sign_flip_p_values(
    first: Pair, second: Pair, resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """Per key, Fisher's paired randomization test, two-sided: under the null the two models'
    values of a sample are exchangeable, so each sample's pair is kept or swapped with
    probability 1/2 (the same patterns for every key). Where 2^n patterns are no more than
    ``resamples`` every one is enumerated (the exact test: hits / 2^n, the identity among
    them); otherwise ``resamples`` random patterns give (hits + 1) / (resamples + 1), never 0.
    A hit is a pattern whose |delta| reaches the observed one (to a relative 1e-9, so that
    float noise does not split ties). Every sum is linear in the signs: a block of patterns
    is a few matrix products."""
    a, w1 = _weighted(first)
    b, w0 = _weighted(second)
    n, k = a.shape
    observed = np.abs(paired_deltas(first, second))
    threshold = observed - 1e-9 * np.maximum(observed, 1e-300)
    mean_ab, mean_w = (a.sum(axis=0) + b.sum(axis=0)) / 2, (w1.sum(axis=0) + w0.sum(axis=0)) / 2
    halves = np.hstack([(a - b) / 2, (w1 - w0) / 2])

    def hits(signs: np.ndarray) -> np.ndarray:
        flips = signs @ halves
        flip_ab, flip_w = flips[:, :k], flips[:, k:]
        with np.errstate(invalid="ignore", divide="ignore"):
            deltas = (mean_ab + flip_ab) / (mean_w + flip_w) - (mean_ab - flip_ab) / (
                mean_w - flip_w
            )
        return np.asarray(np.sum(np.abs(deltas) >= threshold, axis=0))

    if n == 0:
        return np.ones(k)
    if 2**n <= resamples:
        patterns = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1) * 2.0 - 1.0
        p = hits(patterns) / 2**n
    else:
        total = np.zeros(k)
        block = max(1, _BLOCK_ELEMENTS // n)
        for start in range(0, resamples, block):
            total += hits(_signs(min(block, resamples - start), n, rng))
        p = (total + 1) / (resamples + 1)
    return np.where(np.isnan(observed), np.nan, p)


def bootstrap_p_values(deltas: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """Per key, the paired bootstrap's two-sided p-value: the replicates (replicates x keys)
    centred on the observed delta (the null's distribution under the bootstrap), the share
    whose |delta| reaches it, as (hits + 1) / (replicates + 1)."""
    reach = np.abs(deltas - observed) >= np.abs(observed) * (1 - 1e-9)
    p = (np.sum(reach, axis=0) + 1) / (deltas.shape[0] + 1)
    bad = np.isnan(observed) | np.isnan(deltas).any(axis=0)
    return np.where(bad, np.nan, p)
