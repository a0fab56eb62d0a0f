"""Differential fuzz: the engines agree on every input.

Hypothesis draws small long tables (ties, samples without positives and samples of positives
only, string or integer ids, a weight column or none, and now and then one bad value: a null, a
NaN, a graded or negative truth, a score outside [0, 1], a ragged or repeated label, a varying
or negative weight) and hands each to every engine through one kind of source (a DataFrame,
a LazyFrame, a CSV file, a Parquet file, a pandas DataFrame, an Arrow table), for one metric
family. On one source, the engines either give the same numbers (to 1e-9) and the same
warnings, or the same refusal: the same exception type and the same message. The reference is
no engine of ours but the other engine; where both evaluate, the numbers are also those of the
Polars engine on the table as a DataFrame (every source holds the same table).

The CSV dialect's corners and the Parquet types an engine might read another way are fixed
cases below (spaces around a number, escaped quotes and spaces in a header, truth written t/f,
Duration and Time scores among them), each with the one behaviour every engine must have.
Spark evaluates a fixed sample of them.
"""

from __future__ import annotations

import datetime
import decimal
import functools
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from sklearn.metrics import label_ranking_average_precision_score

import polars_rankmetrics as rm

pytestmark = pytest.mark.slow  # every cell runs DuckDB


@dataclass(frozen=True)
class Family:
    name: str
    metrics: tuple[str, ...]
    top_k: bool = False
    options: tuple[tuple[str, object], ...] = ()


FAMILIES = [
    Family("ranking", ("lrap", "coverage_error", "ranking_loss", "lwlrap", "dcg", "ndcg@2")),
    Family("threshold", ("f1_samples", "hamming_loss", "precision_macro", "jaccard_micro",
                         "subset_accuracy")),
    Family("curves", ("average_precision_macro", "roc_auc_micro", "roc_auc_samples")),
    Family("probabilities", ("log_loss_micro", "brier_samples", "ece_micro")),
    Family("top-k", ("precision@2", "recall@2", "mrr", "map@3", "hit_rate@1"), top_k=True),
    Family("trec", ("P_5", "recip_rank", "ndcg_cut_10", "bpref", "AP"), top_k=True,
           options=(("ties", "trec_eval"),)),
]  # fmt: skip
# A CSV file as Polars writes it, and as other writers and hands leave it: every twist is the
# same table.
TWISTS = {
    "as written": lambda text: text,
    "a blank last line": lambda text: text + "\n",
    "CRLF": lambda text: text.replace("\n", "\r\n"),
    "blank lines between records": lambda text: text.replace("\n", "\n\n", 2),
}
SOURCES = [
    "DataFrame", "LazyFrame", *(f"CSV, {twist}" for twist in TWISTS), "Parquet", "pandas",
    "Arrow",
]  # fmt: skip
ENGINES = ("polars", "duckdb")

# Tied scores, all of them probabilities (so that the probability family has valid tables).
SCORES = st.sampled_from([0.0, 0.25, 0.5, 0.5, 0.75, 1.0])
# One bad value, at one drawn row: (column, value); "drop" removes the row (a ragged label set),
# "repeat" gives it the label of the sample's first row.
BAD = [
    ("score", None), ("score", float("nan")), ("score", 1.5), ("score", float("inf")),
    ("truth", None), ("truth", 2.0), ("truth", -1.0), ("truth", float("nan")),
    ("w", None), ("w", -1.0), ("w", 7.0), ("sample", None), ("label", None),
    ("drop", None), ("repeat", None),
]  # fmt: skip


