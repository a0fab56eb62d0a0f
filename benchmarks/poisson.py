"""Issue #36 point 7c: ``compare`` with the Poisson bootstrap by hashed units and hashed sign
patterns against the plain ``evaluate`` of the same metrics, end to end from Parquet, each in a
fresh process (wall time and peak RSS), the tools interleaved and repeated.

    python benchmarks/poisson.py --samples 100000 [--repeats 3] [--memory-limit 1GB]
    python benchmarks/poisson.py --small   # 200 samples a model, each tool once, no record

The table is compare.py's: two models, n samples x 100 labels each. ``evaluate``: the five
metrics by model. ``poisson``: ``compare(..., bootstrap="poisson")``, a 1,000-replicate
interval of each delta and a 10,000-pattern permutation test; ``multinomial``: the same with
the default draws of every sample. Each figure is the median of the repeats; the record keeps
every run. Writes ``benchmarks/results/poisson-<samples>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from compare import METRICS, table  # noqa: E402
from measure import data_directory, environment, run  # noqa: E402

RESULTS = Path(__file__).parent / "results"
TOOLS = ("evaluate", "poisson", "multinomial")


def child(kind: str, path: str, memory_limit: str | None) -> None:
    import polars_rankmetrics as rm

    start = time.perf_counter()
    options = {"by": "model", "memory_limit": memory_limit}
    if kind == "evaluate":
        value = rm.evaluate(path, METRICS, **options).to_dicts()
    else:
        result = rm.compare(
            path, METRICS, baseline="baseline", n_boot=1000, n_resamples=10_000,
            bootstrap=kind, **options,
        )  # fmt: skip
        value = result.to_dicts()
    print(json.dumps({"seconds": time.perf_counter() - start, "value": value}, default=str))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--memory-limit")
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--small", action="store_true", help="a tiny table, no record")
    args = parser.parse_args()
    if args.small:
        args.samples, args.repeats = 200, 1
    tools = args.tools.split(",")
    runs: dict[str, list[dict[str, float]]] = {tool: [] for tool in tools}
    # The machine's load before and after: other work running beside the measure slows every
    # tool, so the ratios hold better than the seconds.
    load = [round(os.getloadavg()[0], 2)]
    with data_directory(args.small) as out:
        path = table(args.samples, out)
        for _ in range(args.repeats):
            for tool in tools:
                command = [sys.executable, __file__, "child", tool, str(path)]
                done = run(command + ([args.memory_limit] if args.memory_limit else []))
                if done.returncode != 0:
                    raise SystemExit(f"{tool} failed: {done.stderr[-500:]}")
                inner = json.loads(done.stdout.strip().splitlines()[-1])
                runs[tool].append({
                    "seconds": round(inner["seconds"], 3), "wall": round(done.seconds, 3),
                    "peak_rss_mib": round(done.peak_rss_mib, 1),
                })  # fmt: skip
                print(tool, runs[tool][-1], file=sys.stderr, flush=True)
    if args.small:
        return
    load.append(round(os.getloadavg()[0], 2))
    results = {
        tool: {
            "seconds": statistics.median(r["seconds"] for r in found),
            "wall": statistics.median(r["wall"] for r in found),
            "peak_rss_mib": max(r["peak_rss_mib"] for r in found),
            "runs": found,
        }
        for tool, found in runs.items()
    }
    ratios = {
        f"{tool}/evaluate": round(results[tool]["seconds"] / results["evaluate"]["seconds"], 3)
        for tool in tools
        if tool != "evaluate" and "evaluate" in results
    }
    record = {
        **environment(), "samples": args.samples, "labels": 100, "models": 2,
        "memory_limit": args.memory_limit, "metrics": METRICS, "n_boot": 1000,
        "n_resamples": 10_000, "repeats": args.repeats, "load_average": load, "results": results,
        "ratios": ratios,
    }  # fmt: skip
    suffix = f"-{args.memory_limit}" if args.memory_limit else ""
    out = RESULTS / f"poisson-{args.samples}{suffix}.json"
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(ratios, file=sys.stderr)
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        child(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
    else:
        main()
