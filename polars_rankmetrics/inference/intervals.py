"""Bootstrap intervals of the metrics: per ``by`` group, each key's estimate and an interval
from resamples of the samples (never rows), percentile or BCa."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from polars_rankmetrics.inference import resampling
from polars_rankmetrics.inference.samples import (
    MICRO,
    Groups,
    array_means,
    arrays,
    per_sample_keys,
)
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.classification import set_ratio
from polars_rankmetrics.metrics.registry import COUNT_KEYS, Context, MetricKey

CI_METHODS = ("percentile", "bca")
# How the samples are resampled: drawn n times with repetition, or by hashed units
# (:mod:`.units`).
BOOTSTRAPS = ("multinomial", "poisson")


def check_count(value: object, name: str) -> int:
    """``value``, refused unless a positive integer (a number of resamples)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, not {value!r}")
    return value


def check_level(level: float, name: str = "ci") -> None:
    """``level``, refused unless a confidence level in (0, 1)."""
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0 < level < 1:
        raise ValueError(
            f"{name} must be a confidence level in (0, 1), such as 0.95, not {level!r}"
        )


def check_intervals(level: float, n_boot: int, method: str) -> None:
    """The options of a bootstrap interval: a level in (0, 1), a positive number of
    replicates, a method of :data:`CI_METHODS`."""
    check_level(level)
    check_count(n_boot, "n_boot")
    if method not in CI_METHODS:
        raise ValueError(f"ci_method must be one of {', '.join(CI_METHODS)}, not {method!r}")


def check_bootstrap(bootstrap: str) -> None:
    """``bootstrap``, refused unless one of :data:`BOOTSTRAPS`."""
    if bootstrap not in BOOTSTRAPS:
        raise ValueError(f"bootstrap must be one of {', '.join(BOOTSTRAPS)}, not {bootstrap!r}")


def micro(
    kind: str, tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, context: Context
) -> np.ndarray:
    """A _micro average from (means or sums of) the counts, by the formula of
    :func:`~polars_rankmetrics.metrics.classification.set_ratio`; a 0/0 is
    ``zero_division``."""
    num, den = set_ratio(kind, tp, fp, fn, beta=context.beta)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), context.zero_division)


def estimates(
    table: np.ndarray, keys: Sequence[MetricKey], columns: Sequence[MetricKey], context: Context
) -> np.ndarray:
    """Each key's value from weighted means of the per-sample ``columns``
    (:func:`.samples.per_sample_keys`) in the last axis of ``table`` (one set of means, or one
    per replicate): a key's own mean, a _micro average its ratio of the means of the counts."""
    at = {str(k): j for j, k in enumerate(columns)}

    def pick(key: MetricKey) -> np.ndarray:
        if key.name in MICRO:
            tp, fp, fn = (table[..., at[name]] for name in COUNT_KEYS)
            return micro(MICRO[key.name], tp, fp, fn, context)
        return table[..., at[str(key)]]

    return np.stack([np.asarray(pick(k), dtype=np.float64) for k in keys], axis=-1)


def interval_frame(
    rows: list[dict[str, Any]], by_types: dict[str, Any], keys: Sequence[MetricKey]
) -> pl.DataFrame:
    """The table of intervals from its rows: the ``by`` values, then each key's estimate,
    ``key_lo`` and ``key_hi``."""
    names = [name for key in keys for name in (str(key), f"{key}_lo", f"{key}_hi")]
    schema: dict[str, Any] = dict(by_types)
    schema |= dict.fromkeys(names, pl.Float64)
    return pl.DataFrame(rows, schema=schema, orient="row")


def intervals(
    groups: Groups,
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
    """Per ``by`` group: each key's estimate and its bootstrap interval (``key_lo``,
    ``key_hi``), from each group's rows (:func:`.samples.sample_groups`: the per-sample values
    of :func:`.samples.per_sample_keys` with their weights, ``key/w``, sorted by sample). A
    _micro average is its ratio applied to the resampled means of the counts."""
    columns = per_sample_keys(keys)
    rows = []
    base_seed = resampling.entropy(seed)
    for g, (values_of_group, frame) in enumerate(groups):
        values, weights = arrays(frame, columns)
        means = array_means(values, weights, columns)
        draws = resampling.bootstrap_means(
            values, weights, n_boot, resampling.generator(base_seed, g)
        )
        loo = resampling.jackknife_means(values, weights) if method == "bca" else None
        estimate = estimates(means, keys, columns, context)
        replicates = estimates(draws, keys, columns, context)
        for j, key in enumerate(keys):
            if key.metric.undefined == "nan" and math.isnan(estimate[j]):
                replicates[:, j] = math.nan
        if loo is not None:
            jackknife = estimates(loo, keys, columns, context)
            lo, hi = resampling.bca_interval(replicates, estimate, jackknife, level)
        else:
            lo, hi = resampling.percentile_interval(replicates, level)
        row: dict[str, Any] = dict(zip(cols.by, values_of_group, strict=True))
        for j, key in enumerate(keys):
            row |= {str(key): estimate[j], f"{key}_lo": lo[j], f"{key}_hi": hi[j]}
        rows.append(row)
    return interval_frame(rows, by_types, keys)
