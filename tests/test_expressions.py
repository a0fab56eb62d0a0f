"""The per-sample expressions compose in users' own group_by/over queries."""

import numpy as np
import polars as pl
from hypothesis import given, settings

import polars_rankmetrics as rm
from polars_rankmetrics import expressions as rx
from polars_rankmetrics.keys import parse_key
from reference import sklearn_per_sample
from strategies import long_tables


@settings(max_examples=60, deadline=None)
@given(table=long_tables())
def test_expressions_in_a_users_group_by(table):
    df, y_true, y_score, _ = table
    per_sample = (
        df.group_by("sample")
        .agg(rx.coverage_error(), rx.lrap(), rx.ranking_loss(), rx.ndcg(k=2), rx.dcg())
        .sort("sample")
    )
    for key in ["coverage_error", "lrap", "ranking_loss", "ndcg@2", "dcg"]:
        np.testing.assert_allclose(per_sample[key], sklearn_per_sample(parse_key(key), y_true, y_score), rtol=1e-9)


def test_expressions_with_other_column_names_and_extra_keys():
    df = rm.from_dense([[1, 0, 0], [0, 0, 1]], [[0.75, 0.5, 1], [1, 0.2, 0.1]], sample="q", score="p", truth="y")
    two_models = pl.concat([df.with_columns(model=pl.lit("m1")), df.with_columns(model=pl.lit("m2"), p=-pl.col("p"))])
    means = (
        two_models.group_by("model", "q")
        .agg(rx.coverage_error("p", "y"))
        .group_by("model")
        .agg(pl.col("coverage_error").mean())
        .sort("model")
    )
    # m2 reverses every ranking: the positives now rank 2 and 1.
    assert means.rows() == [("m1", 2.5), ("m2", 1.5)]


def test_rank_expressions_work_as_windows():
    from polars_rankmetrics.ranks import descending_rank, positive_rank

    df = pl.DataFrame({"s": [1, 1, 1, 2], "x": [0.5, 0.9, 0.5, 0.1], "y": [1, 0, 0, 1]})
    out = df.with_columns(
        rank=descending_rank(pl.col("x")).over("s"), pos=positive_rank(pl.col("x"), pl.col("y") > 0).over("s")
    )
    assert out["rank"].to_list() == [3, 1, 3, 1]
    assert out["pos"].to_list() == [1, None, None, 1]