@st.composite
def tables(draw) -> tuple[pl.DataFrame, bool]:
    """A long table (sample, label, score, truth and maybe a weight ``w``), and whether it is
    weighted."""
    n_samples, n_labels = draw(st.integers(0, 4)), draw(st.integers(1, 4))
    strings, weighted = draw(st.booleans()), draw(st.booleans())
    id_type = pl.String if strings else pl.Int64
    rows = []
    for i in range(n_samples):
        kind = draw(st.sampled_from(["as drawn", "as drawn", "no positive", "all positive"]))
        weight = draw(st.sampled_from([0.5, 1.0, 2.0]))
        for j in range(n_labels):
            truth = {"no positive": 0.0, "all positive": 1.0}.get(kind)
            rows.append({
                "sample": f"q{i}" if strings else i, "label": f"d{j}" if strings else j,
                "score": draw(SCORES),
                "truth": draw(st.sampled_from([0.0, 0.0, 1.0])) if truth is None else truth,
                "w": weight,
            })  # fmt: skip
    schema = {"sample": id_type, "label": id_type, "score": pl.Float64, "truth": pl.Float64,
              "w": pl.Float64}  # fmt: skip
    df = pl.DataFrame(rows, schema=schema, orient="row")
    bad = draw(st.sampled_from([None] * 4 + BAD)) if df.height else None
    if bad is not None:
        df = _spoiled(df, draw(st.integers(0, df.height - 1)), *bad)
    return (df if weighted else df.drop("w")), weighted


def _spoiled(df: pl.DataFrame, row: int, column: str, value: object) -> pl.DataFrame:
    if column == "drop":
        return df.filter(pl.int_range(pl.len()) != row)
    if column == "repeat":
        column, value = "label", df["label"][0 if row == 0 else row - 1]
    values = df[column].to_list()
    values[row] = value
    return df.with_columns(pl.Series(column, values, dtype=df.schema[column], strict=False))


def split(df: pl.DataFrame, family: Family) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """The table a family reads: a top-k family's predictions and truth table (the rows whose
    truth is not 0), or the table itself."""
    if not family.top_k:
        return df, None
    truth = df.filter(pl.col("truth").ne_missing(0.0)).select("sample", "label", "truth")
    return df.drop("truth"), truth


def source(df: pl.DataFrame, kind: str, path: Path) -> object:
    """``df`` as a source of ``kind``, written at ``path`` (without its extension)."""
    if kind == "DataFrame":
        return df
    if kind == "LazyFrame":
        return df.lazy()
    if kind == "pandas":
        return df.to_pandas()
    if kind == "Arrow":
        return df.to_arrow()
    if kind.startswith("CSV"):
        text = TWISTS[kind.removeprefix("CSV, ")](df.write_csv())
        path.with_suffix(".csv").write_bytes(text.encode())
        return str(path.with_suffix(".csv"))
    df.write_parquet(path.with_suffix(".parquet"))
    return str(path.with_suffix(".parquet"))


@dataclass(frozen=True)
class Outcome:
    """An evaluation's numbers and warnings, or its refusal (type and message)."""

    result: pl.DataFrame | None
    warned: tuple[str, ...] = ()
    refusal: tuple[str, str] | None = None


def outcome(engine: str, data: object, family: Family, weighted: bool, truth: object) -> Outcome:
    options = dict(family.options) | {"engine": engine}
    if weighted:
        options["weight"] = "w"
    if family.top_k:
        options["truth_table"] = truth
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = rm.evaluate(data, family.metrics, **options)
        except Exception as error:  # a crash on one engine is a disagreement too
            return Outcome(None, refusal=(type(error).__name__, str(error)))
    return Outcome(result, tuple(sorted(f"{w.category.__name__}: {w.message}" for w in caught)))


def assert_agree(first: Outcome, second: Outcome) -> None:
    assert first.refusal == second.refusal
    assert first.warned == second.warned
    if first.result is not None:
        assert second.result is not None
        assert_frame_equal(first.result, second.result, check_exact=False, rel_tol=1e-9,
                           abs_tol=1e-9)  # fmt: skip


