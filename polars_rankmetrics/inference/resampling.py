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
        draws = rng.integers(0, n, size=(rows, n))
        draws += (np.arange(rows) * n)[:, None]
        yield np.bincount(draws.ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)


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


def paired_delta(
    first: tuple[np.ndarray, np.ndarray], second: tuple[np.ndarray, np.ndarray]
) -> float:
    """The difference of two weighted means over the same samples: (values, weights) each."""
    (v1, w1), (v0, w0) = first, second
    return float(
        weighted_means(v1[:, None], w1[:, None])[0] - weighted_means(v0[:, None], w0[:, None])[0]
    )


def bootstrap_deltas(
    first: tuple[np.ndarray, np.ndarray],
    second: tuple[np.ndarray, np.ndarray],
    replicates: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """The paired bootstrap: per replicate, the difference of the two weighted means over one
    resample of the shared samples."""
    (v1, w1), (v0, w0) = first, second
    a, b = np.nan_to_num(w1 * v1), np.nan_to_num(w0 * v0)
    out = []
    for counts in bootstrap_counts(len(v1), replicates, rng):
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append((counts @ a) / (counts @ w1) - (counts @ b) / (counts @ w0))
    return np.concatenate(out) if out else np.empty(0)


def _flipped_deltas(
    signs: np.ndarray, first: tuple[np.ndarray, np.ndarray], second: tuple[np.ndarray, np.ndarray]
) -> np.ndarray:
    """Per row of ``signs`` (+1 keeps a sample's two models, -1 swaps them): the difference of
    the weighted means. Every sum is linear in the signs, so a block is four products."""
    (v1, w1), (v0, w0) = first, second
    a, b = np.nan_to_num(w1 * v1), np.nan_to_num(w0 * v0)
    mean_ab, half_ab = (a.sum() + b.sum()) / 2, (a - b) / 2
    mean_w, half_w = (w1.sum() + w0.sum()) / 2, (w1 - w0) / 2
    flip_ab, flip_w = signs @ half_ab, signs @ half_w
    with np.errstate(invalid="ignore", divide="ignore"):
        deltas: np.ndarray = (mean_ab + flip_ab) / (mean_w + flip_w) - (mean_ab - flip_ab) / (
            mean_w - flip_w
        )
    return deltas


def sign_flip_p_value(
    first: tuple[np.ndarray, np.ndarray],
    second: tuple[np.ndarray, np.ndarray],
    resamples: int,
    rng: np.random.Generator,
) -> float:
    """Fisher's paired randomization test, two-sided: under the null the two models' values of
    a sample are exchangeable, so each sample's pair is kept or swapped with probability 1/2.
    Where 2^n sign patterns are no more than ``resamples`` every one is enumerated (the exact
    test: hits / 2^n, the identity among them); otherwise ``resamples`` random patterns give
    (hits + 1) / (resamples + 1), never 0. A hit is a pattern whose |delta| reaches the
    observed one (to a relative 1e-9, so that float noise does not split ties)."""
    n = len(first[0])
    observed = abs(paired_delta(first, second))
    if math.isnan(observed):
        return math.nan
    tolerance = 1e-9 * max(observed, 1e-300)
    if n == 0:
        return 1.0
    if 2**n <= resamples:
        patterns = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1) * 2.0 - 1.0
        deltas = _flipped_deltas(patterns, first, second)
        return float(np.sum(np.abs(deltas) >= observed - tolerance) / 2**n)
    hits, block = 0, max(1, _BLOCK_ELEMENTS // n)
    for start in range(0, resamples, block):
        rows = min(block, resamples - start)
        signs = rng.integers(0, 2, size=(rows, n), dtype=np.int8) * 2.0 - 1.0
        hits += int(np.sum(np.abs(_flipped_deltas(signs, first, second)) >= observed - tolerance))
    return (hits + 1) / (resamples + 1)


def bootstrap_p_value(deltas: np.ndarray, observed: float) -> float:
    """The paired bootstrap's two-sided p-value: the replicates centred on the observed delta
    (the null's distribution under the bootstrap), the share whose |delta| reaches it, as
    (hits + 1) / (replicates + 1)."""
    if math.isnan(observed) or np.isnan(deltas).any():
        return math.nan
    hits = int(np.sum(np.abs(deltas - observed) >= abs(observed) * (1 - 1e-9)))
    return (hits + 1) / (len(deltas) + 1)
