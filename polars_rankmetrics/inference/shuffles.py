"""The permutations of the randomized Tukey HSD (:mod:`.randomized_tukey`), drawn and summed
in compiled code (numba): per permutation, the range of the system means, with no array of
draws or of permuted values in between.

**The generator.** Counter-based, so that a row's permutation is a function of the key, the
permutation's index ``p`` and the row's index ``i`` alone (not of the threads, the blocks or
``n_resamples``). With ``mix`` SplitMix64's output function and ``G = 0x9E3779B97F4A7C15``:

- the key: the first 64-bit word of numpy's ``SeedSequence([seed, 52])``;
- the row's state ``mix(key + c G)`` (mod 2^64) for the counter ``c = p * rows + i``, and its
  words ``mix(state + j G)``, ``j = 1, 2, ...``: a SplitMix64 stream of its own;
- its permutation: the inside-out Fisher-Yates shuffle, position ``t = 1..m-1`` taking a draw
  ``d`` uniform on ``0..t``, ``order[t] = order[d]; order[d] = t`` (from ``order[0] = 0``);
- the draws, a batch from each word (Lemire's batched ranged integers): the word's top
  ``B = 64 - bit_length(m)`` bits ``u``, then for each range ``r`` of the batch ``x = u r``,
  the draw ``x div 2^B`` and ``u = x mod 2^B``. A batch's ranges multiply to ``R`` at most
  ``2^(B - 16)`` (one range at least); it is redrawn from the next word while the last ``u`` is
  below ``2^B mod R``, which makes its draws exactly uniform and independent.

Permutation ``p`` gives system ``s`` the value of model ``order[s]`` in each row. The rows are
read a group of permutations at a time, so that a row is read once for the group.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX = (np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))
# Permutations summed in one pass over the rows: their sums stay in the core's cache.
GROUP = 16
# A batch's ranges multiply to at most 2^(B - _SLACK): a redraw is that rare.
_SLACK = 16


def key(entropy: int, stream: int) -> np.uint64:
    """The generator's key under ``entropy`` (a seed) for ``stream``."""
    return np.uint64(np.random.SeedSequence([entropy, stream]).generate_state(1, np.uint64)[0])


def plan(m: int) -> tuple[int, np.ndarray, np.ndarray]:
    """The draws of a permutation of ``m``: the bits ``B`` of a word, the first position of
    each batch (and ``m`` last), and each batch's redraw threshold ``2^B mod R``."""
    bits = 64 - m.bit_length()
    starts, thresholds, product = [1], [], 1
    for t in range(1, m):
        if product > 1 and product * (t + 1) > 2 ** (bits - _SLACK):
            starts.append(t)
            thresholds.append(2**bits % product)
            product = 1
        product *= t + 1
    starts.append(m)
    thresholds.append(2**bits % product)
    return bits, np.array(starts, dtype=np.int64), np.array(thresholds, dtype=np.uint64)


@njit(inline="always")
def _mix(z: np.uint64) -> np.uint64:
    z = (z ^ (z >> np.uint64(30))) * _MIX[0]
    z = (z ^ (z >> np.uint64(27))) * _MIX[1]
    return z ^ (z >> np.uint64(31))


@njit(nogil=True, cache=True)
def shuffle(
    order: np.ndarray,
    draws: np.ndarray,
    key: np.uint64,
    counter: np.uint64,
    bits: int,
    starts: np.ndarray,
    thresholds: np.ndarray,
) -> None:
    """``order``: the permutation of row ``counter`` (see the module); ``draws`` is scratch
    of the same size."""
    state = _mix(key + counter * _GAMMA)
    shift, width = np.uint64(64 - bits), np.uint64(bits)
    mask = (np.uint64(1) << width) - np.uint64(1)
    order[0] = 0
    for g in range(thresholds.size):
        while True:
            state += _GAMMA
            u = _mix(state) >> shift
            for t in range(starts[g], starts[g + 1]):
                x = u * np.uint64(t + 1)
                draws[t] = np.int64(x >> width)
                u = x & mask
            if u >= thresholds[g]:
                break
        for t in range(starts[g], starts[g + 1]):
            d = draws[t]
            order[t] = order[d]
            order[d] = t


@njit(nogil=True, cache=True, error_model="numpy")
def ranges(
    values: np.ndarray,
    totals: np.ndarray,
    key: np.uint64,
    first: int,
    bits: int,
    starts: np.ndarray,
    thresholds: np.ndarray,
    out: np.ndarray,
) -> None:
    """``out`` (permutations ``first..first + len(out) - 1`` x keys): the range of the system
    means under each permutation. ``values`` (rows x width x models): per row, each model's
    sums of weighted values (the first ``keys``), then, unless ``totals`` (per key, the
    denominator every system shares) is given, its sums of weights. A mean that is not defined
    (0 / 0) takes no part in the range; none defined, NaN."""
    rows, width, m = values.shape
    k = out.shape[1]
    fixed = totals.size > 0
    sums = np.empty((GROUP, width, m))
    order = np.empty(m, dtype=np.int64)
    draws = np.empty(m, dtype=np.int64)
    for start in range(0, out.shape[0], GROUP):
        count = min(GROUP, out.shape[0] - start)
        sums[:] = 0.0
        for i in range(rows):
            for b in range(count):
                counter = np.uint64(first + start + b) * np.uint64(rows) + np.uint64(i)
                shuffle(order, draws, key, counter, bits, starts, thresholds)
                for q in range(width):
                    for s in range(m):
                        sums[b, q, s] += values[i, q, order[s]]
        for b in range(count):
            for q in range(k):
                low, high = np.inf, -np.inf
                for s in range(m):
                    mean = sums[b, q, s] / (totals[q] if fixed else sums[b, k + q, s])
                    low = min(low, mean) if mean == mean else low
                    high = max(high, mean) if mean == mean else high
                out[start + b, q] = high - low if high >= low else np.nan
