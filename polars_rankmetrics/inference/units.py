"""Resampling by units: the Poisson bootstrap and the sign-flip test whose draws are functions
of the samples' ids, so that what they compute adds up across partitions, states and engines.

A group's samples fall into :data:`~.hashing.UNITS` resampling units by the hash of their ids
(:mod:`.hashing`, which also says why units may stand for samples). A **unit table** has one row
per unit holding samples (``rm_unit``, Int64): for each key, the sum of weight x value over its
samples whose value is defined (``key``), the sum of those weights (``key/w``) and the count of
undefined values of positive weight (``key/x``), then the number of samples (``samples``).
Unit tables of disjoint sets of samples add up (concatenate, then sum by ``rm_unit``), so the
``units`` part of an evaluation state (:mod:`polars_rankmetrics.states`) is one, and every
function here reads unit tables only, concatenated or summed as they come.

Replicate ``r`` of the bootstrap draws unit ``u`` ``c[r, u]`` times
(:func:`.hashing.poisson_counts`): its sums are the product of the counts (replicates x units)
with the unit sums (units x columns), and a key's value its ratio of sums, as for the samples
(:mod:`.resampling`). A replicate that draws no weight for a key (it may draw no unit at all)
has no value: it is left out of that key's interval. Pattern ``p`` of the paired sign-flip test
swaps the two models' sums of the units it flips (:func:`.hashing.sign_flips`). The draws
depend on the seed and the sizes only: drawn once per call, they serve every group, model and
key.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from polars_rankmetrics.inference import hashing, resampling
from polars_rankmetrics.inference.intervals import (
    check_count,
    check_intervals,
    estimates,
    interval_frame,
)
from polars_rankmetrics.inference.paired import (
    CompareOptions,
    aligned,
    check_baseline,
    describe,
    differences,
    effect_size,
    keyed_rows,
    result_frame,
    tally,
)
from polars_rankmetrics.inference.samples import (
    MICRO,
    Groups,
    means,
    per_sample_keys,
    supported_keys,
    values,
    weights,
)
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.registry import COUNT_KEYS, Context, MetricKey
from polars_rankmetrics.metrics.sums import undefined_column, weight_column

UNIT = "rm_unit"
SAMPLES = "samples"
# The tests whose draws may be units: the per-sample tests (t, Wilcoxon) read samples.
UNIT_TESTS = ("permutation", "bootstrap")
# Bound on the elements of one block of draws turned into float64 for a product (32 MB).
_BLOCK_ELEMENTS = 1 << 22

UnitGroups = list[tuple[tuple[Any, ...], pl.DataFrame]]


def unit_table(
    frame: pl.DataFrame, sample: str, keys: Sequence[MetricKey], *, hashes: pl.Series | None = None
) -> pl.DataFrame:
    """One group's unit table (see the module) from its per-sample rows: the ``sample``
    column (integer or string ids), each key's value ``str(key)`` (null or NaN where
    undefined) and its weight ``key/w``; any other column is ignored. ``hashes``: the
    samples' :func:`.hashing.sample_hashes`, where the caller has them. Rows in any order give
    the same table: each unit sums its samples in the order of their hashes.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics.metrics.registry import parse_keys
    >>> rows = pl.DataFrame({"sample": [1, 2], "lrap": [0.5, 1.0], "lrap/w": [1.0, 1.0]})
    >>> unit_table(rows, "sample", parse_keys(["lrap"]))
    shape: (2, 5)
    ┌─────────┬──────┬────────┬────────┬─────────┐
    │ rm_unit ┆ lrap ┆ lrap/w ┆ lrap/x ┆ samples │
    │ ---     ┆ ---  ┆ ---    ┆ ---    ┆ ---     │
    │ i64     ┆ f64  ┆ f64    ┆ f64    ┆ i64     │
    ╞═════════╪══════╪════════╪════════╪═════════╡
    │ 449     ┆ 0.5  ┆ 1.0    ┆ 0.0    ┆ 1       │
    │ 1969    ┆ 1.0  ┆ 1.0    ┆ 0.0    ┆ 1       │
    └─────────┴──────┴────────┴────────┴─────────┘
    """
    if hashes is None:
        hashes = hashing.sample_hashes(frame[sample], sample)
    return _table(frame, hashes.to_numpy(), keys)


def _table(frame: pl.DataFrame, hashes: np.ndarray, keys: Sequence[MetricKey]) -> pl.DataFrame:
    """:func:`unit_table` of rows whose samples' hashes are ``hashes``."""
    order = np.argsort(hashes, kind="stable")
    unit = hashes[order] % hashing.UNITS
    count = np.bincount(unit, minlength=hashing.UNITS)
    present = np.flatnonzero(count)
    columns: dict[str, Any] = {UNIT: pl.Series(UNIT, present, dtype=pl.Int64)}
    for key in keys:
        value, weight = values(frame, key)[order], weights(frame, key)[order]
        defined = ~np.isnan(value)
        # The per-sample rows give an undefined value weight 0: a key weighted by the sample's
        # positives or its best value is undefined only without positives (weight 0, not
        # counted); any other key's undefined value counts, as if of positive weight.
        counted = ~defined if key.metric.weighting == "sample" else np.zeros_like(defined)
        sums = (
            np.where(defined, weight * np.where(defined, value, 0.0), 0.0),
            np.where(defined, weight, 0.0),
            counted.astype(np.float64),
        )
        names = (str(key), weight_column(key), undefined_column(key))
        for name, column in zip(names, sums, strict=True):
            summed = np.bincount(unit, weights=column, minlength=hashing.UNITS)[present]
            columns[name] = pl.Series(name, summed, dtype=pl.Float64)
    columns[SAMPLES] = pl.Series(SAMPLES, count[present], dtype=pl.Int64)
    return pl.DataFrame(columns)


