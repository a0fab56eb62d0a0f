"""Speed and memory, side by side: the scikit-learn path against evaluate() on each engine.

    python benchmarks/speed.py --sizes 100000x100 1000000x100 --sklearn-max-rows 10000000
    python benchmarks/speed.py --small   # 1,000 x 10, coverage error, no record or README
    python benchmarks/speed.py --sizes 100000x100 --rounds 5

For every size, writes the synthetic Parquet file if missing (make_data.py), then times in a
fresh child process each:
  (a) what a user does without this library: read the file, pivot it to dense matrices, call
      scikit-learn's metric (coverage_error, lrap, ranking_loss, ndcg, ndcg@10);
  (b) evaluate(path, [metric]) on the Polars and the DuckDB engine, and all default metrics at once.
Each clock starts after the libraries are imported (scikit-learn, numpy and Polars for (a), the
engine's library for (b)); the record's ``wall`` is the whole child process, imports included.
``--rounds`` (default 3) times each in turn (every round runs each measurement once, so a busy
spell falls on all of them alike); a figure is the fastest of its rounds, which a run in a
fresh process reaches when nothing else takes the cores (one run alone moves by up to 20% on
this machine), and the record keeps every round's seconds beside it; its peak RSS is the
highest of any round.
Prints a Markdown table (seconds, speed-up over scikit-learn, peak RSS, rows per second), records
the figures in benchmarks/results/speed.json (record.py: machine, versions, date), regenerates
the README's table from it and, when matplotlib is installed, benchmarks/speed.png
(speed-more.json and .png for another ``--metrics`` set, such as the classification metrics:
``--metrics f1_samples hamming_loss average_precision_macro roc_auc_macro``). ``--render``
regenerates the README tables and plots from the records without measuring.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import record  # noqa: E402
from make_data import write  # noqa: E402
from measure import data_directory, fastest, rounds, run  # noqa: E402

METRICS = ["coverage_error", "lrap", "ranking_loss", "ndcg", "ndcg@10"]
# The threshold and curve metrics (predicted: score >= 0.5), for --metrics.
CLASSIFICATION = ["f1_samples", "hamming_loss", "average_precision_macro", "roc_auc_macro"]


def sklearn_child(metric: str, path: str) -> None:
    import numpy as np
    import polars as pl
    from sklearn import metrics as skm

    start = time.perf_counter()
    df = pl.read_parquet(path).sort("sample", "label")
    n_samples = df["sample"].n_unique()
    y_true = df["truth"].to_numpy().reshape(n_samples, -1).astype(np.int8)
    y_score = df["score"].to_numpy().reshape(n_samples, -1)
    y_pred = (y_score >= 0.5).astype(np.int8)
    call = {
        "coverage_error": lambda: skm.coverage_error(y_true, y_score),
        "lrap": lambda: skm.label_ranking_average_precision_score(y_true, y_score),
        "ranking_loss": lambda: skm.label_ranking_loss(y_true, y_score),
        "ndcg": lambda: skm.ndcg_score(y_true, y_score),
        "ndcg@10": lambda: skm.ndcg_score(y_true, y_score, k=10),
        "f1_samples": lambda: skm.f1_score(y_true, y_pred, average="samples", zero_division=0),
        "hamming_loss": lambda: skm.hamming_loss(y_true, y_pred),
        "average_precision_macro": lambda: skm.average_precision_score(y_true, y_score),
        "roc_auc_macro": lambda: skm.roc_auc_score(y_true, y_score),
    }[metric]
    value = call()
    print(json.dumps({"value": float(value), "seconds": time.perf_counter() - start}))


def ours_child(engine: str, metric: str, path: str) -> None:
    import polars_rankmetrics as rm
    from polars_rankmetrics.engines.base import get_engine

    # The engine's library is imported before the clock starts (DuckDB: 0.12 s), as the
    # scikit-learn path's numpy, Polars and scikit-learn are; "wall" in the record has it all.
    get_engine(engine)
    start = time.perf_counter()
    result = rm.evaluate(path, None if metric == "all" else [metric], engine=engine)
    print(json.dumps({"value": result.row(0, named=True), "seconds": time.perf_counter() - start}))


def measure(kind: list[str]) -> dict:
    done = run([sys.executable, __file__, "child", *kind])
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(kind)} failed:\n{done.stderr}")
    inner = json.loads(done.stdout.strip().splitlines()[-1])
    return {"seconds": inner["seconds"], "wall": done.seconds, "peak_rss_mib": done.peak_rss_mib}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["100000x100", "1000000x100"])
    parser.add_argument("--sklearn-max-rows", type=int, default=10_000_000)
    parser.add_argument("--engines", nargs="+", default=["polars", "duckdb"])
    parser.add_argument(
        "--rounds", type=rounds, default=3,
        help="times each measurement in turn this many times; the fastest is kept (default 3)",
    )  # fmt: skip
    parser.add_argument(
        "--metrics", nargs="+", default=[*METRICS, "all"],
        help="metrics to time ('all': the default set in one call); also "
        + ", ".join(CLASSIFICATION),
    )  # fmt: skip
    parser.add_argument(
        "--render", action="store_true",
        help="measure nothing: regenerate the README tables and plots from benchmarks/results/",
    )  # fmt: skip
    parser.add_argument(
        "--small", action="store_true",
        help="1,000 samples x 10 labels, coverage error: the tables and the plot printed or "
        "written to a temporary directory, no record",
    )  # fmt: skip
    args = parser.parse_args()
    if args.render:
        render_all()
        return
    if args.small:
        args.sizes, args.metrics, args.rounds = ["1000x10"], ["coverage_error"], 1
    results = []
    with data_directory(args.small) as out:
        for size in args.sizes:
            n_samples, n_labels = map(int, size.split("x"))
            rows = n_samples * n_labels
            path = out / f"{size}.parquet"
            if not path.exists():
                write(path, n_samples, n_labels)
            kinds = {
                metric: {
                    **({"sklearn": ["sklearn", metric, str(path)]}
                       if metric != "all" and rows <= args.sklearn_max_rows else {}),
                    **{engine: ["ours", engine, metric, str(path)] for engine in args.engines},
                }
                for metric in args.metrics
            }  # fmt: skip
            runs: dict[str, dict[str, list[dict]]] = {
                metric: {tool: [] for tool in tools} for metric, tools in kinds.items()
            }
            for _ in range(args.rounds):
                for metric, tools in kinds.items():
                    for tool, kind in tools.items():
                        runs[metric][tool].append(measure(kind))
            for metric, tools in runs.items():
                row = {"rows": rows, "metric": metric}
                row |= {tool: fastest(timed) for tool, timed in tools.items()}
                results.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
        if args.small:
            print(table(results, args.engines))
            print(readme_table(results, args.engines))
            plot(results, args.engines, out / "speed.png")
            return
    # The default set makes the README's first table; another set is recorded beside it.
    name = "speed" if args.metrics == parser.get_default("metrics") else "speed-more"
    print(f"wrote {record.save(name, results)}", file=sys.stderr)
    print(table(results, args.engines))
    render_all()


def render_all() -> None:
    """The README's speed tables and the plots, from the recorded runs."""
    for name in ("speed", "speed-more"):
        saved = record.load(name)
        if saved is None:
            continue
        rows = saved["results"]
        engines = [e for e in ("polars", "duckdb", "spark") if any(e in r for r in rows)]
        record.render(name, readme_table(rows, engines) + "\n\n" + record.measured_in(saved))
        plot(rows, engines, Path(__file__).parent / f"{name}.png")


