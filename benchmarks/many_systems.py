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
- ``pairs_permutation``: every pair with the paired permutation test (``--permutations``)
  and Holm's correction, the test ranx's Fisher test is;
- ``ranx``: ranx's ``compare`` at its default Fisher test (1,000 permutations) of the first
  ``--ranx-runs`` (4) runs at the full samples (every label a document, the positives the
  qrels), its loading from the same Parquet file included. ranx's cost is linear in the runs
  (loading, evaluation) and in the pairs (a Fisher test per ordered pair and metric), so its
  time for every run is extrapolated: ``(load + evaluate) x systems / runs + (compare -
  evaluate) x all pairs / pairs``, its ``evaluate`` timed apart. Its values are checked against
  ours where both define them: ranx leaves out the samples without a positive (they are not
  in its qrels, and ``make_comparable`` drops them from the runs), where ours score 0, so its
  means are checked against ``evaluate`` of the samples with a positive (to 1e-9), and its
  p-values against ``compare(test="permutation")`` of the same runs, within a Monte Carlo
  tolerance (4.5 standard errors of the difference of the two estimates, plus 1/1,000: ranx's
  p is hits / permutations, ours (hits + 1) / (permutations + 1)).

Targets: ``pairs_t`` and ``tukey_hsd`` within 1.5x of ``evaluate``; ``randomized_tukey`` at
most 60 s beyond ``evaluate``; ranx's extrapolated time at least 10x ``pairs_permutation``'s. Writes
``benchmarks/results/many_systems.json`` (other sizes: ``many_systems-<systems>x<samples>.json``;
``--small``: none), after each tool, with the load average before each run and the command.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).parent))
from measure import data_directory, environment, run, uncompiled  # noqa: E402

RESULTS = Path(__file__).parent / "results"
METRICS = ["lrap", "ndcg@10", "mrr", "map", "precision@5"]
RANX = {"ndcg@10": "ndcg@10", "mrr": "mrr", "map": "map", "precision@5": "precision@5"}
TOOLS = ("evaluate", "pairs_t", "tukey_hsd", "randomized_tukey", "pairs_permutation", "ranx")
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


def ranx_inputs(df: object) -> tuple[object, list[object]]:
    """ranx's qrels and runs of the systems' table ``df``: every label a document, the
    positives the qrels."""
    import polars as pl
    import ranx

    assert isinstance(df, pl.DataFrame)
    qrels: dict[str, dict[str, int]] = {}
    truth = df.filter(pl.col("model") == df["model"].min(), pl.col("truth"))
    for sample, labels in truth.group_by("sample").agg("label").iter_rows():
        qrels[str(sample)] = {str(label): 1 for label in labels}
    runs = []
    for (model,), part in df.sort("model").group_by("model", maintain_order=True):
        grouped = part.group_by("sample").agg("label", "score")
        runs.append(ranx.Run({
            str(s): {str(label): float(v) for label, v in zip(labels, scores, strict=True)}
            for s, labels, scores in grouped.iter_rows()
        }, name=str(model)))  # fmt: skip
    return ranx.Qrels(qrels), runs


def ranx_compare(path: str, runs: int, permutations: int) -> dict[str, object]:
    """ranx's ``compare`` of the first ``runs`` systems, timed by part, and the checks of its
    values against ours (untimed)."""
    import numba
    import polars as pl
    import ranx

    def clock() -> tuple[float, float]:
        return time.perf_counter(), time.process_time()

    def since(start: tuple[float, float]) -> tuple[float, float]:
        now = clock()
        return now[0] - start[0], now[1] - start[1]

    def compare(qrels: object, loaded: list[object]) -> tuple[object, tuple, tuple]:
        start = clock()
        report = ranx.compare(qrels, loaded, list(RANX.values()), stat_test="fisher",
                              make_comparable=True)  # fmt: skip
        compared, start = since(start), clock()
        for one in loaded:  # as compare evaluates each run
            ranx.evaluate(qrels, one, list(RANX.values()), return_mean=False,
                          make_comparable=True)  # fmt: skip
        return report, compared, since(start)

    start = clock()
    df = pl.scan_parquet(path)
    models = df.select(pl.col("model").unique().sort()).collect()["model"].to_list()[:runs]
    df = df.filter(pl.col("model").is_in(models)).collect()
    qrels, loaded = ranx_inputs(df)
    load = since(start)
    # ranx compiles its numba code on first use: on 20 of the samples, before the clock (with
    # numba's compiler off, as in the small mode, nothing is compiled).
    if not numba.config.DISABLE_JIT:
        compare(*ranx_inputs(df.filter(pl.col("sample") < df["sample"].min() + 20)))
    report, compared, evaluated = compare(qrels, loaded)
    return {
        "load": load[0], "evaluate": evaluated[0], "compare": compared[0],
        "load_cpu": load[1], "evaluate_cpu": evaluated[1], "compare_cpu": compared[1],
        "runs": len(models), **ranx_checks(df, report.to_dict(), permutations),
    }  # fmt: skip


