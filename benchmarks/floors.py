"""Floors that bound: per metric, the least work any exact evaluation of the Parquet file must do
on this machine, measured in the same run as the metric on each engine.

    python benchmarks/floors.py --size 100000x100 [--rounds 3]
    python benchmarks/floors.py --small          # 1,000 x 10, two metrics, once, no record
    python benchmarks/floors.py --render         # docs/performance.md's table from the record

A metric's floor is the common floor below plus the one step its family cannot avoid.

The common floor, what no exact evaluation of make_data.py's table can skip:

- reading the columns it needs: sample, label, score and truth (every metric here reads the
  score and the truth, and the checks the sample and the label);
- the input checks' unavoidable work. The nulls of each column: counted from the column's
  validity, not a pass. NaN scores: one pass over the score (a NaN ranks nowhere, and no
  Parquet statistic excludes one). Repeated labels: no statistic tells either, so a pass per
  sample: on Polars, the proof that every row's (sample, label) comes after the previous row's
  (one pass of comparisons, which then lets the samples be read as runs of rows), or where the
  rows are not in that order a count of distinct labels per sample; on DuckDB an OR of one bit
  per label per sample, as the engine's sample counts compute it. Label sets (each sample has
  the table's labels): from the same per-sample counts and the label range. The table's
  boolean truth and float32 score rule out the truth's range and the score's precision checks
  by type, and it has no weight column; an exact evaluation skips those checks here, and so
  does the floor;
- one grouped pass: per sample, its rows and its positives, reduced to one row. Polars runs it
  lazily: an eager group-by takes two to four times the CPU of the same lazy one.

The family steps (``FAMILIES``), each on top of the common floor in the same process:

- ``sums`` (hamming loss): the wrong predictions summed over the rows. Where the rows are in
  (sample, label) order, the checks' pass also counts the runs of samples, and the rows' count
  against the runs times the label range proves every sample's label set (none has more than
  the range), so no grouped pass is needed; elsewhere the common grouped pass.
- ``threshold`` (f1_samples): nothing more. A sample's predicted and true predicted counts are
  sums as cheap as its positives, in the same grouped pass.
- ``coverage`` (coverage error): per sample, the lowest positive score and the count of its
  scores at or above it. No statistic gives either: the lowest positive is a grouped minimum,
  and the count compares every score with it, so a second look at every row. On Polars over
  runs of rows both fit in the common pass's aggregation (the comparison with the run's
  aggregate); on DuckDB the per-sample minima are joined back to the rows.
- ``placing`` (lrap, dcg, ndcg): each positive placed among its sample's scores, the number of
  its sample's scores at or above its own (its rank "max"): every metric of the family is a
  sum over the positives of a function of that count (and of the positives' own order, which
  no grouped count of the sample gives), so each positive's own count. Only the rows scoring
  at least the sample's lowest positive can be counted, so both ways count those alone (a join
  of each sample's lowest positive, from the common pass): ``sort``, one sort of them by
  (sample, score) and a linear pass reading each positive's tied block and its sample's end;
  ``pairs``, each positive joined to its sample's rows and the pairs of a positive with the
  rows at or above it counted per positive (cheap where positives are few); on DuckDB the
  same join, and for ``sort`` a window counting each positive's rows at or above it. The
  cheapest is the floor.
- ``pairing`` (ranking loss): a sample's misordered pairs, the count of (positive, row) pairs
  whose row scores at or above the positive, less the positives' own pairs: per sample, not
  per positive (the sum over a sample's positives of their counts is all it reads). The same
  two ways, the pairs counted per sample.
- ``labels`` (average precision and ROC AUC, macro): each label's ranking of the samples'
  scores: the rows grouped by (label, distinct score) with their rows and positives, the least
  a curve per label reads (the cumulative pass over those groups is per distinct score, not
  per row, and left out).

Each step checks what it computed against the other way or engine (the same counts), so a
floor that skipped work would fail. Every variant runs in a fresh process, each at its best (on
DuckDB, a connection set up as the engine's); a family's floor is its fastest variant over both
engines, and DuckDB's own floor its fastest DuckDB variant: where a DuckDB metric misses its 2x
of the family's floor, its ratio to DuckDB's own floor shows how much of the miss DuckDB itself
cannot do faster. Every step, the floors and each metric's
``evaluate(path, [metric], engine=E)``, runs in a fresh process, the clock started after the
imports (Polars, DuckDB and the package, for the floors and the metrics alike); the rounds are
interleaved (each round runs every step once) and each figure is the fastest of its rounds, the
median beside it, with the CPU seconds (user + system, all threads) inside the clock, which a
busy machine changes less. Each metric's ratio to its family's floor is checked against the
targets: Polars within 1.5x, DuckDB within 2x; each DuckDB metric's ratio to DuckDB's own floor
is recorded beside. The record (``benchmarks/results/floors.json``:
the machine, versions, command and load average) is written only when the load average stays
below ``--max-load`` (one minute, before and after), and docs/performance.md's table is
regenerated from it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the floors import Polars and DuckDB inside: the parent never does
    import duckdb
    import polars as pl

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
FAMILIES = {
    "sums": ("hamming_loss",),
    "threshold": ("f1_samples",),
    "coverage": ("coverage_error",),
    "placing": ("lrap", "ndcg", "ndcg@10"),
    "pairing": ("ranking_loss",),
    "labels": ("average_precision_macro", "roc_auc_macro"),
}
# Each family's floor variants: (engine, method), the method "" where an engine has one way.
VARIANTS = {
    "sums": [("polars", ""), ("duckdb", "")],
    "threshold": [("polars", ""), ("duckdb", "")],
    "coverage": [("polars", ""), ("duckdb", "")],
    "placing": [("polars", "sort"), ("polars", "pairs"), ("duckdb", "sort"), ("duckdb", "pairs")],
    "pairing": [("polars", "sort"), ("polars", "pairs"), ("duckdb", "sort"), ("duckdb", "pairs")],
    "labels": [("polars", ""), ("duckdb", "")],
}
THRESHOLD = 0.5  # evaluate's default: a label is predicted where its score is at least this
TARGETS = {"polars": 1.5, "duckdb": 2.0}  # a metric's time over its floor, at most
COLUMNS = ["sample", "label", "score", "truth"]
COMMON = ("samples", "fewest_rows", "most_rows", "repeated", "positives", "nulls", "nan_scores",
          "label_span")  # fmt: skip
STEPS = ("wrong", "predicted", "hit", "covered", "placed", "label_scores")  # the families' counts


def family_of(metric: str) -> str:
    """The family whose floor bounds ``metric``."""
    return next(family for family, metrics in FAMILIES.items() if metric in metrics)


def polars_floor(path: str, family: str, method: str = "") -> dict:
    """The floor of ``family`` on Polars: the file read once, the row checks, the order of
    (sample, label) and the count of runs of samples in one pass (for ``sums``, the wrong
    predictions too: where the rows are in that order, each sample's label count follows from
    the runs, and no grouped pass is needed), then one lazy aggregation per sample, over runs
    of rows where that order holds (with, for ``threshold``, its predicted and true predicted
    labels; for ``coverage``, the lowest positive and the scores at or above it; for
    ``placing`` and ``pairing``, the lowest positive), then ``family``'s step (``method``:
    ``sort`` or ``pairs`` for ``placing`` and ``pairing``)."""
    import polars as pl

    from polars_rankmetrics.metrics.ranks import ordered_by

    df = pl.read_parquet(path, columns=COLUMNS)
    score, truth, sample = pl.col("score"), pl.col("truth"), pl.col("sample")
    predicted = score >= THRESHOLD
    checks = (
        df.lazy()
        .select(
            rows=pl.len(),
            nulls=pl.sum_horizontal(pl.col(c).null_count() for c in COLUMNS),
            nan_scores=score.is_nan().sum(),
            ordered=ordered_by(df.schema, ["sample", "label"]),
            runs=(sample.slice(1) != sample.slice(0, pl.len() - 1)).sum() + 1,
            lowest_label=pl.col("label").min(),
            highest_label=pl.col("label").max(),
            **(
                {"positives": truth.sum(), "wrong": (predicted != truth).sum()}
                if family == "sums"
                else {}
            ),
        )  # fmt: skip
        .collect()
        .row(0, named=True)
    )
    span = checks["highest_label"] - checks["lowest_label"] + 1
    found = {name: checks[name] for name in ("nulls", "nan_scores")}
    if family == "sums" and checks["ordered"] and checks["rows"] == checks["runs"] * span:
        # In (sample, label) order a sample has at most ``span`` labels: all have ``span``.
        each = {"samples": checks["runs"], "fewest_rows": span, "most_rows": span, "repeated": 0}
        kept = {name: checks[name] for name in ("positives", "wrong")}
        return {**each, **kept, **found, "label_span": span}
    if checks["ordered"]:  # no label repeats within a sample
        lf = df.lazy().with_columns(sample.set_sorted())
        labels = pl.len()
    else:
        lf, labels = df.lazy(), pl.col("label").n_unique()
    lowest = score.filter(truth).min()
    extra = {
        "sums": {"wrong": (predicted != truth).sum()},
        "threshold": {"predicted": predicted.sum(), "hit": (predicted & truth).sum()},
        "coverage": {"covered": (score >= lowest).sum()},
        "placing": {"lowest": lowest},
        "pairing": {"lowest": lowest},
    }.get(family, {})
    per_sample = lf.group_by("sample").agg(
        pl.len().alias("rows"), labels.alias("labels"), truth.sum().alias("positives"),
        *(expression.alias(name) for name, expression in extra.items()),
    )  # fmt: skip
    placing = family in ("placing", "pairing")
    if placing:  # read twice: the facts, and the lowest positives joined back
        per_sample = per_sample.collect().lazy()
    facts = (
        per_sample.select(
            samples=pl.len(),
            fewest_rows=pl.col("rows").min(),
            most_rows=pl.col("rows").max(),
            repeated=(pl.col("rows") - pl.col("labels")).sum(),
            positives=pl.col("positives").sum(),
            **{name: pl.col(name).sum() for name in extra if name in STEPS},
        )
        .collect()
        .row(0, named=True)
    )
    if placing:
        per = "positive" if family == "placing" else "sample"
        facts["placed"] = _placed(lf, per_sample.select("sample", "lowest"), method, per)
    elif family == "labels":
        counts = lf.group_by("label", "score").agg(pl.len(), truth.sum())
        facts["label_scores"] = counts.select(pl.len()).collect().item()
    return {**facts, **found, "label_span": span}


def _placed(lf: pl.LazyFrame, lowest: pl.LazyFrame, method: str, per: str) -> int:
    """Over the positives, the count of their sample's scores at or above their own, from the
    rows at or above the sample's lowest positive: by one sort (each positive's own count), or
    by pairs counted ``per`` positive or sample."""
    import polars as pl

    score, truth, sample = pl.col("score"), pl.col("truth"), pl.col("sample")
    kept = lf.join(lowest, on="sample").filter(score >= pl.col("lowest"))
    kept = kept.select("sample", "score", "truth")
    if method == "pairs":
        positives = (
            kept.filter(truth).select("sample", score.alias("at")).with_row_index("positive")
        )
        pairs = positives.join(kept.select("sample", "score"), on="sample")
        counts = pairs.filter(score >= pl.col("at")).group_by(per).len()
        return int(counts.select(pl.col("len").sum()).collect().item())
    row = pl.int_range(pl.len(), dtype=pl.Int64)
    block_start = (score != score.shift(1)) | (sample != sample.shift(1))
    sample_end = sample != sample.shift(-1)
    placed = (
        pl.when(sample_end.fill_null(True)).then(row + 1).backward_fill()
        - pl.when(block_start.fill_null(True)).then(row).forward_fill()
    )
    return int(kept.sort("sample", "score").select(placed.filter(truth).sum()).collect().item())


def duckdb_floor(path: str, family: str, method: str = "") -> dict:
    """The floor of ``family`` on DuckDB at its best, on a connection set up as the engine's
    (:func:`polars_rankmetrics.engines.duckdb.connect`): the label range from the file's
    statistics, then one aggregation per sample counting its distinct labels as the engine's
    sample counts do (the OR of each label's bit, looked up in a constant list of the range's
    powers of two, for at most 127 labels; a bitstring beyond, up to 1,024; a count of distinct
    labels beyond that), its NaN scores and its nulls (and for ``coverage``, ``placing`` and
    ``pairing`` its lowest positive score), reduced to one row, then ``family``'s step:

    - ``coverage``: the minima joined back to the rows and the scores at or above counted, by
      ``count_if`` over the join on the sample alone (a filter there would join on the score
      too, a hash join with a second condition, which costs DuckDB about three times more);
    - ``placing`` and ``pairing`` (``method``): the rows at or above their sample's lowest
      positive, then by ``pairs`` each positive joined to its sample's rows at or above it,
      the pairs counted per positive or per sample, or by ``sort`` a window counting each
      positive's sample's rows at or above it;
    - ``labels``: the rows grouped by (label, score).

    make_data.py's scores are finite (a sigmoid's, rounded), so the rows kept are those whose
    score less their sample's lowest positive is not negative: the same rows as the comparison
    (a difference of two finite floats is negative exactly when the first is less). DuckDB makes
    either a condition of its hash join, but tests the difference there for less than the
    comparison of the two sides."""
    from polars_rankmetrics.engines.duckdb import connect

    con = connect()
    source = {"path": path}
    lowest, highest = con.execute(
        "SELECT min(label), max(label) FROM read_parquet($path)", source
    ).fetchone()
    extra = {  # the family's columns per sample: fixed text, the values bound
        "sums": {"wrong": "count_if((score >= $threshold) != truth)"},
        "threshold": {
            "predicted": "count_if(score >= $threshold)",
            "hit": "count_if(score >= $threshold AND truth)",
        },
        "coverage": {"lowest": "min(score) FILTER (WHERE truth)"},
        "placing": {"lowest": "min(score) FILTER (WHERE truth)"},
        "pairing": {"lowest": "min(score) FILTER (WHERE truth)"},
    }.get(family, {})
    threshold = {"threshold": THRESHOLD} if family in ("sums", "threshold") else {}
    lowest, highest = int(lowest), int(highest)  # integers: written into the text as such
    if highest - lowest < 127:  # 1 << 127 overflows the signed 128 bits
        # The powers a constant list, folded once: a shift per row costs more.
        powers = (
            f"list_transform(range({highest - lowest + 1}), "
            "lambda i: CAST(1 AS HUGEINT) << CAST(i AS HUGEINT))"
        )
        labels = f"bit_count(bit_or(({powers})[label - {lowest} + 1]))"
    elif highest - lowest < 1024:
        labels = f"bit_count(bitstring_agg(label, {lowest}, {highest}))"
    else:
        labels = "count(DISTINCT label)"
    con.execute(
        f"""
        CREATE TEMP TABLE per_sample AS
        SELECT sample, count(*) AS n_rows, {labels} AS n_labels, count_if(truth) AS positives,
            4 * count(*) - count(sample) - count(label) - count(score) - count(truth) AS nulls,
            count_if(isnan(score)) AS nan_scores
            {"".join(f", {expression} AS {name}" for name, expression in extra.items())}
        FROM read_parquet($path)
        GROUP BY sample
        """,
        {**source, **threshold},
    )
    facts = con.execute(
        f"""
        SELECT count(*) AS samples, min(n_rows) AS fewest_rows, max(n_rows) AS most_rows,
            sum(n_rows - n_labels) AS repeated, sum(positives) AS positives,
            sum(nulls) AS nulls, sum(nan_scores) AS nan_scores
            {"".join(f", sum({name}) AS {name}" for name in extra if name in STEPS)}
        FROM per_sample
        """
    )
    names = [column[0] for column in facts.description]
    found = dict(zip(names, facts.fetchone(), strict=True))
    if family == "coverage":
        found["covered"] = con.execute(
            "SELECT count_if(score >= lowest) FROM read_parquet($path) JOIN per_sample"
            " USING (sample)",
            source,
        ).fetchone()[0]
    elif family in ("placing", "pairing"):
        found["placed"] = _duckdb_placed(con, path, method, family == "placing")
    elif family == "labels":
        found["label_scores"] = con.execute(
            "SELECT count(*) FROM (SELECT label, score, count(*), count_if(truth)"
            " FROM read_parquet($path) GROUP BY label, score)",
            source,
        ).fetchone()[0]
    return {**found, "label_span": highest - lowest + 1}


def _duckdb_placed(con: duckdb.DuckDBPyConnection, path: str, method: str, each: bool) -> int:
    """:func:`_placed` on DuckDB over ``per_sample``'s lowest positives: the pairs counted per
    positive (``each``) or per sample, or by ``sort`` one window."""
    kept = (
        "SELECT sample, label, score, truth FROM read_parquet($path) JOIN per_sample"
        " USING (sample) WHERE score - lowest >= 0"
    )
    if method == "pairs":
        per = "p.sample, p.label" if each else "p.sample"
        query = f"""
            WITH kept AS MATERIALIZED ({kept})
            SELECT sum(pairs) FROM (
                SELECT count(*) AS pairs
                FROM kept AS p JOIN kept AS c ON c.sample = p.sample AND c.score >= p.score
                WHERE p.truth
                GROUP BY {per}
            )
            """
    else:
        query = f"""
            SELECT sum(placed) FILTER (WHERE truth) FROM (
                SELECT truth, count(*) OVER (PARTITION BY sample ORDER BY score DESC) AS placed
                FROM ({kept})
            )
            """
    return int(con.execute(query, {"path": path}).fetchone()[0])


def child(kind: str, engine: str, path: str, name: str, method: str = "") -> None:
    """One step in this fresh process: the floor of family ``name`` on ``engine`` (by
    ``method``), or metric ``name`` evaluated on it. The clock starts after the imports (for
    the floors, Polars, DuckDB and the ordered-rows check the Polars floor borrows from the
    package)."""
    import duckdb  # noqa: F401
    import polars  # noqa: F401

    import polars_rankmetrics as rm
    from polars_rankmetrics.engines.base import get_engine

    get_engine(engine)
    floors = {"polars": polars_floor, "duckdb": duckdb_floor}
    start, cpu = time.perf_counter(), time.process_time()
    if kind == "metric":
        value = rm.evaluate(path, [name], engine=engine).row(0, named=True)
    else:
        value = floors[engine](path, name, method)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(json.dumps({"seconds": seconds, "cpu": cpu, "value": value}, default=float))


def step(kind: str, engine: str, path: Path, name: str, method: str = "") -> dict:
    """``child`` in a fresh process: its seconds, CPU seconds, value and peak RSS."""
    done = run([sys.executable, __file__, "child", kind, engine, str(path), name,
                *([method] if method else [])])  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{kind} {engine} {name} {method} failed:\n{done.stderr[-2000:]}")
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
    """Every floor found the same table, and the variants of a family the same counts: a floor
    that skipped work would not."""
    first, *others = values.values()
    for other in others:
        for name in (*COMMON, *STEPS):
            if name in first and name in other and int(first[name]) != int(other[name]):
                raise SystemExit(f"the floors disagree on {name}: {values}")
    complete = first["fewest_rows"] == first["most_rows"] == first["label_span"]
    if first["repeated"] or first["nulls"] or first["nan_scores"] or not complete:
        raise SystemExit(f"make_data.py's table should pass the checks: {first}")


def variant_name(engine: str, method: str) -> str:
    return f"{engine} {method}".strip()


def measure(path: Path, metrics: list[str], rounds: int) -> dict:
    """Every step, ``rounds`` times in turn, each in a fresh process: the floors of the
    families of ``metrics``, then the metrics."""
    families = [f for f in FAMILIES if any(family_of(m) == f for m in metrics)]
    floors: dict[str, dict[str, list[dict]]] = {
        family: {variant_name(*v): [] for v in VARIANTS[family]} for family in families
    }
    timed: dict[str, dict[str, list[dict]]] = {m: {e: [] for e in ENGINES} for m in metrics}
    for _ in range(rounds):
        for family in families:
            for engine, method in VARIANTS[family]:
                runs = floors[family][variant_name(engine, method)]
                runs.append(step("floor", engine, path, family, method))
                took = round(runs[-1]["seconds"], 3)
                print("floor", family, engine, method, took, file=sys.stderr, flush=True)
        check_floors({f"{family} {v}": runs[-1]["value"]
                      for family in families for v, runs in floors[family].items()})  # fmt: skip
        for metric in metrics:
            for engine in ENGINES:
                timed[metric][engine].append(step("metric", engine, path, metric))
                took = timed[metric][engine][-1]["seconds"]
                print(metric, engine, round(took, 3), file=sys.stderr, flush=True)
    floor = {}
    for family in families:
        variants = {v: summary(runs) for v, runs in floors[family].items()}
        least = min(variants, key=lambda v: variants[v]["seconds"])
        fastest = variants[least]
        own = min((v for v in variants if v.split()[0] == "duckdb"),
                  key=lambda v: variants[v]["seconds"])  # fmt: skip
        floor[family] = {"variants": variants, "least": least,
                         "seconds": fastest["seconds"], "cpu": fastest["cpu"],
                         "duckdb": {"variant": own, "seconds": variants[own]["seconds"],
                                    "cpu": variants[own]["cpu"]}}  # fmt: skip
    results = []
    for metric in metrics:
        bound = floor[family_of(metric)]
        row: dict = {"metric": metric, "family": family_of(metric), "floor": bound["seconds"]}
        for engine in ENGINES:
            row[engine] = summary(timed[metric][engine])
            ratio = row[engine]["seconds"] / bound["seconds"]
            row[f"{engine}/floor"] = round(ratio, 2)
            row[f"{engine}/floor cpu"] = round(row[engine]["cpu"] / bound["cpu"], 2)
            row[f"{engine} within"] = ratio <= TARGETS[engine]
        own = bound["duckdb"]
        row["duckdb floor"] = own["seconds"]
        row["duckdb/duckdb floor"] = round(row["duckdb"]["seconds"] / own["seconds"], 2)
        row["duckdb/duckdb floor cpu"] = round(row["duckdb"]["cpu"] / own["cpu"], 2)
        results.append(row)
    return {"floors": floor, "metrics": results}


def table(saved: dict) -> str:
    """The docs' table: each metric's fastest time on each engine over its family's floor, and
    on DuckDB over DuckDB's own floor (its fastest variant of the family) too."""
    lines = [
        f"| metric ({saved['rows'] / 1e6:g}M rows) | floor | polars | polars / floor | duckdb | "
        "duckdb / floor | duckdb floor | duckdb / duckdb floor |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in saved["metrics"]:
        cells = [row["metric"], f"{row['floor']:.2f} s ({row['family']})"]
        for engine in ENGINES:
            mark = "" if row[f"{engine} within"] else f" (> {TARGETS[engine]:g}x)"
            ratios = f"{row[f'{engine}/floor']:.2f}x{mark}, CPU {row[f'{engine}/floor cpu']:.2f}x"
            cells += [f"{row[engine]['seconds']:.2f} s", ratios]
        own = saved["floors"][row["family"]]["duckdb"]["variant"].removeprefix("duckdb").strip()
        cells += [
            f"{row['duckdb floor']:.2f} s" + (f" ({own})" if own else ""),
            f"{row['duckdb/duckdb floor']:.2f}x, CPU {row['duckdb/duckdb floor cpu']:.2f}x",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    rounds = next(iter(saved["metrics"]))["polars"]["runs"]
    each = "; ".join(
        f"{family}: " + ", ".join(f"{v} {s['seconds']:.3f} s" for v, s in bound["variants"].items())
        for family, bound in saved["floors"].items()
    )
    lines += [
        "",
        f"Each family's floor is its fastest variant ({each}), DuckDB's own floor its fastest "
        f"DuckDB variant, the fastest of {len(rounds)} "
        "rounds in fresh processes, as each metric; the CPU ratio is of user + system seconds "
        "inside the clock, which a busy machine changes less. "
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
