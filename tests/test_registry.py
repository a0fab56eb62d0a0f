"""The metric registry: a metric registered in one place is computed by every engine path."""

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_rankmetrics as rm
from polars_rankmetrics.cli import main
from polars_rankmetrics.engines.polars_plans import PLANS, Plan, plan
from polars_rankmetrics.metrics import registry as metrics

EXAMPLE = Path(__file__).parent.parent / "data" / "example.parquet"


@pytest.fixture
def positive_share():
    """A toy metric, registered here only: the share of a sample's labels that are positive,
    weighted by the sample weight. It needs no rank table."""
    metric = metrics.register(
        metrics.Metric(
            "positive_share",
            "share of a sample's labels that are positive",
            "higher",
            polars=lambda key, context: (pl.col(context.truth) > 0).mean(),
            sql_view=metrics.RANKING_VIEW,
            sql_value="CAST(n_positives AS DOUBLE) / n_labels",
            family="toy",
        )
    )
    # It needs no rank: the Polars engine may run it over the rows as they are.
    plan(metric.name, Plan(ranks="none"))
    yield metric
    PLANS.pop(metric.name)
    metrics.unregister(metric.name)


def test_a_registered_metric_runs_on_every_engine_path(engine, positive_share):
    rng = np.random.default_rng(0)
    y_true, y_score = rng.random((2, 20, 6))
    df = rm.from_dense(y_true < 0.3, y_score).with_columns(
        model=pl.col("sample") % 2, weight=(pl.col("sample") % 3).cast(pl.Float64)
    )
    result = engine.evaluate(df, ["positive_share", "lrap"], by="model", weight="weight")
    # The same number straight from the table, without the library.
    per_sample = df.group_by("model", "sample").agg(
        share=pl.col("truth").cast(pl.Float64).mean(), weight=pl.col("weight").first()
    )
    expected = per_sample.group_by("model").agg(
        ((pl.col("share") * pl.col("weight")).sum() / pl.col("weight").sum()).alias("share")
    )
    expected = expected.sort("model")["share"].to_numpy()
    np.testing.assert_allclose(result["positive_share"].to_numpy(), expected, rtol=1e-12)
    assert result.columns == ["model", "positive_share", "lrap"]


def test_a_registered_metric_per_sample(engine, positive_share):
    df = rm.from_dense([[1, 0, 0, 1], [0, 0, 0, 0]], [[0.1, 0.2, 0.3, 0.4]] * 2)
    result = engine.evaluate(df, ["positive_share"], per_sample=True)
    assert result["positive_share"].to_list() == [0.5, 0.0]


def test_the_cli_lists_registered_metrics(positive_share, capsys):
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    assert "positive_share" in capsys.readouterr().out


def test_keys_parse_from_the_registry():
    assert str(metrics.parse_key("ndcg@5")) == "ndcg@5"
    with pytest.raises(ValueError, match=r"metric 'lrap' takes no cut-off"):
        metrics.parse_key("lrap@5")
    with pytest.raises(ValueError, match=r"unknown metric 'auc'; valid metrics are coverage_error"):
        metrics.parse_key("auc")
