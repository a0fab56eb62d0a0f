"""trec_eval's measures end to end, from run and qrels files to numbers: ``rankmetrics trec``
(``rm.trec_eval`` behind it), pytrec_eval-terrier and the trec_eval binary, on the same files,
each in a fresh process: wall time and peak RSS.

    make -C /tmp/trec_eval              # trec_eval 10.0's source (github.com/usnistgov/trec_eval)
    python benchmarks/trec.py --trec-eval /tmp/trec_eval/trec_eval [--topics 10000]
        [--docs 1000] [--measure all_trec] [--rounds 1]
    python benchmarks/trec.py --floor [--topics 10000] [--docs 1000] [--rounds 3]
    python benchmarks/trec.py --small   # 200 x 100, the floor and the tools once, no record

The run: ``--topics`` topics x ``--docs`` documents, scores rounded to 2 decimals (about 100
distinct values a topic: many ties, which trec_eval breaks by docno). The qrels: graded (0 to 3)
judgements of ``--docs`` / 5 documents a topic, half of them retrieved, a few -1 (in the pool,
unjudged); 1% of the run's topics have no qrels (every tool ignores them: a qrels topic missing
from the run stops trec_eval 10.0 without -c). Seeded: the same arguments write
the same files (to ``benchmarks/out/``, ignored by git). Every tool is asked for the same
``-m``; where one computes fewer measures the record says how many each printed, and the
largest difference between the summary values the tools share. Writes
``benchmarks/results/trec-<topics>x<docs>.json`` (committed; ``-<measure>`` before ``.json``
for another ``-m`` than ``all_trec``), with the machine's load average before each run.

``--floor`` times, in a fresh process each round, the least work any evaluation of these files
does, stage by stage, and records it under ``floor`` in the same file (the tools' results
kept): both files read into the columns the measures need (Polars' CSV reader), the one pass
that tells whether each topic's documents already come in trec_eval's order (score
descending, then docno descending), the one sort into that order, the join with the qrels,
and one grouped pass over the joined rows (a sum per topic).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).parent))
from measure import data_directory, environment, run  # noqa: E402

RESULTS = Path(__file__).parent / "results"  # committed: a regression shows in a diff
TOOLS = ("rankmetrics", "pytrec_eval", "trec_eval")
BUSY = 3  # a load average above this is noted in the record


def write_files(directory: Path, topics: int, docs: int, seed: int = 0) -> tuple[Path, Path]:
    """The run and qrels files of the docstring, written once per size."""
    run_path, qrels_path = directory / "run.txt", directory / "qrels.txt"
    if run_path.exists() and qrels_path.exists():
        return run_path, qrels_path
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    # Each topic retrieves docs documents out of a pool of 2 * docs ids.
    pool = 2 * docs
    retrieved = np.argsort(rng.random((topics, pool)), axis=1)[:, :docs]
    scores = np.round(rng.random((topics, docs)) * 10, 2)
    order = np.argsort(-scores, axis=1, kind="stable")
    topic_ids = np.repeat(np.arange(topics), docs)
    pl.DataFrame({
        "qid": topic_ids, "iter": "Q0",
        "docno": "D" + pl.Series(np.take_along_axis(retrieved, order, 1).ravel()).cast(pl.String),
        "rank": np.tile(np.arange(1, docs + 1), topics),
        "score": np.take_along_axis(scores, order, 1).ravel(), "tag": "bench",
    }).write_csv(run_path, separator=" ", include_header=False)  # fmt: skip
    judged = docs // 5
    # Half the judged documents among the retrieved, half among the others of the pool.
    inside = retrieved[:, : judged // 2]
    outside = np.argsort(rng.random((topics, pool)), axis=1)
    is_retrieved = np.zeros((topics, pool), dtype=bool)
    np.put_along_axis(is_retrieved, retrieved, True, axis=1)
    others = np.array([row[~is_retrieved[i, row]][: judged - judged // 2]
                       for i, row in enumerate(outside)])  # fmt: skip
    judged_ids = np.concatenate([inside, others], axis=1)
    grades = rng.choice([-1, 0, 1, 2, 3], size=judged_ids.shape, p=[0.02, 0.68, 0.15, 0.1, 0.05])
    pl.DataFrame({
        "qid": np.repeat(np.arange(topics), judged_ids.shape[1]), "iter": 0,
        "docno": "D" + pl.Series(judged_ids.ravel()).cast(pl.String), "rel": grades.ravel(),
    }).filter(  # 1% of the run's topics have no qrels
        pl.col("qid") % 100 != 99
    ).write_csv(qrels_path, separator=" ", include_header=False)  # fmt: skip
    return run_path, qrels_path


def pytrec_eval_lines(qrels_path: Path, run_path: Path, measure: str) -> str:
    """pytrec_eval's summary, as trec_eval's lines: its own parsers, its evaluator, then the
    mean of every measure over the topics (the geometric mean for gm_*, as trec_eval)."""
    import pytrec_eval

    with open(qrels_path) as qrels_file, open(run_path) as run_file:
        qrels, run_dict = pytrec_eval.parse_qrel(qrels_file), pytrec_eval.parse_run(run_file)
    per_topic = pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(run_dict)
    names = sorted({name for values in per_topic.values() for name in values})
    lines = []
    for name in names:
        values = [values[name] for values in per_topic.values()]
        summary = pytrec_eval.compute_aggregated_measure(name, values)
        lines.append(f"{name:<22}\tall\t{summary:.4f}")
    return "\n".join(lines) + "\n"


def summaries(text: str) -> dict[str, float]:
    """The summary lines (topic ``all``) of trec_eval's output, as numbers."""
    values = {}
    for line in text.splitlines():
        name, topic, value = (field.strip() for field in line.split("\t"))
        if topic == "all":
            try:
                values[name] = float(value)
            except ValueError:  # runid, relstring
                continue
    return values