# Few examples a family: the suite's time budget, shared by every family and source kind.
FUZZ = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
@FUZZ
@given(drawn=tables(), kind=st.sampled_from(SOURCES))
def test_engines_agree_on_random_tables(family, drawn, kind):
    df, weighted = drawn
    predictions, truth = split(df, family)
    with tempfile.TemporaryDirectory() as where:
        data = source(predictions, kind, Path(where) / "predictions")
        truth_source = None if truth is None else source(truth, kind, Path(where) / "truth")
        found = [outcome(e, data, family, weighted, truth_source) for e in ENGINES]
    assert_agree(*found)
    if found[0].result is not None:
        reference = outcome("polars", predictions, family, weighted, truth)
        assert reference.result is not None, reference.refusal
        assert_agree(reference, found[0])


# The corners of the CSV dialect and of Parquet's types, each with the one behaviour of every
# engine: "evaluates" (as the clean table does), or the refusal's message in part.
CLEAN_CSV = "sample,label,score,truth\n1,a,0.9,1\n1,b,0.2,0\n2,a,0.3,0\n2,b,0.8,1\n"
NOT_NUMERIC = "column 'score' must be numeric, not String"
CSV_CASES = {
    # Cells and header names an engine might read as another does: refused the same way.
    "a number with spaces around it": (CLEAN_CSV.replace(",0.9,", ", 0.9 ,"), NOT_NUMERIC),
    "a header's escaped quote": (
        CLEAN_CSV.replace("score", '"sc""ore"', 1),
        "column 'score' not found; the table has columns ['sample', 'label', 'sc\"ore', 'truth']",
    ),
    "truth written t/f": (
        CLEAN_CSV.replace(",1\n", ",t\n").replace(",0\n", ",f\n"),
        "column 'truth' must be bool or numeric, not String",
    ),
    "spaces after the header's commas": (
        CLEAN_CSV.replace(",", ", ", 3),
        "column 'label' not found; the table has columns ['sample', ' label', ' score', ' truth']",
    ),
    "a blank last line": (CLEAN_CSV + "\n", "evaluates"),
    # Like them.
    "blank lines between records": (CLEAN_CSV.replace("0\n2", "0\n\n\n2"), "evaluates"),
    "a record of empty fields": (
        CLEAN_CSV + ",,,\n",
        "has a record of empty fields on line 6: column 'sample' has a null there",
    ),
    "a record of empty fields between records, CRLF": (
        CLEAN_CSV.replace("0\n2", "0\n\n,,,\n2").replace("\n", "\r\n"),
        "has a record of empty fields on line 5: column 'sample' has a null there",
    ),
    "a short record of empty fields": (
        CLEAN_CSV + ",\n",
        "has 2 fields on line 6 where its header has 4",
    ),
    "CRLF line ends": (CLEAN_CSV.replace("\n", "\r\n"), "evaluates"),
    "a byte order mark": ("\ufeff" + CLEAN_CSV, "evaluates"),
    "no newline at the end": (CLEAN_CSV.rstrip("\n"), "evaluates"),
    "a quoted number": (CLEAN_CSV.replace("0.9", '"0.9"'), "evaluates"),
    "truth written true/false": (
        CLEAN_CSV.replace(",1\n", ",true\n").replace(",0\n", ",false\n"),
        "evaluates",
    ),
    "truth written yes/no": (
        CLEAN_CSV.replace(",1\n", ",yes\n").replace(",0\n", ",no\n"),
        "column 'truth' must be bool or numeric, not String",
    ),
    "a score written Infinity": (CLEAN_CSV.replace("0.9", "Infinity"), NOT_NUMERIC),
    "a score written 1_000": (CLEAN_CSV.replace("0.9", "1_000"), NOT_NUMERIC),
    "a score written 0x10": (CLEAN_CSV.replace("0.9", "0x10"), NOT_NUMERIC),
    "dates as scores": (
        CLEAN_CSV.replace("0.9", "2020-01-09")
        .replace("0.2", "2020-01-02")
        .replace("0.3", "2020-01-03")
        .replace("0.8", "2020-01-08"),
        NOT_NUMERIC,
    ),  # fmt: skip
    "quoted empty labels": (CLEAN_CSV.replace(",a,", ',"",'), "evaluates"),
    "an empty sample id": (CLEAN_CSV.replace("1,a", ",a"), "column 'sample' has a null"),
    "a column named twice": (
        CLEAN_CSV.replace("truth", "score", 1),
        "names column 'score' twice in its header",
    ),
    "a column without a name": (
        CLEAN_CSV.replace("\n", ",\n"),
        "has a column without a name (field 5 of its header)",
    ),
    "an integer past 64 bits": (
        CLEAN_CSV.replace("0.9", "99999999999999999999")
        .replace("0.2", "2")
        .replace("0.3", "3")
        .replace("0.8", "8"),
        "column 'score' holds Int128 values",
    ),  # fmt: skip
}


