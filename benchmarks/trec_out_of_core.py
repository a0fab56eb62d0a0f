"""trec_eval's measures on a run larger than the memory budget: ``rankmetrics trec`` under
``--memory-limit`` on each engine, in a fresh process: wall time, CPU seconds (user + sys of
the process and its children) and peak RSS.

    python benchmarks/trec_out_of_core.py                  # the record: 100,000 x 1,000
    python benchmarks/trec_out_of_core.py --small          # seconds, tiny data, no record (CI)
    python benchmarks/trec_out_of_core.py --engines duckdb --rounds 3 --measure official

The run: ``--topics`` topics x ``--docs`` documents (100,000 x 1,000: 100 million lines, 2.8
GB of text), made as ``benchmarks/trec.py`` makes its run (scores rounded to 2 decimals, so
many ties; graded qrels of ``--docs`` / 5 documents a topic, half of them retrieved, a few -1;
1% of the topics without qrels), written in slices of topics so that writing it takes little
memory, once, to ``benchmarks/out/`` (ignored by git). Each engine prints trec_eval's summary
lines; the record says whether every engine printed the same ones, and whether each one's
peak RSS stayed within 1.5 times the memory limit. Writes
``benchmarks/results/trec-out-of-core.json`` (committed) only where the load average was below
3 before every run (else it prints the figures and the command to take them again).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).parent))
from measure import data_directory, environment, run  # noqa: E402

from polars_rankmetrics.inputs.sizes import parse_size  # noqa: E402

RESULTS = Path(__file__).parent / "results"  # committed: a regression shows in a diff
BUSY = 3  # a load average at or above this: no record
# The peak RSS a run may reach: this many times the memory limit (the process's own memory,
# the engine's and the reader's included).
OVER_BUDGET = 1.5
SLICE = 5_000  # topics written at a time


def write_files(directory: Path, topics: int, docs: int, seed: int = 0) -> tuple[Path, Path]:
    """The run and qrels files of the docstring, written once per size, ``SLICE`` topics at a
    time (each slice drawn from its own seed: the same arguments write the same files)."""
    run_path, qrels_path = directory / "run.txt", directory / "qrels.txt"
    if run_path.exists() and qrels_path.exists():
        return run_path, qrels_path
    directory.mkdir(parents=True, exist_ok=True)
    partial_run, partial_qrels = run_path.with_suffix(".part"), qrels_path.with_suffix(".part")
    with partial_run.open("wb") as run_file, partial_qrels.open("wb") as qrels_file:
        for first in range(0, topics, SLICE):
            count = min(SLICE, topics - first)
            run_slice, qrels_slice = _slice(first, count, docs, seed)
            run_slice.write_csv(run_file, separator=" ", include_header=False)
            qrels_slice.write_csv(qrels_file, separator=" ", include_header=False)
    partial_run.rename(run_path)
    partial_qrels.rename(qrels_path)
    return run_path, qrels_path


def _slice(first: int, topics: int, docs: int, seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Topics ``first`` to ``first + topics - 1``: their run lines and qrels lines."""
    rng = np.random.default_rng([seed, first])
    pool = 2 * docs  # each topic retrieves docs documents out of a pool of 2 * docs ids
    retrieved = np.argsort(rng.random((topics, pool)), axis=1)[:, :docs]
    scores = np.round(rng.random((topics, docs)) * 10, 2)
    order = np.argsort(-scores, axis=1, kind="stable")
    topic_ids = np.repeat(np.arange(first, first + topics), docs)
    run_slice = pl.DataFrame({
        "qid": topic_ids, "iter": "Q0",
        "docno": "D" + pl.Series(np.take_along_axis(retrieved, order, 1).ravel()).cast(pl.String),
        "rank": np.tile(np.arange(1, docs + 1), topics),
        "score": np.take_along_axis(scores, order, 1).ravel(), "tag": "bench",
    })  # fmt: skip
    judged = docs // 5
    # Half the judged documents among the retrieved, half among the others of the pool.
    inside = retrieved[:, : judged // 2]
    is_retrieved = np.zeros((topics, pool), dtype=bool)
    np.put_along_axis(is_retrieved, retrieved, True, axis=1)
    outside = np.argsort(rng.random((topics, pool)), axis=1)
    others = np.array([row[~is_retrieved[i, row]][: judged - judged // 2]
                       for i, row in enumerate(outside)])  # fmt: skip
    judged_ids = np.concatenate([inside, others], axis=1)
    grades = rng.choice([-1, 0, 1, 2, 3], size=judged_ids.shape, p=[0.02, 0.68, 0.15, 0.1, 0.05])
    qrels_slice = pl.DataFrame({
        "qid": np.repeat(np.arange(first, first + topics), judged_ids.shape[1]), "iter": 0,
        "docno": "D" + pl.Series(judged_ids.ravel()).cast(pl.String), "rel": grades.ravel(),
    }).filter(pl.col("qid") % 100 != 99)  # 1% of the topics have no qrels  # fmt: skip
    return run_slice, qrels_slice


def measured(command: list[str]) -> dict[str, object]:
    """One fresh process: wall seconds, user + sys CPU seconds of it and its children, peak
    RSS (MiB), the load average before it, and its output."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = run(command)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "seconds": round(done.seconds, 2), "cpu_seconds": round(cpu, 2),
        "peak_rss_mib": round(done.peak_rss_mib), "load_before": round(load, 2),
        "returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=100_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--memory-limit", default="1GB")
    parser.add_argument("--engines", default="duckdb,polars")
    parser.add_argument("--measure", default="official", help="trec_eval's -m (repeatable: a,b)")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each engine, interleaved")
    parser.add_argument("--small", action="store_true", help="tiny data, no record")
    args = parser.parse_args()
    if args.small:
        args.topics, args.docs = 200, 100
    engines = args.engines.split(",")
    with data_directory(args.small) as out, tempfile.TemporaryDirectory() as spill:
        directory = out / f"trec-out-of-core-{args.topics}x{args.docs}"
        run_path, qrels_path = write_files(directory, args.topics, args.docs)
        measures = [m for name in args.measure.split(",") for m in ("-m", name)]
        runs: dict[str, list[dict[str, object]]] = {engine: [] for engine in engines}
        for _ in range(args.rounds):
            for engine in engines:
                command = [
                    sys.executable, "-m", "polars_rankmetrics", "trec", *measures,
                    "--engine", engine, "--memory-limit", args.memory_limit,
                    "--temp-dir", spill, "--quiet", str(qrels_path), str(run_path),
                ]  # fmt: skip
                done = measured(command)
                shown = {k: v for k, v in done.items() if k not in ("stdout", "stderr")}
                print(engine, json.dumps(shown), file=sys.stderr)
                if done["returncode"] != 0:
                    print(str(done["stderr"])[-3000:], file=sys.stderr)
                runs[engine].append(done)
    ceiling = OVER_BUDGET * parse_size(args.memory_limit) / 2**20  # MiB
    outputs = {e: {str(r["stdout"]) for r in rs if r["returncode"] == 0} for e, rs in runs.items()}
    printed = set().union(*outputs.values())
    # The lines some engine's output lacks: where the engines differ.
    lines = [set(text.splitlines()) for text in printed]
    differing = sorted(set().union(*lines) - set.intersection(*lines)) if lines else []
    summary = {
        engine: {
            "ok": all(r["returncode"] == 0 for r in rs),
            "seconds": [r["seconds"] for r in rs], "cpu_seconds": [r["cpu_seconds"] for r in rs],
            "peak_rss_mib": [r["peak_rss_mib"] for r in rs],
            "load_before": [r["load_before"] for r in rs],
            "min_seconds": min(float(str(r["seconds"])) for r in rs),
            "median_seconds": statistics.median(float(str(r["seconds"])) for r in rs),
            "within_budget": all(float(str(r["peak_rss_mib"])) <= ceiling for r in rs),
        }
        for engine, rs in runs.items()
    }  # fmt: skip
    result = {
        "topics": args.topics, "docs": args.docs, "lines": args.topics * args.docs,
        "measure": args.measure, "memory_limit": args.memory_limit,
        "peak_rss_ceiling_mib": round(ceiling),
        "same_output": len(printed) == 1, "differing_lines": differing[:40],
        "engines": summary,
    }  # fmt: skip
    print(json.dumps(result, indent=2))
    if args.small:
        return
    quiet = all(load < BUSY for s in summary.values() for load in s["load_before"])
    if not quiet:
        print(
            f"load average {BUSY} or more before a run: no record written; on a quiet machine, "
            f"run: python benchmarks/trec_out_of_core.py --rounds 3", file=sys.stderr,
        )  # fmt: skip
        return
    record = RESULTS / "trec-out-of-core.json"
    record.write_text(json.dumps({**environment(), **result}, indent=2) + "\n")


if __name__ == "__main__":
    main()
