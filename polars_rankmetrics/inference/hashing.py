"""Resampling as a function of the samples' ids: the same draws on every engine, for any row
order and any split of the data into partitions (:mod:`polars_rankmetrics.states`).

Four documented functions, in integer arithmetic that numpy and portable SQL compute alike
(every product below 2^62, so a 64-bit integer holds it; no bit operations, no overflow):

**The sample hash.** ``h(id)``: the md5 of the id's text (UTF-8; an integer in decimal), whose
first two groups of 8 hex digits, read as integers ``a`` and ``b``, give
``h = (a div 2) * 2^31 + (b div 2)``, a 62-bit integer. The sample's **unit** is
``h mod UNITS``: the samples fall into ``UNITS`` (4,096) resampling units at random, and a
resample draws units, not samples. With fewer samples than units most units hold one sample; with
more, a unit's sum is a sum of a random subset of samples, as independent of the others' as the
samples are, so the bootstrap of the unit sums estimates the variance of the mean as the
bootstrap of the samples does (to a factor ``1 - 1/UNITS``), and flipping whole units is a
subgroup of the sign flips of a paired permutation test, which keeps that test exact.

**The fingerprint of a set** (a state's label set, :func:`set_fingerprint`): from the hashes
``h = hi * 2^31 + lo`` of its distinct members, ``(sum(hi) mod P) * 2^31 + (sum(lo) mod P)``
with the prime ``P = 2^31 - 1``: the same whatever the members' order, a sum that Polars and
SQL compute alike.

**The mixer.** Modulo the prime ``P = 2^31 - 1``, a step of ``z`` with an input ``x`` and a
multiplier ``m`` is ``y = (z + x + 1) * m mod P``, then ``(y * y + 12345) mod P * 48271 mod P``;
the key of an index ``i`` in a stream is three steps from 0: with ``seed mod P`` (multiplier
16807), the stream (69621), then ``i`` (39373). The value for a unit ``u`` and an index ``r`` is
two steps from ``key(u)``: with ``key(r)`` of the index stream (multiplier 48271), then with 0
(16807).

**The draws.** A replicate ``r`` of the Poisson bootstrap counts unit ``u`` ``c`` times, ``c``
the number of :data:`POISSON_THRESHOLDS` at or below ``z = value(u, r)`` in stream 0 (units) and
1 (replicates): Poisson(1) by its inverse distribution function, the thresholds being
``round(F(k) * P)``. Pattern ``p`` of a sign-flip test flips unit ``u`` where bit ``u mod 30``
of ``value(u div 30, p)`` (streams 2 and 3) is 1: one value gives the signs of 30 units.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator

import numpy as np
import polars as pl

P = 2**31 - 1
UNITS = 4096
# The sign bits taken from one value: below 2^30, every bit of a value mod P is fair to 2^-31.
SIGN_BITS = 30
STEP_ADD = 12345
STEP_MULTIPLIER = 48271
KEY_MULTIPLIERS = (16807, 69621, 39373)
VALUE_MULTIPLIERS = (48271, 16807)
# Streams: the units and the replicates of the bootstrap, the unit words and the patterns of
# the sign flips.
BOOTSTRAP_UNITS, BOOTSTRAP_REPLICATES, SIGN_WORDS, SIGN_PATTERNS = range(4)
# Bound on the values mixed at once (a block of rows x units), about 16 MB of int64 each of the
# mixer's temporaries: the memory of the draws does not grow with the replicates.
_BLOCK_ELEMENTS = 1 << 21


def _poisson_thresholds() -> tuple[int, ...]:
    thresholds: list[int] = []
    term, total, k = math.exp(-1.0), 0.0, 0
    while True:
        total += term
        threshold = round(total * P)
        if threshold >= P:
            return tuple(thresholds)
        thresholds.append(threshold)
        k += 1
        term /= k


POISSON_THRESHOLDS = _poisson_thresholds()

_TEXT_TYPES = (pl.String, pl.Categorical, pl.Enum)


def id_text(ids: pl.Series, column: str) -> pl.Series:
    """The text whose md5 is a sample's hash: an integer id in decimal, a string as it is; any
    other type is refused (the text of a float or a date differs between engines)."""
    dtype = ids.dtype
    if dtype.is_integer() or isinstance(dtype, _TEXT_TYPES):
        return ids.cast(pl.String)
    example = f", e.g. {ids[0]!r}" if len(ids) else ""
    raise ValueError(
        f"column {column!r} ({dtype}) identifies the samples of a state (and of "
        "bootstrap='poisson') by the md5 of its text: give integer or string ids (for example "
        f"{column} cast to String){example}"
    )


def sample_hashes(ids: pl.Series, column: str) -> pl.Series:
    """Each id's 62-bit hash ``h`` (Int64, see the module), computed once per distinct id."""
    text = id_text(ids, column)
    distinct = text.unique()
    hashes = [_hash(value) for value in distinct.to_list()]
    table = pl.DataFrame({"id": distinct, "h": pl.Series(hashes, dtype=pl.Int64)})
    found = pl.DataFrame({"id": text}).join(table, on="id", how="left", maintain_order="left")
    return found["h"].rename(ids.name)


def _hash(text: str | None) -> int:
    if text is None:
        raise ValueError("a sample id is null")
    digest = hashlib.md5(text.encode(), usedforsecurity=False).digest()
    a, b = int.from_bytes(digest[:4]), int.from_bytes(digest[4:8])
    return (a >> 1) * 2**31 + (b >> 1)


