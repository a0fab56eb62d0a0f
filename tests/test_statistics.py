"""No check or metric depends on a Parquet file's column statistics.

Writers leave NaN out of a float column's min/max (as the format asks), write statistics for
some columns or row groups only, or none. The same table is written by each writer; every engine
path (one piece and buckets) must refuse the same bad rows and give the same numbers as the
table held in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb
import polars as pl
import pyarrow.parquet as pq
import pytest
from polars.testing import assert_frame_equal

NAN, INF = float("nan"), float("inf")


def _duckdb_copy(df: pl.DataFrame, path: Path) -> None:
    con = duckdb.connect()
    con.register("frame", df.to_arrow())
    con.execute(f"COPY frame TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 4)")


WRITERS: dict[str, Callable[[pl.DataFrame, Path], None]] = {
    "polars": lambda df, path: df.write_parquet(path),
    "polars, no statistics": lambda df, path: df.write_parquet(path, statistics=False),
    "polars, row groups of 4": lambda df, path: df.write_parquet(path, row_group_size=4),
    "pyarrow": lambda df, path: pq.write_table(df.to_arrow(), path),
    "pyarrow, ids' statistics only": lambda df, path: pq.write_table(
        df.to_arrow(), path, write_statistics=["sample", "label"]
    ),
    "pyarrow, row groups of 3": lambda df, path: pq.write_table(
        df.to_arrow(), path, row_group_size=3
    ),
    "duckdb COPY": _duckdb_copy,
}


def table() -> pl.DataFrame:
    """Four samples of three integer labels; the label ids span a wide range."""
    return pl.DataFrame(
        {
            "sample": [10, 10, 10, 20, 20, 20, 30, 30, 30, 40, 40, 40],
            "label": [7, 500, 90000] * 4,
            "score": [0.9, 0.2, 0.6, 0.3, 0.8, 0.1, 0.7, 0.4, 0.5, 0.5, 0.5, 0.5],
            "truth": [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0],
            "w": [1.0] * 3 + [2.0] * 3 + [0.5] * 3 + [1.0] * 3,
        }
    )


def at(column: str, row: int, value: object) -> pl.DataFrame:
    df = table()
    values = df[column].to_list()
    values[row] = value
    return df.with_columns(pl.Series(column, values, dtype=df.schema[column]))


BAD = {
    "NaN score": at("score", 4, NAN),
    # A NaN among equal scores: bounds of min = max would make the column a constant.
    "NaN among equal scores": at("score", 10, NAN),
    "NaN truth": at("truth", 4, NAN),
    "infinite truth": at("truth", 4, INF),
    "NaN weight": at("w", 4, NAN),
    "negative weight": at("w", 4, -1.0),
    "null score": at("score", 4, None),
    "null truth": at("truth", 4, None),
    "null sample": at("sample", 4, None),
    "null label": at("label", 4, None),
}
METRICS = ["lrap", "ndcg", "f1_samples", "roc_auc_macro"]


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("bad", BAD)
def test_bad_rows_are_found_whatever_the_statistics(engine, bad, writer, tmp_path):
    df = BAD[bad]
    with pytest.raises(ValueError) as expected:
        engine.evaluate(df, METRICS, weight="w")
    path = tmp_path / "t.parquet"
    WRITERS[writer](df, path)
    with pytest.raises(ValueError) as got:
        engine.evaluate(str(path), METRICS, weight="w")
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("writer", WRITERS)
def test_valid_files_give_the_numbers_of_the_table_whatever_the_statistics(
    engine, writer, tmp_path
):
    # Infinite scores are valid; the label range and the sample ids' span are read from the file.
    df = at("score", 0, INF).with_columns(
        score=pl.when(pl.col("sample") == 30).then(-INF).otherwise("score")
    )
    path = tmp_path / "t.parquet"
    WRITERS[writer](df, path)
    keys = [*METRICS, "coverage_error", "hamming_loss", "average_precision_micro"]
    expected = engine.evaluate(df, keys, weight="w")
    assert_frame_equal(engine.evaluate(str(path), keys, weight="w"), expected)
    per_sample = ["lrap", "ndcg", "coverage_error"]
    assert_frame_equal(
        engine.evaluate(str(path), per_sample, per_sample=True).sort("sample"),
        engine.evaluate(df, per_sample, per_sample=True).sort("sample"),
    )


def test_a_duckdb_relation_of_the_users_connection_shows_its_nan(tmp_path):
    # The relation is read on the user's connection, as the user opened it.
    import polars_rankmetrics as rm

    path = tmp_path / "t.parquet"
    BAD["NaN score"].write_parquet(path)
    relation = duckdb.connect().read_parquet(str(path))
    with pytest.raises(ValueError, match=r"'score' \(score\) has a NaN \(at sample=20, label=500"):
        rm.evaluate(relation, ["lrap"], engine="duckdb")
