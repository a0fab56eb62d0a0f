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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
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
    # int32 where the samples fit: numpy draws the narrower type faster than int64, and
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
    missing = np.isnan(values)
    defined = np.where(missing, 0.0, weights)
    return np.concatenate([(defined * np.where(missing, 0.0, values)).sum(axis=0),
                           defined.sum(axis=0)])  # fmt: skip


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


@dataclass(frozen=True)
class Paired:
    """The table the paired functions read, a row per shared sample: the first model's
    weighted values (``k`` columns, one per key), the second's, then the distinct weight
    columns. ``columns[i, j]`` is the weight column of model ``i``'s key ``j`` (an undefined value
    weighs 0): keys and models whose weights are equal share one, as they usually all do (the
    same sample weights, every value defined), so that the products read ``2k + 1`` columns
    rather than ``4k``."""

    table: np.ndarray
    columns: np.ndarray

    @property
    def k(self) -> int:
        return int(self.columns.shape[1])

    def model_sums(self, sums: np.ndarray, model: int) -> np.ndarray:
        """From sums over the table's columns (in the last axis), one model's sums of weighted
        values and then of weights, 2 keys."""
        k = self.k
        return np.concatenate(
            [sums[..., model * k : (model + 1) * k], sums[..., 2 * k + self.columns[model]]],
            axis=-1,
        )

    def delta(self, sums: np.ndarray) -> np.ndarray:
        """Per key, from sums over the table's columns: the first model's weighted mean minus
        the second's."""
        first, second = self.model_sums(sums, 0), self.model_sums(sums, 1)
        k = self.k
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(first[..., :k] / first[..., k:] - second[..., :k] / second[..., k:])


def paired_table(
    n: int, k: int, column: Callable[[int, int], tuple[np.ndarray, np.ndarray]]
) -> Paired:
    """The :class:`Paired` table of ``n`` samples and ``k`` keys, where ``column(model, key)``
    gives one model's per-sample values of one key (NaN where undefined) and their weights. The
    distinct weight columns are found first (each compared with those found), then the table is
    filled a column at a time: no other copy of it is held."""
    weights: list[np.ndarray] = []
    columns = np.empty((2, k), dtype=np.intp)
    for model in range(2):
        for key in range(k):
            values, weight = column(model, key)
            weight = np.where(np.isnan(values), 0.0, weight)
            found = [c for c, seen in enumerate(weights) if np.array_equal(seen, weight)]
            if not found:
                weights.append(weight)
            columns[model, key] = found[0] if found else len(weights) - 1
    table = np.empty((n, 2 * k + len(weights)))
    for model in range(2):
        for key in range(k):
            values = column(model, key)[0]
            weight = weights[columns[model, key]]
            np.multiply(
                weight, np.where(np.isnan(values), 0.0, values), out=table[:, model * k + key]
            )
    for c, weight in enumerate(weights):
        table[:, 2 * k + c] = weight
    return Paired(table, columns)