def unit_tables(groups: Groups, sample: str, keys: Sequence[MetricKey]) -> UnitGroups:
    """Each group's :func:`unit_table` from its per-sample rows
    (:func:`.samples.sample_groups`), groups in order."""
    return [(group, unit_table(frame, sample, keys)) for group, frame in groups]


def unit_groups(units: pl.DataFrame, cols: Columns) -> tuple[UnitGroups, dict[str, Any]]:
    """The unit tables of every ``by`` group in one table (the ``by`` columns, ``rm_unit``,
    the sums' columns), split by group, groups sorted by their values; and the ``by``
    columns' types."""
    by = list(cols.by)
    by_types = {b: units.schema[b] for b in by}
    if not by:
        return [((), units)], by_types
    parts = units.partition_by(by, as_dict=True, include_key=False, maintain_order=True)
    groups = sorted(parts.items(), key=lambda group: [(v is None, v) for v in group[0]])
    return groups, by_types


@dataclass(frozen=True)
class UnitSums:
    """A group's unit sums, dense over every unit (0 where a unit holds no sample):
    ``weighted`` and ``weights`` (units x keys: the sums of weight x value and of the weights
    of the defined values), per key the group's count of undefined values of positive weight
    (``undefined``), per unit its samples (``samples``, None where the table has no such
    column) and whether the table has it (``present``)."""

    weighted: np.ndarray
    weights: np.ndarray
    undefined: np.ndarray
    samples: np.ndarray | None
    present: np.ndarray

    @classmethod
    def of(cls, table: pl.DataFrame, keys: Sequence[MetricKey]) -> UnitSums:
        """The sums of a unit table (its rows summed by unit: a concatenation of the tables
        of disjoint sets of samples is read as their sum). ``key/x`` and ``samples`` may be
        absent (no undefined value; samples unknown)."""
        unit = table[UNIT].cast(pl.Int64).to_numpy()
        outside = unit[(unit < 0) | (unit >= hashing.UNITS)]
        if outside.size:
            raise ValueError(f"{UNIT} must be in [0, {hashing.UNITS}), found {outside[0]}")

        def summed(name: str) -> np.ndarray:
            column = table[name].cast(pl.Float64).fill_null(0.0).to_numpy()
            return np.bincount(unit, weights=column, minlength=hashing.UNITS)

        weighted = np.stack([summed(str(k)) for k in keys], axis=1)
        weights = np.stack([summed(weight_column(k)) for k in keys], axis=1)
        undefined = np.array(
            [summed(undefined_column(k)).sum() if undefined_column(k) in table.columns else 0.0
             for k in keys]
        )  # fmt: skip
        samples = summed(SAMPLES) if SAMPLES in table.columns else None
        present = np.bincount(unit, minlength=hashing.UNITS) > 0
        return cls(weighted, weights, undefined, samples, present)

    @property
    def table(self) -> np.ndarray:
        """Units x 2 keys: the sums of weighted values, then of weights."""
        return np.concatenate([self.weighted, self.weights], axis=1)


