"""Property-based tests: every engine agrees with scikit-learn on random long tables."""

import numpy as np
import polars as pl
import pytest
import sklearn.metrics as skm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import finite_scores, sklearn_per_sample, sklearn_value
from strategies import long_tables

import polars_rankmetrics as rm
from polars_rankmetrics.metrics.registry import parse_key

BINARY_KEYS = ["coverage_error", "lrap", "ranking_loss", "lwlrap", "dcg", "ndcg", "dcg@2", "ndcg@3"]
GRADED_KEYS = ["dcg", "ndcg", "dcg@1", "ndcg@2", "ndcg@20"]

SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def assert_close(ours, theirs):
    np.testing.assert_allclose(np.asarray(ours, dtype=float), theirs, rtol=1e-9, atol=1e-12)


@SETTINGS
@given(table=long_tables(), lazy=st.booleans(), every_row=st.booleans())
def test_binary_truth_matches_sklearn(engine, table, lazy, every_row):
    df, y_true, y_score, weights = table
    data = df.lazy() if lazy else df
    # Alone, these keys are ranked on the positive rows; beside a key reading every row
    # (hamming_loss), on every row (polars_engine.per_sample): both plans are checked.
    keys = BINARY_KEYS + ["hamming_loss"] * every_row
    result = engine.evaluate(data, keys, weight="weight" if weights is not None else None)
    assert result.columns == keys
    for key in BINARY_KEYS:
        assert_close(result[key][0], sklearn_value(parse_key(key), y_true, y_score, weights))


@SETTINGS
@given(table=long_tables(), key=st.sampled_from(BINARY_KEYS))
def test_each_key_alone_matches_sklearn(engine, table, key):
    # Alone, a key takes its own plan (coverage error reads no ranks; over rows in sample
    # order it compares each score with the lowest positive inside the aggregation).
    df, y_true, y_score, weights = table
    result = engine.evaluate(df, [key], weight="weight" if weights is not None else None)
    assert_close(result[key][0], sklearn_value(parse_key(key), y_true, y_score, weights))


@SETTINGS
@given(table=long_tables(graded=True))
def test_graded_truth_matches_sklearn(engine, table):
    df, y_true, y_score, weights = table
    result = engine.evaluate(df, GRADED_KEYS, weight="weight" if weights is not None else None)
    for key in GRADED_KEYS:
        assert_close(result[key][0], sklearn_value(parse_key(key), y_true, y_score, weights))


@SETTINGS
@given(table=long_tables(graded=True), log_base=st.sampled_from([2, 10, np.e]))
def test_dcg_log_base_matches_sklearn(engine, table, log_base):
    from sklearn.metrics import dcg_score

    df, y_true, y_score, _ = table
    y_score = finite_scores(y_score)
    result = engine.evaluate(df, ["dcg", "dcg@2"], log_base=log_base)
    assert_close(result["dcg"][0], dcg_score(y_true, y_score, log_base=log_base))
    assert_close(result["dcg@2"][0], dcg_score(y_true, y_score, k=2, log_base=log_base))


@SETTINGS
@given(table=long_tables(), every_row=st.booleans())
def test_per_sample_matches_sklearn_row_by_row(engine, table, every_row):
    df, y_true, y_score, _ = table
    result = engine.evaluate(df, BINARY_KEYS + ["hamming_loss"] * every_row, per_sample=True)
    assert result["sample"].to_list() == sorted(df["sample"].unique().to_list())
    for key in BINARY_KEYS:
        assert_close(
            result[key].fill_null(np.nan), sklearn_per_sample(parse_key(key), y_true, y_score)
        )


@SETTINGS
@given(table=long_tables(), other=long_tables())
def test_by_groups_equal_separate_evaluations(engine, table, other):
    df_a, *_, weights_a = table
    df_b, *_, weights_b = other
    weighted = weights_a is not None or weights_b is not None
    parts = [
        d.with_columns(weight=pl.lit(1.0)) if weighted and "weight" not in d.columns else d
        for d in (df_a, df_b)
    ]
    if parts[0]["score"].dtype != parts[1]["score"].dtype:
        # one column holds both: as Float64, which holds every drawn score exactly
        parts = [d.with_columns(pl.col("score").cast(pl.Float64)) for d in parts]
    both = pl.concat(
        [parts[0].with_columns(model=pl.lit("a")), parts[1].with_columns(model=pl.lit("b"))],
        how="vertical_relaxed",
    )
    keys = ["coverage_error", "lrap", "ranking_loss", "lwlrap", "ndcg@2"]
    weight = "weight" if weighted else None
    grouped = engine.evaluate(both, keys, by="model", weight=weight)
    assert grouped["model"].to_list() == ["a", "b"]
    for i, part in enumerate(parts):
        alone = engine.evaluate(part, keys, weight=weight)
        for key in keys:
            assert_close(grouped[key][i], alone[key][0])


