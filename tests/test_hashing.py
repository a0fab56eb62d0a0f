"""The hashed draws of inference/hashing.py against its documented spec: the md5 sample hash
checked against hashlib's hex digest, and the mixer, the Poisson counts and the sign flips
against a reimplementation of the documented arithmetic in plain Python integers (the SQL
repeats the same arithmetic, so these numbers are the contract)."""

from __future__ import annotations

import functools
import hashlib
import math
from decimal import Decimal, getcontext

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from polars_rankmetrics.inference import hashing

P = 2**31 - 1


# The spec, written out from the module's docstring in plain integers.


def reference_hash(text: str) -> int:
    """The 62-bit hash of an id's text, from the md5's hex digest: the first two groups of 8
    hex digits, each halved (integer division), the first times 2^31 plus the second."""
    hex_digest = hashlib.md5(text.encode("utf-8")).hexdigest()
    a, b = int(hex_digest[0:8], 16), int(hex_digest[8:16], 16)
    return (a // 2) * 2**31 + b // 2


def step(z: int, x: int, multiplier: int) -> int:
    y = (z + x + 1) * multiplier % P
    return (y * y + 12345) % P * 48271 % P


def key(seed: int, stream: int, index: int) -> int:
    z = step(0, seed % P, 16807)
    z = step(z, stream, 69621)
    return step(z, index, 39373)


def value(seed: int, streams: tuple[int, int], unit: int, index: int) -> int:
    z = step(key(seed, streams[0], unit), key(seed, streams[1], index), 48271)
    return step(z, 0, 16807)


@functools.cache
def exact_thresholds() -> tuple[int, ...]:
    """round(F(k) P) for the Poisson(1) distribution function F, to 50 digits, while below P."""
    getcontext().prec = 50
    term, total, out, k = Decimal(-1).exp(), Decimal(0), [], 0
    while True:
        total += term
        threshold = int((total * P).to_integral_value())
        if threshold >= P:
            return tuple(out)
        out.append(threshold)
        k += 1
        term /= k


def reference_count(seed: int, replicate: int, unit: int) -> int:
    z = value(seed, (0, 1), unit, replicate)
    return sum(threshold <= z for threshold in exact_thresholds())


def reference_flip(seed: int, pattern: int, unit: int) -> bool:
    return ((value(seed, (2, 3), unit // 30, pattern) >> (unit % 30)) & 1) == 1


# The sample hash.


def test_the_hash_of_one_is_read_from_its_well_known_md5():
    # md5("1") = c4ca4238 a0b92382 0dcc509a 6f75849b
    expected = (0xC4CA4238 // 2) * 2**31 + 0xA0B92382 // 2
    assert hashing.sample_hashes(pl.Series("s", [1]), "s").to_list() == [expected]
    assert hashing.sample_hashes(pl.Series("s", ["1"]), "s").to_list() == [expected]
    assert expected % 4096 == hashing.units(pl.Series([expected]))[0]


IDS = ["clip_00001", "", "ü-é 漢字", "a" * 300, "0", "-5", "007", "1.5", " x "]


def test_string_ids_hash_as_the_md5_of_their_utf8_text():
    got = hashing.sample_hashes(pl.Series("id", IDS), "id").to_list()
    assert got == [reference_hash(text) for text in IDS]
    assert all(0 <= h < 2**62 for h in got)


@pytest.mark.parametrize(
    "dtype", [pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt32, pl.UInt64]
)
def test_integer_ids_hash_as_their_decimal_text(dtype):
    ids = [0, 1, 7, 100, 127]
    if dtype.is_signed_integer():
        ids += [-1, -128]
    if dtype == pl.UInt64:
        ids.append(2**64 - 1)
    got = hashing.sample_hashes(pl.Series("id", ids, dtype=dtype), "id").to_list()
    assert got == [reference_hash(str(i)) for i in ids]


def test_categorical_and_enum_ids_hash_as_their_text():
    ids = ["b", "a", "b", "c"]
    expected = [reference_hash(t) for t in ids]
    for dtype in (pl.Categorical(), pl.Enum(["a", "b", "c"])):
        assert hashing.sample_hashes(pl.Series("id", ids, dtype=dtype), "id").to_list() == expected


def test_repeated_ids_hash_alike_in_their_rows_order():
    ids = pl.Series("id", ["z", "a", "z", "m", "a"])
    assert hashing.sample_hashes(ids, "id").to_list() == [reference_hash(t) for t in ids]


@pytest.mark.parametrize(
    "ids",
    [pl.Series("id", [1.0, 2.0]), pl.Series("id", [True]), pl.Series("id", [], dtype=pl.Float64)],
)
def test_ids_whose_text_differs_between_engines_are_refused(ids):
    with pytest.raises(ValueError, match=r"column 'id' \((Float64|Boolean)\) identifies the "):
        hashing.sample_hashes(ids, "id")


def test_a_null_id_is_refused():
    with pytest.raises(ValueError, match="a sample id is null"):
        hashing.sample_hashes(pl.Series("id", ["a", None]), "id")


def test_units_spread_evenly():
    hashes = hashing.sample_hashes(pl.Series("id", range(200_000)), "id")
    counts = np.bincount(hashing.units(hashes).to_numpy(), minlength=hashing.UNITS)
    assert counts.size == hashing.UNITS
    assert stats.chisquare(counts).pvalue > 0.001


# The mixer and the draws.


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**130),
    streams=st.tuples(st.integers(0, 3), st.integers(0, 3)),
    rows=st.integers(1, 5),
    columns=st.integers(1, 5),
)
def test_values_follow_the_documented_arithmetic(seed, streams, rows, columns):
    got = hashing.values(seed, streams, rows, columns)
    assert got.dtype == np.int64 and got.shape == (rows, columns)
    expected = [[value(seed, streams, u, r) for u in range(columns)] for r in range(rows)]
    assert got.tolist() == expected


def test_seeds_equal_modulo_p_draw_alike():
    assert (hashing.poisson_counts(3, 20) == hashing.poisson_counts(3 + P, 20)).all()
    assert (hashing.poisson_counts(0, 20) == hashing.poisson_counts(P, 20)).all()
    assert (hashing.poisson_counts(0, 20) != hashing.poisson_counts(1, 20)).any()


def test_the_poisson_thresholds_are_the_rounded_distribution_function():
    assert hashing.POISSON_THRESHOLDS == exact_thresholds()


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**40 + 3])
def test_poisson_counts_follow_the_documented_arithmetic(seed):
    counts = hashing.poisson_counts(seed, 6, 50)
    assert counts.dtype == np.int8
    assert counts.tolist() == [[reference_count(seed, r, u) for u in range(50)] for r in range(6)]


def test_poisson_counts_are_the_same_in_blocks_of_rows():
    # 1,100 replicates of 4,096 units are mixed in several blocks.
    counts = hashing.poisson_counts(7, 1100)
    rng = np.random.default_rng(0)
    for r, u in zip(rng.integers(0, 1100, 60), rng.integers(0, 4096, 60), strict=True):
        assert counts[r, u] == reference_count(7, int(r), int(u))
    assert (counts[:5] == hashing.poisson_counts(7, 5)).all()


@pytest.mark.parametrize(("seed", "n_units"), [(0, 61), (5, 30), (2**33, 7)])
def test_sign_flips_follow_the_documented_arithmetic(seed, n_units):
    flips = hashing.sign_flips(seed, 5, n_units)
    assert flips.dtype == np.bool_ and flips.shape == (5, n_units)
    expected = [[reference_flip(seed, p, u) for u in range(n_units)] for p in range(5)]
    assert flips.tolist() == expected


def test_sign_flips_are_the_same_in_blocks_of_rows():
    flips = hashing.sign_flips(11, 20_000)
    rng = np.random.default_rng(1)
    for p, u in zip(rng.integers(0, 20_000, 60), rng.integers(0, 4096, 60), strict=True):
        assert flips[p, u] == reference_flip(11, int(p), int(u))


def test_poisson_counts_are_poisson_of_mean_one_and_uncorrelated():
    counts = hashing.poisson_counts(2026, 1000).astype(np.float64)
    n = counts.size
    # Mean and variance 1, each to 6 standard errors.
    assert abs(counts.mean() - 1) < 6 / math.sqrt(n)
    assert abs(counts.var() - 1) < 6 * math.sqrt(2 / n)
    observed = np.bincount(counts.astype(np.int64).ravel(), minlength=6)[:6]
    expected = np.array([math.exp(-1) / math.factorial(k) for k in range(6)]) * n
    assert np.abs(observed - expected).max() < 6 * np.sqrt(expected).max()
    # Neighbouring units, and neighbouring replicates, are uncorrelated (6 standard errors).
    centred = counts - 1
    across_units = (centred[:, :-1] * centred[:, 1:]).mean()
    across_replicates = (centred[:-1] * centred[1:]).mean()
    assert abs(across_units) < 6 / math.sqrt(n) and abs(across_replicates) < 6 / math.sqrt(n)
    # Every unit is drawn about as often as the others over the replicates.
    totals = counts.sum(axis=0)
    assert stats.chisquare(totals).pvalue > 0.001


def test_sign_flips_are_fair_and_uncorrelated():
    flips = hashing.sign_flips(99, 4000).astype(np.float64) * 2 - 1
    n = flips.size
    assert abs(flips.mean()) < 6 / math.sqrt(n)
    # Every bit position of a word is fair, and neighbouring units (in a word and across two
    # words) are uncorrelated.
    for bit in range(30):
        assert abs(flips[:, bit::30].mean()) < 6 / math.sqrt(flips[:, bit::30].size)
    for lag in (1, 29, 30, 31):
        corr = (flips[:, :-lag] * flips[:, lag:]).mean()
        assert abs(corr) < 6 / math.sqrt(flips[:, lag:].size), lag
    assert abs((flips[:-1] * flips[1:]).mean()) < 6 / math.sqrt(n)