def draw_sums(draws: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """``draws`` (rows x units: counts, or 0/1) times ``sums`` (units x columns), in float64,
    a block of rows at a time."""
    out = np.empty((draws.shape[0], sums.shape[1]))
    block = max(1, _BLOCK_ELEMENTS // max(draws.shape[1], 1))
    for start in range(0, draws.shape[0], block):
        out[start : start + block] = draws[start : start + block].astype(np.float64) @ sums
    return out


def _held(draws: np.ndarray, sums: np.ndarray, units: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``draws`` (rows x every unit) and ``sums`` (a row per unit of ``units``, sorted) as two
    factors of their product: the draws' columns of ``units`` where these are few (a copy of
    a few columns is cheaper than a product over every unit); otherwise every column, and the
    sums filled with 0 for the units not held."""
    if units.size * 8 < draws.shape[1]:
        return draws[:, units], sums
    dense = np.zeros((draws.shape[1], sums.shape[1]))
    dense[units] = sums
    return draws, dense


def _ratios(sums: np.ndarray, k: int) -> np.ndarray:
    """Means from sums of weighted values then of weights (last axis, 2k); NaN where a weight
    sum is 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sums[..., k:] > 0, sums[..., :k] / sums[..., k:], math.nan)


def _empty(sums: np.ndarray, keys: Sequence[MetricKey], columns: Sequence[MetricKey]) -> np.ndarray:
    """Per row of sums (last axis: of ``columns``' weighted values then weights) and key,
    whether the row has no weight for the key: a _micro average reads the counts'."""
    k = len(columns)
    at = {str(c): j for j, c in enumerate(columns)}
    reads = [at[COUNT_KEYS[0]] if key.name in MICRO else at[str(key)] for key in keys]
    return np.asarray(sums[..., [k + j for j in reads]] <= 0)


def _interval(
    replicates: np.ndarray, estimate: float, jackknife: np.ndarray | None, level: float
) -> tuple[float, float]:
    """One key's interval from its replicates that have a value (NaN: left out): percentile,
    or BCa with the leave-one-unit-out ``jackknife``."""
    kept = replicates[~np.isnan(replicates)]
    if math.isnan(estimate) or kept.size == 0:
        return math.nan, math.nan
    if jackknife is None:
        lo, hi = resampling.percentile_interval(kept[:, None], level)
    else:
        # Without a unit to leave out (one unit holds every sample), no acceleration.
        loo = jackknife[~np.isnan(jackknife)]
        loo = loo if loo.size else np.zeros(1)
        lo, hi = resampling.bca_interval(kept[:, None], np.array([estimate]), loo[:, None], level)
    return float(lo[0]), float(hi[0])


def unit_intervals(
    groups: UnitGroups,
    by_types: dict[str, Any],
    cols: Columns,
    keys: Sequence[MetricKey],
    *,
    level: float,
    n_boot: int,
    seed: int | None,
    method: str,
    context: Context,
) -> pl.DataFrame:
    """Per ``by`` group, :func:`.intervals.intervals` from unit tables: each key's estimate
    (the weighted mean of the group's sums, NaN for a key whose undefined value makes the mean
    NaN) and its interval over ``n_boot`` Poisson replicates, ``percentile`` or ``bca`` (the
    acceleration from the estimates leaving out one unit holding samples at a time).

    ``groups``: per group, its values of the ``by`` columns (``cols.by``, their types
    ``by_types``) and its unit table, holding the columns of
    :func:`.samples.per_sample_keys` (the counts for a _micro average): :func:`unit_groups`
    or :func:`unit_tables`. Groups are sorted by their values, as
    :func:`~polars_rankmetrics.evaluate` sorts them."""
    check_intervals(level, n_boot, method)
    supported_keys(keys, micro=True)
    columns = per_sample_keys(keys)
    counts = hashing.poisson_counts(resampling.entropy(seed), n_boot)
    rows = []
    for values_of_group, table in sorted(groups, key=lambda g: [(v is None, v) for v in g[0]]):
        sums = UnitSums.of(table, columns)
        held = np.flatnonzero(sums.present)
        unit_sums = sums.table[held]
        total = unit_sums.sum(axis=0)
        estimate = estimates(means(total, sums.undefined > 0, columns), keys, columns, context)
        drawn = draw_sums(*_held(counts, unit_sums, held))
        replicates = estimates(_ratios(drawn, len(columns)), keys, columns, context)
        replicates[_empty(drawn, keys, columns)] = math.nan
        jackknife = None
        if method == "bca":
            left = total - unit_sums
            jackknife = estimates(_ratios(left, len(columns)), keys, columns, context)
            jackknife[_empty(left, keys, columns)] = math.nan
        row: dict[str, Any] = dict(zip(cols.by, values_of_group, strict=True))
        for j, key in enumerate(keys):
            lo, hi = _interval(
                replicates[:, j], float(estimate[j]),
                None if jackknife is None else jackknife[:, j], level,
            )  # fmt: skip
            row |= {str(key): float(estimate[j]), f"{key}_lo": lo, f"{key}_hi": hi}
        rows.append(row)
    return interval_frame(rows, by_types, keys)


def check_same_samples(mine: UnitSums, base: UnitSums, names: str, needs: str) -> None:
    """Two models' unit sums (``names``: the two, as an error message names them), refused
    where both count their units' samples and a unit's counts differ, naming the first such
    unit, its two counts and how many differ; ``needs``: what the comparison needs."""
    if mine.samples is None or base.samples is None:
        return
    differ = np.flatnonzero(mine.samples != base.samples)
    if differ.size:
        u = int(differ[0])
        raise ValueError(
            f"{names} do not hold the same samples: unit {u} holds {int(mine.samples[u])} and "
            f"{int(base.samples[u])} ({differ.size} units differ); {needs}"
        )


def check_unit_test(test: str) -> None:
    """``test``, refused unless its draws may be units (:data:`UNIT_TESTS`)."""
    if test not in UNIT_TESTS:
        raise ValueError(
            f"test={test!r} is a per-sample test: with bootstrap='poisson' the draws are "
            f"hashed units of samples; use test={UNIT_TESTS[0]!r} or test={UNIT_TESTS[1]!r}, "
            "or bootstrap='multinomial'"
        )


@dataclass(frozen=True)
class Draws:
    """The draws of one comparison: the Poisson counts (the interval's ``n_boot`` replicates;
    for the bootstrap test, as many as either needs: the test reads the first
    ``n_resamples``) and the words of the sign-flip patterns (:func:`.hashing.sign_words`;
    None for the bootstrap test)."""

    counts: np.ndarray
    words: np.ndarray | None
    n_boot: int
    n_resamples: int

    @classmethod
    def of(cls, how: CompareOptions) -> Draws:
        base_seed = resampling.entropy(how.seed)
        n_boot, n_resamples = how.n_boot, how.n_resamples
        replicates = max(n_boot, n_resamples) if how.test == "bootstrap" else n_boot
        counts = hashing.poisson_counts(base_seed, replicates)
        words = hashing.sign_words(base_seed, n_resamples) if how.test == "permutation" else None
        return cls(counts, words, n_boot, n_resamples)


def _flipped(words: np.ndarray, units: np.ndarray) -> Callable[[np.ndarray], Iterator[np.ndarray]]:
    """The products of the sign-flip patterns of ``words`` (patterns x words) with ``h`` (a
    row per unit of ``units``), for :func:`.resampling.pattern_p_values`, without the
    patterns x units matrix of flips: each byte of a word sets 8 of its bits, so a pattern's
    product is the sum, over the bytes of its words, of a table of the 256 byte values (the
    sum of the rows of h of the units whose bits the value sets)."""
    bits = hashing.SIGN_BITS
    n_words = words.shape[1]
    value_bits = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.float64)

    def products(h: np.ndarray) -> Iterator[np.ndarray]:
        columns = h.shape[1]
        by_unit = np.zeros((n_words * bits, columns))
        by_unit[units] = h
        # Bits 30 and 31 of a word flip no unit: 32 rows a word, the last two 0.
        by_bit = np.zeros((n_words, 32, columns))
        by_bit[:, :bits] = by_unit.reshape(n_words, bits, columns)
        # Per column of h, the table of every (byte of a word, value of the byte).
        tables = (value_bits @ by_bit.reshape(n_words * 4, 8, columns)).transpose(2, 0, 1)
        tables = np.ascontiguousarray(tables).reshape(columns, n_words * 4 * 256)
        offsets = np.arange(n_words * 4) * 256
        block = max(1, _BLOCK_ELEMENTS // (n_words * 4))
        for start in range(0, words.shape[0], block):
            at = words[start : start + block].astype("<u4").view(np.uint8) + offsets
            yield np.stack([np.take(table, at).sum(axis=-1) for table in tables], axis=1)

    return products


def _paired_units(mine: UnitSums, base: UnitSums) -> resampling.Paired:
    """The :class:`~.resampling.Paired` table of two models' unit sums, a row per unit."""
    found: list[np.ndarray] = []
    k = mine.weighted.shape[1]
    columns = np.empty((2, k), dtype=np.intp)
    for model, sums in enumerate((mine, base)):
        for j in range(k):
            weight = sums.weights[:, j]
            same = [c for c, seen in enumerate(found) if np.array_equal(seen, weight)]
            if not same:
                found.append(weight)
            columns[model, j] = same[0] if same else len(found) - 1
    table = np.concatenate([mine.weighted, base.weighted, np.stack(found, axis=1)], axis=1)
    return resampling.Paired(table, columns)


def compared_units(
    mine: UnitSums, base: UnitSums, keys: Sequence[MetricKey], draws: Draws, level: float
) -> dict[str, np.ndarray]:
    """Per key: the two models' values, the delta, its interval and p-value. The products read
    the units either model holds (the others add nothing)."""
    held = np.flatnonzero(mine.present | base.present)
    table = _paired_units(mine, base)
    table = resampling.Paired(table.table[held], table.columns)
    sums = table.table.sum(axis=0)
    model_values = means(table.model_sums(sums, 0), mine.undefined > 0, keys)
    base_values = means(table.model_sums(sums, 1), base.undefined > 0, keys)
    deltas = model_values - base_values
    drawn = table.delta(draw_sums(*_held(draws.counts, table.table, held)))
    lo, hi, p = (np.full(len(keys), math.nan) for _ in range(3))
    for j in range(len(keys)):
        lo[j], hi[j] = _interval(drawn[: draws.n_boot, j], float(deltas[j]), None, level)
        null = drawn[: draws.n_resamples, j]
        kept = null[~np.isnan(null)]
        if draws.words is None and not math.isnan(deltas[j]) and kept.size:
            p[j] = resampling.bootstrap_p_values(kept[:, None], deltas[j : j + 1])[0]
    if draws.words is not None:
        flipped = _flipped(draws.words, held)
        p = resampling.pattern_p_values(table, flipped, draws.words.shape[0])
        p[np.isnan(deltas)] = math.nan
    return {"value": model_values, "baseline_value": base_values, "delta": deltas,
            "delta_lo": lo, "delta_hi": hi, "p_value": p}  # fmt: skip


def unit_numbers(
    found: dict[str, np.ndarray], keys: Sequence[MetricKey], differences: list[np.ndarray] | None
) -> list[dict[str, Any]]:
    """Per key, the numbers of one pair of models (``found``: :func:`compared_units`) with
    the effect size, wins, ties and losses of the key's per-sample ``differences`` (null
    without them: unit tables hold no sample), as :func:`.paired.pair_numbers` gives them."""
    rows: list[dict[str, Any]] = []
    for j, key in enumerate(keys):
        d = None if differences is None else differences[j]
        wins, ties, losses = (None, None, None) if d is None else tally(d, key)
        rows.append({name: float(column[j]) for name, column in found.items()} | {
            "effect_size": None if d is None else effect_size(d),
            "wins": wins, "ties": ties, "losses": losses,
        })  # fmt: skip
    return rows


def unit_paired(
    groups: dict[tuple[Any, ...], pl.DataFrame],
    by_types: dict[str, Any],
    cols: Columns,
    keys: Sequence[MetricKey],
    how: CompareOptions,
    *,
    baseline: tuple[Any, ...],
) -> pl.DataFrame:
    """:func:`.paired.paired` from each model's unit table (``groups``, by their values of the
    ``by`` columns: ``dict`` of :func:`unit_groups`): the same columns, wins, ties and losses
    null (they count samples, which unit tables do not hold). The two models of a pair must
    hold the same samples: where both tables count their units' samples, a unit whose counts
    differ is refused. ``how.test``: ``permutation`` (whole units flipped by
    :func:`.hashing.sign_flips`, p = (hits + 1) / (n_resamples + 1)) or ``bootstrap``; the
    interval of the delta over ``how.n_boot`` Poisson replicates."""
    check_unit_test(how.test)
    check_intervals(how.level, how.n_boot, "percentile")
    check_count(how.n_resamples, "n_resamples")
    by = list(cols.by)
    base_key = check_baseline(groups, baseline, by)
    supported_keys(keys)
    draws = Draws.of(how)
    base = UnitSums.of(groups[base_key], keys)
    rows: list[dict[str, Any]] = []
    for model_key, table in groups.items():
        if model_key == base_key:
            continue
        mine = UnitSums.of(table, keys)
        check_same_samples(
            mine, base, f"{describe(model_key, by)} and the baseline {describe(base_key, by)}",
            "a paired comparison by units needs the same samples in both",
        )  # fmt: skip
        found = compared_units(mine, base, keys, draws, how.level)
        rows += keyed_rows(model_key, by, keys, unit_numbers(found, keys, None))
    return result_frame(rows, by_types, how.correction)


def paired_by_units(
    groups: dict[tuple[Any, ...], pl.DataFrame],
    by_types: dict[str, Any],
    cols: Columns,
    keys: Sequence[MetricKey],
    how: CompareOptions,
    *,
    baseline: tuple[Any, ...],
) -> pl.DataFrame:
    """:func:`.paired.paired` with the draws of :func:`unit_paired`, from the per-sample rows
    of each model (``groups``, each sorted by sample): the samples that only one of a pair
    holds are refused or dropped (``how.on_missing``), then the wins, ties and losses counted over
    the shared samples and each model's unit table summed from them."""
    check_unit_test(how.test)
    by = list(cols.by)
    base_key = check_baseline(groups, baseline, by)
    draws = Draws.of(how)
    whole = groups[base_key]
    base_hashes = hashing.sample_hashes(whole[cols.sample], cols.sample).to_numpy()
    rows: list[dict[str, Any]] = []
    for model_key, model in groups.items():
        if model_key == base_key:
            continue
        names = (describe(model_key, by), describe(base_key, by))
        mine, base = aligned(model, whole, cols, names, how.on_missing == "drop")
        hashes = (
            base_hashes if base is whole
            else hashing.sample_hashes(base[cols.sample], cols.sample).to_numpy()
        )  # fmt: skip
        diffs = [differences(mine, base, key)[2] for key in keys]
        found = compared_units(
            UnitSums.of(_table(mine, hashes, keys), keys),
            UnitSums.of(_table(base, hashes, keys), keys),
            keys, draws, how.level,
        )  # fmt: skip
        rows += keyed_rows(model_key, by, keys, unit_numbers(found, keys, diffs))
    return result_frame(rows, by_types, how.correction)