def ranx_checks(df: object, found: dict, permutations: int) -> dict[str, object]:
    """ranx's means against ``evaluate`` of the samples with a positive and over every sample
    (the difference its qrels make), and its p-values against ours within a Monte Carlo
    tolerance."""
    import polars as pl

    import polars_rankmetrics as rm

    assert isinstance(df, pl.DataFrame)
    names = found["model_names"]
    positive = df.filter(pl.col("truth").any().over("model", "sample"))
    means = {}
    for label, table in (("with_positive", positive), ("all", df)):
        ours = {r["model"]: r for r in rm.evaluate(table, list(RANX), by="model").to_dicts()}
        means[label] = max(abs(ours[n][k] - found[n]["scores"][v]) for n in names
                           for k, v in RANX.items())  # fmt: skip
    pairs = rm.compare(df, list(RANX), by="model", baseline=None, test="permutation",
                       n_resamples=permutations, seed=0)  # fmt: skip
    worst_ratio, worst = 0.0, 0.0
    for row in pairs.iter_rows(named=True):
        theirs = found[row["model"]]["comparisons"][row["model_other"]][RANX[row["metric"]]]
        p = max(row["p_value"], 1 / 1000)
        se = math.sqrt(p * (1 - p) * (1 / 1000 + 1 / permutations))
        difference = abs(row["p_value"] - theirs)
        worst = max(worst, difference)
        worst_ratio = max(worst_ratio, difference / (4.5 * se + 1 / 1000))
    samples = df.select("sample").n_unique()
    return {
        "samples_without_positive": samples - positive.select("sample").n_unique(),
        "largest_mean_difference": means["with_positive"],
        "largest_mean_difference_all_samples": means["all"],
        "largest_p_difference": worst, "p_difference_over_tolerance": worst_ratio,
        "pairs_checked": pairs.height,
    }  # fmt: skip


def child(kind: str, path: str, permutations: int, runs: int) -> None:
    start, cpu = time.perf_counter(), time.process_time()
    if kind == "ranx":
        value: object = ranx_compare(path, runs, permutations)
    else:
        import polars_rankmetrics as rm

        if kind == "evaluate":
            value = rm.evaluate(path, METRICS, by="model").to_dicts()
        else:
            test = {"pairs_t": "t", "pairs_permutation": "permutation"}.get(kind, kind)
            options = {"correction": "holm"} if kind.startswith("pairs_") else {}
            result = rm.compare(path, METRICS, by="model", baseline=None, test=test,
                                n_resamples=permutations, **options)  # fmt: skip
            value = {"rows": result.height, "significant": int((result["p_adjusted"] < 0.05).sum())}
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    print(json.dumps({"seconds": seconds, "cpu": cpu_seconds, "value": value}, default=str))


def extrapolated(found: dict[str, float], systems: int, cpu: str = "") -> float:
    """ranx's time (``cpu="_cpu"``: CPU time) for ``systems`` runs from its parts on
    ``found["runs"]``: loading and evaluation linear in the runs, the tests (compare less
    evaluate) in the pairs."""
    runs = found["runs"]
    per_run = (found["load" + cpu] + found["evaluate" + cpu]) / runs
    per_pair = (found["compare" + cpu] - found["evaluate" + cpu]) / (runs * (runs - 1) / 2)
    return per_run * systems + per_pair * systems * (systems - 1) / 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=50)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--permutations", type=int, default=10_000)
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--ranx-runs", type=int, default=4, help="the runs ranx compares")
    parser.add_argument("--small", action="store_true", help="a tiny table, no record")
    args = parser.parse_args()
    if args.small:
        args.systems, args.samples, args.permutations, args.ranx_runs = 5, 100, 200, 3
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
    with data_directory(args.small) as out:
        path = table(args.systems, args.samples, out)
        for tool in args.tools.split(","):
            load = os.getloadavg()[0]
            command = [sys.executable, __file__, "child", tool, str(path), str(args.permutations),
                       str(args.ranx_runs)]  # fmt: skip
            done = run(uncompiled(command) if args.small and tool == "ranx" else command)
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
                if tool in ("randomized_tukey", "pairs_permutation"):
                    results[tool]["permutations"] = args.permutations
                if tool == "ranx":
                    found = inner["value"]
                    results[tool] |= found | {
                        "pairs": found["runs"] * (found["runs"] - 1) // 2,
                        "extrapolated_seconds": round(extrapolated(found, args.systems), 1),
                        "extrapolated_cpu_seconds": round(
                            extrapolated(found, args.systems, "_cpu"), 1),
                        "extrapolation": "(load + evaluate) x systems / runs + (compare - "
                        "evaluate) x all pairs / pairs",
                    }  # fmt: skip
                elif tool != "evaluate":
                    results[tool] |= inner["value"]
            print(tool, results[tool], file=sys.stderr, flush=True)
            if not args.small:
                RESULTS.mkdir(exist_ok=True)
                (RESULTS / name).write_text(json.dumps(record, indent=2) + "\n")
    if args.small and "ranx" in results:
        ranx_found = results["ranx"]
        assert float(ranx_found["largest_mean_difference"]) < 1e-9, ranx_found  # type: ignore[arg-type]
        assert float(ranx_found["p_difference_over_tolerance"]) <= 1, ranx_found  # type: ignore[arg-type]


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:
        main()