def _parquet_with(column: str, values: pa.Array) -> pa.Table:
    table = pl.read_csv(CLEAN_CSV.encode()).to_arrow()
    return table.set_column(table.schema.get_field_index(column), column, values)


PARQUET_CASES = {
    "a Duration score": (
        lambda: _parquet_with("score", pa.array([9, 2, 3, 8], pa.duration("us"))),
        "column 'score' must be numeric, not Duration",
    ),
    "a Time score": (
        lambda: _parquet_with("score", pa.array([datetime.time(0, 0, s) for s in (9, 2, 3, 8)])),
        "column 'score' must be numeric, not Time",
    ),
    "a Date score": (
        lambda: _parquet_with("score", pa.array([datetime.date(2020, 1, d) for d in (9, 2, 3, 8)])),
        "column 'score' must be numeric, not Date",
    ),
    "a Decimal score": (
        lambda: _parquet_with(
            "score",
            pa.array(
                [decimal.Decimal(v) for v in ("0.9", "0.2", "0.3", "0.8")], pa.decimal128(5, 2)
            ),
        ),
        "evaluates",
    ),  # fmt: skip
    "a Decimal truth": (
        lambda: _parquet_with(
            "truth", pa.array([decimal.Decimal(v) for v in "1001"], pa.decimal128(3, 0))
        ),
        "evaluates",
    ),  # fmt: skip
    "a dictionary label": (
        lambda: _parquet_with("label", pa.array(["a", "b", "a", "b"]).dictionary_encode()),
        "evaluates",
    ),
    "a large_string label": (
        lambda: _parquet_with("label", pa.array(["a", "b", "a", "b"], pa.large_string())),
        "evaluates",
    ),
    "an unsigned score": (
        lambda: _parquet_with("score", pa.array([1, 0, 0, 1], pa.uint64())),
        "evaluates",
    ),
    "an unsigned score past a double's precision": (
        lambda: _parquet_with("score", pa.array([2**64 - 1, 2, 3, 8], pa.uint64())),
        "has a value that a 64-bit float cannot hold exactly",
    ),
    "a uint8 truth": (
        lambda: _parquet_with("truth", pa.array([1, 0, 0, 1], pa.uint8())),
        "evaluates",
    ),
    "a null truth": (
        lambda: _parquet_with("truth", pa.array([1, None, 0, 1], pa.int64())),
        "column 'truth' (truth) has a null (at sample=1, label='b')",
    ),
    "a half-float score": (
        lambda: _parquet_with("score", pa.array([0.9, 0.2, 0.3, 0.8], pa.float16())),
        "evaluates",
    ),
    "a binary label": (
        lambda: _parquet_with("label", pa.array([b"a", b"b", b"a", b"b"])),
        "evaluates",
    ),
    "a categorical label": (
        lambda: pl.read_csv(CLEAN_CSV.encode()).with_columns(pl.col("label").cast(pl.Categorical)),
        "evaluates",
    ),
    "an enum label": (
        lambda: pl.read_csv(CLEAN_CSV.encode()).with_columns(
            pl.col("label").cast(pl.Enum(["b", "a"]))
        ),
        "evaluates",
    ),
    "an Int128 score": (
        lambda: pl.read_csv(CLEAN_CSV.encode()).with_columns(
            (pl.col("score") * 10).cast(pl.Int128)
        ),
        "column 'score' holds Int128 values",
    ),
}
DIALECT_METRICS = ("lrap", "roc_auc_micro", "f1_samples")


