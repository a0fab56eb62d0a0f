"""Floors: the time of steps any exact evaluation of a Parquet file must take, against the 10x
targets of the speed issue.

    python benchmarks/floors.py --samples 100000 --labels 100

Each step runs in this process, best of three, on the file of ``make_data.py``:

- reading the four columns (every metric needs them, the input checks need the label);
- the checks for repeated labels and label sets (a distinct count of labels per sample);
- one sort of the rows by sample and descending score (the tie-aware ranks LRAP, ranking loss and
  DCG need), and the same sort on one packed 64-bit key (sample id and the score's bits);
- coverage error without any sort (per sample: count the scores >= the lowest positive score).

The scikit-learn path's times come from ``out/speed.json`` (``speed.py``), when present.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).parent))

from make_data import write  # noqa: E402

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
    key = packed_key(df)
    positive = pl.col("truth").cast(pl.Boolean)
    score = pl.col("score")
    steps = {
        "read the Parquet file": lambda: pl.read_parquet(path),
        "distinct labels per sample (checks)": lambda: df.group_by("sample").agg(
            pl.col("label").n_unique()
        ),
        "sort by (sample, score desc)": lambda: df.sort(
            ["sample", "score"], descending=[False, True]
        ),
        "sort by one packed u64 key": lambda: df.with_columns(key.alias("key")).sort("key"),
        "coverage without a sort (group min)": lambda: df.group_by("sample").agg(
            score.ge(score.filter(positive).min()).sum()
        ),
    }
    print(f"| step ({df.height:,} rows) | seconds |")
    print("|---|---|")
    for name, step in steps.items():
        print(f"| {name} | {best_of(step):.3f} |")
    speed = OUT / "speed.json"
    if speed.exists():
        print("\n| metric | scikit-learn path | 10x target |")
        print("|---|---|---|")
        for row in json.loads(speed.read_text()):
            if row["rows"] == df.height and "sklearn" in row:
                seconds = row["sklearn"]["seconds"]
                print(f"| {row['metric']} | {seconds:.2f} s | {seconds / 10:.3f} s |")


if __name__ == "__main__":
    main()
