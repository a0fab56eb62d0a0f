"""States read, checked and merged into the tables an evaluation reduces.

:func:`merge` takes what ``finalize``, ``compare``, ``label_report`` and ``lwlrap_per_class``
accept as states (a state, a list of them, a LazyFrame, a path, a glob or a list of paths),
refuses states that do not merge (another format, different parameters, a sample held by two
of them, different label sets), and hands over the merged tables under the names the driver
gives its own (:func:`polars_rankmetrics.engines.driver.collect`), so that every reduction is
the one ``evaluate`` runs.
"""

from __future__ import annotations

import glob
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from polars_rankmetrics.checks import validation
from polars_rankmetrics.inference.units import UnitGroups, unit_groups
from polars_rankmetrics.inputs.columns import Columns, by_names
from polars_rankmetrics.inputs.media import malformed
from polars_rankmetrics.metrics.label_averages import LABEL
from polars_rankmetrics.metrics.registry import Context, MetricKey, parse_keys
from polars_rankmetrics.states import format as fmt
from polars_rankmetrics.states.params import context_of, read_params

OVERLAP = ("error", "warn")
# The column naming the state a row comes from (scan).
SOURCE = "__rm_state"


@dataclass
class Merged:
    """Merged states: the tables per ``cols.by`` group (inside names), as the driver names
    them (``sums``, ``labels``, ``curves``, ``precisions``, ``topk_labels``), each group's
    resampling units (``units``: the unit sums, a row per group and unit), the parameters and
    the context."""

    cols: Columns
    params: dict[str, Any]
    context: Context
    tables: dict[str, list[pl.DataFrame]]
    units: pl.DataFrame | None

    def require(self, what: str, *, per_label: bool = False, **given: Any) -> None:
        """Refuse ``given`` parameters that differ from the states' (``what``: the call, for the
        message), and, for a call that needs them (``per_label``), states kept without the
        per-label tables."""
        for name, value in given.items():
            held = self.params[name]
            if held != value and not (value == "nan" and held == "nan"):
                raise ValueError(
                    f"the states were computed with {name}={held!r}: {what} of them takes their "
                    f"parameters; pass {name}={held!r}"
                )
        if per_label and not self.params["per_label"]:
            raise ValueError(
                f"{what} needs the states' per-label tables: compute them with "
                "rm.state(..., per_label=True)"
            )

    def unit_groups(self, what: str) -> tuple[UnitGroups, dict[str, Any]]:
        """Each group's unit sums (:func:`~polars_rankmetrics.inference.units.unit_groups`);
        refused for states kept without resampling units (``what``: the call)."""
        if self.units is None:
            raise ValueError(
                f"{what} of states needs their resampling units: compute them with "
                "rm.state(..., intervals=True)"
            )
        return unit_groups(self.units, self.cols)

    def keys(self, metrics: str | Sequence[str] | None) -> list[MetricKey]:
        """The keys of ``metrics`` (None: every key the states hold); refuses a key they do not
        hold."""
        held = parse_keys(self.params["metrics"])
        if metrics is None:
            return held
        keys = parse_keys(metrics)
        for key in keys:
            if key not in held:
                raise ValueError(
                    f"the states hold no {key}: they were computed for {', '.join(map(str, held))}"
                )
        return keys


def is_state(data: Any) -> bool:
    """Whether ``data`` is a state or states (a frame, or files, with the state's columns)."""
    if isinstance(data, pl.DataFrame | pl.LazyFrame):
        return fmt.PART in data.collect_schema().names()
    if isinstance(data, list | tuple) and data:
        return all(is_state(item) for item in data)
    if isinstance(data, str | os.PathLike):
        paths = _paths(data)
        first = paths[0] if paths else ""
        if not (first.endswith(".parquet") and os.path.isfile(first)):
            return False
        try:
            return fmt.PART in pl.read_parquet_schema(first)
        except (pl.exceptions.PolarsError, OSError) as error:
            raise ValueError(malformed(first) or str(error)) from error
    return False


def _paths(path: str | os.PathLike[str]) -> list[str]:
    """The state files ``path`` names: a file, a glob's matches, or a directory's ``*.parquet``
    files below it. Hidden files are not states: a writer killed mid-write leaves its temporary
    file, ``.NAME.tmp-XXXXXXXX``, beside the states (as the data files of a directory, which
    ``evaluate`` reads by their extension)."""
    text = os.fspath(path)
    if glob.has_magic(text):
        return sorted(glob.glob(text))
    if os.path.isdir(text):
        return sorted(str(p) for p in Path(text).rglob("*.parquet")
                      if p.is_file() and not p.name.startswith("."))  # fmt: skip
    return [text]


