"""Floors that bound: per metric, the least work any exact evaluation of the Parquet file must do
on this machine, measured in the same run as the metric on each engine.

    python benchmarks/floors.py --size 100000x100 [--rounds 3]
    python benchmarks/floors.py --small          # 1,000 x 10, two metrics, once, no record
    python benchmarks/floors.py --render         # docs/performance.md's table from the record

A metric's floor is what no exact evaluation of make_data.py's table can skip:

- reading the columns it needs: sample, label, score and truth (every metric here reads the
  score and the truth, and the checks the sample and the label);
- the input checks' unavoidable work. The nulls of each column: counted from the column's
  validity, not a pass. NaN scores: one pass over the score (a NaN ranks nowhere, and no
  Parquet statistic excludes one). Repeated labels: no statistic tells either, so a pass per
  sample: on Polars, the proof that every row's (sample, label) comes after the previous row's
  (one pass of comparisons, which then lets the samples be read as runs of rows), or where the
  rows are not in that order a count of distinct labels per sample; on DuckDB an OR of one bit
  per label per sample. Label sets (each sample has the table's labels): from the same
  per-sample counts and the label range. The table's boolean truth and float32 score rule out
  the truth's range and the score's precision checks by type, and it has no weight column;
  an exact evaluation skips those checks here, and so does the floor;
- one grouped pass: per sample, its rows and its positives (the least a per-sample metric
  reads: hamming loss a sum as cheap, coverage error the lowest positive score on top; the macro
  metrics' per-label pass comes on top of it), reduced to one row.

Both engines run the floor, each at its best; the floor is the faster (the least work on this
machine). Every step, the floors and each metric's ``evaluate(path, [metric], engine=E)``, runs
in a fresh process, the clock started after the imports (Polars, DuckDB and the package, for
the floors and the metrics alike);
the rounds are interleaved (each round runs every step once) and each figure is the fastest of
its rounds, the median beside it, with the CPU seconds (user + system, all threads) inside the
clock, which a busy machine changes less. Each metric's ratio to the floor is checked against
the targets: Polars within 1.5x, DuckDB within 2x. The record
(``benchmarks/results/floors.json``: the machine, versions, command and load average) is written
only when the load average stays below ``--max-load`` (one minute, before and after), and
docs/performance.md's table is regenerated from it.
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

import record  # noqa: E402
from make_data import write  # noqa: E402
from measure import data_directory, environment, run  # noqa: E402

NAME = "floors"
ENGINES = ("polars", "duckdb")
# The speed tables' metrics (speed.py and its classification set).
METRICS = [
    "coverage_error", "lrap", "ranking_loss", "ndcg", "ndcg@10",
    "f1_samples", "hamming_loss", "average_precision_macro", "roc_auc_macro",
]  # fmt: skip
TARGETS = {"polars": 1.5, "duckdb": 2.0}  # a metric's time over its floor, at most
COLUMNS = ["sample", "label", "score", "truth"]


def polars_floor(path: str) -> dict:
    """The floor on Polars: the file read once, the row checks and the order of (sample, label)
    in one pass, then one aggregation per sample, over runs of rows where that order holds."""
    import polars as pl

    from polars_rankmetrics.metrics.ranks import ordered_by

    df = pl.read_parquet(path, columns=COLUMNS)
    checks = df.select(
        nulls=pl.sum_horizontal(pl.col(c).null_count() for c in COLUMNS),
        nan_scores=pl.col("score").is_nan().sum(),
        ordered=ordered_by(df.schema, ["sample", "label"]),
        lowest_label=pl.col("label").min(),
        highest_label=pl.col("label").max(),
    ).row(0, named=True)
    truth = pl.col("truth")
    if checks["ordered"]:  # no label repeats within a sample
        samples, labels = df.lazy().with_columns(pl.col("sample").set_sorted()), pl.len()
    else:
        samples, labels = df.lazy(), pl.col("label").n_unique()
    per_sample = samples.group_by("sample").agg(rows=pl.len(), labels=labels, positives=truth.sum())
    facts = per_sample.select(
        samples=pl.len(),
        fewest_rows=pl.col("rows").min(),
        most_rows=pl.col("rows").max(),
        repeated=(pl.col("rows") - pl.col("labels")).sum(),
        positives=pl.col("positives").sum(),
    ).collect()
    span = checks["highest_label"] - checks["lowest_label"] + 1
    found = {name: checks[name] for name in ("nulls", "nan_scores")}
    return {**facts.row(0, named=True), **found, "label_span": span}


def duckdb_floor(path: str) -> dict:
    """The floor on DuckDB: the label range first, then one aggregation per sample counting its
    distinct labels by an OR of their bits (for at most 127 labels; a count of distinct labels
    beyond), its NaN scores and its nulls, reduced to one row."""
    import duckdb

    con = duckdb.connect()
    lowest, highest = con.execute(
        "SELECT min(label), max(label) FROM read_parquet($path)", {"path": path}
    ).fetchone()
    bits = highest - lowest < 127
    labels = (
        "bit_count(bit_or(CAST(1 AS HUGEINT) << CAST(label - $lowest AS HUGEINT)))"
        if bits
        else "count(DISTINCT label)"
    )
    facts = con.execute(
        f"""
        SELECT count(*) AS samples, min(n_rows) AS fewest_rows, max(n_rows) AS most_rows,
            sum(n_rows - n_labels) AS repeated, sum(positives) AS positives,
            sum(nulls) AS nulls, sum(nan_scores) AS nan_scores
        FROM (
            SELECT sample, count(*) AS n_rows, {labels} AS n_labels,
                count(*) FILTER (WHERE truth) AS positives,
                4 * count(*) - count(sample) - count(label) - count(score) - count(truth)
                    AS nulls,
                count(*) FILTER (WHERE isnan(score)) AS nan_scores
            FROM read_parquet($path)
            GROUP BY sample
        )
        """,
        {"path": path, **({"lowest": lowest} if bits else {})},
    )
    names = [column[0] for column in facts.description]
    found = dict(zip(names, facts.fetchone(), strict=True))
    return {**found, "label_span": highest - lowest + 1}


def child(kind: str, engine: str, path: str, metric: str | None = None) -> None:
    """One step in this fresh process: the floor on ``engine``, or ``metric`` evaluated on it.
    The clock starts after the imports (for the floors, Polars, DuckDB and the ordered-rows
    check the Polars floor borrows from the package)."""
    import duckdb  # noqa: F401
    import polars  # noqa: F401

    import polars_rankmetrics as rm
    from polars_rankmetrics.engines.base import get_engine

    get_engine(engine)
    floors = {"polars": polars_floor, "duckdb": duckdb_floor}
    start, cpu = time.perf_counter(), time.process_time()
    if kind == "metric":
        value = rm.evaluate(path, [metric], engine=engine).row(0, named=True)
    else:
        value = floors[engine](path)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(json.dumps({"seconds": seconds, "cpu": cpu, "value": value}, default=float))


def step(kind: str, engine: str, path: Path, metric: str | None = None) -> dict:
    """``child`` in a fresh process: its seconds, CPU seconds, value and peak RSS."""
    done = run([sys.executable, __file__, "child", kind, engine, str(path),
                *([metric] if metric else [])])  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{kind} {engine} {metric or ''} failed:\n{done.stderr[-2000:]}")
    inner = json.loads(done.stdout.strip().splitlines()[-1])
    return {**inner, "peak_rss_mib": round(done.peak_rss_mib)}


def summary(runs: list[dict]) -> dict:
    """The fastest of the rounds, the median, and each round's seconds and CPU seconds."""
    return {
        "seconds": round(min(r["seconds"] for r in runs), 3),
        "median": round(statistics.median(r["seconds"] for r in runs), 3),
        "cpu": round(min(r["cpu"] for r in runs), 3),
        "runs": [round(r["seconds"], 3) for r in runs],
        "cpu_runs": [round(r["cpu"], 3) for r in runs],
        "peak_rss_mib": max(r["peak_rss_mib"] for r in runs),
    }