def command(tool: str, qrels: Path, run_file: Path, args: argparse.Namespace) -> list[str]:
    if tool == "rankmetrics":
        return [sys.executable, "-m", "polars_rankmetrics.cli", "trec", "--quiet",
                "-m", args.measure, str(qrels), str(run_file)]  # fmt: skip
    if tool == "trec_eval":
        if args.trec_eval is None:
            raise SystemExit("--trec-eval: the path of the trec_eval binary built from 10.0")
        return [args.trec_eval, "-m", args.measure, str(qrels), str(run_file)]
    return [sys.executable, __file__, "--peer", str(qrels), str(run_file), "-m", args.measure]


def floor_stages(qrels_path: Path, run_path: Path) -> dict[str, object]:
    """The floor's stages (see the docstring), timed in this process: seconds each, whether
    the run came in trec_eval's order, and the topics of the grouped pass."""
    stages: dict[str, float] = {}
    start = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal start
        now = time.perf_counter()
        stages[name] = round(now - start, 3)
        start = now

    options = {"separator": " ", "has_header": False, "quote_char": None}
    run_table = pl.read_csv(
        run_path, columns=[0, 2, 4],
        schema_overrides={"column_0": pl.String, "column_4": pl.Float64}, **options,
    ).rename({"column_0": "qid", "column_2": "docno", "column_4": "score"})  # fmt: skip
    qrels = pl.read_csv(
        qrels_path, columns=[0, 2, 3],
        schema_overrides={"column_0": pl.String, "column_3": pl.Int64}, **options,
    ).rename({"column_0": "qid", "column_2": "docno", "column_3": "rel"})  # fmt: skip
    lap("read")
    same = pl.col("qid") == pl.col("qid").shift(1)
    later = (pl.col("score") < pl.col("score").shift(1)) | (
        (pl.col("score") == pl.col("score").shift(1)) & (pl.col("docno") < pl.col("docno").shift(1))
    )
    # In order, the sort could be skipped (topics must also come as runs of rows: checked by
    # the sort's key, not here).
    in_order = run_table.select((~same | later).all()).item()
    lap("order_check")
    ordered = run_table.sort(["qid", "score", "docno"], descending=[False, True, True])
    lap("sort")
    position = pl.int_range(1, pl.len() + 1).over("qid").alias("position")
    joined = ordered.with_columns(position).join(
        qrels, on=["qid", "docno"], how="left", maintain_order="left"
    )
    lap("join")
    gain = pl.col("rel").fill_null(0).clip(lower_bound=0) / pl.col("position")
    topics = joined.group_by("qid").agg(gain.sum()).height
    lap("grouped_pass")
    return {"stages": stages, "in_order": in_order, "topics": topics}


