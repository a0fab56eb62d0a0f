"""Small tables on the Polars engine: queried by Polars' in-memory engine up to
``inputs.collectors.IN_MEMORY_ROWS`` rows, by its streaming engine beyond. The test tables are all
small, so the streaming engine's results are checked here with the threshold lowered."""

import numpy as np
import polars as pl
import pytest
import sklearn.metrics as skm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import sklearn_value
from strategies import long_tables

import polars_rankmetrics as rm
from polars_rankmetrics.inputs import collectors
from polars_rankmetrics.metrics.registry import parse_key

RANKING_KEYS = ["coverage_error", "lrap", "ranking_loss", "lwlrap", "ndcg", "dcg@2"]
LABEL_KEYS = ["average_precision_macro", "roc_auc_weighted", "f1_macro", "precision_micro"]


def assert_close(ours, theirs):
    np.testing.assert_allclose(np.asarray(ours, dtype=float), theirs, rtol=1e-9, atol=1e-12)


@pytest.fixture
def engines_asked(monkeypatch):
    """The engine= of every LazyFrame.collect and collect_all call."""
    asked = []
    collect, collect_all = pl.LazyFrame.collect, pl.collect_all

    def recording_collect(self, *args, engine="auto", **options):
        asked.append(engine)
        return collect(self, *args, engine=engine, **options)

    def recording_collect_all(frames, *args, engine="auto", **options):
        asked.append(engine)
        return collect_all(frames, *args, engine=engine, **options)

    monkeypatch.setattr(pl.LazyFrame, "collect", recording_collect)
    monkeypatch.setattr(pl, "collect_all", recording_collect_all)
    return asked


def _table(n_samples: int, n_labels: int, seed: int = 5):
    rng = np.random.default_rng(seed)
    y_true = (rng.random((n_samples, n_labels)) < 0.4).astype(np.int64)
    y_true[0] = [1, 0] * (n_labels // 2)  # every label has both classes somewhere
    y_true[1] = [0, 1] * (n_labels // 2)
    y_score = np.round(rng.random((n_samples, n_labels)), 2)
    return rm.from_dense(y_true, y_score), y_true, y_score


@pytest.mark.parametrize("lazy", [False, True])
def test_a_small_table_is_queried_in_memory_and_a_larger_one_streamed(
    monkeypatch, engines_asked, lazy
):
    # A DataFrame's rows are known without a query; a LazyFrame's are counted first, by
    # Polars' default engine (its size is not known yet).
    df, _, _ = _table(10, 4)
    data = df.lazy() if lazy else df
    rm.evaluate(data, ["lrap", "average_precision_macro"], engine="polars")
    assert engines_asked[:lazy] == ["auto"] * lazy
    assert engines_asked[lazy:] and set(engines_asked[lazy:]) == {"in-memory"}
    engines_asked.clear()
    monkeypatch.setattr(collectors, "IN_MEMORY_ROWS", df.height - 1)
    rm.evaluate(data, ["lrap", "average_precision_macro"], engine="polars")
    assert "auto" in engines_asked


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(table=long_tables(), lazy=st.booleans())
def test_streamed_small_tables_match_sklearn(monkeypatch, table, lazy):
    monkeypatch.setattr(collectors, "IN_MEMORY_ROWS", -1)  # every table streamed
    df, y_true, y_score, weights = table
    data = df.lazy() if lazy else df
    weight = "weight" if weights is not None else None
    result = rm.evaluate(data, RANKING_KEYS, engine="polars", weight=weight)
    for key in RANKING_KEYS:
        assert_close(result[key][0], sklearn_value(parse_key(key), y_true, y_score, weights))


@pytest.mark.parametrize("streamed", [False, True])
def test_label_averages_of_a_small_table_match_sklearn_on_either_engine(monkeypatch, streamed):
    if streamed:
        monkeypatch.setattr(collectors, "IN_MEMORY_ROWS", -1)
    df, y_true, y_score = _table(30, 6)
    y_pred = y_score >= 0.5
    result = rm.evaluate(df, LABEL_KEYS, engine="polars", threshold=0.5)
    expected = {
        "average_precision_macro": skm.average_precision_score(y_true, y_score, average="macro"),
        "roc_auc_weighted": skm.roc_auc_score(y_true, y_score, average="weighted"),
        "f1_macro": skm.f1_score(y_true, y_pred, average="macro", zero_division=0),
        "precision_micro": skm.precision_score(y_true, y_pred, average="micro", zero_division=0),
    }
    for key in LABEL_KEYS:
        assert_close(result[key][0], expected[key])
