"""Edges where the engines used to part ways or fail badly: each one on every engine path."""

import decimal
import json

import numpy as np
import polars as pl
import pytest
from sklearn.metrics import ndcg_score

import polars_rankmetrics as rm
from polars_rankmetrics.checks import validation
from polars_rankmetrics.engines.duckdb import register_views
from polars_rankmetrics.engines.sql import checks as sql_checks
from polars_rankmetrics.metrics.registry import RANKING_METRICS, parse_keys


def huge_integer_scores() -> pl.DataFrame:
    # 2**60 + 1 is not a double: as DOUBLE it ties with 2**60, as Int64 it does not.
    return pl.DataFrame({
        "sample": [0, 0, 0], "label": ["a", "b", "c"],
        "score": [2**60, 2**60 + 1, 0], "truth": [1, 0, 0],
    })  # fmt: skip


def test_integer_scores_a_double_cannot_hold_are_refused(engine):
    with pytest.raises(ValueError, match=r"'score' \(score\) has a value that a 64-bit float"):
        engine.evaluate(huge_integer_scores(), ["ndcg"])


def test_integer_scores_a_double_holds_give_scikit_learns_numbers(engine):
    df = huge_integer_scores().with_columns(score=pl.Series([2**53, 2**53 - 1, 0]))
    expected = ndcg_score([[1, 0, 0]], [[2.0**53, 2.0**53 - 1, 0.0]])
    assert engine.evaluate(df, ["ndcg"])["ndcg"][0] == pytest.approx(expected, rel=1e-12)


def test_decimal_scores(engine):
    digits = [decimal.Decimal("12345678901234567.89"), decimal.Decimal("12345678901234567.88")]
    fine = [decimal.Decimal("0.25"), decimal.Decimal("0.50")]
    df = pl.DataFrame({
        "sample": [0, 0, 0], "label": ["a", "b", "c"],
        "score": pl.Series([*digits, decimal.Decimal(0)], dtype=pl.Decimal(38, 2)),
        "truth": [0, 1, 0],
    })  # fmt: skip
    with pytest.raises(ValueError, match=r"cannot hold exactly"):
        engine.evaluate(df, ["ndcg"])
    df = df.with_columns(score=pl.Series([*fine, decimal.Decimal(0)], dtype=pl.Decimal(38, 2)))
    as_float = df.with_columns(pl.col("score").cast(pl.Float64))
    assert engine.evaluate(df).equals(engine.evaluate(as_float))


def test_nan_group_key_with_a_repeated_label(engine):
    df = pl.DataFrame({
        "m": [float("nan")] * 4, "sample": [1, 1, 2, 2], "label": ["a", "a", "a", "b"],
        "score": [0.1, 0.2, 0.3, 0.4], "truth": [1, 0, 0, 1],
    })  # fmt: skip
    with pytest.raises(
        ValueError, match=r"repeats label 'a' within one sample \(m=nan, sample=1\)"
    ):
        engine.evaluate(df, by="m")


@pytest.mark.parametrize("engine_name", ["polars", "duckdb"])
def test_a_file_name_with_glob_characters_is_taken_literally(tmp_path, engine_name):
    df = rm.from_dense([[1, 0, 1]], [[0.2, 0.5, 0.9]])
    df.write_parquet(tmp_path / "odd[1].parquet")
    df.with_columns(truth=1 - pl.col("truth")).write_parquet(tmp_path / "odd1.parquet")
    result = rm.evaluate(tmp_path / "odd[1].parquet", ["lrap"], engine=engine_name)
    assert result["lrap"][0] == pytest.approx((1 + 2 / 3) / 2)  # odd1.parquet is not read


@pytest.mark.parametrize("log_base", [1, 0.5, 0, -2, float("nan"), True])
def test_log_base_must_be_above_one(log_base):
    df = rm.from_dense([[1, 0, 1]], [[0.2, 0.5, 0.9]])
    with pytest.raises(ValueError, match="log_base must be a number > 1"):
        rm.evaluate(df, ["dcg"], log_base=log_base)
    with pytest.raises(ValueError, match="log_base must be a number > 1"):
        df.pipe(rm.dcg_score, log_base=log_base)


def test_the_sql_row_checks_answer_exactly_the_python_problem_ids():
    import duckdb

    con = duckdb.connect()
    df = rm.from_dense([[1, 0]], [[0.2, 0.5]]).with_columns(
        w=pl.lit(1.0), m=pl.lit("x"), p=pl.lit(True)
    )
    register_views(con, df, weight="w", by="m", pred="p")
    columns = set(con.sql("SELECT * FROM rankmetrics_row_checks").columns) - {"n_rows"}
    # every problem of a weighted table with a binary and a probability metric, less the two
    # the engine asks the source for directly (a null by value, an integer score a double
    # cannot hold)
    cols = validation.Columns.of(weight="w", by="m", pred="p")
    keys = parse_keys([*RANKING_METRICS, "psprecision@1", "log_loss_macro"])
    expected = set(validation.row_problems(cols, keys))
    assert columns == expected - {"null_by_0", "inexact_score"} == set(sql_checks.SQL_PROBLEMS)


