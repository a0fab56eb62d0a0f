"""Errors of the medium say what happened and what to do, as one line: a full temporary
directory, a corrupt or truncated Parquet file, a malformed CSV or NDJSON file. Valid text files
evaluate the same on every engine."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from conftest import BUDGET, rows_per_bucket
from polars.testing import assert_frame_equal

import polars_rankmetrics as rm
from polars_rankmetrics import cli

ENGINES = ["polars", pytest.param("duckdb", marks=pytest.mark.slow)]
INF = float("inf")


def run_cli(argv: list[str], capsys) -> tuple[int, str]:
    status = cli.main(argv)
    return status, capsys.readouterr().err


def one_line(err: str) -> str:
    assert err.startswith("rankmetrics: error: ") and err.count("\n") == 1, err
    return err.removeprefix("rankmetrics: error: ").rstrip("\n")


def dense(n_samples: int, n_labels: int = 10, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    n = n_samples * n_labels
    return pl.DataFrame(
        {
            "sample": np.repeat(np.arange(n_samples), n_labels),
            "label": np.tile(np.arange(n_labels), n_samples),
            "score": rng.random(n),
            "truth": rng.integers(0, 2, n),
        }
    )


@pytest.fixture
def small_disk(tmp_path):
    """A 512 kB file system: the temporary directory of a run that needs more."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount)])
    if done.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_full_temporary_directory_is_named_with_the_way_out(engine, small_disk, tmp_path, capsys):
    path = tmp_path / "big.parquet"
    dense(30_000).write_parquet(path)
    message = (
        rf"the temporary directory '{small_disk}' ran out of space for this run's spill and "
        r"bucket files: free space there, or give a directory with more room \(temp_dir=, "
        r"--temp-dir\)"
    )
    with rows_per_bucket(20_000), pytest.raises(ValueError, match=f"^{message}$"):
        rm.evaluate(path, engine=engine, memory_limit=BUDGET, temp_dir=small_disk)
    assert list(small_disk.iterdir()) == []  # nothing left behind
    argv = ["evaluate", str(path), "--engine", engine, "--memory-limit", BUDGET]
    with rows_per_bucket(20_000):
        status, err = run_cli([*argv, "--temp-dir", str(small_disk)], capsys)
    assert status == 1
    assert re.fullmatch(message, one_line(err))
    assert list(small_disk.iterdir()) == []


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("damage", ["truncated", "not parquet"])
def test_a_corrupt_parquet_file_is_named(engine, damage, tmp_path, capsys):
    good, bad = tmp_path / "a.parquet", tmp_path / "b.parquet"
    table = dense(200)
    table.filter(pl.col("sample") < 100).write_parquet(good)
    table.filter(pl.col("sample") >= 100).write_parquet(bad)
    body = bad.read_bytes()
    bad.write_bytes(body[: len(body) // 2] if damage == "truncated" else b"not parquet" * 50)
    message = rf"^the Parquet file '{bad}' is corrupt or truncated: File out of specification"
    for data in (str(bad), str(tmp_path)):  # the file alone, and in a directory
        with pytest.raises(ValueError, match=message):
            rm.evaluate(data, engine=engine)
    status, err = run_cli(["evaluate", str(tmp_path), "--engine", engine], capsys)
    assert status == 1 and re.match(message, one_line(err))


def test_a_corrupt_parquet_file_is_named_by_every_verb(tmp_path, capsys):
    """compare, the reports and finalize read a Parquet file's schema first (is it a state?):
    a corrupt one is named there too, as evaluate names it."""
    bad = tmp_path / "b.parquet"
    dense(20).write_parquet(bad)
    bad.write_bytes(bad.read_bytes()[:200])
    message = rf"^the Parquet file '{bad}' is corrupt or truncated: File out of specification"
    for verb in (
        lambda: rm.compare(str(bad), baseline="m"),
        lambda: rm.label_report(str(bad)),
        lambda: rm.finalize(str(bad)),
        lambda: rm.html_report(str(bad)),
    ):
        with pytest.raises(ValueError, match=message):
            verb()
    for argv in (["compare", str(bad), "--baseline", "m"], ["report", str(bad)]):
        status, err = run_cli(argv, capsys)
        assert status == 1 and re.match(message, one_line(err))


MALFORMED_CSV = {
    "short record": ("sample,label,score,truth\n1,a,0.9,1\n1,b,0.2\n", "has 3 fields on line 3 "
                     "where its header has 4"),
    "long record": ("sample,label,score,truth\n1,a,0.9,1\n1,b,0.2,0,7\n", "has 5 fields on line 3 "
                    "where its header has 4"),
    "open quote": ('sample,label,score,truth\n1,a,0.9,1\n1,b,"0.2,0\n2,a,0.1,0\n',
                   "is malformed on line 4: unexpected end of data"),
}  # fmt: skip


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", MALFORMED_CSV)
def test_a_malformed_csv_file_names_the_file_and_the_line(engine, case, tmp_path, capsys):
    text, problem = MALFORMED_CSV[case]
    path = tmp_path / "t.csv"
    path.write_text(text)
    message = f"the CSV file '{path}' {problem}"
    with pytest.raises(ValueError) as error:
        rm.evaluate(str(path), ["lrap"], engine=engine)
    assert str(error.value) == message
    status, err = run_cli(["evaluate", str(path), "--engine", engine], capsys)
    assert (status, one_line(err)) == (1, message)


def test_json_without_nan_literals(tmp_path):
    # Python's json module writes NaN and Infinity, which JSON does not have: Polars' reader
    # refuses them (DuckDB's reads them as numbers, where a NaN is then refused as a NaN).
    path = tmp_path / "t.ndjson"
    rows = [{"sample": 1, "label": "a", "score": INF, "truth": 1}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.raises(ValueError) as error:
        rm.evaluate(str(path), ["lrap"])
    assert str(error.value) == (
        f"the NDJSON file '{path}' is not valid JSON on line 1: Infinity is not a JSON value"
    )


def infinite_scores() -> pl.DataFrame:
    return dense(40, 5, seed=3).with_columns(
        score=pl.when(pl.col("label") == 0)
        .then(INF)
        .when(pl.col("label") == 4)
        .then(-INF)
        .otherwise("score")
    )


@pytest.mark.parametrize("writer", ["polars", "pandas"])
def test_infinite_scores_in_csv_are_numbers_on_every_engine(writer, tmp_path):
    df = infinite_scores()
    path = tmp_path / "t.csv"
    if writer == "polars":
        df.write_csv(path)
    else:
        df.to_pandas().to_csv(path, index=False)
    assert "inf" in path.read_text()
    keys = ["lrap", "ndcg@3", "f1_samples", "roc_auc_macro", "coverage_error"]
    expected = rm.evaluate(df, keys)
    for engine in ("polars", "duckdb"):
        assert_frame_equal(rm.evaluate(str(path), keys, engine=engine), expected)


@pytest.mark.parametrize("sample", [0, 39], ids=["among the first rows", "beyond them"])
def test_text_in_a_numeric_csv_column_is_refused_on_every_engine(sample, tmp_path):
    # A CSV column's type is inferred from all its rows: the text makes it a text column.
    path = tmp_path / "t.csv"
    infinite_scores().with_columns(
        score=pl.when(pl.col("sample") == sample).then(pl.lit("high")).otherwise(pl.col("score"))
    ).write_csv(path)
    for engine in ("polars", "duckdb"):
        with pytest.raises(ValueError, match="column 'score' must be numeric, not String"):
            rm.evaluate(Path(path), ["lrap"], engine=engine)


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_csv_columns_are_typed_from_every_row(tmp_path, engine):
    """A CSV column's type comes from all its values: integer scores on 30,000 samples then a
    0.5 and a 0.25 are floats (a reader typing the column from its first rows rounds or refuses
    them), and the result is that of the same rows given as a frame."""
    frame = dense(30_001, n_labels=2, seed=3).with_columns(
        score=(pl.col("sample") % 5).cast(pl.Float64)
    )
    last = pl.col("sample") == 30_000
    frame = frame.with_columns(
        score=pl.when(last).then(0.5 / (pl.col("label") + 1)).otherwise("score")
    )
    path = tmp_path / "late.csv"
    whole = pl.col("score") == pl.col("score").floor()
    text = pl.when(whole).then(pl.col("score").cast(pl.Int64).cast(pl.String))
    frame.with_columns(score=text.otherwise(pl.col("score").cast(pl.String))).write_csv(path)
    lines = path.read_text().splitlines()
    assert lines[1].startswith("0,0,0,") and lines[-1].startswith("30000,1,0.25,")
    keys = ["lrap", "coverage_error", "ranking_loss"]
    assert_frame_equal(rm.evaluate(str(path), keys, engine=engine), rm.evaluate(frame, keys))


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_csv_numbers_with_a_leading_zero_are_ids(tmp_path, engine):
    """``01`` and ``1`` are two samples (a zero-padded id is text on every engine, wherever it
    appears in the file: here after 12,000 rows); a score written ``01.5`` is text, refused as
    not numeric."""
    ids = [str(i) for i in range(1, 6001)] + ["01", "02", "03"]
    rng = np.random.default_rng(5)
    frame = pl.DataFrame({
        "sample": np.repeat(ids, 2),
        "label": ["a", "b"] * len(ids),
        "score": rng.random(2 * len(ids)).round(3),
        "truth": [1, 0, 0, 1] * (len(ids) // 2) + [1, 0],
    })  # fmt: skip
    path = tmp_path / "ids.csv"
    frame.write_csv(path)
    assert path.read_text().endswith("\n03,b,%s,0\n" % frame["score"][-1])
    keys = ["lrap", "coverage_error"]
    result = rm.evaluate(str(path), keys, engine=engine)
    assert_frame_equal(result, rm.evaluate(frame, keys))
    # As numbers, 01 and 1 would be one sample of four rows, which repeats its labels.
    with pytest.raises(ValueError, match="repeats label"):
        rm.evaluate(frame.with_columns(pl.col("sample").cast(pl.Int64)), keys)
    padded = tmp_path / "padded.csv"
    padded.write_text("sample,label,score,truth\n1,a,01.5,1\n1,b,0.5,0\n")
    with pytest.raises(ValueError, match="column 'score' must be numeric, not String"):
        rm.evaluate(str(padded), ["lrap"], engine=engine)


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_an_empty_csv_file_is_named(tmp_path, engine, capsys):
    path = tmp_path / "zero.csv"
    path.write_bytes(b"")
    status, err = run_cli(["evaluate", str(path), "--engine", engine], capsys)
    assert status == 1
    assert one_line(err) == f"the CSV file {str(path)!r} is empty: it has no header"
