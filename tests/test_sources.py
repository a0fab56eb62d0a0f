"""Any dataframe in: pandas, pyarrow, DuckDB relations and Arrow-stream objects give the numbers
of the same table as a Polars DataFrame, on every engine path; results are Polars."""

import io
import re
import subprocess

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.dataset as ds
import pytest
from conftest import ENGINES
from polars.testing import assert_frame_equal
from servers import http_server

import polars_rankmetrics as rm

KEYS = ["lrap", "ndcg@3", "f1_macro", "roc_auc_samples"]
# The example's clips of one class make roc_auc_samples ill-defined: the same warning on every
# source (tests/test_classification.py checks where it warns); here the numbers are compared.
pytestmark = pytest.mark.filterwarnings("ignore::polars_rankmetrics.UndefinedMetricWarning")


def example() -> pl.DataFrame:
    return pl.read_parquet("data/example.parquet").filter(pl.col("sample") < "clip_00030")


class ArrowStreamOnly:
    """An object that offers nothing but the Arrow PyCapsule stream interface."""

    def __init__(self, table: pa.Table) -> None:
        self.table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self.table.__arrow_c_stream__(requested_schema)


def make_input(kind: str, df: pl.DataFrame, con: duckdb.DuckDBPyConnection) -> object:
    table = df.to_arrow()
    return {
        "pandas": lambda: df.to_pandas(),
        "pyarrow table": lambda: table,
        "record batch reader": lambda: pa.RecordBatchReader.from_batches(
            table.schema, table.to_batches()
        ),
        "pyarrow dataset": lambda: ds.dataset(table),
        "duckdb relation": lambda: con.from_arrow(table),
        "arrow stream object": lambda: ArrowStreamOnly(table),
    }[kind]()


KINDS = ["pandas", "pyarrow table", "record batch reader", "pyarrow dataset", "duckdb relation",
         "arrow stream object"]  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
def test_every_dataframe_kind_gives_the_polars_numbers(engine, kind):
    df = example()
    expected = rm.evaluate(df, KEYS, by="model", weight="weight")
    con = duckdb.connect()
    try:
        data = make_input(kind, df, con)
        result = engine.evaluate(data, KEYS, by="model", weight="weight")
        del data
    finally:
        con.close()
    assert isinstance(result, pl.DataFrame)
    assert_frame_equal(result, expected, check_exact=False, rel_tol=1e-12)


def test_frame_functions_and_reports_take_pandas_and_return_polars():
    df = example().filter(model="candidate")
    pandas = df.to_pandas()
    ranking_loss = pandas.pipe(rm.label_ranking_loss, weight="weight")
    assert isinstance(ranking_loss, pl.DataFrame)
    assert ranking_loss.item() == pytest.approx(rm.label_ranking_loss(df, weight="weight").item())
    report = rm.label_report(pandas)
    assert_frame_equal(report, rm.label_report(df))
    per_class = rm.lwlrap_per_class(pandas)
    assert isinstance(per_class, pl.DataFrame)
    assert isinstance(rm.lwlrap_per_class(df.lazy()), pl.LazyFrame)
    assert isinstance(rm.lwlrap_per_class("data/example.parquet", by="model"), pl.DataFrame)
    # Back to pandas: one documented call.
    assert isinstance(report.to_pandas(), pd.DataFrame)


@pytest.mark.parametrize("data", [{"sample": [1]}, 42, [1, 2]])
def test_anything_else_is_a_type_error_saying_what_is_accepted(data):
    with pytest.raises(TypeError, match="data must be a polars DataFrame or LazyFrame, a pandas"):
        rm.evaluate(data, ["lrap"])


@pytest.mark.parametrize("engine_name", ["polars", "duckdb"])
@pytest.mark.parametrize("column", ["sample", "label", "score"])
def test_a_column_of_python_objects_is_refused(engine_name, column):
    """Refused where the evaluation reads it, the same on every engine; a column it does not
    read is left alone."""
    table = pl.DataFrame({"sample": [0, 0, 1, 1], "label": ["a", "b", "a", "b"],
                          "score": [0.9, 0.1, 0.4, 0.6], "truth": [1, 0, 0, 1]})  # fmt: skip
    objects = pl.Series(column, [object() for _ in range(4)], dtype=pl.Object)
    with pytest.raises(ValueError, match=rf"column '{column}' holds Python objects \(Object\)"):
        rm.evaluate(table.with_columns(objects), ["lrap"], engine=engine_name)
    unread = table.with_columns(objects.alias("note"))
    assert rm.evaluate(unread, ["lrap"], engine=engine_name).item() == 1.0