def test_the_sql_row_counts_are_the_row_flags_summed():
    """rankmetrics_row_checks counts a column's nulls from the column (count(*) - count(x)),
    the other problems from rankmetrics_row_flags: every count equals its flags' sum, on a table
    where each problem shows once."""
    import duckdb

    nan, inf = float("nan"), float("inf")
    df = pl.DataFrame({
        "sample": [1, None, 1, 1, 1, 1, 1, 1, 1],
        "label": [1, 2, None, 4, 5, 6, 7, 8, 9],
        "score": [0.1, 0.2, 0.3, None, nan, 0.6, 0.7, 0.8, 0.9],
        "truth": [1.0, 0.0, 0.0, 0.0, 0.0, None, inf, 2.0, -1.0],
        "w": [1.0, 1.0, None, -1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        "p": [1.0, None, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    })  # fmt: skip
    con = duckdb.connect()
    register_views(con, df, weight="w", pred="p")
    counts = con.sql("SELECT * FROM rankmetrics_row_checks").pl().row(0, named=True)
    sums = ", ".join(f"sum({pid}) AS {pid}" for pid in sql_checks.SQL_PROBLEMS)
    flags = con.sql(f"SELECT count(*) AS n_rows, {sums} FROM rankmetrics_row_flags")
    assert counts == flags.pl().row(0, named=True)
    plain_nulls = ("null_sample", "null_label", "null_score", "null_truth", "null_pred")
    assert [counts[pid] for pid in plain_nulls] == [1] * len(plain_nulls)


def test_the_sql_engines_count_only_the_problems_an_evaluation_checks():
    floats = pl.Schema({"sample": pl.Int64, "label": pl.Int64, "score": pl.Float64,
                        "truth": pl.Float64, "w": pl.Float64, "p": pl.Int8})  # fmt: skip
    plain, keys = validation.Columns.of(), parse_keys(["hamming_loss"])
    counted = sql_checks.counted_problems(plain, keys, floats)
    assert {"null_score", "nan_truth", "non_binary_truth"} <= set(counted)
    assert not {"null_weight", "null_pred", "missing_propensity"} & set(counted)
    # the truth's binary flag is counted for a graded metric too (it tells whether it is binary)
    assert "non_binary_truth" in sql_checks.counted_problems(plain, parse_keys(["ndcg"]), floats)
    every = validation.Columns.of(weight="w", pred="p")
    assert sql_checks.counted_problems(
        every, parse_keys(["lrap", "psprecision@1", "log_loss_macro"]), floats
    ) == list(sql_checks.SQL_PROBLEMS)
    # the column types rule some out: no NaN in an integer, no 2 in a boolean
    typed = pl.Schema(floats | {"score": pl.Int32, "truth": pl.Boolean, "p": pl.Boolean})
    ruled = set(sql_checks.SQL_PROBLEMS) - set(sql_checks.counted_problems(every, keys, typed))
    assert ruled >= {"nan_score", "nan_truth", "non_binary_truth", "negative_truth"}
    assert "non_binary_pred" in ruled and "null_truth" not in ruled
    with pytest.raises(ValueError, match="'new_problem' is not a problem"):
        sql_checks.counts_query(["null_score", "new_problem"], plain, str)


def test_a_check_the_sql_does_not_answer_is_an_error_not_a_pass():
    cols = validation.Columns.of()
    found = {pid: None for pid in validation.row_problems(cols, parse_keys(["lrap"]))}
    validation.judge_rows(found, cols, parse_keys(["lrap"]), rows=1)
    del found["nan_score"]
    with pytest.raises(KeyError, match="nan_score"):
        validation.judge_rows(found, cols, parse_keys(["lrap"]), rows=1)


def test_json_of_a_group_without_positives():
    df = rm.from_dense([[0, 0]], [[0.2, 0.5]])
    assert np.isnan(rm.evaluate(df, ["lwlrap"])["lwlrap"][0])
    assert json.loads(json.dumps(rm.evaluate(df, ["lrap"]).to_dicts()[0])) == {"lrap": 1.0}


@pytest.mark.parametrize(
    "call",
    [
        lambda df: rm.evaluate(df, ["lrap"], scor="s"),
        lambda df: rm.compare(df, ["lrap"], scor="s"),
        lambda df: rm.label_report(df, scor="s"),
        lambda df: rm.lwlrap_per_class(df, pred="p"),
        lambda df: rm.lwlrap(df, pred="p"),
    ],
)
def test_an_unknown_column_keyword_is_refused_naming_the_keywords(call):
    df = rm.from_dense([[1, 0], [0, 1]], [[0.2, 0.3], [0.4, 0.1]])
    with pytest.raises(TypeError, match="unexpected keyword argument .* the column keywords are"):
        call(df)


@pytest.mark.parametrize(
    "function",
    [rm.evaluate, rm.compare, rm.label_report, rm.lwlrap_per_class, rm.lwlrap, rm.ndcg_score],
)
def test_the_column_keywords_are_documented_once_for_every_function(function):
    doc = function.__doc__
    assert "**columns" not in doc
    assert "    sample, label, score, truth\n        Column names (keywords)" in doc
    assert ("    pred\n" in doc) == (function in (rm.evaluate, rm.compare, rm.label_report))