def label_hashes(labels: pl.Series) -> pl.Series:
    """Each label's hash: the sample hash of its text (:func:`sample_hashes`), an integer label
    in decimal and a string as it is, as the SQL state computes it; a label of another type
    (a float, a date) by the text Polars writes, which a SQL engine may write otherwise."""
    return sample_hashes(labels.cast(pl.String), labels.name)


def set_fingerprint(hashes: pl.Expr) -> pl.Expr:
    """The fingerprint of a set, as an aggregation over the 62-bit hashes of its distinct
    members: with ``h = hi * 2^31 + lo`` (``hi = a div 2`` and ``lo = b div 2`` of the sample
    hash), ``(sum(hi) mod P) * 2^31 + (sum(lo) mod P)``, a 62-bit integer. A sum, so that the
    order of the members does not matter; each sum stays below 2^63 for fewer than 2^32
    members, in Polars and SQL alike."""
    half = 2**31
    return (hashes // half).sum() % P * half + (hashes % half).sum() % P


def units(hashes: pl.Expr) -> pl.Expr:
    """The resampling unit of a sample hash."""
    return hashes % UNITS


def _step(z: np.ndarray, x: np.ndarray | int, multiplier: int) -> np.ndarray:
    y = (z + x + 1) % P * multiplier % P
    return np.asarray((y * y + STEP_ADD) % P * STEP_MULTIPLIER % P)


def keys(seed: int, stream: int, indices: np.ndarray) -> np.ndarray:
    """The key of each of ``indices`` (int64) in ``stream`` under ``seed``."""
    z = np.zeros(len(indices), dtype=np.int64)
    z = _step(z, seed % P, KEY_MULTIPLIERS[0])
    z = _step(z, stream, KEY_MULTIPLIERS[1])
    return _step(z, indices, KEY_MULTIPLIERS[2])


def values(seed: int, streams: tuple[int, int], rows: int, columns: int) -> np.ndarray:
    """``rows`` x ``columns`` (int64 in [0, P)): the value of each (index ``r`` < ``rows``,
    unit ``u`` < ``columns``), streams (units, indices)."""
    unit_keys = keys(seed, streams[0], np.arange(columns, dtype=np.int64))
    index_keys = keys(seed, streams[1], np.arange(rows, dtype=np.int64))
    return _values(unit_keys, index_keys)


def _values(unit_keys: np.ndarray, index_keys: np.ndarray) -> np.ndarray:
    """The value of each (index key, unit key): index keys as rows. Computed in place: the
    matrix is the only array of its size."""
    y = np.add.outer(index_keys + 1, unit_keys)
    _step_in_place(y, VALUE_MULTIPLIERS[0])
    y += 1
    return _step_in_place(y, VALUE_MULTIPLIERS[1])


def _step_in_place(y: np.ndarray, multiplier: int) -> np.ndarray:
    """:func:`_step` of ``z`` with ``x``, in place on ``y = z + x + 1`` (below 2^32, so that
    ``y * multiplier`` stays below 2^49)."""
    y *= multiplier
    np.remainder(y, P, out=y)
    np.multiply(y, y, out=y)
    y += STEP_ADD
    np.remainder(y, P, out=y)
    y *= STEP_MULTIPLIER
    np.remainder(y, P, out=y)
    return y


def _blocks(
    seed: int, streams: tuple[int, int], rows: int, columns: int
) -> Iterator[tuple[slice, np.ndarray]]:
    """:func:`values` a block of rows at a time (the rows, their values): the mixer's int64
    temporaries stay within :data:`_BLOCK_ELEMENTS` whatever the number of rows."""
    unit_keys = keys(seed, streams[0], np.arange(columns, dtype=np.int64))
    index_keys = keys(seed, streams[1], np.arange(rows, dtype=np.int64))
    block = max(1, _BLOCK_ELEMENTS // max(columns, 1))
    for start in range(0, rows, block):
        at = slice(start, min(start + block, rows))
        yield at, _values(unit_keys, index_keys[at])


def poisson_counts(seed: int, replicates: int, n_units: int = UNITS) -> np.ndarray:
    """Replicates x units: how many times each unit is drawn in each replicate (int8)."""
    counts = np.empty((replicates, n_units), dtype=np.int8)
    thresholds = np.array(POISSON_THRESHOLDS, dtype=np.int64)
    for at, z in _blocks(seed, (BOOTSTRAP_UNITS, BOOTSTRAP_REPLICATES), replicates, n_units):
        # The number of thresholds at or below z.
        counts[at] = np.searchsorted(thresholds, z, side="right")
    return counts


def sign_words(seed: int, patterns: int, n_units: int = UNITS) -> np.ndarray:
    """Patterns x words (int64): the values whose bits are the flips of :func:`sign_flips`,
    unit ``u`` at bit ``u mod 30`` of word ``u div 30``."""
    words = -(-n_units // SIGN_BITS)
    return values(seed, (SIGN_WORDS, SIGN_PATTERNS), patterns, words)


def sign_flips(seed: int, patterns: int, n_units: int = UNITS) -> np.ndarray:
    """Patterns x units: whether each pattern flips each unit (bool)."""
    words = -(-n_units // SIGN_BITS)
    flips = np.empty((patterns, n_units), dtype=bool)
    for at, z in _blocks(seed, (SIGN_WORDS, SIGN_PATTERNS), patterns, words):
        # Bit j of each word, lowest first: its four bytes little-endian, each unpacked
        # lowest bit first, the lowest SIGN_BITS kept.
        octets = z.astype("<u4").view(np.uint8).reshape(z.shape[0], words, 4)
        bits = np.unpackbits(octets, axis=2, count=SIGN_BITS, bitorder="little")
        flips[at] = bits.reshape(z.shape[0], words * SIGN_BITS)[:, :n_units]
    return flips
