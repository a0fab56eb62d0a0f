"""The bad-input matrix: every refusal of "Bad input" in docs/inputs.md, on every kind of source
the docs accept, on every engine, for every metric family.

Each bad table differs from a valid one in one row or one sample, so its error names one
deterministic example. The reference is the Polars engine on a DataFrame; every other cell must
raise the same ``ValueError``, word for word, and the command line must print it as one line and
exit 1. A table the reference evaluates (a case that is valid for a family: a top-k table's
samples may hold different labels) must evaluate to the same numbers everywhere.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankmetrics as rm
from polars_rankmetrics import cli

NAN = float("nan")
BAD_ROW = 4  # sample 2, label "b": a positive, so it is in a top-k truth table too


def valid() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "sample": [1, 1, 1, 2, 2, 2, 3, 3, 3],
            "label": ["a", "b", "c"] * 3,
            "score": [0.9, 0.2, 0.6, 0.3, 0.8, 0.1, 0.7, 0.4, 0.5],
            "truth": [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0],
            "w": [1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 0.5, 0.5, 0.5],
        }
    )


def at_bad_row(column: str, value: object) -> Callable[[pl.DataFrame], pl.DataFrame]:
    def change(df: pl.DataFrame) -> pl.DataFrame:
        values = df[column].to_list()
        values[BAD_ROW] = value
        return df.with_columns(pl.Series(column, values, dtype=df.schema[column], strict=False))

    return change


AT = r"\(at sample=2, label='b'\)"  # the example row of a row problem
NOT_FINITE = "has a negative, NaN or infinite value"


def drop_bad_row(df: pl.DataFrame) -> pl.DataFrame:
    return df.filter(pl.int_range(pl.len()) != BAD_ROW)


def text_scores(df: pl.DataFrame) -> pl.DataFrame:
    return df.with_columns(pl.format("s{}", pl.col("score")))


# name -> (the change, a pattern the reference message must match: the column and the example)
CASES: dict[str, tuple[Callable[[pl.DataFrame], pl.DataFrame], str]] = {
    "nan score": (at_bad_row("score", NAN), rf"'score' \(score\).* has a NaN {AT}"),
    "null score": (at_bad_row("score", None), rf"'score' \(score\).* has a null {AT}"),
    "nan truth": (at_bad_row("truth", NAN), rf"'truth' \(truth\).* NaN or infinite value {AT}"),
    "null truth": (at_bad_row("truth", None), rf"'truth' \(truth\).* has a null {AT}"),
    "nan weight": (at_bad_row("w", NAN), rf"'w' \(weight\).* {NOT_FINITE} {AT}"),
    "null weight": (at_bad_row("w", None), rf"'w' \(weight\).* has a null {AT}"),
    "negative weight": (at_bad_row("w", -1.0), rf"'w' \(weight\).* {NOT_FINITE} {AT}"),
    "varying weight": (at_bad_row("w", 3.0), r"'w' \(weight\) is not constant .* \(sample=2\)"),
    "all-zero weights": (lambda df: df.with_columns(w=pl.lit(0.0)), r"'w' .* weights .* sum to 0"),
    "null sample": (at_bad_row("sample", None), r"'sample'.* a null \(at sample=None, label='b'"),
    "null label": (at_bad_row("label", None), r"'label'.* has a null \(at sample=2, label=None\)"),
    "non-binary truth": (at_bad_row("truth", 2.0), rf"'truth' \(truth\).* must be 0 or 1 .* {AT}"),
    "negative truth": (at_bad_row("truth", -1.0), rf"'truth' \(truth\).* 0 or 1.* {AT}"),
    "repeated label": (at_bad_row("label", "a"), r"repeats label 'a' within one sample \(sample=2"),
    "ragged label sets": (drop_bad_row, r"different label sets: sample=2 has 2 labels"),
    "empty table": (lambda df: df.clear(), r"the table is empty"),
    "non-numeric score": (text_scores, r"column 'score' must be numeric, not String: cast it"),
    "missing column": (lambda df: df.drop("score"), r"column 'score' not found"),
}  # fmt: skip


@dataclass(frozen=True)
class Family:
    name: str
    metrics: tuple[str, ...]
    top_k: bool = False


FAMILIES = [
    Family("ranking", ("lrap", "ndcg@2")),
    Family("threshold", ("f1_samples", "hamming_loss")),
    Family("curve", ("average_precision_macro", "roc_auc_micro")),
    Family("top-k", ("precision@2", "mrr"), top_k=True),
]
# The dense families in one call: the same checks of the long table, every family's views.
DENSE = Family("dense", tuple(m for f in FAMILIES if not f.top_k for m in f.metrics))
# Where a case is valid for a family (the reference then evaluates it, and every cell must give
# the same numbers): a top-k table's samples hold any labels.
VALID_FOR = {("ragged label sets", "top-k")}


def tables(case: str, family: Family) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """The bad table (the predictions of a top-k family), and a top-k family's truth table."""
    df = CASES[case][0](valid())
    if not family.top_k:
        return df, None
    truth = "truth" in df.columns and df.schema["truth"].is_numeric()
    true_rows = df.filter(pl.col("truth").ne_missing(0.0)) if truth else df
    truth_table = true_rows.select(c for c in ("sample", "label", "truth") if c in df.columns)
    return df.drop("truth", strict=False), truth_table


