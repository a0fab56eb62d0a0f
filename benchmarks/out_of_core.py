"""Out-of-core check: the CLI on a large Parquet file under a memory budget.

    python benchmarks/out_of_core.py --samples 1000000 --labels 100 --memory-limit 1GB

Writes the file first if it is missing (benchmarks/out/), then runs
``rankmetrics evaluate FILE --engine ENGINE --memory-limit LIMIT [--metrics KEYS]`` in a child
process and prints its wall time, peak RSS (of the whole process tree: Spark's JVM too) and rows
per second as a Markdown table row. ``--engine spark`` runs a local[2] session, which keeps its
own memory.
"""

from __future__ import annotations

import argparse
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from make_data import write  # noqa: E402
from measure import run  # noqa: E402

OUT = Path(__file__).parent / "out"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--labels", type=int, default=100)
    parser.add_argument("--memory-limit", default="1GB")
    parser.add_argument("--engine", action="append", choices=("duckdb", "polars", "spark"))
    parser.add_argument("--metrics", help="comma-separated keys (default: the ranking metrics)")
    args = parser.parse_args()
    rows = args.samples * args.labels
    path = OUT / f"{args.samples}x{args.labels}.parquet"
    if not path.exists():
        print(f"writing {path} ...", file=sys.stderr)
        write(path, args.samples, args.labels)
    command = [sys.executable, "-m", "polars_rankmetrics.cli"]  # the rankmetrics command
    print(f"machine: {platform.machine()}, {platform.python_version()}, {_cpus()} cores")
    print("| engine | rows | memory limit | seconds | peak RSS (MiB) | rows/s |")
    print("|---|---|---|---|---|---|")
    for engine in args.engine or ["duckdb"]:
        # Spark keeps its own memory (a local[2] session): no --memory-limit there.
        budget = [] if engine == "spark" else ["--memory-limit", args.memory_limit]
        limit = "(own)" if engine == "spark" else args.memory_limit
        metrics = ["--metrics", args.metrics] if args.metrics else []
        done = run([*command, "evaluate", str(path), "--engine", engine, *budget, *metrics])
        if done.returncode != 0:
            print(f"| {engine} | {rows:,} | {limit} | failed: {done.stderr.strip()} | | |")
            continue
        print(
            f"| {engine} | {rows:,} | {limit} | {done.seconds:.1f} | "
            f"{done.peak_rss_mib:.0f} | {rows / done.seconds:,.0f} |"
        )
        print(done.stdout, file=sys.stderr)


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0))


if __name__ == "__main__":
    main()
