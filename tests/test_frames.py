"""The scikit-learn-named frame functions: same kind of frame out, by= and per_sample= shapes."""

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from reference import dense
from sklearn.metrics import label_ranking_loss, ndcg_score

import polars_rankmetrics as rm

EXAMPLE = Path(__file__).parent.parent / "data" / "example.parquet"


@pytest.mark.parametrize("lazy", [False, True])
def test_by_and_per_sample_shapes(lazy):
    df = pl.read_parquet(EXAMPLE)
    data = df.lazy() if lazy else df
    grouped = data.pipe(rm.ndcg_score, k=5, by="model", weight="weight")
    per_sample = data.pipe(rm.label_ranking_loss, by="model", per_sample=True)
    if lazy:
        assert isinstance(grouped, pl.LazyFrame) and isinstance(per_sample, pl.LazyFrame)
        grouped, per_sample = grouped.collect(), per_sample.collect()
    assert grouped.columns == ["model", "ndcg@5"] and grouped["model"].to_list() == [
        "baseline",
        "candidate",
    ]
    assert per_sample.columns == ["model", "sample", "ranking_loss"] and per_sample.height == 4000
    for model in ("baseline", "candidate"):
        samples, y_true, y_score = dense(df.filter(model=model))
        weights = df.filter(model=model).group_by("sample").agg(pl.col("weight").first())
        weights = weights.sort("sample")["weight"].to_numpy()
        expected = ndcg_score(y_true, y_score, k=5, sample_weight=weights)
        assert grouped.filter(model=model)["ndcg@5"][0] == pytest.approx(expected, rel=1e-12)
        ours = per_sample.filter(model=model).sort("sample")
        assert ours["sample"].to_list() == samples.to_list()
        theirs = [
            label_ranking_loss(y_true[i : i + 1], y_score[i : i + 1]) for i in range(len(y_true))
        ]
        np.testing.assert_allclose(ours["ranking_loss"], theirs, rtol=1e-12)


def test_dcg_score_log_base_and_column_names():
    df = rm.from_dense(
        [[3, 0, 1]], [[0.1, 0.9, 0.5]], sample="q", label="doc", score="s", truth="rel"
    )
    base2 = df.pipe(rm.dcg_score, sample="q", label="doc", score="s", truth="rel")["dcg"][0]
    base10 = df.pipe(rm.dcg_score, log_base=10, sample="q", label="doc", score="s", truth="rel")[
        "dcg"
    ][0]
    # 1 / log10(x) = ln(10) / ln(x): the base only rescales dcg.
    assert base10 == pytest.approx(base2 * math.log(10) / math.log(2))
