"""This library against ranx and pytrec_eval on the same top-k run and qrels, end to end from
Parquet (each tool's loading included), each in a process of its own: wall time and peak RSS.

    python benchmarks/make_xmc.py --samples 1000000   # the run, once
    python benchmarks/peers.py --samples 1000000 [--tools polars,duckdb,pytrec_eval,ranx]
        [--rounds 3]
    python benchmarks/peers.py --small   # make_xmc.py's tiny run, every tool once, no record

Metrics: P@5, nDCG@5, MRR and MAP (trec_eval's ``P_5``, ``ndcg_cut_5``, ``recip_rank``,
``map``). The peers take dicts of string ids, built here from the Parquet files with Polars (the
fastest way we found); ties in the 3-decimal scores are broken by document id in trec_eval and
by order in ranx, and averaged over all orders here, so values differ in the last digits where a
true label ties with another at the cut. Writes ``benchmarks/results/peers-<samples>.json``
(committed).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from importlib.metadata import version
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).parent))
from make_xmc import SMALL, generate  # noqa: E402
from measure import data_directory, environment, run, uncompiled  # noqa: E402

RESULTS = Path(__file__).parent / "results"  # committed: a regression shows in a diff
OURS = ["precision@5", "ndcg@5", "mrr", "map"]
TREC = {"P_5": "precision@5", "ndcg_cut_5": "ndcg@5", "recip_rank": "mrr", "map": "map"}
RANX = {"precision@5": "precision@5", "ndcg@5": "ndcg@5", "mrr": "mrr", "map": "map"}


def _dicts(directory: Path) -> tuple[dict, dict]:
    predictions = pl.read_parquet(directory / "predictions" / "*.parquet")
    truth = pl.read_parquet(directory / "truth.parquet")
    run_dict: dict[str, dict[str, float]] = {}
    for sample, labels, scores in predictions.group_by("sample").agg("label", "score").iter_rows():
        run_dict[str(sample)] = {str(lab): float(s) for lab, s in zip(labels, scores, strict=True)}
    qrels: dict[str, dict[str, int]] = {}
    for sample, labels in truth.group_by("sample").agg("label").iter_rows():
        qrels[str(sample)] = {str(lab): 1 for lab in labels}
    return run_dict, qrels


def peer(tool: str, directory: Path) -> dict[str, float]:
    """One peer's means, computed in this process (the child of :func:`main`)."""
    run_dict, qrels = _dicts(directory)
    if tool == "pytrec_eval":
        import pytrec_eval

        per_query = pytrec_eval.RelevanceEvaluator(qrels, set(TREC)).evaluate(run_dict)
        return {
            ours: sum(q[measure] for q in per_query.values()) / len(per_query)
            for measure, ours in TREC.items()
        }
    import ranx

    values = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run_dict), list(RANX))
    return {RANX[name]: float(value) for name, value in values.items()}


def _bytes(size: str) -> int:
    units = {"G": 2**30, "M": 2**20}
    return int(float(size[:-1]) * units[size[-1]]) if size[-1] in units else int(size)


def _command(tool: str, directory: Path, args: argparse.Namespace) -> list[str]:
    """The command that runs ``tool`` (an engine, maybe with a budget: ``polars-1GB``, or a
    peer) on the run and qrels in ``directory``."""
    engine, _, limit = tool.partition("-")
    if engine in ("polars", "duckdb"):
        return [
            sys.executable, "-m", "polars_rankmetrics.cli", "evaluate",
            str(directory / "predictions" / "*.parquet"),
            "--truth-table", str(directory / "truth.parquet"), "--n-labels", str(args.labels),
            "--metrics", ",".join(OURS), "--engine", engine, "--format", "json",
            *(["--memory-limit", limit] if limit else []),
        ]  # fmt: skip
    return [
        "prlimit", f"--as={_bytes(args.peer_memory)}", sys.executable, __file__,
        "--peer", tool, str(directory),
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--tools", default="polars,polars-1GB,duckdb-1GB,pytrec_eval,ranx")
    parser.add_argument(
        "--peer-memory", default="20G",
        help="address-space limit of a peer's process (prlimit), so that one that loads more "
        "than the machine holds fails instead of swapping (default: %(default)s)",
    )  # fmt: skip
    parser.add_argument("--labels", type=int, default=3_000_000)
    parser.add_argument(
        "--rounds", type=int, default=1,
        help="run every tool this many times, in turn; each records the median (default: "
        "%(default)s)",
    )  # fmt: skip
    parser.add_argument("--small", action="store_true", help="a tiny run, no record")
    # internal: run one peer here, on the run in a directory
    parser.add_argument("--peer", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peer:
        print(json.dumps(peer(args.peer[0], Path(args.peer[1]))))
        return
    if args.small:
        args.samples, args.labels = SMALL["samples"], SMALL["labels"]
    with data_directory(args.small) as out:
        directory = out / f"xmc-{args.samples}"
        if args.small:
            generate(directory, *SMALL.values())
        results = measure(directory, args)
    if args.small:
        failed = {tool: r["error"] for tool, r in results.items() if r["error"] is not None}
        if failed:
            raise SystemExit(f"failed: {failed}")
        return
    record = {
        **environment(), "command": "python benchmarks/peers.py " + " ".join(sys.argv[1:]),
        "peers": {name: version(name) for name in ("ranx", "pytrec-eval-terrier")},
        "peer_memory": args.peer_memory, "samples": args.samples, "metrics": OURS,
        "results": results,
    }  # fmt: skip
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"peers-{args.samples}.json").write_text(json.dumps(record, indent=2) + "\n")


def measure(directory: Path, args: argparse.Namespace) -> dict[str, dict]:
    """Every tool of ``args.tools`` on the run in ``directory``, ``args.rounds`` times in turn:
    the median seconds, the runs, the peak RSS, the values or the error."""
    commands = {tool: _command(tool, directory, args) for tool in args.tools.split(",")}
    runs: dict[str, list] = {tool: [] for tool in commands}
    for _ in range(args.rounds):  # the tools in turn, so that a slow spell slows them all
        for tool, command in commands.items():
            for file in directory.rglob("*.parquet"):  # each tool starts from the page cache
                file.read_bytes()
            runs[tool].append(run(uncompiled(command) if args.small else command))
            print(tool, round(runs[tool][-1].seconds, 2), flush=True)
    results = {}
    for tool, done in runs.items():
        outputs = [json.loads(d.stdout) if d.returncode == 0 else None for d in done]
        results[tool] = {
            "seconds": round(statistics.median(d.seconds for d in done), 2),
            "runs": [round(d.seconds, 2) for d in done],
            "peak_rss_mib": round(max(d.peak_rss_mib for d in done)),
            "values": outputs[0], "error": None if outputs[0] else done[0].stderr[-500:],
        }  # fmt: skip
    return results


if __name__ == "__main__":
    main()
