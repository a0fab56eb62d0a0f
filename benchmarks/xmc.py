"""The extreme-classification run of issue 12 through the command line: a top-k table of 1M
samples x 100 predictions (100M rows, 3M labels) with its truth table and propensities, under a
1 GB budget, on each engine: wall time and peak RSS.

    python benchmarks/make_xmc.py --samples 1000000   # once
    python benchmarks/xmc.py [--samples 1000000] [--engines polars,duckdb]

Writes ``benchmarks/results/xmc.json`` (committed, with the machine and versions).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from measure import environment, run  # noqa: E402

OUT = Path(__file__).parent / "out"
RESULTS = Path(__file__).parent / "results"  # committed: a regression shows in a diff
METRICS = "precision@1,precision@3,precision@5,ndcg@1,ndcg@3,ndcg@5,psprecision@5,recall@100,lrap"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--labels", type=int, default=3_000_000)
    parser.add_argument("--engines", default="polars,duckdb")
    parser.add_argument("--memory-limit", default="1GB")
    args = parser.parse_args()
    directory = OUT / f"xmc-{args.samples}"
    results = {}
    for engine in args.engines.split(","):
        done = run([
            "rankmetrics", "evaluate", str(directory / "predictions" / "*.parquet"),
            "--truth-table", str(directory / "truth.parquet"), "--n-labels", str(args.labels),
            "--propensities", str(directory / "propensities.parquet"), "--metrics", METRICS,
            "--engine", engine, "--memory-limit", args.memory_limit, "--format", "json",
        ])  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(done.stderr)
        results[engine] = {
            "seconds": round(done.seconds, 1), "peak_rss_mib": round(done.peak_rss_mib),
            "values": json.loads(done.stdout),
        }  # fmt: skip
        print(engine, results[engine], flush=True)
    record = {
        **environment(), "samples": args.samples, "labels": args.labels,
        "memory_limit": args.memory_limit, "metrics": METRICS.split(","), "results": results,
    }  # fmt: skip
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "xmc.json").write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