def floor(args: argparse.Namespace, qrels_path: Path, run_path: Path) -> dict[str, object]:
    """The floor's stages in a fresh process per round, with CPU seconds and peak RSS."""
    rounds = []
    for _ in range(args.rounds):
        for file in (run_path, qrels_path):
            file.read_bytes()
        load = round(os.getloadavg()[0], 2)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = run([sys.executable, __file__, "--floor-stages", str(qrels_path), str(run_path)])
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        rounds.append({"seconds": round(done.seconds, 2), **json.loads(done.stdout),
                       "cpu_seconds": round(cpu, 2), "peak_rss_mib": round(done.peak_rss_mib),
                       "load_before": load})  # fmt: skip
        print("floor", rounds[-1], flush=True)
    return {
        "what": "read both files, check the order, sort, join, one grouped pass (Polars)",
        "seconds": round(statistics.median(r["seconds"] for r in rounds), 2),
        "min_seconds": min(r["seconds"] for r in rounds),
        "rounds": rounds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("-m", "--measure", default="all_trec")
    parser.add_argument("--trec-eval", help="the trec_eval binary built from its 10.0 source")
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument(
        "--rounds", type=int, default=1,
        help="run every tool this many times, in turn; each records the median",
    )  # fmt: skip
    parser.add_argument("--note", default="", help="a note for the record")
    parser.add_argument("--peer", nargs=2, help=argparse.SUPPRESS)  # internal: pytrec_eval here
    parser.add_argument("--floor", action="store_true", help="time the floor (see above)")
    parser.add_argument("--floor-stages", nargs=2, help=argparse.SUPPRESS)  # internal
    parser.add_argument(
        "--small", action="store_true",
        help="200 topics x 100 documents in a temporary directory, the floor too, no record",
    )  # fmt: skip
    args = parser.parse_args()
    if args.peer:
        print(pytrec_eval_lines(Path(args.peer[0]), Path(args.peer[1]), args.measure), end="")
        return
    if args.floor_stages:
        print(json.dumps(floor_stages(Path(args.floor_stages[0]), Path(args.floor_stages[1]))))
        return
    if args.small:
        args.topics, args.docs, args.rounds = 200, 100, 1
        if args.trec_eval is None:
            print("trec_eval not run: no --trec-eval binary given")
            args.tools = ",".join(t for t in args.tools.split(",") if t != "trec_eval")
    with data_directory(args.small) as out:
        measure(args, out)


def measure(args: argparse.Namespace, out: Path) -> None:
    """The tools (or, with ``--floor``, the floor) on the files of ``--topics`` x ``--docs``
    under ``out``; the record, except in ``--small`` mode, which stops where the tools fail or
    disagree beyond trec_eval's 4 printed decimals."""
    run_path, qrels_path = write_files(out / f"trec-{args.topics}x{args.docs}", args.topics,
                                       args.docs)  # fmt: skip
    measure = "" if args.measure == "all_trec" else f"-{args.measure}"
    path = RESULTS / f"trec-{args.topics}x{args.docs}{measure}.json"
    if args.small:
        print("floor", floor(args, qrels_path, run_path)["seconds"], "s")
    elif args.floor:
        record = json.loads(path.read_text()) if path.exists() else {}
        record["floor"] = floor(args, qrels_path, run_path) | {"environment": environment()}
        path.write_text(json.dumps(record, indent=2) + "\n")
        print("wrote", path)
        return
    tools = args.tools.split(",")
    commands = {tool: command(tool, qrels_path, run_path, args) for tool in tools}
    runs: dict[str, list] = {tool: [] for tool in tools}
    loads: dict[str, list] = {tool: [] for tool in tools}
    for _ in range(args.rounds):  # the tools in turn, so that a slow spell slows them all
        for tool in tools:
            for file in (run_path, qrels_path):  # each tool starts from the page cache
                file.read_bytes()
            loads[tool].append(round(os.getloadavg()[0], 2))
            runs[tool].append(run(commands[tool]))
            done = runs[tool][-1]
            print(tool, round(done.seconds, 2), "s", done.returncode, flush=True)
            if done.returncode != 0:
                print(done.stderr[-500:], file=sys.stderr)
    values = {
        tool: summaries(done[0].stdout) if done[0].returncode == 0 else {}
        for tool, done in runs.items()
    }
    shared = set.intersection(*(set(v) for v in values.values())) if values else set()
    differences = {
        f"{a} - {b}": max((abs(values[a][m] - values[b][m]) for m in shared), default=None)
        for i, a in enumerate(tools) for b in tools[i + 1:]
    }  # fmt: skip
    results = {
        tool: {
            "command": " ".join(commands[tool]),
            "seconds": round(statistics.median(d.seconds for d in done), 2),
            "runs": [round(d.seconds, 2) for d in done],
            "load_before": loads[tool],
            "peak_rss_mib": round(max(d.peak_rss_mib for d in done)),
            "summary_values": len(values[tool]),
            "error": None if done[0].returncode == 0 else done[0].stderr[-500:],
        }
        for tool, done in runs.items()
    }
    highest = max(load for values in loads.values() for load in values)
    busy = (
        f"load average up to {highest} (> {BUSY}) on 2 cores: the times are slow, "
        "the ratios between tools the figure to read; "
        if highest > BUSY
        else ""
    )
    record = {
        **environment(), "topics": args.topics, "docs": args.docs, "measure": args.measure,
        "note": busy + args.note,
        "run_lines": args.topics * args.docs,
        "versions": _versions(args),
        "largest_difference_of_shared_summaries": differences,
        "shared_summaries": len(shared), "results": results,
    }  # fmt: skip
    if args.small:
        # pytrec_eval-terrier interpolates iprec_at_recall (and so 11pt_avg) by trec_eval 9's
        # rule, the others by 10.0's (docs/trec.md): those are left out of its comparisons.
        failed = [tool for tool, result in results.items() if result["error"] is not None]
        apart = {
            f"{a} - {b}": m for i, a in enumerate(tools) for b in tools[i + 1:] for m in shared
            if abs(values[a][m] - values[b][m]) > 1e-4
            and not ("pytrec_eval" in (a, b) and m.startswith(("iprec_at_recall", "11pt_avg")))
        }  # fmt: skip
        if failed or apart or not shared:
            raise SystemExit(f"failed: {failed}; shared summaries {len(shared)}, apart: {apart}")
        print("shared summaries", len(shared), "largest differences", differences)
        return
    RESULTS.mkdir(exist_ok=True)
    if path.exists() and "floor" in (previous := json.loads(path.read_text())):
        record["floor"] = previous["floor"]
    path.write_text(json.dumps(record, indent=2) + "\n")
    print("wrote", path)
    fastest_peer = min(
        (r["seconds"] for t, r in results.items() if t != "rankmetrics" and r["error"] is None),
        default=math.nan,
    )
    if "rankmetrics" in results:
        print(
            "rankmetrics against the fastest peer:",
            fastest_peer / results["rankmetrics"]["seconds"],
        )


def _versions(args: argparse.Namespace) -> dict[str, str | None]:
    from importlib.metadata import version

    trec_eval = None
    if args.trec_eval is not None:
        done = subprocess.run([args.trec_eval, "-v"], capture_output=True, text=True)
        trec_eval = (done.stderr or done.stdout).strip()
    return {"pytrec_eval-terrier": version("pytrec-eval-terrier"), "trec_eval": trec_eval}


if __name__ == "__main__":
    main()