def scan(states: Any, name: str = "states") -> pl.LazyFrame:
    """The rows of ``states`` as one LazyFrame, each with the name of the state it comes from
    (:data:`SOURCE`): its file's path, or its place in the list (``states[2]``); ``name`` is
    the name of ``states`` itself."""
    if isinstance(states, pl.DataFrame | pl.LazyFrame):
        return states.lazy().with_columns(pl.lit(name, pl.String).alias(SOURCE))
    if isinstance(states, str | os.PathLike):
        paths = _paths(states)
        if not paths or not all(os.path.exists(p) for p in paths):
            raise ValueError(f"no state file at {os.fspath(states)!r}")
        problem = malformed(paths, ("parquet",))  # each footer, which a scan reads later
        if problem is not None:
            raise ValueError(problem)
        return pl.scan_parquet(paths, include_file_paths=SOURCE)
    if isinstance(states, list | tuple):
        if not states:
            raise ValueError("no state to finalize: the list is empty")
        return pl.concat([scan(s, f"{name}[{i}]") for i, s in enumerate(states)],
                         how="vertical_relaxed")  # fmt: skip
    raise ValueError(
        f"states must be a state (DataFrame or LazyFrame), a list of them, or the path or glob "
        f"of state files, not {type(states).__name__}"
    )


def merge(
    states: Any, by: str | Sequence[str] | None, *, overlap: str = "error",
    options: Mapping[str, Any] | None = None,
) -> Merged:  # fmt: skip
    """``states`` merged per ``by`` group: checked (columns, format, parameters, overlap), then
    summed; the ``by`` columns of the states that ``by`` does not name are merged over.
    ``options``: the run options and column keywords a verb was given, refused (states are
    evaluated already: their columns are recorded)."""
    if options:
        raise ValueError(
            f"{next(iter(options))}= does not apply to states: they are evaluated already, "
            "with the columns they record"
        )
    if overlap not in OVERLAP:
        raise ValueError(f"overlap must be one of {', '.join(OVERLAP)}, not {overlap!r}")
    rows = scan(states)
    names = rows.collect_schema().names()
    missing = [c for c in fmt.COLUMNS if c not in names]
    if missing:
        raise ValueError(
            f"not an evaluation state: no column {missing[0]!r} (states come from rm.state)"
        )
    found = rows.select(
        pl.col(fmt.FORMAT_COLUMN).max().alias("format"),
        pl.col(fmt.FORMAT_COLUMN).min().alias("oldest"),
        pl.col(fmt.PARAMS).unique(maintain_order=True).implode(),
    ).collect()
    newest, oldest = found["format"][0], found["oldest"][0]
    if newest is None:
        raise ValueError("no state to finalize: the states hold no rows")
    if newest > fmt.FORMAT:
        raise ValueError(
            f"a state has format {newest}, newer than this version of polars-rankmetrics reads "
            f"({fmt.FORMAT}): upgrade polars-rankmetrics"
        )
    if oldest < fmt.FORMAT:
        raise ValueError(
            f"a state has format {oldest}, which records no label sets: format {fmt.FORMAT} "
            "records them, so that states whose samples carry different labels are refused as "
            "evaluate refuses their union; compute the state again with rm.state"
        )
    params = read_params(list(found[fmt.PARAMS][0]))
    by_columns = by_names(by)
    for name in by_columns:
        if name not in params["by"]:
            raise ValueError(
                f"by column {name!r} is not a by column of the states; theirs: {params['by']}"
            )
    roles = {role: name for role, name in params["columns"].items() if name is not None}
    cols = Columns(by=tuple(by_columns), **roles).inside()
    aliases = dict(cols.aliases)
    renamed = rows.select(*by_columns, *fmt.IDENTITY, fmt.VALUE).rename(aliases)
    # The by columns merged over that the rows still have name the states in a refusal.
    merged_over = [name for name in params["by"] if name not in by_columns and name in names]
    label_sets = rows.filter(pl.col(fmt.PART) == "labelset").select(
        *by_columns, *merged_over, SOURCE, fmt.LABEL, fmt.UNIT
    ).rename(aliases)  # fmt: skip
    merged, labels = pl.collect_all([fmt.merged(renamed, cols.by), label_sets])
    _check_overlap(merged, cols, overlap)
    _check_label_sets(labels, cols, merged_over)
    return Merged(cols, params, context_of(params), _tables(merged, cols), _units(merged, cols))


def _part(merged: pl.DataFrame, part: str, index: Sequence[str]) -> pl.DataFrame | None:
    rows = merged.filter(pl.col(fmt.PART) == part)
    if not rows.height:
        return None
    return rows.pivot(fmt.NAME, index=list(index), values=fmt.VALUE, aggregate_function=None)


def _tables(merged: pl.DataFrame, cols: Columns) -> dict[str, list[pl.DataFrame]]:
    by = list(cols.by)
    group = [] if by else [pl.lit(0).alias(validation.GROUP)]
    tables = {}
    sums = _part(merged, "sums", by) if by else _part(
        merged.with_columns(pl.lit(0).alias("__one")), "sums", ["__one"]
    )  # fmt: skip
    if sums is not None:
        tables["sums"] = [sums.drop("__one", strict=False)]
    parts = {"labels": [], "curves": [fmt.SCORE], "precisions": [], "topk_labels": []}
    for part, extra in parts.items():
        table = _part(merged, part, [*by, fmt.LABEL, *extra])
        if table is not None:
            table = table.rename({fmt.LABEL: LABEL, fmt.SCORE: "score"}, strict=False)
            tables[part] = [table.with_columns(*group)]
    return tables


