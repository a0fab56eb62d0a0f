"""Many systems, one verdict: ``compare(..., baseline=None)`` over every pair of 50 systems
against the plain ``evaluate`` of the same table, and against ranx's ``compare`` of the same
runs, end to end from Parquet, each in a fresh process (wall time and peak RSS).

    python benchmarks/many_systems.py --systems 50 --samples 10000 [--tools ...]
    python benchmarks/many_systems.py --small   # 5 systems x 100 samples, in a temporary directory

Each tool's wall ``seconds`` and ``cpu_seconds`` (on a shared machine the CPU time is the
steadier figure). ``--permutations`` fewer than 10,000 measures ``randomized_tukey`` at that
count: its permutations cost in proportion to their number.

The table: ``--systems`` systems scoring the same ``--samples`` samples x 100 labels (top-100:
every label scored; about 5% positives, as make_data.py), system ``s`` leaning ``0.02 s``
further towards the truth (neighbours hard to tell apart, distant systems easy). Five metrics.
The scores are not rounded: no ties, which ranx and this library would break differently.
The tools:

- ``evaluate``: ``evaluate(path, METRICS, by="model")``;
- ``pairs_t``: every pair with the paired t test and Holm's correction over pairs x metrics;
- ``tukey_hsd``: every pair with the two-way Tukey HSD;
- ``randomized_tukey``: every pair with Carterette's randomized Tukey HSD, ``--permutations``
  (10,000) permutations;
- ``ranx``: ranx's ``compare`` of the same runs (every label a document, the positives the
  qrels) at its default Fisher test (1,000 permutations), its loading from the same Parquet
  file included; its metric values are checked against ``evaluate``'s (the largest difference
  is recorded).

Targets: ``pairs_t`` and ``tukey_hsd`` within 1.5x of ``evaluate``; ``randomized_tukey`` at
most 60 s beyond ``evaluate``; ranx at least 10x slower than ``pairs_t``. Writes
``benchmarks/results/many_systems.json`` (other sizes: ``many_systems-<systems>x<samples>.json``;
``--small``: none), after each tool, with the load average before each run and the command.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).parent))
from measure import data_directory, environment, in_process, run  # noqa: E402

RESULTS = Path(__file__).parent / "results"
METRICS = ["lrap", "ndcg@10", "mrr", "map", "precision@5"]
RANX = {"ndcg@10": "ndcg@10", "mrr": "mrr", "map": "map", "precision@5": "precision@5"}
TOOLS = ("evaluate", "pairs_t", "tukey_hsd", "randomized_tukey", "ranx")
LABELS = 100


def table(systems: int, samples: int, out: Path) -> Path:
    """The systems' table, written once to the directory ``out`` a chunk of samples at a
    time (every system's rows of the chunk's samples)."""
    path = out / f"many-systems-{systems}x{samples}x{LABELS}.parquet"
    if path.exists():
        return path
    schema = pa.schema([
        ("model", pa.string()), ("sample", pa.int64()), ("label", pa.int32()),
        ("score", pa.float64()), ("truth", pa.bool_()),
    ])  # fmt: skip
    rng = np.random.default_rng(0)
    step = 1000
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, samples, step):
            size = min(step, samples - start)
            truth = rng.random((size, LABELS)) < 0.05
            ids = np.repeat(np.arange(start, start + size, dtype=np.int64), LABELS)
            labels = np.tile(np.arange(LABELS, dtype=np.int32), size)
            for s in range(systems):
                logits = rng.normal(size=truth.shape) + (1.0 + 0.02 * s) * truth
                score = 1 / (1 + np.exp(-logits))
                writer.write_table(pa.table({
                    "model": pa.array([f"s{s:02d}"] * ids.size), "sample": ids,
                    "label": labels, "score": score.reshape(-1), "truth": truth.reshape(-1),
                }, schema=schema))  # fmt: skip
    return path


def ranx_compare(path: str) -> dict[str, object]:
    """ranx's ``compare`` of every system's run, and its metric values."""
    import polars as pl
    import ranx

    df = pl.read_parquet(path)
    first = df["model"].min()
    qrels: dict[str, dict[str, int]] = {}
    truth = df.filter(pl.col("model") == first, pl.col("truth"))
    for sample, labels in truth.group_by("sample").agg("label").iter_rows():
        qrels[str(sample)] = {str(label): 1 for label in labels}
    runs = []
    for (model,), part in df.sort("model").group_by("model", maintain_order=True):
        grouped = part.group_by("sample").agg("label", "score")
        runs.append(ranx.Run({
            str(s): {str(label): float(v) for label, v in zip(labels, scores, strict=True)}
            for s, labels, scores in grouped.iter_rows()
        }, name=str(model)))  # fmt: skip
    del df
    report = ranx.compare(ranx.Qrels(qrels), runs, list(RANX.values()), stat_test="fisher",
                          make_comparable=True)  # fmt: skip
    return {name: {k: report.to_dict()[name]["scores"][k] for k in RANX.values()}
            for name in report.to_dict()["model_names"]}  # fmt: skip


def child(kind: str, path: str, permutations: int) -> None:
    start, cpu = time.perf_counter(), time.process_time()
    if kind == "ranx":
        value: object = ranx_compare(path)
    else:
        import polars_rankmetrics as rm

        if kind == "evaluate":
            value = rm.evaluate(path, METRICS, by="model").to_dicts()
        else:
            test = {"pairs_t": "t"}.get(kind, kind)
            options = {"correction": "holm"} if kind == "pairs_t" else {}
            result = rm.compare(path, METRICS, by="model", baseline=None, test=test,
                                n_resamples=permutations, **options)  # fmt: skip
            value = {"rows": result.height, "significant": int((result["p_adjusted"] < 0.05).sum())}
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    print(json.dumps({"seconds": seconds, "cpu": cpu_seconds, "value": value}, default=str))


def checked(evaluated: list[dict[str, object]], ranx_values: dict[str, dict[str, float]]) -> float:
    """The largest difference between ranx's metric values and ``evaluate``'s."""
    ours = {str(row["model"]): row for row in evaluated}
    return max(
        abs(float(ours[model][key]) - float(ranx_values[model][name]))  # type: ignore[arg-type]
        for model in ranx_values
        for key, name in RANX.items()
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=50)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--permutations", type=int, default=10_000)
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--small", action="store_true", help="a tiny table, no record")
    args = parser.parse_args()
    if args.small:
        args.systems, args.samples, args.permutations = 5, 100, 200
    record: dict[str, object] = {
        **environment(), "command": " ".join(["python", *sys.argv]), "systems": args.systems,
        "samples": args.samples, "labels": LABELS, "rows": args.systems * args.samples * LABELS,
        "metrics": METRICS, "permutations": args.permutations, "results": {},
    }  # fmt: skip
    default = (args.systems, args.samples) == (50, 10_000)
    name = "many_systems.json" if default else f"many_systems-{args.systems}x{args.samples}.json"
    if not args.small and (RESULTS / name).exists():
        # A run of some tools keeps the others' figures of the same sizes.
        record["results"] = json.loads((RESULTS / name).read_text())["results"]
    results: dict[str, dict[str, object]] = record["results"]  # type: ignore[assignment]
    evaluated: list[dict[str, object]] | None = None
    with data_directory(args.small) as out:
        path = table(args.systems, args.samples, out)
        for tool in args.tools.split(","):
            load = os.getloadavg()[0]
            command = [sys.executable, __file__, "child", tool, str(path), str(args.permutations)]
            if args.small and tool == "ranx":  # in this process: ranx starts slowly
                done = in_process(lambda: child("ranx", str(path), args.permutations))
            else:
                done = run(command)
            if done.returncode != 0:
                if args.small:
                    raise SystemExit(f"{tool} failed: {done.stderr[-2000:]}")
                results[tool] = {"error": done.stderr[-500:], "peak_rss_mib": done.peak_rss_mib}
            else:
                inner = json.loads(done.stdout.strip().splitlines()[-1])
                results[tool] = {
                    "seconds": round(inner["seconds"], 2), "cpu_seconds": round(inner["cpu"], 2),
                    "wall": round(done.seconds, 2), "peak_rss_mib": done.peak_rss_mib,
                    "load_before": round(load, 1),
                }  # fmt: skip
                if tool == "randomized_tukey":
                    results[tool]["permutations"] = args.permutations
                if tool == "evaluate":
                    evaluated = inner["value"]
                elif tool == "ranx":
                    if evaluated is not None:
                        results[tool]["largest_difference"] = checked(evaluated, inner["value"])
                else:
                    results[tool] |= inner["value"]
            print(tool, results[tool], file=sys.stderr, flush=True)
            if not args.small:
                RESULTS.mkdir(exist_ok=True)
                (RESULTS / name).write_text(json.dumps(record, indent=2) + "\n")
    if args.small and evaluated is not None and "ranx" in results:
        assert float(results["ranx"]["largest_difference"]) < 1e-6, results["ranx"]  # type: ignore[arg-type]


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        main()