@functools.cache
def clean() -> pl.DataFrame:
    """The numbers of the clean table, which a case that evaluates must give."""
    return rm.evaluate(pl.read_csv(CLEAN_CSV.encode()), DIALECT_METRICS)


def written(case: str, where: Path) -> str:
    """The file of a CSV or Parquet case, written under ``where``."""
    if case in CSV_CASES:
        path = where / "case.csv"
        path.write_bytes(CSV_CASES[case][0].encode())
        return str(path)
    path = where / "case.parquet"
    table = PARQUET_CASES[case][0]()
    if isinstance(table, pl.DataFrame):
        table.write_parquet(path)
    else:
        pq.write_table(table, path)
    return str(path)


def expected_behaviour(case: str) -> str:
    return (CSV_CASES.get(case) or PARQUET_CASES[case])[1]


def check_case(case: str, engines: tuple[str, ...], where: Path) -> None:
    """Every engine of ``engines`` does what ``case`` expects, and the same."""
    path = written(case, where)
    found = [
        outcome(engine, path, Family(case, DIALECT_METRICS), False, None) for engine in engines
    ]
    for other in found[1:]:
        assert_agree(found[0], other)
    wanted = expected_behaviour(case)
    if wanted == "evaluates":
        assert found[0].result is not None, found[0].refusal
        assert_frame_equal(found[0].result, clean(), check_exact=False, rel_tol=1e-9)
    else:
        assert found[0].refusal is not None and found[0].refusal[0] == "ValueError", found[0]
        assert wanted in found[0].refusal[1]


CASES = [*CSV_CASES, *PARQUET_CASES]


@pytest.mark.parametrize("case", CASES)
def test_engines_read_a_file_the_same_way(case, tmp_path):
    check_case(case, ENGINES, tmp_path)


# Spark reads CSV files through Polars and Parquet files itself: a CSV case, the Parquet types
# it would read as others, and one it reads as the others do: a sample, as each Spark evaluation
# is slow beside the other engines'.
SPARK_CASES = [
    "a number with spaces around it",
    "a Duration score",
    "a Time score",
    "a Decimal score",
]


def test_spark_reads_a_file_as_the_others(spark, tmp_path):
    failures = []
    for number, case in enumerate(SPARK_CASES):
        where = tmp_path / str(number)
        where.mkdir()
        try:
            check_case(case, ("polars", "spark"), where)
        except AssertionError as failure:
            failures.append(f"{case}: {failure}")
    assert not failures, "\n".join(failures)


# Two CSV files of one table: the second's header as the first's, reordered, or with one more.
SECOND_HEADERS = {
    "the same header": "sample,label,score,truth",
    "its columns in another order": "label,sample,score,truth",
    "one more column": "sample,label,score,truth,note",
}


