"""A memory budget too small for an engine is refused as bad input is: a ValueError saying what
to change, in one line from the command."""

import subprocess
import sys

import polars as pl
import pytest

import polars_rankmetrics as rm


@pytest.fixture(scope="module")
def ndjson(tmp_path_factory):
    path = tmp_path_factory.mktemp("ndjson") / "tiny.ndjson"
    pl.read_parquet("data/example.parquet").head(400).write_ndjson(path)
    return path


def test_duckdb_out_of_its_share_of_the_budget_says_to_raise_it(ndjson):
    with pytest.raises(ValueError, match=r"memory_limit '64MB' is too small for DuckDB here"):
        rm.evaluate(ndjson, ["lrap"], by="model", engine="duckdb", memory_limit="64MB")
    done = subprocess.run(
        [sys.executable, "-m", "polars_rankmetrics", "evaluate", str(ndjson), "--by", "model",
         "--engine", "duckdb", "--memory-limit", "64MB"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.startswith("rankmetrics: error: memory_limit '64MB' is too small")
    assert len(done.stderr.strip().splitlines()) == 1
