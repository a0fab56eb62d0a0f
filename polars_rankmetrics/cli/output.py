"""How ``rankmetrics`` writes what it computed: the formats of a result, the note under a
comparison, and the progress line on a terminal."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence

import polars as pl

# What starting the Spark engine costs (docs/engines.md, Spark).
SPARK_START = (
    "a local session in a new JVM: its start and the planning of the queries take tens of seconds"
)
# The output formats of --output's file extensions.
_SUFFIXES = {".json": "json", ".csv": "csv", ".md": "markdown", ".tex": "latex"}


def output_format(args: argparse.Namespace) -> str:
    """--format, else the --output file's extension (.json, .csv; .md, .tex for compare and
    leaderboard), else a table."""
    if args.format:
        return str(args.format)
    fmt = _SUFFIXES.get(os.path.splitext(args.output or "")[1].lower(), "table")
    rendered = args.command in ("compare", "leaderboard")
    return fmt if rendered or fmt in ("json", "csv") else "table"


def render(result: pl.DataFrame, fmt: str, grouped: bool) -> str:
    if fmt == "json":
        # Polars writes every column type (dates, decimals, categoricals, structs); NaN (lwlrap of
        # a group without positives) is not JSON: it is written as null.
        rows = json.loads(result.fill_nan(None).write_json())
        return json.dumps(rows if grouped else rows[0], indent=2, allow_nan=False)
    if fmt == "csv":
        return result.write_csv().rstrip("\n")
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_hide_dataframe_shape=True, fmt_str_lengths=80):
        return str(result)


def compared(result: pl.DataFrame, by: Sequence[str]) -> str:
    """The note under compare's table: how many samples wins/ties/losses count, where a metric
    undefined for some samples leaves them out."""
    totals = (result["wins"] + result["ties"] + result["losses"]).to_list()
    usual = Counter(totals).most_common(1)[0][0]
    # Of all pairs, a row names its two models.
    sides = [by, [f"{b}_other" for b in by]] if "other_value" in result.columns else [by]
    models = result.select(*(c for side in sides for c in side)).n_unique() > 1
    others = [
        f"{row['metric']}{' (' + _pair(row, sides) + ')' if models else ''}: {total:,}"
        for row, total in zip(result.iter_rows(named=True), totals, strict=True)
        if total != usual
    ]
    counted = f"{usual:,}" + (f" ({'; '.join(others)})" if others else "")
    return (
        "wins/ties/losses count the samples where the metric is defined for both models: "
        f"{counted}. A sample without positives has no lwlrap; with --zero-division nan, a set "
        "metric's 0/0 has no value."
    )


def _pair(row: dict[str, object], sides: Sequence[Sequence[str]]) -> str:
    """A row's model (or, of all pairs, its two models: "A vs B") as the note names it."""
    return " vs ".join(", ".join(str(row[c]) for c in side) for side in sides)


class ProgressLine:
    """The progress line on a terminal's stderr: the share done and the seconds since the start,
    redrawn every second, since a step may run long between two reports (Spark starts a JVM,
    then plans each query silently). A context: the line is cleared when the run ends, however
    it ends."""

    def __init__(self, engine: str) -> None:
        self.engine, self.share, self.started = engine, 0.0, time.monotonic()
        self._lock, self._stop = threading.RLock(), threading.Event()
        self._ticker = threading.Thread(target=self._tick, daemon=True)

    def __enter__(self) -> ProgressLine:
        if self.engine == "spark":
            print(f"rankmetrics: starting Spark ({SPARK_START})", file=sys.stderr, flush=True)
        self._draw()
        self._ticker.start()
        return self

    def __call__(self, done: float, total: float) -> None:
        self.share = done / total if total else 0.0
        self._draw()

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            self._draw()

    def _draw(self) -> None:
        with self._lock:
            if not self._stop.is_set():
                seconds = time.monotonic() - self.started
                print(f"\rrankmetrics: {100 * self.share:3.0f}% done, {seconds:.0f} s\033[K",
                      end="", file=sys.stderr, flush=True)  # fmt: skip

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._stop.set()
            print("\r\033[K", end="", file=sys.stderr, flush=True)
        self._ticker.join()