@pytest.mark.parametrize(
    "function, key",
    [
        (rm.coverage_error, "coverage_error"),
        (rm.label_ranking_average_precision_score, "lrap"),
        (rm.label_ranking_loss, "ranking_loss"),
        (rm.lwlrap, "lwlrap"),
        (rm.dcg_score, "dcg"),
        (rm.ndcg_score, "ndcg"),
    ],
)
@SETTINGS
@given(table=long_tables())
def test_frame_functions_match_sklearn_and_keep_frame_kind(function, key, table):
    df, y_true, y_score, weights = table
    weight = "weight" if weights is not None else None
    eager = df.pipe(function, weight=weight)
    lazy = df.lazy().pipe(function, weight=weight)
    assert isinstance(eager, pl.DataFrame) and isinstance(lazy, pl.LazyFrame)
    assert eager.columns == [key]
    assert_close(eager[key][0], sklearn_value(parse_key(key), y_true, y_score, weights))
    assert_close(lazy.collect()[key][0], eager[key][0])


def test_few_and_many_positives_match_sklearn(engine):
    # Samples with from none to every label positive, scores with many ties: the Polars engine
    # ranks a sample's positives by pairs up to ranks.PAIRED_POSITIVES of them, by windows
    # beyond, and both kinds of sample meet in one evaluation.
    rng = np.random.default_rng(40)
    n_samples, n_labels = 60, 24
    share = rng.permutation(np.linspace(0.0, 1.0, n_samples))[:, None]
    y_true = (rng.random((n_samples, n_labels)) < share).astype(np.int64)
    y_score = np.round(rng.random((n_samples, n_labels)) + 0.3 * y_true, 1)
    positives = y_true.sum(axis=1)
    assert (positives <= 8).sum() >= 10 and (positives > 8).sum() >= 10
    df = pl.DataFrame({
        "sample": np.repeat(np.arange(n_samples), n_labels),
        "label": np.tile(np.arange(n_labels), n_samples),
        "score": y_score.reshape(-1),
        "truth": y_true.reshape(-1),
    })  # fmt: skip
    result = engine.evaluate(df, BINARY_KEYS)
    for key in BINARY_KEYS:
        assert_close(result[key][0], sklearn_value(parse_key(key), y_true, y_score))


@pytest.mark.parametrize(
    ("layout", "summed"),
    [("ordered", True), ("label gaps", False), ("shuffled", False)],
)
@pytest.mark.parametrize("truth_type", [pl.Boolean, pl.Int64])
def test_hamming_loss_and_counts_summed_over_rows_match_sklearn(
    monkeypatch, layout, summed, truth_type
):
    # Alone, hamming loss and the counts are summed over the rows without a per-sample
    # aggregation where the rows are in (sample, label) order and every sample has every label
    # of the label range (engines.polars PolarsSession._summed_over_rows); elsewhere the
    # samples are aggregated. Both must give scikit-learn's values.
    from polars_rankmetrics.engines.polars import PolarsSession

    taken = []
    summed_over_rows = PolarsSession._summed_over_rows

    def spy(self, *args):
        found = summed_over_rows(self, *args)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(PolarsSession, "_summed_over_rows", spy)
    rng = np.random.default_rng(7)
    n_samples, n_labels = 50, 6
    y_true = (rng.random((n_samples, n_labels)) < 0.3).astype(np.int64)
    y_score = np.round(rng.random((n_samples, n_labels)), 1)
    labels = np.arange(n_labels) * (3 if layout == "label gaps" else 1)
    df = pl.DataFrame({
        "sample": np.repeat(np.arange(n_samples), n_labels),
        "label": np.tile(labels, n_samples),
        "score": y_score.reshape(-1),
        "truth": pl.Series(y_true.reshape(-1)).cast(truth_type),
    })  # fmt: skip
    if layout == "shuffled":
        df = df.sample(fraction=1.0, shuffle=True, seed=3)
    keys = ["hamming_loss", "true_positives", "false_negatives"]
    result = rm.evaluate(df, keys, engine="polars", threshold=0.5)
    assert taken == [summed]
    y_pred = y_score >= 0.5
    assert_close(result["hamming_loss"][0], skm.hamming_loss(y_true, y_pred))
    assert_close(result["true_positives"][0], (y_pred & (y_true == 1)).sum() / n_samples)
    assert_close(result["false_negatives"][0], (~y_pred & (y_true == 1)).sum() / n_samples)
