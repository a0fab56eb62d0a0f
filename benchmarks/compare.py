"""The cost of a decision: ``compare`` against the plain ``evaluate`` of the same metrics, and
against ranx's ``compare`` (Fisher's randomization test), end to end from Parquet, each in a
fresh process (wall time and peak RSS).

    python benchmarks/compare.py --samples 100000 [--memory-limit 1GB] [--tools ours,ranx]
    python benchmarks/compare.py --small   # 200 samples a model, in a temporary directory

The table: two models (``baseline``, ``candidate``: the synthetic table of make_data.py with two
seeds, the candidate's scores leaning towards the truth), n samples x 100 labels each. ``compare``
runs a 1,000-replicate paired bootstrap interval and a 10,000-resample permutation test for five
metrics; ranx compares the same two runs (every label a document, the positives its qrels) with
10,000 permutations, its loading from the same Parquet file included. Writes
``benchmarks/results/compare-<samples>.json`` (``--small``: none).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).parent))
from make_data import write  # noqa: E402
from measure import OUT, data_directory, environment, run, uncompiled  # noqa: E402

RESULTS = Path(__file__).parent / "results"
METRICS = ["lrap", "ndcg@10", "mrr", "map", "precision@5"]
RANX = ["ndcg@10", "mrr", "map", "precision@5"]


def table(samples: int, out: Path = OUT) -> Path:
    """The two models' table, written once to the directory ``out``."""
    path = out / f"compare-{samples}x100.parquet"
    if path.exists():
        return path
    parts = []
    for model, seed in (("baseline", 0), ("candidate", 1)):
        part = out / f"compare-{model}-{samples}.parquet"
        write(part, samples, 100, seed=seed)
        lean = 0.0 if model == "baseline" else 0.05
        parts.append(
            pl.scan_parquet(part).with_columns(
                model=pl.lit(model), score=pl.col("score") + lean * pl.col("truth")
            )
        )
    pl.concat(parts).sink_parquet(path)
    return path


def child(kind: str, path: str, permutations: int, memory_limit: str | None) -> None:
    start = time.perf_counter()
    if kind == "ranx":
        import ranx

        df = pl.read_parquet(path)
        qrels: dict[str, dict[str, int]] = {}
        truth = df.filter(pl.col("model") == "baseline", pl.col("truth") > 0)
        for sample, labels in truth.group_by("sample").agg("label").iter_rows():
            qrels[str(sample)] = {str(lab): 1 for lab in labels}
        runs = []
        for model in ("baseline", "candidate"):
            part = df.filter(pl.col("model") == model).group_by("sample").agg("label", "score")
            runs.append(
                ranx.Run(
                    {
                        str(s): {str(lab): float(v) for lab, v in zip(labels, scores, strict=True)}
                        for s, labels, scores in part.iter_rows()
                    },
                    name=model,
                )
            )
        report = ranx.compare(
            ranx.Qrels(qrels),
            runs,
            RANX,
            stat_test="fisher",
            n_permutations=permutations,
            make_comparable=True,
        )
        value = {"ranx": str(report.to_dict())[:200]}
    else:
        import polars_rankmetrics as rm

        options = {"by": "model", "memory_limit": memory_limit}
        if kind == "evaluate":
            value = rm.evaluate(path, METRICS, **options).to_dicts()
        else:
            result = rm.compare(
                path, METRICS, baseline="baseline", n_boot=1000, n_resamples=10_000, **options
            )
            value = result.to_dicts()
    print(json.dumps({"seconds": time.perf_counter() - start, "value": value}, default=str))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--memory-limit")
    parser.add_argument("--tools", default="evaluate,compare,ranx")
    parser.add_argument("--small", action="store_true", help="a tiny table, no record")
    args = parser.parse_args()
    # ranx's permutations: interpreted in a small run (measure.uncompiled), a few suffice.
    permutations = 200 if args.small else 10_000
    if args.small:
        args.samples = 200
    with data_directory(args.small) as out:
        path = table(args.samples, out)
        results = {}
        for tool in args.tools.split(","):
            command = [sys.executable, __file__, "child", tool, str(path), str(permutations)]
            command += [args.memory_limit] if args.memory_limit else []
            done = run(uncompiled(command) if args.small and tool == "ranx" else command)
            if done.returncode != 0:
                if args.small:
                    raise SystemExit(f"{tool} failed: {done.stderr[-2000:]}")
                results[tool] = {"error": done.stderr[-500:], "peak_rss_mib": done.peak_rss_mib}
            else:
                inner = json.loads(done.stdout.strip().splitlines()[-1])
                results[tool] = {
                    "seconds": round(inner["seconds"], 2), "wall": round(done.seconds, 2),
                    "peak_rss_mib": done.peak_rss_mib,
                }  # fmt: skip
            print(tool, results[tool], file=sys.stderr, flush=True)
    if args.small:
        return
    record = {
        **environment(), "samples": args.samples, "labels": 100, "models": 2,
        "memory_limit": args.memory_limit, "metrics": METRICS, "results": results,
    }  # fmt: skip
    suffix = f"-{args.memory_limit}" if args.memory_limit else ""
    out = RESULTS / f"compare-{args.samples}{suffix}.json"
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        limit = sys.argv[5] if len(sys.argv) > 5 else None
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]), limit)
    else:
        main()
