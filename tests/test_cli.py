"""The rankmetrics command, run as users run it: a subprocess."""

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import polars_rankmetrics as rm
from polars_rankmetrics import cli

EXAMPLE = Path(__file__).parent.parent / "data" / "example.parquet"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "polars_rankmetrics.cli", *args], capture_output=True, text=True
    )


def test_table_output_on_the_shipped_example():
    done = run("evaluate", str(EXAMPLE), "--by", "model")
    assert done.returncode == 0, done.stderr
    assert "coverage_error" in done.stdout and "candidate" in done.stdout


def test_json_matches_the_api():
    done = run(
        "evaluate",
        str(EXAMPLE),
        "--by",
        "model",
        "--format",
        "json",
        "--metrics",
        "lrap,ndcg",
        "--k",
        "5",
        "--weight",
        "weight",
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    expected = rm.evaluate(EXAMPLE, ["lrap", "ndcg@5"], by="model", weight="weight")
    assert [row.pop("model") for row in rows] == ["baseline", "candidate"]
    # Parallel sums may differ in the last bit between runs.
    assert rows == [pytest.approx(row) for row in expected.drop("model").to_dicts()]


def test_json_without_by_is_one_object(tmp_path):
    path = tmp_path / "one.parquet"
    pl.read_parquet(EXAMPLE).filter(model="baseline").write_parquet(path)
    done = run("evaluate", str(path), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == pytest.approx(rm.evaluate(path).to_dicts()[0])


def test_csv_and_globs_and_renamed_columns(tmp_path):
    df = pl.read_parquet(EXAMPLE).filter(model="baseline").rename({"sample": "clip", "score": "p"})
    half = df["clip"].unique().sort()[:1000].implode()
    df.filter(pl.col("clip").is_in(half)).write_parquet(tmp_path / "part-0.parquet")
    df.filter(~pl.col("clip").is_in(half)).write_parquet(tmp_path / "part-1.parquet")
    done = run(
        "evaluate",
        str(tmp_path / "part-*.parquet"),
        "--format",
        "csv",
        "--sample",
        "clip",
        "--score",
        "p",
        "--metrics",
        "coverage_error",
    )
    assert done.returncode == 0, done.stderr
    header, value = done.stdout.strip().splitlines()
    assert header == "coverage_error"
    assert float(value) == pytest.approx(
        rm.evaluate(df, ["coverage_error"], sample="clip", score="p")["coverage_error"][0]
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--metrics", "auc"], "unknown metric 'auc'"),
        (["--score", "nope"], "column 'nope' not found"),
        ([], "repeats label"),
        (["--by", "model", "--k", "0"], "--k must be a positive integer"),
        (["--by", "model", "--truth", "score"], "must be 0 or 1"),
    ],
)
@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_errors_are_one_line_without_traceback(args, message, engine):
    done = run("evaluate", str(EXAMPLE), "--engine", engine, *args)
    # 2 for options the command line refuses by itself, 1 for what the evaluation refuses.
    assert done.returncode == (2 if message.startswith("--k") else 1)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("option", ["--by", "--metrics"])
@pytest.mark.parametrize("value", ["", " , "])
def test_a_list_option_that_names_nothing_is_a_usage_error(option, value, capsys):
    """--by "" would evaluate without groups, --metrics "" the default metrics: refused."""
    status = cli.main(["evaluate", str(EXAMPLE), option, value])
    err = capsys.readouterr().err
    assert status == 2
    assert (
        err == f"rankmetrics: error: {option} {value!r} names nothing: give a comma-separated "
        "list, or leave the option out\n"
    )


def test_missing_file_is_one_line():
    done = run("evaluate", "/nonexistent/x.parquet")
    assert done.returncode == 1
    assert (
        done.stderr.strip()
        == "rankmetrics: error: no data file matches the file or glob '/nonexistent/x.parquet'"
    )


def test_version_and_python_m():
    done = subprocess.run([sys.executable, "-m", "polars_rankmetrics", "--version"],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0
    assert done.stdout.strip() == f"rankmetrics {rm.__version__}"
    assert rm.__version__ == importlib.metadata.version("polars-rankmetrics")


@pytest.mark.parametrize(
    "args",
    [["evaluate", EXAMPLE, "--bogus"], ["evaluate"], ["nothing"], ["evaluate", EXAMPLE, "-k", "x"]],
)
def test_usage_errors_are_one_line_with_status_2(args):
    done = run(*args)
    assert done.returncode == 2
    assert done.stderr.startswith("rankmetrics: error: ")
    assert len(done.stderr.strip().splitlines()) == 1


def test_k_next_to_an_explicit_cut_off_is_refused():
    done = run("evaluate", EXAMPLE, "--by", "model", "--metrics", "ndcg@3,lrap", "-k", "5")
    assert done.returncode == 2
    assert "--k 5 and the explicit cut-off of 'ndcg@3'" in done.stderr


def test_by_is_comma_separated_and_json_writes_every_by_type(tmp_path):
    """Dates, datetimes, decimals, categoricals and structs in by columns: JSON output works,
    with the values as Polars writes them."""
    df = pl.read_parquet(EXAMPLE).with_columns(
        day=pl.date(2024, 1, 1)
        + pl.duration(days=pl.col("sample").str.slice(-1).cast(pl.Int64) % 2),
        at=pl.datetime(2024, 1, 1, 12),
        price=pl.lit(1.5).cast(pl.Decimal(10, 2)),
        kind=pl.col("model").cast(pl.Categorical),
        meta=pl.struct(v=pl.lit(1)),
    )
    path = tmp_path / "typed.parquet"
    df.write_parquet(path)
    by = "model,day,at,price,kind,meta"
    out = tmp_path / "result.json"
    done = run("evaluate", str(path), "--by", by, "--metrics", "lrap", "-o", str(out))
    assert done.returncode == 0, done.stderr
    rows = json.loads(out.read_text())  # .json: JSON without --format
    expected = rm.evaluate(df, ["lrap"], by=by.split(","))
    assert len(rows) == expected.height == 4
    for row, want in zip(rows, expected.iter_rows(named=True), strict=True):
        assert row["day"] == want["day"].isoformat()
        assert row["kind"] == want["kind"] and row["meta"] == {"v": 1}
        assert row["lrap"] == pytest.approx(want["lrap"])


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_by_columns_may_be_named_like_the_librarys_own_columns(tmp_path, engine):
    df = pl.read_parquet(EXAMPLE)
    path = tmp_path / "named.parquet"
    df.with_columns(weight=pl.col("model"), tp=pl.col("model")).write_parquet(path)
    done = run("evaluate", str(path), "--by", "weight,tp", "--metrics", "lrap,f1_macro",
               "--engine", engine, "--format", "json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    expected = rm.evaluate(df, ["lrap", "f1_macro"], by="model")
    rows = json.loads(done.stdout)
    assert [(row["weight"], row["tp"]) for row in rows] == [(m, m) for m in expected["model"]]
    assert [row["lrap"] for row in rows] == pytest.approx(expected["lrap"].to_list())
    assert [row["f1_macro"] for row in rows] == pytest.approx(expected["f1_macro"].to_list())


def test_per_sample_rows_to_a_csv_file(tmp_path):
    out = tmp_path / "rows.csv"
    done = run("evaluate", EXAMPLE, "--by", "model", "--metrics", "lrap,f1_samples",
               "--per-sample", "--output", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = pl.read_csv(out)
    expected = rm.evaluate(EXAMPLE, "lrap,f1_samples", by="model", per_sample=True)
    assert rows.columns == expected.columns == ["model", "sample", "lrap", "f1_samples"]
    assert rows["lrap"].to_list() == pytest.approx(expected["lrap"].to_list())


def test_a_top_k_run_with_its_truth_table_and_propensities(tmp_path):
    predictions = pl.DataFrame({"sample": [0, 0, 1, 1], "label": [0, 1, 2, 3],
                                "score": [0.9, 0.5, 0.8, 0.3]})  # fmt: skip
    truth = pl.DataFrame({"sample": [0, 0, 2], "label": [1, 5, 7]})
    propensities = pl.DataFrame({"label": list(range(10)), "propensity": [0.5] * 10})
    paths = [tmp_path / f"{name}.parquet" for name in ("pred", "truth", "prop")]
    for frame, path in zip((predictions, truth, propensities), paths, strict=True):
        frame.write_parquet(path)
    metrics = ["precision@2", "ndcg@2", "lrap", "psprecision@2", "mrr"]
    done = run("evaluate", str(paths[0]), "--truth-table", str(paths[1]), "--n-labels", "10",
               "--propensities", str(paths[2]), "--metrics", ",".join(metrics),
               "--format", "json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    expected = rm.evaluate(predictions, metrics, truth_table=truth, n_labels=10,
                           propensities=propensities)  # fmt: skip
    assert json.loads(done.stdout) == pytest.approx(expected.row(0, named=True), rel=1e-12)
    missing = run("evaluate", str(paths[0]), "--truth-table", str(paths[1]), "--metrics", "lrap")
    assert missing.returncode == 1
    assert missing.stderr.startswith("rankmetrics: error: lrap counts the unscored labels")
    assert len(missing.stderr.splitlines()) == 1
