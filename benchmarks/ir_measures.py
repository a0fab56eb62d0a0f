"""``ir_measures.calc_aggregate`` with and without this library's provider
(``polars_rankmetrics.ir_measures.register()``), on the run and qrels of ``benchmarks/trec.py``
given as pandas DataFrames (columns ``query_id``, ``doc_id``, ``score`` / ``relevance``, ids as
text), as PyTerrier passes them: wall time of the call alone (the files are read first, not
timed), each in a fresh process, and the process's peak RSS.

    python benchmarks/ir_measures.py [--topics 10000] [--docs 1000] [--rounds 1]
    python benchmarks/ir_measures.py --small   # 200 x 100, once each, no record
    python benchmarks/ir_measures.py --render  # docs/ir_measures.md's table from the record

The measures: ``nDCG@10, P@5, AP, RR, R@100`` (``--measures``), served by ir_measures' default
pipeline (pytrec_eval for all five) or by the provider. The record keeps both sets of values
and the largest difference between them. Writes
``benchmarks/results/ir_measures-<topics>x<docs>.json`` (committed).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from measure import data_directory, fastest, rounds, run  # noqa: E402
from record import load, measured_in, save  # noqa: E402
from record import render as record_render  # noqa: E402
from trec import write_files  # noqa: E402

# This file's name is the library's: the directory leaves the path so that ``import
# ir_measures`` finds the library, not this script.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

SETUPS = ("default", "provider")
MEASURES = "nDCG@10,P@5,AP,RR,R@100"


def frames(run_path: Path, qrels_path: Path) -> tuple[object, object]:
    """The run and qrels files as the pandas DataFrames ir_measures and PyTerrier pass."""
    import polars as pl

    read = {"separator": " ", "has_header": False, "schema_overrides": {"query_id": pl.String}}
    run_table = pl.read_csv(
        run_path, new_columns=["query_id", "q0", "doc_id", "rank", "score", "tag"], **read
    ).select("query_id", "doc_id", pl.col("score").cast(pl.Float64))
    qrels = pl.read_csv(
        qrels_path, new_columns=["query_id", "iteration", "doc_id", "relevance"], **read
    ).select("query_id", "doc_id", pl.col("relevance").cast(pl.Int64))
    return run_table.to_pandas(), qrels.to_pandas()


def child(setup: str, run_path: Path, qrels_path: Path, names: str) -> None:
    """One timed call in this process; prints its seconds and values as JSON."""
    import ir_measures

    import polars_rankmetrics.ir_measures as rm_ir

    run_frame, qrels = frames(run_path, qrels_path)
    measures = [ir_measures.parse_measure(name) for name in names.split(",")]
    if setup == "provider":
        rm_ir.register()
    start = time.perf_counter()
    values = ir_measures.calc_aggregate(measures, qrels, run_frame)
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "values": {str(m): v for m, v in values.items()}}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--measures", default=MEASURES)
    parser.add_argument("--rounds", type=rounds, default=1)
    parser.add_argument("--small", action="store_true", help="200 x 100, no record")
    parser.add_argument("--note", default="", help="a note for the record")
    parser.add_argument("--render", action="store_true", help="docs' table from the record")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)  # internal: one call
    args = parser.parse_args()
    if args.child:
        setup, run_path, qrels_path = args.child
        child(setup, Path(run_path), Path(qrels_path), args.measures)
        return
    if args.render:
        render(f"ir_measures-{args.topics}x{args.docs}")
        return
    if args.small:
        args.topics, args.docs = 200, 100
    with data_directory(args.small) as out:
        run_path, qrels_path = write_files(
            out / f"trec-{args.topics}x{args.docs}", args.topics, args.docs
        )
        results = {}
        for setup in SETUPS:
            command = [sys.executable, __file__, "--measures", args.measures,
                       "--child", setup, str(run_path), str(qrels_path)]  # fmt: skip
            measured = []
            for _ in range(args.rounds):
                load = os.getloadavg()[0]
                done = run(command)
                if done.returncode != 0:
                    raise SystemExit(f"{setup} failed:\n{done.stderr}")
                printed = json.loads(done.stdout.splitlines()[-1])
                measured.append({**printed, "peak_rss_mib": round(done.peak_rss_mib),
                                 "load_before": load})  # fmt: skip
            results[setup] = fastest(measured)
            print(setup, f"{results[setup]['seconds']:.2f} s", results[setup]["values"])
    default, provider = results["default"], results["provider"]
    difference = max(
        abs(default["values"][name] - provider["values"][name]) for name in default["values"]
    )
    speedup = default["seconds"] / provider["seconds"]
    print(f"speed-up {speedup:.1f}x, largest difference {difference:.2e}")
    if args.small:
        return
    name = f"ir_measures-{args.topics}x{args.docs}"
    save(name, [{
        "command": shlex.join(["python", "benchmarks/ir_measures.py", *sys.argv[1:]]),
        "topics": args.topics, "docs": args.docs, "measures": args.measures.split(","),
        "input": "pandas DataFrames (query_id, doc_id, score / relevance; ids as text)",
        "ir_measures": version("ir-measures"),
        "default": default, "provider": provider, "speedup": round(speedup, 2),
        "largest_difference": difference, "note": args.note,
    }])  # fmt: skip
    render(name)


def render(name: str) -> None:
    """docs/ir_measures.md's table, from the record."""
    saved = load(name)
    if saved is None:
        return
    row = saved["results"][0]
    lines = [
        f"`{row['command']}` (`benchmarks/results/{name}.json`): "
        f"`ir_measures.calc_aggregate([{', '.join(row['measures'])}], qrels, run)` on "
        f"{row['topics']:,} topics x {row['docs']:,} documents given as pandas DataFrames, "
        "the call alone timed, each setup in a fresh process:",
        "",
        "| setup | seconds | peak RSS | load average before |",
        "|---|---|---|---|",
    ]
    for setup, text in (
        ("default", "ir_measures' default pipeline (pytrec_eval)"),
        ("provider", "`polars_rankmetrics.ir_measures.register()` first"),
    ):
        measured = row[setup]
        lines.append(
            f"| {text} | {measured['seconds']:.1f} | {measured['peak_rss_mib']:,} MiB | "
            f"{measured['load_before']:.1f} |"
        )  # fmt: skip
    lines += [
        "",
        f"{row['speedup']:.1f}x faster; the five means differ by at most "
        f"{row['largest_difference']:.0e}. {row['note']}".strip(),
        "",
        measured_in(saved),
    ]
    print("\n".join(lines))
    record_render("ir_measures", "\n".join(lines))


if __name__ == "__main__":
    main()