@pytest.mark.parametrize("engine_name", ["polars", "duckdb"])
def test_directories_hive_partitions_csv_and_ndjson(tmp_path, engine_name):
    """A directory of hive partitions (model=...), whose key is a by column; the same table as
    CSV and as NDJSON files by extension; errors that say what was tried."""
    df = example()
    expected = rm.evaluate(df, KEYS, by="model", weight="weight")
    for model in ("baseline", "candidate"):
        part = tmp_path / "hive" / f"model={model}"
        part.mkdir(parents=True)
        df.filter(model=model).drop("model").write_parquet(part / "part-0.parquet")
    df.write_csv(tmp_path / "table.csv")
    df.write_ndjson(tmp_path / "table.ndjson")
    options = {"by": "model", "weight": "weight", "engine": engine_name}
    for source in (tmp_path / "hive", tmp_path / "table.csv", str(tmp_path / "*.ndjson")):
        result = rm.evaluate(source, KEYS, **options)
        assert_frame_equal(result, expected, check_exact=False, rel_tol=1e-12)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="no data file matches the data files .* under the dir"):
        rm.evaluate(empty, KEYS, engine=engine_name)
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(ValueError, match="'.*notes.txt' is not a data file this library reads"):
        rm.evaluate(tmp_path / "notes.txt", KEYS, engine=engine_name)


def test_urls_are_read_where_they_are(tmp_path):
    """A file behind an HTTP URL (a server on 127.0.0.1) and a file:// URL give the numbers of
    the local file: Polars reads both, in one piece and in buckets, from the CLI too; DuckDB
    reads file:// and, without its httpfs extension (not installable offline), refuses HTTP
    with a message that says so."""
    df = example()
    df.write_parquet(tmp_path / "table.parquet")
    expected = rm.evaluate(df, KEYS, by="model", weight="weight")
    options = {"by": "model", "weight": "weight"}
    file_url = (tmp_path / "table.parquet").as_uri()
    for engine in ENGINES:
        result = engine.evaluate(file_url, KEYS, **options)
        assert_frame_equal(result, expected, check_exact=False, rel_tol=1e-12)
    with http_server(tmp_path) as base:
        url = f"{base}/table.parquet"
        for engine in ENGINES[:2]:
            result = engine.evaluate(url, KEYS, **options)
            assert_frame_equal(result, expected, check_exact=False, rel_tol=1e-12)
        with pytest.raises(ValueError, match="DuckDB cannot read the URL.* without its httpfs"):
            rm.evaluate(url, KEYS, engine="duckdb", **options)
        done = subprocess.run(
            ["rankmetrics", "evaluate", url, "--by", "model", "--weight", "weight", "--metrics",
             "lrap", "--format", "csv"], capture_output=True, text=True,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert pl.read_csv(io.StringIO(done.stdout))["lrap"].to_list() == pytest.approx(
            expected["lrap"].to_list(), rel=1e-12
        )
        missing = subprocess.run(
            ["rankmetrics", "evaluate", f"{base}/missing.parquet"], capture_output=True, text=True
        )
        assert missing.returncode == 1
        assert missing.stderr.count("\n") == 1 and "missing.parquet" in missing.stderr


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_a_frame_is_checked_by_its_own_types_on_every_engine(engine):
    """A frame's columns are checked as Polars types them before DuckDB reads them through
    Arrow (a Duration score would reach DuckDB as an interval, which ended in a panic); half
    floats, which DuckDB's Arrow reader refuses, are widened exactly."""
    base = pl.DataFrame({"sample": [1, 1, 2, 2], "label": ["a", "b", "a", "b"],
                         "score": [0.1, 0.2, 0.3, 0.4], "truth": [1, 0, 0, 1]})  # fmt: skip
    for bad in (
        base.with_columns(pl.col("score").cast(pl.Duration("ms"))),
        base.with_columns(score=pl.col("label").cast(pl.Categorical)),
    ):
        dtype = re.escape(str(bad.schema["score"]))
        with pytest.raises(ValueError, match=f"column 'score' must be numeric, not {dtype}:"):
            rm.evaluate(bad, ["lrap"], engine=engine)
    half = base.with_columns(pl.col("score").cast(pl.Float16))
    assert rm.evaluate(half, ["lrap"], engine=engine).item() == rm.evaluate(base, ["lrap"]).item()


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_a_pandas_column_of_mixed_types_is_named(engine):
    """Arrow cannot give a pandas object column mixing strings and numbers one type, and its
    error names no column: the refusal names it."""
    pd = pytest.importorskip("pandas")
    base = {"sample": [1, 1, 2, 2], "label": ["a", "b", "a", "b"], "score": [0.9, 0.1, 0.2, 0.8],
            "truth": [1, 0, 0, 1]}  # fmt: skip
    for column, values in (("label", ["a", "b", 3, "b"]), ("score", [0.9, "0.4", 0.2, 0.8])):
        mixed = pd.DataFrame(base | {column: values})
        with pytest.raises(ValueError, match=f"^column '{column}' cannot be read as one type"):
            rm.evaluate(mixed, ["lrap"], engine=engine)