@pytest.mark.parametrize("header", SECOND_HEADERS)
@pytest.mark.parametrize("engine", ENGINES)
def test_csv_files_are_read_by_their_own_headers(engine, header, tmp_path):
    """A folder or a glob of CSV files is one table only where every header is the first's;
    read by position, a reordered header would swap columns and give wrong numbers."""
    first = [("1", "7", "0.9", "1"), ("1", "8", "0.2", "0"), ("1", "9", "0.5", "1")]
    second = [("2", "7", "0.3", "1"), ("2", "8", "0.8", "0"), ("2", "9", "0.6", "1")]
    names = SECOND_HEADERS[header].split(",")
    (tmp_path / "a.csv").write_text(
        "sample,label,score,truth\n" + "".join(",".join(row) + "\n" for row in first)
    )
    (tmp_path / "b.csv").write_text(",".join(names) + "\n" + "".join(
        ",".join(dict(zip(["sample", "label", "score", "truth"], row, strict=True)).get(n, "x")
                 for n in names) + "\n"
        for row in second
    ))  # fmt: skip
    for data in (str(tmp_path), str(tmp_path / "*.csv")):
        if header == "the same header":
            result = rm.evaluate(data, ["lrap"], engine=engine)
            # scikit-learn over the union: sample 1 then sample 2, labels 7, 8, 9.
            expected = label_ranking_average_precision_score(
                [[1, 0, 1], [1, 0, 1]], [[0.9, 0.2, 0.5], [0.3, 0.8, 0.6]]
            )
            assert result["lrap"][0] == pytest.approx(expected, rel=1e-12)
            continue
        with pytest.raises(ValueError) as raised:
            rm.evaluate(data, ["lrap"], engine=engine)
        assert str(raised.value) == (
            f"the CSV files {str(tmp_path / 'a.csv')!r} and {str(tmp_path / 'b.csv')!r} have "
            f"different headers (sample,label,score,truth and {','.join(names)}): give every "
            "file of one table the same columns in the same order"
        )


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_a_line_of_commas_inside_a_quoted_field_is_no_empty_record(engine, tmp_path):
    """The lines of commas alone are only candidates: one inside a quoted field that spans
    lines is part of a value, and the file evaluates."""
    path = tmp_path / "case.csv"
    path.write_text(CLEAN_CSV.replace(",a,", ',"a\n,,,\nz",'))
    assert_frame_equal(rm.evaluate(str(path), DIALECT_METRICS, engine=engine), clean(),
                       check_exact=False, rel_tol=1e-9)  # fmt: skip


def test_spark_checks_its_own_types_where_polars_cannot_read_the_path(spark, tmp_path, monkeypatch):
    """Parquet files on a filesystem Polars cannot read (``hdfs://``) are read by Spark alone,
    and Spark's types are checked as Polars checks its own: an interval score is refused in
    the Polars engine's words, a Time column (which Spark cannot read) naming the files, and a
    clean file evaluates as on Polars. The test's HDFS
    is a local folder behind Spark's Parquet reader."""
    from pyspark.sql.readwriter import DataFrameReader

    read_parquet = DataFrameReader.parquet
    local = {f"hdfs://namenode/{case}.parquet": case for case in ("clean", "time", "interval")}

    def hdfs(reader, *paths):
        cases = [local[path] for path in paths]
        found = read_parquet(reader, *(str(tmp_path / f"{case}.parquet") for case in cases))
        if cases == ["interval"]:  # Parquet holds no interval: Spark makes one
            return found.selectExpr("sample", "label", "make_dt_interval(0, 0, 0, score) AS score",
                                    "truth")  # fmt: skip
        return found

    pl.read_csv(CLEAN_CSV.encode()).write_parquet(tmp_path / "clean.parquet")
    pl.read_csv(CLEAN_CSV.encode()).write_parquet(tmp_path / "interval.parquet")
    pq.write_table(PARQUET_CASES["a Time score"][0](), tmp_path / "time.parquet")
    monkeypatch.setattr(DataFrameReader, "parquet", hdfs)
    assert_frame_equal(
        rm.evaluate("hdfs://namenode/clean.parquet", ["lrap"], engine="spark"),
        clean().select("lrap"), check_exact=False, rel_tol=1e-9,
    )  # fmt: skip
    with pytest.raises(ValueError) as raised:
        rm.evaluate("hdfs://namenode/interval.parquet", ["lrap"], engine="spark")
    assert str(raised.value).startswith("column 'score' must be numeric, not Duration")
    # Spark reads no Time column at all: the files are named, not the column.
    with pytest.raises(ValueError) as raised:
        rm.evaluate("hdfs://namenode/time.parquet", ["lrap"], engine="spark")
    assert str(raised.value).startswith(
        "the Parquet files 'hdfs://namenode/time.parquet' hold a Time column, which Spark does "
        "not read (a score, truth or weight must be numeric, not Time)"
    )
