"""The cost of the HTML report: ``html_report`` against the plain ``label_report`` of the same
table, end to end from Parquet, each in a fresh process (wall time and peak RSS), on each engine.

    python benchmarks/report.py --samples 1000000 --memory-limit 1GB
    python benchmarks/report.py --small   # 200 samples a model, in a temporary directory

The table is compare.py's: two models (``baseline``, ``candidate``) x n samples x 100 labels,
scores rounded to 3 decimals. The report runs with ``by="model"`` and ``baseline="baseline"``
(a paired comparison with 1,000 bootstrap replicates and 10,000 sign patterns) and writes its page;
the record holds the page's size. Writes ``benchmarks/results/report-<samples>[-<limit>].json``
(``--small``: none).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from compare import table  # noqa: E402
from measure import data_directory, environment, run  # noqa: E402

RESULTS = Path(__file__).parent / "results"


def child(kind: str, engine: str, path: str, memory_limit: str | None) -> None:
    """Time ``kind`` on ``path``; the HTML page is written beside the table."""
    import polars_rankmetrics as rm

    start = time.perf_counter()
    options = {"by": "model", "engine": engine, "memory_limit": memory_limit}
    if kind == "label_report":
        value: object = rm.label_report(path, **options).height
    else:
        page = Path(path).parent / f"report-{engine}.html"
        rm.html_report(path, baseline="baseline", path=page, **options)
        value = page.stat().st_size
    print(json.dumps({"seconds": time.perf_counter() - start, "value": value}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--memory-limit")
    parser.add_argument("--engines", default="polars,duckdb")
    parser.add_argument("--small", action="store_true", help="a tiny table, no record")
    args = parser.parse_args()
    if args.small:
        args.samples = 200
    results: dict[str, dict[str, object]] = {}
    with data_directory(args.small) as out:
        path = table(args.samples, out)
        for engine in args.engines.split(","):
            for kind in ("label_report", "html_report"):
                command = [sys.executable, __file__, "child", kind, engine, str(path)]
                done = run(command + ([args.memory_limit] if args.memory_limit else []))
                name = f"{kind} ({engine})"
                if done.returncode != 0:
                    if args.small:
                        raise SystemExit(f"{name} failed: {done.stderr[-2000:]}")
                    results[name] = {"error": done.stderr[-500:], "peak_rss_mib": done.peak_rss_mib}
                else:
                    inner = json.loads(done.stdout.strip().splitlines()[-1])
                    results[name] = {
                        "seconds": round(inner["seconds"], 2), "wall": round(done.seconds, 2),
                        "peak_rss_mib": done.peak_rss_mib,
                    }  # fmt: skip
                    if kind == "html_report":
                        results[name]["page_bytes"] = inner["value"]
                print(name, results[name], file=sys.stderr, flush=True)
    if args.small:
        return
    record = {
        **environment(), "samples": args.samples, "labels": 100, "models": 2,
        "memory_limit": args.memory_limit, "results": results,
    }  # fmt: skip
    suffix = f"-{args.memory_limit}" if args.memory_limit else ""
    out = RESULTS / f"report-{args.samples}{suffix}.json"
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        child(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else None)
    else:
        main()