def write(df: pl.DataFrame, kind: str, where: Path) -> object:
    """``df`` as a source of ``kind``, written under ``where``."""
    where.mkdir(parents=True, exist_ok=True)
    if kind == "DataFrame":
        return df
    if kind == "LazyFrame":
        return df.lazy()
    if kind == "pyarrow Table":
        return df.to_arrow()
    if kind == "pandas DataFrame":
        return df.to_pandas()
    if kind == "DuckDB relation":
        df.write_parquet(where / "t.parquet")
        return duckdb.connect().read_parquet(str(where / "t.parquet"))
    if kind == "CSV":
        df.write_csv(where / "t.csv")
        return str(where / "t.csv")
    if kind == "NDJSON":
        df.write_ndjson(where / "t.ndjson")
        return str(where / "t.ndjson")
    if kind == "Parquet file":
        df.write_parquet(where / "t.parquet")
        return str(where / "t.parquet")
    # A directory and a glob: two files, the samples split between them.
    (where / "parts").mkdir(exist_ok=True)
    first = df.filter(pl.col("sample").is_in([1]).fill_null(False)) if df.height else df
    first.write_parquet(where / "parts" / "part-0.parquet")
    df.join(first, on=df.columns, how="anti", nulls_equal=True).write_parquet(
        where / "parts" / "part-1.parquet"
    )
    return str(where / "parts") if kind == "directory" else str(where / "parts" / "*.parquet")


SOURCES = [
    "DataFrame", "LazyFrame", "Parquet file", "directory", "glob", "CSV", "NDJSON",
    "pyarrow Table", "pandas DataFrame", "DuckDB relation",
]  # fmt: skip
FILE_SOURCES = ["Parquet file", "directory", "glob", "CSV", "NDJSON"]


# The Polars engine's cells, one a family, are in the quick subset. DuckDB's evaluate the dense
# families in one call (they share the checks of the long table; each case's error is theirs but
# for the keys it lists) and the top-k family.
ENGINE_FAMILIES = [("polars", family) for family in FAMILIES] + [
    pytest.param("duckdb", family, marks=pytest.mark.slow) for family in (DENSE, FAMILIES[3])
]


def call(family: Family, data: object, truth_table: object, engine: str) -> pl.DataFrame:
    options: dict[str, object] = {"weight": "w", "engine": engine}
    if family.top_k:
        options["truth_table"] = truth_table
    return rm.evaluate(data, family.metrics, **options)


def outcome(family: Family, data: object, truth_table: object, engine: str):
    try:
        return call(family, data, truth_table, engine)
    except ValueError as error:
        return error


@functools.cache
def reference(case: str, family: Family):
    """The Polars engine's answer on a DataFrame, computed once per (case, family)."""
    predictions, truth_table = tables(case, family)
    return outcome(family, predictions, truth_table, "polars")


# Media without a NaN of their own: pandas holds a missing float as NaN, and JSON has no NaN
# (Polars and pandas write null). There a NaN may be refused as a null.
NULL_FOR_NAN = {"pandas DataFrame", "NDJSON"}


def same(expected, got, kind: str) -> None:
    """``got`` is ``expected``'s error word for word (a NaN as a null in :data:`NULL_FOR_NAN`),
    or its numbers."""
    if isinstance(expected, ValueError):
        assert isinstance(got, ValueError), f"no error, a result:\n{got}"
        wanted = str(expected)
        if kind in NULL_FOR_NAN and "NaN" in wanted:
            assert str(got) in (wanted, re.sub(r"has a [^(]*NaN[^(]*\(", "has a null (", wanted))
        else:
            assert str(got) == wanted
    else:
        assert not isinstance(got, ValueError), f"refused a valid table: {got}"
        assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-12)


