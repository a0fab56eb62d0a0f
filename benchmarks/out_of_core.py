"""Out-of-core check: the CLI on a large Parquet file under a memory budget.

    python benchmarks/out_of_core.py --samples 1000000 --labels 100 --memory-limit 1GB
    python benchmarks/out_of_core.py --small   # 2,000 x 10 under 64MB, both engines, no record

Writes the file first if it is missing (benchmarks/out/), then runs
``rankmetrics evaluate FILE --engine ENGINE --memory-limit LIMIT [--metrics KEYS]`` in a child
process and records its wall time and peak RSS (of the whole process tree: Spark's JVM too) in
benchmarks/results/out_of_core.json (record.py), from which the README's table is regenerated.
``--engine spark`` runs a local[2] session, which keeps its own memory. ``--render`` only
regenerates the table.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import record  # noqa: E402
from make_data import write  # noqa: E402
from measure import data_directory, run  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--labels", type=int, default=100)
    parser.add_argument("--memory-limit", default="1GB")
    parser.add_argument("--engine", action="append", choices=("duckdb", "polars", "spark"))
    parser.add_argument("--metrics", help="comma-separated keys (default: the ranking metrics)")
    parser.add_argument("--render", action="store_true", help="only regenerate the README table")
    parser.add_argument(
        "--small", action="store_true",
        help="2,000 samples x 10 labels under 64MB on DuckDB and Polars: no record",
    )  # fmt: skip
    args = parser.parse_args()
    if args.render:
        render()
        return
    if args.small:
        args.samples, args.labels, args.memory_limit = 2_000, 10, "64MB"
        args.engine = args.engine or ["duckdb", "polars"]
    rows = args.samples * args.labels
    command = [sys.executable, "-m", "polars_rankmetrics.cli"]  # the rankmetrics command
    print(f"machine: {platform.machine()}, {platform.python_version()}, {_cpus()} cores")
    measured = []
    with data_directory(args.small) as out:
        path = out / f"{args.samples}x{args.labels}.parquet"
        if not path.exists():
            print(f"writing {path} ...", file=sys.stderr)
            write(path, args.samples, args.labels)
        for engine in args.engine or ["duckdb"]:
            # Spark keeps its own memory (a local[2] session): no --memory-limit there.
            budget = [] if engine == "spark" else ["--memory-limit", args.memory_limit]
            metrics = ["--metrics", args.metrics] if args.metrics else []
            done = run([*command, "evaluate", str(path), "--engine", engine, *budget, *metrics])
            if done.returncode != 0:
                raise SystemExit(f"{engine} failed: {done.stderr.strip()}")
            print(done.stdout, file=sys.stderr)
            measured.append({
                "engine": engine, "rows": rows, "metrics": args.metrics or "ranking (default)",
                "memory_limit": None if engine == "spark" else args.memory_limit,
                "seconds": done.seconds, "peak_rss_mib": done.peak_rss_mib,
                "date": time.strftime("%Y-%m-%d"),
            })  # fmt: skip
    if args.small:
        print("\n".join(lines(measured)))
        return
    # A run replaces the record's rows of the same engine, size and metrics, and keeps the rest
    # (each row carries its date).
    saved = record.load(NAME)
    kept = [r for r in (saved or {}).get("results", []) if not any(_same(r, m) for m in measured)]
    record.save(NAME, kept + measured)
    render()


NAME = "out_of_core"


def _same(a: dict, b: dict) -> bool:
    return all(a[k] == b[k] for k in ("engine", "rows", "metrics"))


def render() -> None:
    """The README's out-of-core table, from the record."""
    saved = record.load(NAME)
    if saved is None:
        return
    table = "\n".join(lines(saved["results"]))
    print(table)
    record.render(NAME, table + "\n\n" + record.measured_in(saved))


def lines(rows: list[dict]) -> list[str]:
    """The out-of-core table of ``rows``, as Markdown lines."""
    table = [
        "| engine | rows | metrics | memory limit | seconds | peak RSS | rows/s | measured |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: (r["metrics"], r["rows"], r["engine"])):
        table.append(
            f"| {r['engine']} | {r['rows'] / 1e6:g}M | {r['metrics'].replace(',', ', ')} | "
            f"{r['memory_limit'] or '(own)'} | {r['seconds']:.1f} | {r['peak_rss_mib']:,.0f} MiB "
            f"| {r['rows'] / r['seconds'] / 1e6:.2f}M | {r['date']} |"
        )
    return table


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0))


if __name__ == "__main__":
    main()
