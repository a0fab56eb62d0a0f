"""Floors: the time of steps any exact evaluation of a Parquet file must take, and each metric's
time over its floor.

    python benchmarks/floors.py --samples 100000 --labels 100

Each step runs in this process, best of three, on the file of ``make_data.py``:

- reading the four columns (every metric needs them, the input checks need the label);
- the input checks as the library runs them (``polars_rankmetrics.checks.validation``): the row
  checks (nulls, NaNs, ranges: one pass), each group's label count, and the per-sample count of
  distinct labels (repeated labels, label sets), which no exact check can skip;
- one sort of the rows by sample and descending score (the tie-aware ranks LRAP, ranking loss and
  DCG need), and the same sort on one packed 64-bit key (sample id and the score's bits);
- coverage error without any sort (per sample: count the scores >= the lowest positive score);
- one window rank "max" over each sample (what lrap and ranking loss read), and the ranks "max"
  and "min" (what tie-averaged dcg reads);
- hamming loss without ranks (per sample: the share of labels predicted wrongly).

Then each metric's time from the records of ``speed.py`` (``results/speed.json``,
``results/speed-more.json``) next to its
floor (reading, the checks' count, and the one step the metric cannot do without): time / floor.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).parent))

import record  # noqa: E402
from make_data import write  # noqa: E402

from polars_rankmetrics.checks import validation  # noqa: E402
from polars_rankmetrics.inputs.columns import Columns  # noqa: E402
from polars_rankmetrics.metrics.registry import parse_keys  # noqa: E402

OUT = Path(__file__).parent / "out"


def best_of(step: Callable[[], object], runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return min(times)


def packed_key(df: pl.DataFrame) -> pl.Series:
    """Dense sample id in the high 32 bits, the float32 score's order-preserving bits (descending)
    in the low 32: one unsigned sort gives the (sample, score descending) order."""
    bits = (pl.col("score").cast(pl.Float32) + 0.0).reinterpret(dtype=pl.UInt32)
    ordered = pl.when(bits >= 2**31).then(~bits).otherwise(bits | 2**31)
    sample_id = pl.col("sample").rank("dense").cast(pl.UInt64)
    return df.select(sample_id * 2**32 + (~ordered).cast(pl.UInt64)).to_series()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--labels", type=int, default=100)
    args = parser.parse_args()
    path = OUT / f"{args.samples}x{args.labels}.parquet"
    if not path.exists():
        write(path, args.samples, args.labels)
    df = pl.read_parquet(path)
    cols, keys = Columns(), parse_keys(["lrap"])
    key = packed_key(df)
    positive = pl.col("truth").cast(pl.Boolean)
    score = pl.col("score")
    steps = {
        "read the Parquet file": lambda: pl.read_parquet(path),
        "row checks (one pass)": lambda: validation.check_rows(df.lazy(), cols, keys, ordered=True),
        "labels per group (checks)": lambda: validation.group_labels(df.lazy(), cols),
        "distinct labels per sample (checks)": lambda: df.group_by("sample").agg(
            pl.col("label").n_unique()
        ),
        "rank max over each sample (window)": lambda: df.select(
            score.rank("max", descending=True).over("sample")
        ),
        "rank max and min over each sample (windows)": lambda: df.select(
            score.rank("max", descending=True).over("sample").alias("max"),
            score.rank("min", descending=True).over("sample").alias("min"),
        ),
        "sort by (sample, score desc)": lambda: df.sort(
            ["sample", "score"], descending=[False, True]
        ),
        "sort by one packed u64 key": lambda: df.with_columns(key.alias("key")).sort("key"),
        "coverage without a sort (group min)": lambda: df.group_by("sample").agg(
            score.ge(score.filter(positive).min()).sum()
        ),
        "hamming loss without ranks (group mean)": lambda: df.group_by("sample").agg(
            (score.ge(0.5) != positive).mean()
        ),
    }
    seconds = {name: best_of(step) for name, step in steps.items()}
    print(f"| step ({df.height:,} rows) | seconds |")
    print("|---|---|")
    for name, took in seconds.items():
        print(f"| {name} | {took:.3f} |")
    saved = record.load("speed")
    if saved is None:
        print("\nno benchmarks/results/speed.json (speed.py): no metric times to compare")
        return
    # A metric's floor: reading the file, the checks, and the step its exact value cannot do
    # without.
    base = sum(seconds[name] for name in list(steps)[:4])
    ranks = seconds["rank max and min over each sample (windows)"]
    floors = {
        "coverage_error": base + seconds["coverage without a sort (group min)"],
        "lrap": base + seconds["rank max over each sample (window)"],
        "ranking_loss": base + seconds["rank max over each sample (window)"],
        "ndcg": base + min(ranks, seconds["sort by (sample, score desc)"]),
        "hamming_loss": base + seconds["hamming loss without ranks (group mean)"],
    }
    more = record.load("speed-more")  # the classification metrics' record
    results = saved["results"] + (more["results"] if more is not None else [])
    engines = [e for e in ("polars", "duckdb") if any(e in r for r in results)]
    columns = " | ".join(f"{e} | {e} / floor" for e in engines)
    print(f"\n| metric | floor | scikit-learn | {columns} |")
    print("|---|---|---|" + "---|---|" * len(engines))
    for row in results:
        if row["rows"] != df.height or row["metric"] not in floors:
            continue
        floor = floors[row["metric"]]
        sklearn = f"{row['sklearn']['seconds']:.2f} s" if "sklearn" in row else "-"
        cells = [row["metric"], f"{floor:.2f} s", sklearn]
        for engine in engines:
            took = row[engine]["seconds"]
            cells += [f"{took:.2f} s", f"{took / floor:.1f}"]
        print("| " + " | ".join(cells) + " |")
    print(f"\n(metric times: {record.measured_in(saved)})")


if __name__ == "__main__":
    main()