IDS = {case: re.sub(r"\W+", "-", case) for case in CASES}


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
@pytest.mark.parametrize("case", CASES, ids=IDS.get)
def test_the_reference_refuses_naming_the_column_and_a_sample(case, family):
    expected = reference(case, family)
    if (case, family.name) in VALID_FOR:
        assert isinstance(expected, pl.DataFrame)
        return
    assert isinstance(expected, ValueError), f"{case} was evaluated:\n{expected}"
    assert re.search(CASES[case][1], str(expected)), str(expected)


@pytest.mark.parametrize("kind", SOURCES)
@pytest.mark.parametrize(
    "engine, family", ENGINE_FAMILIES, ids=lambda v: v if isinstance(v, str) else v.name
)
def test_every_source_and_engine_gives_the_same_answer(kind, engine, family, tmp_path):
    failures = []
    for case in CASES:
        predictions, truth_table = tables(case, family)
        data = write(predictions, kind, tmp_path / IDS[case] / "predictions")
        truth = (
            None if truth_table is None else write(truth_table, kind, tmp_path / IDS[case] / "t")
        )
        try:
            same(reference(case, family), outcome(family, data, truth, engine), kind)
        except AssertionError as failure:
            failures.append(f"{case}: {failure}")
    assert not failures, "\n".join(failures)


# Spark, on a Parquet file and on a Spark DataFrame: the dense families in one call (they share
# the checks of the long table; each case's error is theirs but for the keys it lists) and the
# top-k family (a truth table of its own). One JVM evaluation per case and cell. Spark reads
# both kinds into one view that the same checks query, so the Spark DataFrame cells hold the
# cases a medium can change: its schema (a missing or text column, an empty table) and how it
# keeps a missing or NaN value.
SPARK_CELLS = [
    (family, kind)
    for kind in ("Parquet file", "Spark DataFrame")
    for family in (DENSE, FAMILIES[3])
]
MEDIUM_CASES = [
    case for case in CASES
    if case.startswith(("nan ", "null ")) or case in {
        "non-numeric score", "missing column", "empty table",
    }
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("family, kind", SPARK_CELLS, ids=[f"{f.name}-{k}" for f, k in SPARK_CELLS])
def test_spark_gives_the_same_answer(spark, family, kind, tmp_path):
    failures = []
    for case in MEDIUM_CASES if kind == "Spark DataFrame" else CASES:
        predictions, truth_table = tables(case, family)
        place = tmp_path / IDS[case]
        if kind == "Spark DataFrame":
            data = spark.createDataFrame(predictions.to_arrow())
            truth = None if truth_table is None else spark.createDataFrame(truth_table.to_arrow())
        else:
            data = write(predictions, kind, place / "predictions")
            truth = None if truth_table is None else write(truth_table, kind, place / "t")
        try:
            same(reference(case, family), outcome(family, data, truth, "spark"), kind)
        except AssertionError as failure:
            failures.append(f"{case}: {failure}")
    assert not failures, "\n".join(failures)


# The command turns an engine's ValueError into its one line whatever the engine (the Python
# cells above check each engine's errors on each source): every file kind on Polars, and DuckDB
# on Parquet.
COMMAND_CELLS = [("polars", kind) for kind in FILE_SOURCES] + [
    pytest.param("duckdb", "Parquet file", marks=pytest.mark.slow)
]


@pytest.mark.parametrize("engine, kind", COMMAND_CELLS)
@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_the_command_prints_the_same_one_line(kind, engine, family, tmp_path, capsys):
    for case in CASES:
        expected = reference(case, family)
        if not isinstance(expected, ValueError):
            continue
        predictions, truth_table = tables(case, family)
        data = write(predictions, kind, tmp_path / IDS[case] / "predictions")
        argv = ["evaluate", str(data), "--metrics", ",".join(family.metrics), "--weight", "w"]
        argv += ["--engine", engine]
        if truth_table is not None:
            argv += ["--truth-table", str(write(truth_table, kind, tmp_path / IDS[case] / "t"))]
        status = cli.main(argv)
        err = capsys.readouterr().err
        assert status == 1, case
        assert err.startswith("rankmetrics: error: ") and err.endswith("\n"), err
        same(expected, ValueError(err.removeprefix("rankmetrics: error: ")[:-1]), kind)
