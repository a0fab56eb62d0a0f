"""The exported SQL with one truth table shared by several groups (``truth_by``, the CLI's
``--truth-by``: the qrels of several runs, without the run column), on DuckDB and SQLite,
against ``rm.evaluate`` given the same tables (whose shared truth tables
test_shared_truth.py checks against an explicit cross join)."""

from __future__ import annotations

import sqlite3
from dataclasses import replace

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from test_shared_truth import _tables

import polars_rankmetrics as rm
from polars_rankmetrics import cli
from polars_rankmetrics.engines.sql.export import input_statements, view_statements
from polars_rankmetrics.inputs.columns import Columns

SUMMARY = ["coverage_error", "lrap", "ranking_loss", "lwlrap", "dcg", "ndcg"]
N_LABELS = 10
CUT = 3


def _expected(pred: pl.DataFrame, truth: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """rm.evaluate's summary at the whole ranking and at the cut, in rankmetrics_summary's
    shape (one row per group and cut, k null for the whole ranking)."""
    keys = [*SUMMARY, f"dcg@{CUT}", f"ndcg@{CUT}"]
    got = rm.evaluate(pred, keys, by=by, truth_table=truth, n_labels=N_LABELS)
    whole = got.select(*by, pl.lit(None, pl.Int64).alias("k"), *SUMMARY)
    cut = got.select(
        *by, pl.lit(CUT, pl.Int64).alias("k"), *SUMMARY[:4],
        pl.col(f"dcg@{CUT}").alias("dcg"), pl.col(f"ndcg@{CUT}").alias("ndcg"),
    )  # fmt: skip
    return pl.concat([whole, cut]).sort(*by, "k", nulls_last=True)


def _statements(by: list[str], truth_by: list[str], dialect: str) -> list[str]:
    cols = replace(Columns.of(by=by), top_k=True)
    return [
        *input_statements(
            "predictions", cols, dialect, [None, CUT], truth_table="qrels", truth_by=truth_by,
            n_labels=N_LABELS,
        ),
        *view_statements(dialect),
    ]  # fmt: skip


@pytest.mark.parametrize("truth_by", [["split"], []])
def test_duckdb_shares_the_truth_table_as_evaluate_does(truth_by):
    """Two by columns; the truth table has the split column (joined on it), or neither (the
    dev split's rows, each a true label of every group). Run "c" predicts for one sample alone;
    sample 9 is true but predicted by no run."""
    pred, truth = _tables()
    if not truth_by:
        truth = truth.filter(pl.col("split") == "dev").drop("split")
    con = duckdb.connect()
    con.register("predictions", pred.to_arrow())
    con.register("qrels", truth.to_arrow())
    for statement in _statements(["run", "split"], truth_by, "duckdb"):
        con.execute(statement)
    got = con.sql("SELECT grp, k, * EXCLUDE (grp, k) FROM rankmetrics_summary").pl()
    got = got.unnest("grp").sort("run", "split", "k", nulls_last=True)
    expected = _expected(pred, truth, ["run", "split"])
    assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)


def test_sqlite_shares_a_truth_table_without_the_by_column():
    """The exported SQL on SQLite: one by column, which the truth table lacks."""
    pred, truth = _tables()
    pred = pred.filter(pl.col("split") == "dev").drop("split")
    truth = truth.filter(pl.col("split") == "dev").drop("split")
    con = sqlite3.connect(":memory:")
    for name, frame in (("predictions", pred), ("qrels", truth)):
        con.execute(f"CREATE TABLE {name} ({', '.join(frame.columns)})")
        marks = ", ".join("?" * frame.width)
        con.executemany(f"INSERT INTO {name} VALUES ({marks})", frame.rows())
    for statement in _statements(["run"], [], "sqlite"):
        con.execute(statement)
    cursor = con.execute(f"SELECT grp, k, {', '.join(SUMMARY)} FROM rankmetrics_summary")
    got = pl.DataFrame(cursor.fetchall(), schema=["run", "k", *SUMMARY], orient="row").sort(
        "run", "k", nulls_last=True
    )
    expected = _expected(pred, truth, ["run"])
    assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)


def test_truth_by_names_by_columns_alone():
    cols = replace(Columns.of(by=["run", "split"]), top_k=True)
    with pytest.raises(ValueError, match=r"\(truth_by, --truth-by\) name 'fold', which is not a"):
        input_statements("p", cols, "duckdb", truth_table="t", truth_by=["fold"])
    with pytest.raises(ValueError, match="name a column twice: run, run"):
        input_statements("p", cols, "duckdb", truth_table="t", truth_by=["run", "run"])


def test_the_cli_takes_the_truth_tables_by_columns(capsys):
    """``--truth-by`` names the by columns the truth table has ('' for none): the printed SQL
    joins on those alone; a column that is not a --by column is one line on stderr, exit 1."""
    base = ["sql", "--input", "analytics.run", "--truth-table", "analytics.qrels",
            "--by", "run,split"]  # fmt: skip
    assert cli.main([*base, "--truth-by", "split"]) == 0
    printed = capsys.readouterr().out
    assert 'JOIN "analytics"."qrels" AS r ON g."split" = r."split"' in printed
    assert cli.main([*base, "--truth-by", ""]) == 0
    assert 'CROSS JOIN "analytics"."qrels" AS r' in capsys.readouterr().out
    assert cli.main([*base, "--truth-by", "fold"]) == 1
    err = capsys.readouterr().err
    assert err == (
        "rankmetrics: error: the truth table's by columns (truth_by, --truth-by) name 'fold', "
        "which is not a by column; the by columns: run, split\n"
    )
    assert cli.main(["sql", "--input", "analytics.run", "--truth-by", "run"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
