"""``finalize``: the numbers of merged states, as ``evaluate`` gives them on their data."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from polars_rankmetrics.engines.driver.reduction import reduced
from polars_rankmetrics.inference.intervals import check_intervals
from polars_rankmetrics.inference.samples import supported_keys
from polars_rankmetrics.inference.units import unit_intervals
from polars_rankmetrics.states.merge import merge


def finalize(
    states: Any,
    metrics: str | Sequence[str] | None = None,
    *,
    by: str | Sequence[str] | None = None,
    ci: float | None = None,
    n_boot: int = 1000,
    seed: int | None = 0,
    ci_method: str = "percentile",
    overlap: str = "error",
) -> pl.DataFrame:
    """The evaluation of the data behind ``states``: what
    :func:`~polars_rankmetrics.evaluate` returns on the union of that data.

    Parameters
    ----------
    states
        States of :func:`~polars_rankmetrics.state`: one, a list of them, a LazyFrame of their
        rows, or the path or glob of state Parquet files (or a list of paths). A filter of a
        state's rows (``s.filter(pl.col("day") >= d0)``) is a state: a window.
    metrics
        A subset of the keys the states hold (default: all of them).
    by
        The ``by`` columns of the result, among the states' own; the states' other ``by``
        columns are merged over (states by model and day, finalized by model, give each
        model over all the days).
    ci, n_boot, seed, ci_method
        A bootstrap interval of each key, from states kept with ``intervals=True``: the
        Poisson bootstrap of :mod:`polars_rankmetrics.inference.hashing`, the same as
        ``evaluate(..., ci=ci, bootstrap="poisson")`` on the union of the data, whatever the
        split into states, the row order or the engine.
    overlap
        A sample held by more than one of the merged states (the same sample id in two
        partitions of the same group; a state merged twice) is found from the states'
        sketches of their sample hashes and refused (``"error"``, default) or merged with a
        warning (``"warn"``). States of different models (a ``by`` column kept) over the same
        samples merge freely. An overlap of a share ``f`` of the samples shows in the
        sketch's 128 smallest hashes with probability about ``1 - (1 - f)^128``.

    Returns
    -------
    polars.DataFrame
        As :func:`~polars_rankmetrics.evaluate`: the ``by`` columns, then one column per key
        (with ``ci``, ``<key>_lo`` and ``<key>_hi`` after each), sorted by ``by``.

    Warns
    -----
    UndefinedMetricWarning
        As :func:`~polars_rankmetrics.evaluate`, with the counts of all the merged states, where
        the states were computed with ``zero_division="warn"``.

    Raises
    ------
    ValueError
        For rows that are not a state, a state of another format (a newer one, or format 1,
        which records no label sets), states computed with different parameters (naming the
        parameter and both values), a ``by`` column the states do not have, a key they do not
        hold, shared samples (``overlap="error"``), states of a group whose label sets differ
        (``evaluate``'s message for their union, naming a state and a label it lacks; a top-k
        table's states record none), or ``ci`` of states kept without ``intervals``.
    """
    merged = merge(states, by, overlap=overlap)
    keys = merged.keys(metrics)
    cols = merged.cols
    if ci is None:
        return cols.restored(reduced(merged.tables, cols, keys, merged.context))
    check_intervals(ci, n_boot, ci_method)
    supported_keys(keys, micro=True)
    groups, by_types = merged.unit_groups("ci=")
    result = unit_intervals(groups, by_types, cols, keys, level=ci, n_boot=n_boot, seed=seed,
                            method=ci_method, context=merged.context)  # fmt: skip
    return cols.restored(result)
