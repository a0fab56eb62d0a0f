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
from typing import Any

import numpy as np

# Bound on the elements of one block of draws (a block of replicates x samples), about 32 MB
# of float64: the memory of a resampling does not grow with its replicates.
_BLOCK_ELEMENTS = 1 << 22
# The same bound for a block of random sign patterns, as float32 bits (32 MB): a matrix product
# over taller blocks reads them faster.
_BITS_ELEMENTS = 1 << 23


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
    # int32 where the samples fit: numpy draws it in about 0.6 of the time of int64, and
    # bincount counts it as fast.
    dtype = np.int32 if n < 2**31 else np.int64
    for start in range(0, replicates, block):
        rows = min(block, replicates - start)
        draws = rng.integers(0, n, size=(rows, n), dtype=dtype)
        counts = np.empty((rows, n))
        for row in range(rows):
            counts[row] = np.bincount(draws[row], minlength=n)
        yield counts


def weighted_sums(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per column of ``values`` (samples x keys): the sum of the weighted defined values, then
    the sum of their weights (an undefined value, NaN, weighs 0); 2 x keys in one row."""
    return np.asarray(_weighted((values, weights)).sum(axis=0))


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


def _weighted_into(pair: Pair, out: np.ndarray) -> None:
    """Write ``pair``'s weighted values and then its weights (0 where a value is undefined)
    side by side into ``out`` (samples x 2 keys), without another copy of the pair."""
    values, weights = pair
    k = values.shape[1]
    missing = np.isnan(values)
    np.copyto(out[:, k:], weights)
    out[:, k:][missing] = 0.0
    np.multiply(out[:, k:], values, out=out[:, :k])
    out[:, :k][missing] = 0.0


def _weighted(pair: Pair) -> np.ndarray:
    """Samples x 2 keys: :func:`_weighted_into` in a new array."""
    out = np.empty((pair[0].shape[0], 2 * pair[0].shape[1]))
    _weighted_into(pair, out)
    return out


def _delta(first_sums: np.ndarray, second_sums: np.ndarray) -> np.ndarray:
    """Per key, from each pair's sums of weighted values and of weights (2 keys): the
    difference of the two weighted means."""
    k = first_sums.shape[-1] // 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(
            first_sums[..., :k] / first_sums[..., k:] - second_sums[..., :k] / second_sums[..., k:]
        )


def stacked(first: Pair, second: Pair) -> np.ndarray:
    """The paired table the paired functions read, samples x 4 keys: the first model's weighted
    values and weights, then the second's (an undefined value weighs 0)."""
    k = first[0].shape[1]
    out = np.empty((first[0].shape[0], 4 * k))
    _weighted_into(first, out[:, : 2 * k])
    _weighted_into(second, out[:, 2 * k :])
    return out


def bootstrap_deltas(table: np.ndarray, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """The paired bootstrap over a :func:`stacked` table, replicates x keys: per replicate, the
    difference of the two weighted means over one resample of the shared samples (the same
    resample for every key)."""
    k = table.shape[1] // 4
    out = []
    for counts in bootstrap_counts(table.shape[0], replicates, rng):
        sums = counts @ table
        out.append(_delta(sums[:, : 2 * k], sums[:, 2 * k :]))
    return np.concatenate(out) if out else np.empty((0, k))


def _bits(rows: int, n: int, rng: np.random.Generator, out: np.ndarray) -> np.ndarray:
    """rows x n independent bits (0 or 1 with probability 1/2), from random bytes, as float32
    in ``out`` (a buffer of at least ``rows`` rows): a matrix product reads them at half the
    memory traffic of float64, and 0 and 1 are exact in any float type."""
    packed = rng.integers(0, 256, size=(rows, (n + 7) // 8), dtype=np.uint8)
    bits = out[:rows]
    np.copyto(bits, np.unpackbits(packed, axis=1, count=n))
    return bits


def sign_flip_p_values(table: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Per key of a :func:`stacked` table, Fisher's paired randomization test, two-sided: under
    the null the two models' values of a sample are exchangeable, so each sample's pair is kept
    or swapped with probability 1/2 (the same patterns for every key). Where 2^n patterns are
    no more than ``resamples`` every one is enumerated (the exact test: hits / 2^n, the
    identity among them); otherwise ``resamples`` random patterns give (hits + 1) /
    (resamples + 1), never 0.
    A hit is a pattern whose |delta| reaches the observed one (to a relative 1e-9, so that
    float noise does not split ties).

    Every sum is linear in the signs s = 2b - 1: a block of patterns is a matrix product of its
    bits b with the halved differences h, ``s h = 2 b h - sum(h)``. The random patterns' product
    runs in float32 (accumulated over the samples in float32, a relative error of about 1e-6 in
    a sum, which moves a hit only for a pattern that lands that close to the observed delta);
    the exact enumeration in float64."""
    n, k = table.shape[0], table.shape[1] // 4
    first_sums, second_sums = table[:, : 2 * k].sum(axis=0), table[:, 2 * k :].sum(axis=0)
    observed = np.abs(_delta(first_sums, second_sums))
    threshold = observed - 1e-9 * np.maximum(observed, 1e-300)
    means = (first_sums + second_sums) / 2
    mean_ab, mean_w = means[:k], means[k:]

    def hits(flips: np.ndarray) -> np.ndarray:
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
        p = hits(patterns @ _halves(table, np.float64)) / 2**n
    else:
        total = np.zeros(k)
        block = max(1, _BITS_ELEMENTS // n)
        narrow = _halves(table, np.float32)
        column_sums = (first_sums - second_sums) / 2
        buffer = np.empty((min(block, resamples), n), dtype=np.float32)
        for start in range(0, resamples, block):
            bits = _bits(min(block, resamples - start), n, rng, buffer)
            total += hits(2.0 * (bits @ narrow).astype(np.float64) - column_sums)
        p = (total + 1) / (resamples + 1)
    return np.where(np.isnan(observed), np.nan, p)


def _halves(table: np.ndarray, dtype: type[np.floating[Any]]) -> np.ndarray:
    """h, samples x 2 keys of a :func:`stacked` table: the halved differences of the two
    models' weighted values, then of their weights, in ``dtype``, a column at a time (no
    float64 copy of the table's half for a float32 h)."""
    half = table.shape[1] // 2
    out = np.empty((table.shape[0], half), dtype=dtype)
    for j in range(half):
        out[:, j] = (table[:, j] - table[:, half + j]) * 0.5
    return out


def bootstrap_p_values(deltas: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """Per key, the paired bootstrap's two-sided p-value: the replicates (replicates x keys)
    centred on the observed delta (the null's distribution under the bootstrap), the share
    whose |delta| reaches it, as (hits + 1) / (replicates + 1)."""
    reach = np.abs(deltas - observed) >= np.abs(observed) * (1 - 1e-9)
    p = (np.sum(reach, axis=0) + 1) / (deltas.shape[0] + 1)
    bad = np.isnan(observed) | np.isnan(deltas).any(axis=0)
    return np.where(bad, np.nan, p)