def _units(merged: pl.DataFrame, cols: Columns) -> pl.DataFrame | None:
    units = _part(merged, "units", [*cols.by, fmt.UNIT])
    return None if units is None else units.sort([*cols.by, fmt.UNIT])


def _check_overlap(merged: pl.DataFrame, cols: Columns, overlap: str) -> None:
    """Refuse (or warn of) a sample held by more than one of the merged states: a hash of the
    merged sketch counted more than once."""
    by = list(cols.by)
    sketch = merged.filter(pl.col(fmt.PART) == "sketch")
    shared = sketch.group_by(by or [pl.lit(0).alias("__one")]).agg(
        pl.len().alias("kept"), (pl.col(fmt.VALUE) > 1).sum().alias("shared"),
        pl.col(fmt.VALUE).sum().alias("counted"),
    ).filter(pl.col("shared") > 0)  # fmt: skip
    if by:
        shared = shared.sort(by, nulls_last=True)
    if not shared.height:
        return
    row = shared.row(0, named=True)
    where = cols.shown(", ".join(f"{name}={row[name]!r}" for name in by) if by else "the one group")
    message = (
        f"the merged states share samples ({where}): {row['shared']} of the {row['kept']} "
        f"smallest sample hashes of the group are held by more than one state, an estimated "
        f"{row['shared'] / row['kept']:.0%} of its samples. A sample must be in one partition "
        "only (the same sample in two states counts twice); keep the partition's column in "
        "by= to finalize the partitions apart, or merge anyway with overlap='warn' (--overlap warn)"
    )
    if overlap == "error":
        raise ValueError(message)
    warnings.warn(message, UserWarning, stacklevel=3)


def _check_label_sets(rows: pl.DataFrame, cols: Columns, merged_over: Sequence[str]) -> None:
    """Refuse states of a group whose label sets differ, with the message ``evaluate`` gives
    for their union (:func:`~polars_rankmetrics.checks.validation.raise_label_sets`): the
    first such group, the fewest labels a state of it has and a state that has them (where
    ``evaluate`` names a sample), the group's labels; then a label that state lacks and a state
    that holds it. ``rows``: the states' ``labelset`` rows, with their ``by`` columns
    (``merged_over``: those merged over) and their source (:data:`SOURCE`). A label held by
    some of a group's label sets (fingerprints) and not by all is a difference; sets equal label
    for label pass, whatever their fingerprints (a label of a type whose text a SQL engine
    writes otherwise)."""
    by = list(cols.by)
    keys = by or ["__one"]
    rows = rows if by else rows.with_columns(pl.lit(0).alias("__one"))
    held = rows.group_by([*keys, fmt.LABEL]).agg(pl.col(fmt.UNIT).n_unique().alias("held"))
    sets = rows.group_by(keys).agg(
        pl.col(fmt.UNIT).n_unique().alias("sets"), pl.col(fmt.LABEL).n_unique().alias("union")
    )
    differing = (
        held.join(sets, on=keys, nulls_equal=True)
        .filter(pl.col("held") < pl.col("sets"))
        .sort(keys, nulls_last=True)
    )
    if not differing.height:
        return
    first = differing.row(0, named=True)
    in_group = rows.filter(*(pl.col(k) == first[k] for k in keys))
    # The label set with the fewest labels, and the first label it lacks.
    sizes = in_group.group_by(fmt.UNIT).agg(pl.col(fmt.LABEL).n_unique().alias("n"))
    smallest = sizes.sort("n", fmt.UNIT).row(0, named=True)
    own = in_group.filter(pl.col(fmt.UNIT) == smallest[fmt.UNIT])
    label = in_group.filter(~pl.col(fmt.LABEL).is_in(own[fmt.LABEL].implode()))[fmt.LABEL].min()
    several = rows[SOURCE].n_unique() > 1

    def state(found: pl.DataFrame) -> dict[str, object]:
        """Where the first of ``found``'s rows comes from: its group, the ``by`` columns merged
        over and (rows of several states) its state."""
        row = found.sort([*merged_over, SOURCE], nulls_last=True).row(0, named=True)
        named = [*by, *merged_over, *([SOURCE] if several else [])]
        return {("state" if name == SOURCE else name): row[name] for name in named}

    lacks = state(own)
    holds = state(in_group.filter(pl.col(fmt.LABEL) == label))
    other = validation.describe(holds) if holds != lacks else "another of the merged states"
    try:
        validation.raise_label_sets(cols, lacks, smallest["n"], first["union"])
    except ValueError as error:
        message = f"{error}; label {label!r} is not in it but in {other}"
        raise ValueError(cols.shown(message)) from None
