"""The extreme-classification run of issue 12 through the command line: a top-k table of 1M
samples x 100 predictions (100M rows, 3M labels) with its truth table and propensities, under a
1 GB budget, on each engine: wall time and peak RSS.

    python benchmarks/make_xmc.py --samples 1000000   # once
    python benchmarks/xmc.py [--samples 1000000] [--engines polars,duckdb] [--rounds 3]
        [--runs ranking,xmc,labels,frequency]
    python benchmarks/xmc.py --small   # make_xmc.py's tiny run, in a temporary directory

Four runs (:data:`RUNS`), each a process of its own per engine: the ranking keys; the
extreme-classification keys over samples (pyxclib's ratio PSP@k, PSnDCG@k and PSR@k, hits and
R-precision); the keys over labels (napkinXC's coverage@k, macro P@k and R@k: a count per label
of the 3M); and ``rm.by_label_frequency`` over 5 bins of the training counts (``train.parquet``),
which evaluates its keys once per bin. Each engine runs ``--rounds`` times in turn (default 3:
one run alone moves by up to 15% on this machine); the seconds are the fastest round's, every
round's beside them, and the peak RSS the highest of any round. Writes
``benchmarks/results/xmc.json`` (committed, with the machine, versions and load average);
``--small`` writes no record.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from make_xmc import SMALL, generate  # noqa: E402
from measure import data_directory, environment, fastest, rounds, run  # noqa: E402

RESULTS = Path(__file__).parent / "results"  # committed: a regression shows in a diff
RUNS = {
    "ranking": "precision@1,precision@3,precision@5,ndcg@1,ndcg@3,ndcg@5,psprecision@5,recall@100,"
    "lrap",
    "xmc": "psprecision_ratio@1,psprecision_ratio@5,psndcg_ratio@5,psrecall_ratio@5,hits@5,"
    "r_precision@5",
    "labels": "label_coverage@1,label_coverage@5,macro_precision@5,macro_recall@5",
    "frequency": "precision@5,psprecision@5,psprecision_ratio@5",
}
BINS = 5
# rm.by_label_frequency has no command: a child process calls it, as the command would.
FREQUENCY = """
import json, sys
import polars_rankmetrics as rm
d, keys, labels, engine, limit = sys.argv[1:]
bins = rm.by_label_frequency(
    d + "/predictions/*.parquet", keys.split(","), truth_table=d + "/truth.parquet",
    train=d + "/train.parquet", bins={bins}, n_labels=int(labels),
    propensities=d + "/propensities.parquet", engine=engine, memory_limit=limit,
)
print(json.dumps(bins.to_dicts()))
""".format(bins=BINS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--labels", type=int, default=3_000_000)
    parser.add_argument("--engines", default="polars,duckdb")
    parser.add_argument("--memory-limit", default="1GB")
    parser.add_argument("--rounds", type=rounds, default=3)
    parser.add_argument("--runs", default=",".join(RUNS), help="of " + ", ".join(RUNS))
    parser.add_argument("--small", action="store_true", help="a tiny run, no record")
    args = parser.parse_args()
    if args.small:
        args.samples, args.labels, args.rounds = SMALL["samples"], SMALL["labels"], 1
    engines, names = args.engines.split(","), args.runs.split(",")
    unknown = [name for name in names if name not in RUNS]
    if unknown:
        parser.error(f"unknown run {unknown[0]!r}; the runs are {', '.join(RUNS)}")
    load = [round(os.getloadavg()[0], 2)]
    with data_directory(args.small) as out:
        directory = out / f"xmc-{args.samples}"
        if args.small:
            generate(directory, *SMALL.values())
        runs = {(name, engine): [] for name in names for engine in engines}
        for _ in range(args.rounds):
            for name, engine in runs:
                runs[name, engine].append(evaluate(directory, name, engine, args))
    load.append(round(os.getloadavg()[0], 2))
    if args.small:
        return
    results = {
        name: {"metrics": RUNS[name].split(","),
               **({"bins": BINS} if name == "frequency" else {}),
               "results": {engine: fastest(runs[name, engine]) for engine in engines}}
        for name in names
    }  # fmt: skip
    record = {
        **environment(), "samples": args.samples, "labels": args.labels,
        "memory_limit": args.memory_limit, "rounds": args.rounds, "load": load, "runs": results,
    }  # fmt: skip
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "xmc.json").write_text(json.dumps(record, indent=2) + "\n")


def evaluate(directory: Path, name: str, engine: str, args: argparse.Namespace) -> dict:
    """The run ``name`` of :data:`RUNS` on the data in ``directory``, the ``rankmetrics``
    command's or (``frequency``) :data:`FREQUENCY`'s: seconds, peak RSS, values."""
    if name == "frequency":
        command = [sys.executable, "-c", FREQUENCY, str(directory), RUNS[name], str(args.labels),
                   engine, args.memory_limit]  # fmt: skip
    else:
        command = [
            sys.executable, "-m", "polars_rankmetrics.cli", "evaluate",
            str(directory / "predictions" / "*.parquet"),
            "--truth-table", str(directory / "truth.parquet"), "--n-labels", str(args.labels),
            "--propensities", str(directory / "propensities.parquet"), "--metrics", RUNS[name],
            "--engine", engine, "--memory-limit", args.memory_limit, "--format", "json",
        ]  # fmt: skip
    done = run(command)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    result = {
        "seconds": round(done.seconds, 1), "peak_rss_mib": round(done.peak_rss_mib),
        "values": json.loads(done.stdout),
    }  # fmt: skip
    print(name, engine, result, flush=True)
    return result


if __name__ == "__main__":
    main()
