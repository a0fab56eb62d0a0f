"""Evaluation states in a pipeline: what merging saves, each step in a fresh process (wall time
inside the process, and peak RSS).

    python benchmarks/pipelines.py                   # the record
    python benchmarks/pipelines.py --small           # seconds, tiny data, no record

- ``daily``: 31 days of predictions, ``--day-rows`` rows a day (2 models x samples x 100
  labels). Adding day 31 (its state, then ``finalize`` over the 31 states) against
  ``evaluate`` over the 31 days' files.
- ``year``: ``finalize`` over 365 daily state files of 100 groups (models) each.
- ``state``: ``rm.state`` against ``rm.evaluate`` on the same table (compare.py's, 2 models x
  ``--samples`` x 100 labels) under ``--memory-limit``, and the state's size on disk per group.
- ``sizes``: the shipped example's states (bytes of Parquet per group, by what they keep), and
  what ``score_decimals`` costs the curve metrics: the largest difference from the exact value
  over their keys on a table of continuous scores, and the curves' rows.

Writes ``benchmarks/results/pipelines.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).parent))
from compare import table  # noqa: E402
from measure import data_directory, environment, run  # noqa: E402

RESULTS = Path(__file__).parent / "results"
KEYS = ["coverage_error", "lrap", "ranking_loss", "lwlrap", "ndcg", "f1_micro"]


def day_table(day: int, rows: int, labels: int = 100, models: int = 2) -> pl.DataFrame:
    """One day's predictions: ``models`` models over the day's own samples (ids unique across
    days), scores rounded to 3 decimals."""
    samples = max(1, rows // (labels * models))
    rng = np.random.default_rng(day)
    truth = rng.random((samples, labels)) < 0.1
    frames = []
    for m in range(models):
        score = np.round(np.clip(truth * 0.3 + rng.random((samples, labels)) * 0.8, 0, 1), 3)
        frames.append(pl.DataFrame({
            "model": f"m{m}",
            "sample": np.repeat(np.arange(samples) + day * samples, labels),
            "label": np.tile(np.arange(labels), samples),
            "score": score.reshape(-1), "truth": truth.reshape(-1),
        }))  # fmt: skip
    return pl.concat(frames)


def child(kind: str, *args: str) -> None:
    import polars_rankmetrics as rm

    start = time.perf_counter()
    value: object = None
    if kind == "evaluate":
        value = rm.evaluate(args[0], KEYS, by="model", memory_limit=args[1] or None).height
    elif kind == "add-day":  # the new day's state, then the merge of every day
        rm.state(args[0], KEYS, by="model", path=args[1])
        value = rm.finalize(args[2], by="model").height
    elif kind == "finalize":
        value = rm.finalize(args[0], by="model").height
    elif kind == "state":
        state = rm.state(args[0], KEYS, by="model", memory_limit=args[1] or None)
        state.write_parquet(args[2])
        value = Path(args[2]).stat().st_size
    print(json.dumps({"seconds": time.perf_counter() - start, "value": value}))


def measure(*command: str) -> dict:
    done = run([sys.executable, __file__, "child", *command])
    if done.returncode != 0:
        raise SystemExit(f"{command[0]} failed:\n{done.stderr[-2000:]}")
    inner = json.loads(done.stdout.strip().splitlines()[-1])
    return {"seconds": round(inner["seconds"], 3), "peak_rss_mib": round(done.peak_rss_mib),
            "value": inner["value"]}  # fmt: skip


def daily(out: Path, day_rows: int, days: int) -> dict:
    import polars_rankmetrics as rm

    folder = out / "pipelines" / f"daily-{day_rows}"
    (folder / "data").mkdir(parents=True, exist_ok=True)
    (folder / "states").mkdir(parents=True, exist_ok=True)
    for day in range(days):
        path = folder / "data" / f"day-{day:03d}.parquet"
        if not path.exists():
            day_table(day, day_rows).write_parquet(path)
        state = folder / "states" / f"day-{day:03d}.parquet"
        if day < days - 1 and not state.exists():
            rm.state(path, KEYS, by="model", path=state)
    last = folder / "data" / f"day-{days - 1:03d}.parquet"
    new_state = folder / "states" / f"day-{days - 1:03d}.parquet"
    new_state.unlink(missing_ok=True)
    added = measure("add-day", str(last), str(new_state), str(folder / "states" / "*.parquet"))
    whole = measure("evaluate", str(folder / "data" / "*.parquet"), "")
    return {"days": days, "rows_a_day": day_rows, "add_day": added, "evaluate_all": whole,
            "speedup": round(whole["seconds"] / added["seconds"], 1)}  # fmt: skip


def year(out: Path, days: int, groups: int) -> dict:
    import polars_rankmetrics as rm

    folder = out / "pipelines" / f"year-{days}x{groups}"
    folder.mkdir(parents=True, exist_ok=True)
    for day in range(days):
        state = folder / f"day-{day:03d}.parquet"
        if not state.exists():
            rm.state(day_table(day, groups * 20 * 10, labels=10, models=groups), KEYS,
                     by="model", path=state)  # fmt: skip
    finalized = measure("finalize", str(folder / "*.parquet"))
    size = sum(p.stat().st_size for p in folder.glob("*.parquet"))
    return {"days": days, "groups": groups, "finalize": finalized,
            "state_bytes_per_group": round(size / days / groups)}  # fmt: skip


def state_against_evaluate(out: Path, samples: int, memory_limit: str | None) -> dict:
    path = table(samples, out)
    written = out / "pipelines" / f"state-{samples}.parquet"
    written.parent.mkdir(parents=True, exist_ok=True)
    evaluated = measure("evaluate", str(path), memory_limit or "")
    state = measure("state", str(path), memory_limit or "", str(written))
    return {"rows": samples * 100 * 2, "memory_limit": memory_limit, "evaluate": evaluated,
            "state": state, "ratio": round(state["seconds"] / evaluated["seconds"], 3),
            "state_bytes_per_group": round(state["value"] / 2)}  # fmt: skip


CURVE_KEYS = ["average_precision_macro", "average_precision_micro", "roc_auc_macro",
              "roc_auc_micro", "roc_auc_weighted"]  # fmt: skip


def sizes(samples: int) -> dict:
    """Bytes per group of the example's states, and the error of rounded curves."""
    import io

    import polars_rankmetrics as rm

    def size(state: pl.DataFrame) -> int:
        buffer = io.BytesIO()
        state.write_parquet(buffer)
        return round(buffer.tell() / state["model"].n_unique())

    example = pl.read_parquet(Path(__file__).parent.parent / "data" / "example.parquet")
    kept = {
        "sums": {},
        "sums+intervals": {"intervals": True},
        "sums+per_label": {"per_label": True},
    }
    example_bytes = {
        name: size(rm.state(example, KEYS, by="model", **options)) for name, options in kept.items()
    }
    rng = np.random.default_rng(0)
    truth = rng.random((samples, 20)) < 0.2
    scores = np.clip(truth * 0.2 + rng.random((samples, 20)), 0, None)
    table = rm.from_dense(truth, scores).with_columns(model=pl.lit("m"))
    exact = rm.evaluate(table, CURVE_KEYS)
    rounded = {}
    for decimals in (2, 3, 4):
        state = rm.state(table, CURVE_KEYS, by="model", score_decimals=decimals)
        found = rm.finalize(state)
        error = max(abs(found[k][0] - exact[k][0]) for k in CURVE_KEYS)
        rows = state.filter(pl.col("rm_part") == "curves").height
        rounded[str(decimals)] = {"max_abs_error": float(f"{error:.3g}"), "curve_rows": rows}
    exact_rows = rm.state(table, CURVE_KEYS, by="model").filter(pl.col("rm_part") == "curves")
    rounded["exact"] = {"max_abs_error": 0.0, "curve_rows": exact_rows.height}
    return {
        "example_bytes_per_group": example_bytes,
        "curves": {"samples": samples, "labels": 20, "keys": CURVE_KEYS, "score_decimals": rounded},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--day-rows", type=int, default=1_000_000)
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--memory-limit", default="1GB")
    parser.add_argument("--small", action="store_true", help="tiny data, no record")
    args = parser.parse_args()
    with data_directory(args.small) as out:
        if args.small:
            results = {"daily": daily(out, 20_000, 3), "year": year(out, 5, 4),
                       "state": state_against_evaluate(out, 1_000, None),
                       "sizes": sizes(500)}  # fmt: skip
            print(json.dumps(results, indent=2))
            return
        results = {
            "daily": daily(out, args.day_rows, 31),
            "year": year(out, 365, 100),
            "state": state_against_evaluate(out, args.samples, args.memory_limit),
            "sizes": sizes(100_000),
        }
    print(json.dumps(results, indent=2), file=sys.stderr)
    path = RESULTS / "pipelines.json"
    path.write_text(
        json.dumps({**environment(), "keys": KEYS, "results": results}, indent=2) + "\n"
    )
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        child(sys.argv[2], *sys.argv[3:])
    else:
        main()