def check_floors(values: dict[str, dict]) -> None:
    """Both floors found the same table: a floor that skipped work would not."""
    first, *others = values.values()
    for other in others:
        for name in ("samples", "fewest_rows", "most_rows", "repeated", "positives", "nulls",
                     "nan_scores", "label_span"):  # fmt: skip
            if int(first[name]) != int(other[name]):
                raise SystemExit(f"the floors disagree on {name}: {values}")
    complete = first["fewest_rows"] == first["most_rows"] == first["label_span"]
    if first["repeated"] or first["nulls"] or first["nan_scores"] or not complete:
        raise SystemExit(f"make_data.py's table should pass the checks: {first}")


def measure(path: Path, metrics: list[str], rounds: int) -> dict:
    """Every step, ``rounds`` times in turn, each in a fresh process."""
    floors: dict[str, list[dict]] = {engine: [] for engine in ENGINES}
    timed: dict[str, dict[str, list[dict]]] = {m: {e: [] for e in ENGINES} for m in metrics}
    for _ in range(rounds):
        for engine in ENGINES:
            floors[engine].append(step("floor", engine, path))
            print("floor", engine, round(floors[engine][-1]["seconds"], 3), file=sys.stderr)
        check_floors({engine: runs[-1]["value"] for engine, runs in floors.items()})
        for metric in metrics:
            for engine in ENGINES:
                timed[metric][engine].append(step("metric", engine, path, metric))
                took = timed[metric][engine][-1]["seconds"]
                print(metric, engine, round(took, 3), file=sys.stderr, flush=True)
    floor = {engine: summary(runs) for engine, runs in floors.items()}
    least = min(ENGINES, key=lambda engine: floor[engine]["seconds"])
    results = []
    for metric in metrics:
        row: dict = {"metric": metric}
        for engine in ENGINES:
            row[engine] = summary(timed[metric][engine])
            ratio = row[engine]["seconds"] / floor[least]["seconds"]
            row[f"{engine}/floor"] = round(ratio, 2)
            row[f"{engine}/floor cpu"] = round(row[engine]["cpu"] / floor[least]["cpu"], 2)
            row[f"{engine} within"] = ratio <= TARGETS[engine]
        results.append(row)
    return {"floor": {**floor, "least": least, "seconds": floor[least]["seconds"]},
            "metrics": results}  # fmt: skip