def readme_table(results: list[dict], engines: list[str]) -> str:
    """Per metric at the smallest size measured: seconds and speed-up over scikit-learn."""
    smallest = min(r["rows"] for r in results)
    lines = [
        f"| metric ({smallest / 1e6:g}M rows) | scikit-learn | "
        + " | ".join(f"{e} | speed-up" for e in engines) + " |",
        "|---|---|" + "---|---|" * len(engines),
    ]  # fmt: skip
    for row in (r for r in results if r["rows"] == smallest):
        base = row.get("sklearn")
        metric = "all default metrics in one call" if row["metric"] == "all" else row["metric"]
        cells = [metric, f"{base['seconds']:.2f} s" if base else "-"]
        for engine in engines:
            seconds = row[engine]["seconds"]
            cells += [f"{seconds:.2f} s", f"{base['seconds'] / seconds:.1f}x" if base else ""]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def table(results: list[dict], engines: list[str]) -> str:
    cpus = len(os.sched_getaffinity(0))
    lines = [
        f"Machine: {platform.machine()}, {cpus} cores, Python {platform.python_version()}. "
        "Seconds are end to end from the Parquet file (read, check, compute), each in a fresh "
        "process; x = speed-up over the scikit-learn path; RSS = peak resident memory.",
        "",
        "| rows | metric | scikit-learn s | "
        + " | ".join(f"{e} s | {e} x | {e} RSS MiB | {e} rows/s" for e in engines)
        + " |",
        "|---|---|---|" + "---|---|---|---|" * len(engines),
    ]
    for row in results:
        base = row.get("sklearn")
        cells = [f"{row['rows']:,}", row["metric"], f"{base['seconds']:.2f}" if base else "-"]
        for engine in engines:
            ours = row[engine]
            speedup = f"{base['seconds'] / ours['seconds']:.1f}" if base else "-"
            cells += [
                f"{ours['seconds']:.2f}",
                speedup,
                f"{ours['peak_rss_mib']:.0f}",
                f"{row['rows'] / ours['seconds']:,.0f}",
            ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(results: list[dict], engines: list[str], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot", file=sys.stderr)
        return
    smallest = min(r["rows"] for r in results)
    rows = [r for r in results if r["rows"] == smallest]
    labels = [r["metric"] for r in rows]
    series = (["sklearn"] if any("sklearn" in r for r in rows) else []) + engines
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(series)
    for i, name in enumerate(series):
        values = [r[name]["seconds"] if name in r else 0 for r in rows]
        ax.bar([x + i * width for x in range(len(rows))], values, width, label=name)
    ax.set_xticks([x + width * (len(series) - 1) / 2 for x in range(len(rows))], labels)
    ax.set_ylabel("seconds (from Parquet, end to end)")
    ax.set_yscale("log")
    ax.set_title(f"{smallest:,} rows: scikit-learn path vs polars-rankmetrics")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        if sys.argv[2] == "sklearn":
            sklearn_child(*sys.argv[3:])
        else:
            ours_child(*sys.argv[3:])
    else:
        main()
