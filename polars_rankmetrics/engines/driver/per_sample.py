"""The per-sample rows of a run, spilled to Parquet bucket by bucket under a memory budget and
read back a ``by`` group at a time, sorted by sample."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from polars_rankmetrics.inputs.columns import Columns


class PerSampleRows:
    """The per-sample rows of a run, held a ``by`` group at a time: each bucket's rows of each
    group as they come, in a Parquet file under ``spill_dir`` for a run in buckets (the rows of
    the buckets done are not held while the next is evaluated) or else in memory; at the end
    each group's rows in one frame, sorted by sample (the canonical order resampling reads).

    A key's weight column equal to an earlier key's in every bucket of its group (keys weighted
    alike: the sample weight, 1 without a weight column) is read back once and shared by both
    names: it takes no memory of its own. The flags of ill-defined samples (``key/i``) are
    counted as the rows come (``ill_defined``: each key's total), and not held."""

    def __init__(self, cols: Columns, spill_dir: Path | None, weights: Sequence[str]) -> None:
        self.cols, self.spill_dir, self.weights = cols, spill_dir, list(weights)
        self.ill_defined: dict[str, list[float]] = {}
        self.parts: dict[tuple[Any, ...], list[pl.DataFrame | Path]] = {}
        self.same: dict[tuple[Any, ...], dict[str, str]] = {}  # per group: column -> its twin
        self.files = 0
        self.empty: pl.DataFrame | None = None  # the columns, for a run without any sample

    def hold(self, frame: pl.DataFrame) -> None:
        by = list(self.cols.by)
        flags = [c for c in frame.columns if c.endswith("/i")]
        if flags:
            for name, total in frame.select(pl.col(flags).sum()).row(0, named=True).items():
                self.ill_defined.setdefault(name, []).append(total)
            frame = frame.drop(flags)
        self.empty = frame.clear()
        for part in frame.partition_by(by, maintain_order=True) if by else [frame]:
            if not part.height:
                continue
            key = part.select(by).row(0) if by else ()
            held = self.parts.setdefault(key, [])
            twins = _twins(part, self.weights)
            found = self.same.setdefault(key, twins)
            self.same[key] = {c: t for c, t in found.items() if twins.get(c) == t}
            if self.spill_dir is None:
                held.append(part)
                continue
            self.files += 1
            path = self.spill_dir / f"per_sample-{self.files}.parquet"
            part.write_parquet(path)
            held.append(path)

    def groups(self) -> list[pl.DataFrame]:
        """Each group's rows, sorted by sample, groups in the order Polars sorts their ``by``
        values: together, the rows sorted by ``by`` and sample."""
        out = []
        while self.parts:
            key = next(iter(self.parts))
            held, same = self.parts.pop(key), self.same.pop(key)
            files = [p for p in held if isinstance(p, Path)]
            frames = [p for p in held if isinstance(p, pl.DataFrame)]
            names = list(pl.read_parquet_schema(files[0]) if files else frames[0].schema)
            kept = [c for c in names if c not in same]
            if files:  # read and sorted in one streaming plan: the file's rows are not held
                scanned = pl.scan_parquet(files).select(kept).sort(self.cols.sample)
                rows = scanned.collect(engine="streaming")
            else:
                rows = pl.concat(frames).select(kept).sort(self.cols.sample)
            out.append(rows.with_columns(pl.col(t).alias(c) for c, t in same.items()).select(names))
            for path in files:
                path.unlink()
        if len(out) > 1:
            firsts = pl.concat([rows.select(self.cols.by).head(1) for rows in out])
            out = [out[i] for i in firsts.with_row_index().sort(self.cols.by)["index"]]
        return out or ([] if self.empty is None else [self.empty])


def _twins(part: pl.DataFrame, weights: Sequence[str]) -> dict[str, str]:
    """Each of the ``weights`` columns of ``part`` equal to an earlier one, and that one."""
    present = [c for c in weights if c in part.columns]
    twins: dict[str, str] = {}
    for i, name in enumerate(present):
        for first in present[:i]:
            if first not in twins and part[name].equals(part[first]):
                twins[name] = first
                break
    return twins