def table(saved: dict) -> str:
    """The docs' table: each metric's fastest time on each engine over the floor."""
    floor = saved["floor"]
    lines = [
        f"| metric ({saved['rows'] / 1e6:g}M rows) | polars | polars / floor | duckdb | "
        "duckdb / floor |",
        "|---|---|---|---|---|",
    ]
    for row in saved["metrics"]:
        cells = [row["metric"]]
        for engine in ENGINES:
            mark = "" if row[f"{engine} within"] else f" (> {TARGETS[engine]:g}x)"
            cells += [f"{row[engine]['seconds']:.2f} s", f"{row[f'{engine}/floor']:.2f}x{mark}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        f"The floor: {floor['seconds']:.3f} s ({floor['least']}; Polars' "
        f"{floor['polars']['seconds']:.3f} s, DuckDB's {floor['duckdb']['seconds']:.3f} s), the "
        f"fastest of {len(floor['polars']['runs'])} rounds in fresh processes, as each metric. "
        + record.measured_in(saved)
        + f" Load average (1 minute) before and after: {saved['load'][0]}, {saved['load'][1]}.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="100000x100", help="SAMPLESxLABELS")
    parser.add_argument("--metrics", nargs="+", default=METRICS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--max-load", type=float, default=2.0,
        help="write the record only when the load average stays below this (default: "
        "%(default)s, on 2 cores)",
    )  # fmt: skip
    parser.add_argument("--render", action="store_true", help="measure nothing: render the record")
    parser.add_argument(
        "--small", action="store_true",
        help="1,000 samples x 10 labels, coverage error and average precision, one round: "
        "no record",
    )  # fmt: skip
    args = parser.parse_args()
    if args.render:
        saved = record.load(NAME)
        if saved is None:
            raise SystemExit(f"no record {record.RESULTS / NAME}.json to render")
        record.render(NAME, table(saved))
        return
    if args.small:
        args.size, args.rounds = "1000x10", 1
        args.metrics = ["coverage_error", "average_precision_macro"]
    n_samples, n_labels = map(int, args.size.split("x"))
    load = [round(os.getloadavg()[0], 2)]
    with data_directory(args.small) as out:
        path = out / f"{args.size}.parquet"
        if not path.exists():
            write(path, n_samples, n_labels)
        for file in (path,):  # every step starts from the page cache
            file.read_bytes()
        measured = measure(path, args.metrics, args.rounds)
    load.append(round(os.getloadavg()[0], 2))
    saved = {
        **environment(), "command": "python benchmarks/floors.py " + " ".join(sys.argv[1:]),
        "load": load, "rows": n_samples * n_labels, "rounds": args.rounds,
        "targets": TARGETS, **measured,
    }  # fmt: skip
    print(table(saved))
    if args.small:
        return
    if max(load) >= args.max_load:
        print(json.dumps(saved, indent=2))  # the figures, for the reader
        print(f"\nnot recorded: the load average reached {max(load)} (--max-load "
              f"{args.max_load}); re-run on a quiet machine", file=sys.stderr)  # fmt: skip
        return
    target = record.RESULTS / f"{NAME}.json"
    target.write_text(json.dumps(saved, indent=2) + "\n")
    print(f"wrote {target}", file=sys.stderr)
    record.render(NAME, table(saved))


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        child(*sys.argv[2:])
    else:
        main()
