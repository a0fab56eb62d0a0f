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

The permutations are drawn a block at a time, each row's by Fisher-Yates, and each block's
system sums formed by one sparse product a step of rows at a time, the blocks shared between
two threads: the memory does not grow with ``n_resamples`` or the samples, and the draws do not
depend on the threads.

References
----------
Carterette, B. (2012). Multiple testing in statistical analysis of systems-based information
retrieval experiments. ACM TOIS 30(1).
Sakai, T. (2018). Laboratory Experiments in Information Retrieval, ch. 4.
"""

from __future__ import annotations

import math
import warnings
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
# Bound on the elements of one block of permutations (permutations x rows x models): the
# memory does not grow with ``n_resamples``, and a block's draws depend only on its index.
_BLOCK_ELEMENTS = 1 << 22
# The blocks are shared among this many threads (numpy and scipy release the GIL in the
# draws, the gathers and the sparse product); the draws do not depend on it.
_THREADS = 2


def _shuffled(m: int, columns: int, rng: np.random.Generator) -> np.ndarray:
    """``m`` x ``columns``: each column an independent uniform permutation of ``0..m-1``, by
    Fisher-Yates run on all the columns at once (O(m) per column)."""
    dtype = np.int8 if m <= 127 else np.int16 if m <= 32767 else np.int32
    table = np.empty((m, columns), dtype=dtype)
    table[:] = np.arange(m, dtype=dtype)[:, None]
    flat = table.reshape(-1)
    at = np.arange(columns, dtype=np.intp)
    for i in range(m - 1, 0, -1):
        # Swap each column's entry i with its entry j, j uniform on 0..i.
        swap = rng.integers(0, i + 1, size=columns, dtype=dtype).astype(np.intp)
        swap *= columns
        swap += at
        other = flat[swap]
        flat[swap] = table[i]
        table[i] = other
    return table


def _permuted_sums(both: np.ndarray, m: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` x ``m`` x width: each model's sums over the rows of ``both`` ((rows x m) x
    width, a row's models in turn) after each of ``count`` permutations of every row's models.
    The permutations are a sparse matrix of ones, (permutations x models) x (rows x models),
    one entry per permuted value, so that scipy's product gathers and adds them in one pass."""
    from scipy import sparse  # type: ignore[import-untyped]

    rows, width = both.shape[0] // m, both.shape[1]
    nnz = count * rows * m
    index = np.int32 if nnz < 2**31 else np.int64
    table = _shuffled(m, count * rows, rng).reshape(m, count, rows)
    # Value (row, l) goes to model table[l, b, row] of permutation b: row count * m + model.
    target = np.empty((rows, m, count), dtype=index)
    offsets = (np.arange(count, dtype=index) * m)[None, None, :]
    np.add(table.transpose(2, 0, 1), offsets, out=target, casting="unsafe")
    spread = sparse.csc_matrix(
        (np.ones(nnz), target.reshape(-1), np.arange(0, nnz + 1, count, dtype=index)),
        shape=(count * m, rows * m),
    )
    return np.asarray(spread @ both).reshape(count, m, width)


def ranges(sums: np.ndarray, weights: np.ndarray, n_resamples: int, seed: int | None) -> np.ndarray:
    """Permutations x keys: the range of the system means under each permutation. ``sums``
    and ``weights`` (rows x models x keys): per row (a sample, or a unit) each model's sum of
    weighted values and of weights; a permutation shuffles each row's models, and a model's
    mean is its ratio of sums. Where every model of a row has the same weights (per-sample
    values, or units of the same samples and every value defined) the denominators do not
    move, and only the sums are gathered.

    The permutations come in blocks of a fixed size, each block from its own stream under
    ``seed`` (by the block's index) and its rows in steps of a fixed size, so that the draws
    depend on the seed and the shape only, not on the threads. No rows: every range is NaN."""
    rows, m, k = sums.shape
    entropy = resampling.entropy(seed)
    fixed = bool(np.all(weights == weights[:, :1, :]))
    both = sums if fixed else np.concatenate([sums, weights], axis=2)
    flat = np.ascontiguousarray(both, dtype=np.float64).reshape(rows * m, -1)
    totals = weights[:, 0, :].sum(axis=0) if fixed else None
    step = max(1, min(rows, _BLOCK_ELEMENTS // max(m, 1)))
    block = max(1, _BLOCK_ELEMENTS // max(step * m, 1))
    out = np.empty((n_resamples, k))

    def run(start: int) -> None:
        count = min(block, n_resamples - start)
        rng = resampling.generator(entropy, _STREAM, start // block)
        summed = np.zeros((count, m, flat.shape[1]))
        for first in range(0, rows, step):
            part = flat[first * m : (first + step) * m]
            summed += _permuted_sums(part, m, count, rng)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = summed / totals if totals is not None else summed[..., :k] / summed[..., k:]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN: no defined mean
            out[start : start + count] = np.nanmax(means, axis=1) - np.nanmin(means, axis=1)

    with ThreadPoolExecutor(_THREADS) as pool:
        list(pool.map(run, range(0, n_resamples, block)))
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