def bootstrap_deltas(paired: Paired, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """The paired bootstrap, replicates x keys: per replicate, the difference of the two
    weighted means over one resample of the shared samples (the same resample for every
    key)."""
    out = []
    for counts in bootstrap_counts(paired.table.shape[0], replicates, rng):
        out.append(paired.delta(counts @ paired.table))
    return np.concatenate(out) if out else np.empty((0, paired.k))


def _bits(rows: int, n: int, rng: np.random.Generator, out: np.ndarray) -> np.ndarray:
    """rows x n independent bits (0 or 1 with probability 1/2), from random bytes, as float32
    in ``out`` (a buffer of at least ``rows`` rows): a matrix product reads them at half the
    memory traffic of float64, and 0 and 1 are exact in any float type."""
    packed = rng.integers(0, 256, size=(rows, (n + 7) // 8), dtype=np.uint8)
    bits = out[:rows]
    np.copyto(bits, np.unpackbits(packed, axis=1, count=n))
    return bits


def sign_flip_p_values(paired: Paired, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Per key of a :class:`Paired` table, Fisher's paired randomization test, two-sided: under
    the null the two models' values of a sample are exchangeable, so each sample's pair is kept
    or swapped with probability 1/2 (the same patterns for every key). Where 2^n patterns are
    no more than ``resamples`` every one is enumerated (the exact test: hits / 2^n, the
    identity among them); otherwise ``resamples`` random patterns give (hits + 1) /
    (resamples + 1), never 0.
    A hit is a pattern whose |delta| reaches the observed one (to a relative 1e-9, so that
    float noise does not split ties).

    Every sum is linear in the signs s = 2b - 1: a block of patterns is a matrix product of its
    bits b with the halved differences h of the two models' weighted values, and of their
    weights where these differ (a key whose two models share a weight column has none),
    ``s h = 2 b h - sum(h)``. The random patterns' product runs in float32 (accumulated over the
    samples in float32, a relative error of about 1e-6 in a sum, which moves a hit only for a
    pattern that lands that close to the observed delta); the exact enumeration in float64."""
    n, k = paired.table.shape[0], paired.k
    test = _FlipTest(paired)
    if n == 0:
        return np.ones(k)
    if 2**n <= resamples:
        patterns = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1) * 2.0 - 1.0
        p = test.hits(patterns @ test.halves(np.float64)) / 2**n
    else:
        total = np.zeros(k)
        block = max(1, _BITS_ELEMENTS // n)
        narrow = test.halves(np.float32)
        buffer = np.empty((min(block, resamples), n), dtype=np.float32)
        for start in range(0, resamples, block):
            bits = _bits(min(block, resamples - start), n, rng, buffer)
            total += test.hits(2.0 * (bits @ narrow).astype(np.float64) - test.column_sums)
        p = (total + 1) / (resamples + 1)
    return np.where(np.isnan(test.observed), np.nan, p)


def pattern_p_values(
    paired: Paired, flipped: Callable[[np.ndarray], Iterator[np.ndarray]], patterns: int
) -> np.ndarray:
    """Per key of a :class:`Paired` table, the paired randomization test of
    :func:`sign_flip_p_values` over ``patterns`` given patterns, each swapping the two models'
    values of some rows: ``flipped(h)`` yields, a block of patterns at a time, the product of
    the patterns' flips (patterns x rows: 1 where a pattern swaps the row) with ``h`` (rows x
    columns, float64). Flipping row i turns ``sum(h)`` into ``sum(h) - 2 h_i``. p = (hits +
    1) / (patterns + 1)."""
    test = _FlipTest(paired)
    total = np.zeros(paired.k)
    for products in flipped(test.halves(np.float64)):
        total += test.hits(test.column_sums - 2.0 * products)
    p = (total + 1) / (patterns + 1)
    return np.where(np.isnan(test.observed), np.nan, p)


class _FlipTest:
    """What a sign-flip test of a :class:`Paired` table reads: the observed |delta| per key,
    the halved differences h of the two models' columns (:func:`_halves`) and their sums, and
    the hits of a block of patterns given ``s h`` (patterns x columns of h)."""

    def __init__(self, paired: Paired) -> None:
        k = paired.k
        self.paired = paired
        sums = paired.table.sum(axis=0)
        first_sums, second_sums = paired.model_sums(sums, 0), paired.model_sums(sums, 1)
        self.observed = np.abs(paired.delta(sums))
        self.threshold = self.observed - 1e-9 * np.maximum(self.observed, 1e-300)
        means = (first_sums + second_sums) / 2
        self.mean_ab, self.mean_w = means[:k], means[k:]
        # The weight columns whose halved difference is not 0, and where each key reads its own.
        self.differing = sorted({(int(a), int(b)) for a, b in paired.columns.T if a != b})
        self.reads = [
            self.differing.index((int(a), int(b))) if a != b else -1 for a, b in paired.columns.T
        ]
        self.column_sums = np.array(
            [(sums[a] - sums[b]) / 2 for a, b in _pairs(paired, self.differing)]
        )

    def halves(self, dtype: type[np.floating[Any]]) -> np.ndarray:
        return _halves(self.paired, self.differing, dtype)

    def hits(self, flips: np.ndarray) -> np.ndarray:
        k = self.paired.k
        flip_ab = flips[:, :k]
        flip_w = np.zeros_like(flip_ab)
        for j, at in enumerate(self.reads):
            if at >= 0:
                flip_w[:, j] = flips[:, k + at]
        mean_ab, mean_w = self.mean_ab, self.mean_w
        with np.errstate(invalid="ignore", divide="ignore"):
            deltas = (mean_ab + flip_ab) / (mean_w + flip_w) - (mean_ab - flip_ab) / (
                mean_w - flip_w
            )
        return np.asarray(np.sum(np.abs(deltas) >= self.threshold, axis=0))


def _halves(
    paired: Paired, differing: list[tuple[int, int]], dtype: type[np.floating[Any]]
) -> np.ndarray:
    """h, samples x (keys + differing weight columns): the halved differences of the two
    models' weighted values, then of their ``differing`` weight columns, in ``dtype``, a column
    at a time (no float64 copy for a float32 h)."""
    pairs = _pairs(paired, differing)
    out = np.empty((paired.table.shape[0], len(pairs)), dtype=dtype)
    for c, (a, b) in enumerate(pairs):
        table = paired.table
        out[:, c] = (table[:, a] - table[:, b]) * 0.5
    return out


def _pairs(paired: Paired, differing: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The columns of the table whose halved differences h holds: each key's two weighted
    values, then each ``differing`` pair of weight columns."""
    k = paired.k
    return [(j, k + j) for j in range(k)] + [(2 * k + a, 2 * k + b) for a, b in differing]


def bootstrap_p_values(deltas: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """Per key, the paired bootstrap's two-sided p-value: the replicates (replicates x keys)
    centred on the observed delta (the null's distribution under the bootstrap), the share
    whose |delta| reaches it, as (hits + 1) / (replicates + 1)."""
    reach = np.abs(deltas - observed) >= np.abs(observed) * (1 - 1e-9)
    p = (np.sum(reach, axis=0) + 1) / (deltas.shape[0] + 1)
    bad = np.isnan(observed) | np.isnan(deltas).any(axis=0)
    return np.where(bad, np.nan, p)
