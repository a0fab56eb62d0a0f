"""The probability metrics (log loss, Brier score) on every engine path against scikit-learn.

The oracle calls scikit-learn 1.9.1 on the dense matrices: per label ``log_loss(y[:, j],
p[:, j], labels=[0, 1])`` and ``brier_score_loss(y[:, j], p[:, j])``, over the pooled cells
for ``_micro``, per sample row for ``_samples``; the averages over labels and samples are
numpy's weighted means of those numbers.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from reference import dense
from scipy import stats
from servers import java_missing, postgres_server, spark_session
from sklearn import metrics as skm
from sklearn.calibration import calibration_curve
from sql_engines import SQLTestEngine
from test_bad_input_matrix import BAD_ROW, SOURCES, valid, write

import polars_rankmetrics as rm
from polars_rankmetrics import sklearn as dropins
from polars_rankmetrics.engines import driver
from polars_rankmetrics.engines.base import Settings, get_engine
from polars_rankmetrics.engines.sql import results as sql_results
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.parameters import parameters
from polars_rankmetrics.metrics.probabilities import EPS
from polars_rankmetrics.metrics.registry import PROBABILITY_METRICS, parse_keys
from polars_rankmetrics.report import calibration

SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
LOSSES = ("log_loss", "brier")
AVERAGES = ("samples", "micro", "macro", "weighted")
KEYS = [f"{loss}_{average}" for loss in LOSSES for average in AVERAGES]
# Probabilities where the clipping, ties and -0.0 matter.
TIED = st.sampled_from([0.0, -0.0, 1e-300, 1e-17, 0.1, 0.25, 0.5, 0.5, 0.7, 1.0 - 1e-17, 1.0])
ANY = st.floats(0.0, 1.0, allow_nan=False)


@st.composite
def probability_tables(draw):
    """(long DataFrame, y_true, y_score, weights or None): 1-12 samples x 1-7 labels, empty and
    full rows common, ties, scores at 0 and 1, Float64 or Float32 scores, bool or integer truth,
    string ids, shuffled rows."""
    n_samples, n_labels = draw(st.integers(1, 12)), draw(st.integers(1, 7))
    cells = n_samples * n_labels
    scores = draw(st.sampled_from([TIED, ANY]))
    y_score = np.array(draw(st.lists(scores, min_size=cells, max_size=cells)), dtype=float)
    y_true = np.array(draw(st.lists(st.sampled_from([0, 0, 1]), min_size=cells, max_size=cells)))
    y_score, y_true = y_score.reshape(n_samples, n_labels), y_true.reshape(n_samples, n_labels)
    for i in range(n_samples):
        kind = draw(st.sampled_from(["as drawn", "as drawn", "empty", "full"]))
        if kind != "as drawn":
            y_true[i] = 1 if kind == "full" else 0
    score = pl.Series("score", y_score.reshape(-1))
    if draw(st.booleans()):
        score = score.cast(pl.Float32)
        y_score = score.cast(pl.Float64).to_numpy().reshape(n_samples, n_labels)
    strings = draw(st.booleans())
    samples = [f"s{i:03d}" if strings else i for i in range(n_samples)]
    labels = [f"l{j:03d}" if strings else j for j in range(n_labels)]
    df = pl.DataFrame({
        "sample": np.repeat(np.array(samples, dtype=object), n_labels).tolist(),
        "label": np.tile(np.array(labels, dtype=object), n_samples).tolist(),
        "score": score,
        "truth": pl.Series(y_true.reshape(-1)).cast(
            pl.Boolean if draw(st.booleans()) else pl.Int64
        ),
    })  # fmt: skip
    weights = None
    if draw(st.booleans()):
        drawn = st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0]), min_size=n_samples,
                         max_size=n_samples)  # fmt: skip
        weights = np.array(draw(drawn))
        if weights.sum() == 0:
            weights[0] = 1.0
        df = df.with_columns(pl.Series("weight", np.repeat(weights, n_labels)))
    if draw(st.booleans()):
        df = df.sample(fraction=1.0, shuffle=True, seed=draw(st.integers(0, 2**16)))
    return df, y_true, y_score, weights


def sklearn_losses(y_true, y_score, weights) -> dict[str, float]:
    """scikit-learn's numbers for every key (see the module docstring)."""
    n_samples, n_labels = y_true.shape
    w = np.ones(n_samples) if weights is None else weights
    calls = {
        "log_loss": lambda y, p, sw: skm.log_loss(y, p, labels=[0, 1], sample_weight=sw),
        "brier": lambda y, p, sw: skm.brier_score_loss(y, p, pos_label=1, sample_weight=sw),
    }
    support = (w[:, None] * y_true).sum(axis=0)
    values = {}
    for loss, call in calls.items():
        per_label = np.array([call(y_true[:, j], y_score[:, j], w) for j in range(n_labels)])
        per_sample = per_sample_losses(loss, y_true, y_score)
        values[f"{loss}_macro"] = per_label.mean()
        values[f"{loss}_weighted"] = (
            np.average(per_label, weights=support) if support.sum() > 0 else per_label.mean()
        )
        values[f"{loss}_micro"] = call(y_true.ravel(), y_score.ravel(), np.repeat(w, n_labels))
        values[f"{loss}_samples"] = np.average(per_sample, weights=w)
    return values


def per_sample_losses(loss: str, y_true, y_score) -> np.ndarray:
    """Each sample row's loss over its labels, by scikit-learn."""
    if loss == "log_loss":
        return np.array(
            [skm.log_loss(y, p, labels=[0, 1]) for y, p in zip(y_true, y_score, strict=True)]
        )
    return np.array([
        skm.brier_score_loss(y, p, pos_label=1) for y, p in zip(y_true, y_score, strict=True)
    ])  # fmt: skip


def test_the_keys_are_registered_as_losses():
    calibration_names = {
        f"{n}{s}_{a}" for n in ("ece", "mce") for s in ("", "_quantile")
        for a in ("micro", "macro", "weighted")
    }  # fmt: skip
    assert set(PROBABILITY_METRICS) == set(KEYS) | calibration_names
    assert {rm.evaluate.__module__}  # the keys parse through the public verb below
    result = rm.evaluate(rm.from_dense([[1, 0]], [[0.5, 0.5]]), KEYS)
    assert result.columns == KEYS


@SETTINGS
@given(table=probability_tables())
def test_every_key_matches_sklearn(engine, table):
    df, y_true, y_score, weights = table
    weight = None if weights is None else "weight"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no key here is ever ill-defined
        result = engine.evaluate(df, KEYS, weight=weight)
    expected = sklearn_losses(y_true, y_score, weights)
    for key in KEYS:
        assert result[key][0] == pytest.approx(expected[key], rel=1e-12, abs=1e-12), key


@settings(SETTINGS, max_examples=15)
@given(table=probability_tables())
def test_per_sample_values_match_sklearn_row_by_row(engine, table):
    df, y_true, y_score, weights = table
    weight = None if weights is None else "weight"
    result = engine.evaluate(
        df, ["log_loss_samples", "brier_samples"], weight=weight, per_sample=True
    ).sort("sample")
    for loss in LOSSES:
        expected = per_sample_losses(loss, y_true, y_score)
        np.testing.assert_allclose(result[f"{loss}_samples"], expected, rtol=1e-12, atol=1e-12)


@SETTINGS
@given(table=probability_tables(), n_groups=st.integers(1, 3))
def test_groups_are_evaluated_alone(engine, table, n_groups):
    """With ``by``, each group's numbers are those of its own rows."""
    df, _, _, weights = table
    weight = None if weights is None else "weight"
    df = df.with_columns(model=pl.col("sample").hash(7) % n_groups)
    if weights is not None:  # every group keeps some weight (a group without any is refused)
        df = df.with_columns(pl.col("weight") + 0.25)
    result = engine.evaluate(df, KEYS, by="model", weight=weight)
    for model, part in df.group_by("model"):
        _, y_true, y_score = dense(part)
        group_weights = None
        if weights is not None:
            group_weights = part.sort("sample", "label").group_by(
                "sample", maintain_order=True
            ).agg(pl.col("weight").first())["weight"].to_numpy()  # fmt: skip
        row = result.filter(pl.col("model") == model[0]).row(0, named=True)
        expected = sklearn_losses(y_true.astype(int), y_score, group_weights)
        for key in KEYS:
            assert row[key] == pytest.approx(expected[key], rel=1e-12, abs=1e-12), key


def test_the_golden_case_by_hand():
    """The issue's example: per label ln of the probabilities given to the outcomes."""
    y_true = [[1, 0, 1], [0, 1, 0], [1, 1, 0]]
    y_prob = [[0.9, 0.2, 0.6], [0.3, 0.8, 0.1], [0.7, 0.6, 0.4]]
    result = rm.evaluate(rm.from_dense(y_true, y_prob), KEYS).row(0, named=True)
    labels = [
        -(math.log(0.9) + math.log(0.7) + math.log(0.7)) / 3,
        -(math.log(0.8) + math.log(0.8) + math.log(0.6)) / 3,
        -(math.log(0.6) + math.log(0.9) + math.log(0.6)) / 3,
    ]
    assert result["log_loss_macro"] == pytest.approx(sum(labels) / 3, rel=1e-14)
    # Every sample has every label, so the mean over cells is the mean over labels.
    assert result["log_loss_micro"] == pytest.approx(sum(labels) / 3, rel=1e-14)
    assert result["log_loss_samples"] == pytest.approx(sum(labels) / 3, rel=1e-14)
    # Supports 2, 2, 1.
    assert result["log_loss_weighted"] == pytest.approx(
        (2 * labels[0] + 2 * labels[1] + labels[2]) / 5, rel=1e-14
    )
    squares = [0.01 + 0.09 + 0.09, 0.04 + 0.04 + 0.16, 0.16 + 0.01 + 0.16]
    assert result["brier_macro"] == pytest.approx(sum(squares) / 9, rel=1e-14)
    assert result["brier_weighted"] == pytest.approx(
        (2 * squares[0] + 2 * squares[1] + squares[2]) / 15, rel=1e-14
    )


def test_a_confident_mistake_costs_minus_ln_eps(engine):
    """Probabilities 0 and 1 are clipped to [eps, 1 - eps], eps the float64 machine epsilon."""
    df = rm.from_dense([[1, 0, 1, 0]], [[0.0, 1.0, 1.0, 0.0]])
    result = engine.evaluate(df, ["log_loss_micro", "log_loss_samples"]).row(0)
    expected = (2 * -math.log(EPS) + 2 * -math.log(1 - EPS)) / 4
    assert EPS == 2.0**-52
    assert result == pytest.approx((expected, expected), rel=1e-14)
    assert -math.log(EPS) == pytest.approx(36.04365338911715, rel=1e-15)


def test_labels_without_positives(engine):
    """A label without positives has a loss (its negatives'); it weighs nothing in
    ``_weighted``. Without any positive, ``_weighted`` is the plain mean over labels."""
    y_prob = [[0.2, 0.4], [0.6, 0.1]]
    keys = ["log_loss_macro", "log_loss_weighted", "brier_weighted"]
    one = engine.evaluate(rm.from_dense([[1, 0], [1, 0]], y_prob), keys).row(0, named=True)
    assert one["log_loss_weighted"] == pytest.approx(-(math.log(0.2) + math.log(0.6)) / 2)
    none = engine.evaluate(rm.from_dense([[0, 0], [0, 0]], y_prob), keys).row(0, named=True)
    losses = [-(math.log(0.8) + math.log(0.4)) / 2, -(math.log(0.6) + math.log(0.9)) / 2]
    assert none["log_loss_weighted"] == pytest.approx(sum(losses) / 2)
    assert none["log_loss_macro"] == pytest.approx(sum(losses) / 2)
    assert none["brier_weighted"] == pytest.approx((0.04 + 0.36 + 0.16 + 0.01) / 4)


def test_a_sample_of_weight_zero_counts_nothing(engine):
    df = rm.from_dense([[1, 0], [0, 1]], [[0.9, 0.1], [0.9, 0.1]]).with_columns(
        weight=(pl.col("sample") == 0).cast(pl.Float64)
    )
    result = engine.evaluate(df, KEYS, weight="weight").row(0, named=True)
    alone = engine.evaluate(rm.from_dense([[1, 0]], [[0.9, 0.1]]), KEYS).row(0, named=True)
    assert result == pytest.approx(alone, rel=1e-14)


def test_an_empty_table_is_refused(engine):
    empty = pl.DataFrame(schema={"sample": pl.Int64, "label": pl.Int64, "score": pl.Float64,
                                 "truth": pl.Int64})  # fmt: skip
    with pytest.raises(ValueError, match="empty"):
        engine.evaluate(empty, KEYS)


def test_top_k_tables_are_refused():
    predictions = pl.DataFrame({"sample": [0], "label": [1], "score": [0.5]})
    truth = pl.DataFrame({"sample": [0], "label": [1]})
    with pytest.raises(ValueError, match="log_loss_macro is not defined on top-k tables"):
        rm.evaluate(predictions, ["log_loss_macro"], truth_table=truth, n_labels=3)


def random_probabilities(n_groups: int = 6, seed: int = 3) -> pl.DataFrame:
    """Groups of 2-9 samples x 1-6 labels: scores from a few values with 0 and 1 (ties,
    clipping), empty and full rows, weights with zeros, string sample ids, shuffled rows."""
    rng = np.random.default_rng(seed)
    parts = []
    for g in range(n_groups):
        n_samples, n_labels = rng.integers(2, 10), rng.integers(1, 7)
        score = rng.choice([0.0, 0.1, 0.5, 0.9, 1.0, rng.random()], size=(n_samples, n_labels))
        truth = (rng.random((n_samples, n_labels)) < 0.4).astype(float)
        truth[rng.random(n_samples) < 0.2] = 1
        weight = rng.choice([0.0, 0.5, 1.0, 3.0], size=n_samples)
        weight[0] = 1.0
        parts.append(pl.DataFrame({
            "model": f"m{g}",
            "sample": np.repeat([f"s{i}" for i in range(n_samples)], n_labels),
            "label": np.tile(np.arange(n_labels), n_samples),
            "score": score.reshape(-1),
            "truth": truth.reshape(-1),
            "weight": np.repeat(weight, n_labels),
        }))  # fmt: skip
    return pl.concat(parts).sample(fraction=1.0, shuffle=True, seed=seed)


@pytest.fixture(scope="module", params=["duckdb", "spark", "postgres", "datafusion", "sqlite"])
def sql_engine(request):
    """The SQL engines: DuckDB and Spark as the library's engines, the others on the exported
    SQL (tests/sql_engines.py)."""
    if request.param == "duckdb":
        yield get_engine("duckdb")
    elif request.param == "spark":
        reason = java_missing()
        if reason:
            pytest.skip(f"Spark: {reason}")
        spark_session()
        yield get_engine("spark")
    elif request.param == "postgres":
        try:
            with postgres_server() as dsn:
                yield SQLTestEngine("postgres", dsn)
        except RuntimeError as error:
            pytest.skip(f"PostgreSQL: {error}")
    else:
        yield SQLTestEngine(request.param)


def edge_probabilities() -> pl.DataFrame:
    """:func:`random_probabilities` with scores on the 15 equal-width bins' edges (k / 15 as
    linspace makes them, and as decimals) in place of the inner ones."""
    table = random_probabilities()
    edges = np.linspace(0.0, 1.0, 16)[[1, 3, 7, 14]].tolist() + [0.2, 7 / 15, 0.6]
    picks = np.random.default_rng(5).integers(0, len(edges), table.height)
    return table.with_columns(
        score=pl.when(pl.col("score").is_between(0.05, 0.95))
        .then(pl.Series(np.array(edges)[picks]))
        .otherwise(pl.col("score"))
    )


def test_the_sql_engines_give_the_polars_numbers(sql_engine):
    """One cell per engine: every key (and the per-sample values of the _samples keys) through
    the driver, and rankmetrics_label_summary's probability columns for SQL alone (the Python
    side reduces the score counts itself) at the calibration keys' default 15 bins, equal-width
    (a score on an edge falls in the bin below) and equal-mass."""
    table = edge_probabilities()
    cols = Columns.of(by="model", weight="weight")
    calibration = ["ece_micro", "mce_macro@5", "ece_weighted@3", "ece_quantile_macro@4",
                   "mce_quantile_micro"]  # fmt: skip
    for keys, per_sample in ((KEYS + calibration, False), (KEYS[:1] + KEYS[4:5], True)):
        ours = driver.run(sql_engine, table, cols, parse_keys(keys), parameters=parameters(),
                          per_sample=per_sample)  # fmt: skip
        expected = rm.evaluate(table, keys, by="model", weight="weight", per_sample=per_sample)
        sort = ["model", "sample"] if per_sample else ["model"]
        assert_frame_equal(ours.sort(sort), expected.sort(sort), check_exact=False,
                           rel_tol=1e-12, abs_tol=1e-12)  # fmt: skip
    kinds = ("log_loss", "brier", "ece", "mce", "ece_quantile", "mce_quantile")
    keys = [f"{kind}_{average}" for kind in kinds for average in AVERAGES[1:]]
    views = ("rankmetrics_label_summary",)
    settings = Settings(keys=tuple(parse_keys(keys)), context=parameters(), views=views)
    with sql_engine.open(table, cols, settings) as session:
        summary = session._frame("SELECT * FROM rankmetrics_label_summary")
    summary = sql_results.ungroup(summary, cols).select("model", *keys).sort("model")
    expected = rm.evaluate(table, keys, by="model", weight="weight").sort("model")
    assert_frame_equal(summary, expected, check_exact=False, rel_tol=1e-12, abs_tol=1e-12,
                       check_dtypes=False)  # fmt: skip


def test_intervals_and_paired_tests_read_the_per_sample_losses():
    """The _samples keys are means over samples: compare()'s paired t-test is scipy's on
    scikit-learn's per-sample losses, wins count the samples where the candidate's loss is
    lower (lower is better), and evaluate(ci=) brackets the value, on both engines alike."""
    rng = np.random.default_rng(11)
    y_true = (rng.random((40, 4)) < 0.4).astype(int)
    scores = {
        name: np.clip(0.2 + 0.6 * y_true + rng.normal(0, noise, y_true.shape), 0, 1)
        for name, noise in (("baseline", 0.35), ("candidate", 0.25))
    }
    df = pl.concat(
        rm.from_dense(y_true, p).with_columns(model=pl.lit(name)) for name, p in scores.items()
    )
    keys = ["log_loss_samples", "brier_samples"]
    result = rm.compare(df, keys, test="t", correction=None)
    for key in keys:
        loss = key.removesuffix("_samples")
        mine, base = (per_sample_losses(loss, y_true, scores[m]) for m in ("candidate", "baseline"))
        row = result.filter(metric=key).row(0, named=True)
        assert row["p_value"] == pytest.approx(stats.ttest_rel(mine, base).pvalue, rel=1e-9)
        assert row["delta"] == pytest.approx(mine.mean() - base.mean(), rel=1e-12)
        assert (row["wins"], row["ties"], row["losses"]) == (
            (mine < base).sum(), (mine == base).sum(), (mine > base).sum()
        )  # fmt: skip
    intervals = [
        rm.evaluate(df, keys, by="model", ci=0.9, n_boot=200, seed=3, engine=engine).sort("model")
        for engine in ("polars", "duckdb")
    ]
    assert_frame_equal(intervals[0], intervals[1], check_exact=False, rel_tol=1e-12)
    for key in keys:
        assert (intervals[0][f"{key}_lo"] < intervals[0][key]).all()
        assert (intervals[0][key] < intervals[0][f"{key}_hi"]).all()


def test_states_of_parts_finalize_to_the_whole():
    """The keys over labels (losses, calibration bins) live in the score counts a state keeps,
    the _samples keys in its sums: finalizing the states of two halves is evaluating the
    whole."""
    table = random_probabilities(3)
    halves = table.with_columns(half=pl.col("sample").hash(1) % 2).partition_by("half")
    keys = [*KEYS, "ece_micro@4", "mce_macro", "ece_quantile_weighted@3", "mce_quantile_micro"]
    states = [rm.state(half.drop("half"), keys, by="model", weight="weight") for half in halves]
    ours = rm.finalize(pl.concat(states), by="model").sort("model")
    expected = rm.evaluate(table, keys, by="model", weight="weight").sort("model")
    assert_frame_equal(ours, expected, check_exact=False, rel_tol=1e-12, abs_tol=1e-12)


def _run(function, *args, **options):
    """(value, [(category, message)]) of one call: every warning it gives."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = function(*args, **options)
    return value, [(w.category, str(w.message)) for w in caught]


@st.composite
def indicator_matrices(draw):
    """(y_true, y_proba, weights or None): a multilabel indicator (2-7 labels) and
    probabilities, some rows summing to one."""
    n_samples, n_labels = draw(st.integers(1, 10)), draw(st.integers(2, 7))
    cells = n_samples * n_labels
    scores = draw(st.sampled_from([TIED, ANY]))
    y_proba = np.array(draw(st.lists(scores, min_size=cells, max_size=cells))).reshape(
        n_samples, n_labels
    )
    if draw(st.booleans()):  # rows of a softmax: no "do not sum to one" warning
        y_proba = y_proba / np.maximum(y_proba.sum(axis=1, keepdims=True), 1e-300)
        y_proba[y_proba.sum(axis=1) == 0, 0] = 1.0
    y_true = np.array(draw(st.lists(st.sampled_from([0, 1]), min_size=cells, max_size=cells)))
    weights = None
    if draw(st.booleans()):
        weights = np.array(draw(st.lists(st.sampled_from([0.0, 0.5, 2.0]), min_size=n_samples,
                                         max_size=n_samples)))  # fmt: skip
        weights[0] = 1.0
    return y_true.reshape(n_samples, n_labels), y_proba, weights


@settings(SETTINGS, max_examples=40)
@given(
    data=indicator_matrices(),
    normalize=st.booleans(),
    scale_by_half=st.sampled_from(["auto", True, False]),
)
def test_the_drop_ins_give_sklearns_numbers_and_warnings(data, normalize, scale_by_half):
    y_true, y_proba, weights = data
    for ours, theirs, options in (
        (dropins.log_loss, skm.log_loss, {"normalize": normalize}),
        (dropins.brier_score_loss, skm.brier_score_loss, {"scale_by_half": scale_by_half}),
    ):
        value, warned = _run(ours, y_true, y_proba, sample_weight=weights, **options)
        expected, expected_warned = _run(theirs, y_true, y_proba, sample_weight=weights, **options)
        assert value == pytest.approx(expected, rel=1e-12, abs=1e-12)
        assert warned == expected_warned


def test_the_drop_ins_on_the_issues_example():
    """scikit-learn's multilabel numbers are not the per-label losses (docs/metrics.md)."""
    y_true = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]])
    y_prob = np.array([[0.9, 0.2, 0.6], [0.3, 0.8, 0.1], [0.7, 0.6, 0.4]])
    for name in ("log_loss", "brier_score_loss"):
        for engine in ("polars", "duckdb"):
            value, warned = _run(getattr(dropins, name), y_true, y_prob, engine=engine)
            expected, expected_warned = _run(getattr(skm, name), y_true, y_prob)
            assert value == pytest.approx(expected, rel=1e-12)
            assert warned == expected_warned == [(UserWarning, dropins.probabilities._NOT_ONE)]
    # Every cell scored 1.0: the negatives cost nothing in scikit-learn's multilabel log loss.
    value, _ = _run(dropins.log_loss, y_true, np.ones((3, 3)))
    expected, _ = _run(skm.log_loss, y_true, np.ones((3, 3)))
    assert value == pytest.approx(expected, abs=1e-12) and expected < 1e-12


def test_the_drop_ins_refuse_what_sklearn_refuses():
    y_true = [[1, 0], [0, 1]]
    for bad, message in (([[0.5, 1.5], [0.2, 0.8]], "greater than 1: 1.5"),
                         ([[0.5, -0.5], [0.2, 0.8]], "lower than 0: -0.5")):  # fmt: skip
        for function in (dropins.log_loss, skm.log_loss):
            with pytest.raises(ValueError, match=message):
                function(y_true, bad)
    for function in (dropins.log_loss, skm.log_loss):
        with pytest.raises(ValueError, match="labels|multilabel"):
            function(y_true, [[0.5, 0.5], [0.2, 0.8]], labels=[0, 1])
    with pytest.raises(ValueError, match="Cannot use both"):
        dropins.log_loss(y_true, [[0.5, 0.5]] * 2, y_pred=[[0.5, 0.5]] * 2)
    value, warned = _run(dropins.log_loss, y_true, y_pred=[[0.5, 0.5], [0.2, 0.8]])
    expected, expected_warned = _run(skm.log_loss, y_true, y_pred=[[0.5, 0.5], [0.2, 0.8]])
    assert value == pytest.approx(expected) and warned == expected_warned


def test_the_drop_ins_doctests():
    import doctest

    for module in (dropins.probabilities, calibration):
        failed, attempted = doctest.testmod(module)
        assert failed == 0 and attempted > 0


# Calibration: ece_A@K and mce_A@K over K equal-width bins (15 without @K), and the table.
CALIBRATION_KEYS = [
    f"{name}_{average}{k}"
    for name in ("ece", "mce")
    for average in ("micro", "macro", "weighted")
    for k in ("", "@1", "@3", "@10")
]


def sklearn_edges(p, n_bins: int, strategy: str) -> np.ndarray:
    """calibration_curve's bin edges (its own rule: linspace or the percentiles)."""
    if strategy == "uniform":
        return np.linspace(0.0, 1.0, n_bins + 1)
    return np.percentile(p, np.linspace(0.0, 1.0, n_bins + 1) * 100)


def sklearn_bins(p, n_bins: int, strategy: str) -> np.ndarray:
    """The cells of each of calibration_curve's bins (searchsorted over the inner edges)."""
    ids = np.searchsorted(sklearn_edges(p, n_bins, strategy)[1:-1], p)
    return np.bincount(ids, minlength=n_bins)


def sklearn_calibration(y, p, n_bins: int, strategy: str = "uniform") -> tuple[float, float]:
    """(ECE, MCE) of one binary problem from ``calibration_curve``'s non-empty bins, each bin
    weighing its share of the cells."""
    prob_true, prob_pred = calibration_curve(y, p, n_bins=n_bins, strategy=strategy)
    counts = sklearn_bins(p, n_bins, strategy)
    counts = counts[counts > 0]
    gaps = np.abs(prob_true - prob_pred)
    return float((counts * gaps).sum() / counts.sum()), float(gaps.max())


def expanded(y_true, y_score, weights):
    """The matrices with each sample repeated by its weight, a whole number."""
    if weights is None:
        return y_true, y_score
    repeats = weights.astype(int)
    assert (repeats == weights).all()
    return np.repeat(y_true, repeats, axis=0), np.repeat(y_score, repeats, axis=0)


def sklearn_calibration_keys(y_true, y_score, weights, strategy="uniform") -> dict[str, float]:
    support = (y_true * (1 if weights is None else weights[:, None])).sum(axis=0)
    y, p = expanded(y_true, y_score, weights)
    name = {"uniform": "{}", "quantile": "{}_quantile"}[strategy]
    values = {}
    for k, n_bins in (("", 15), ("@1", 1), ("@3", 3), ("@10", 10)):
        per_label = np.array([sklearn_calibration(y[:, j], p[:, j], n_bins, strategy)
                              for j in range(y.shape[1])])  # fmt: skip
        pooled = sklearn_calibration(y.ravel(), p.ravel(), n_bins, strategy)
        for i, error in enumerate(("ece", "mce")):
            key = name.format(error)
            values[f"{key}_micro{k}"] = pooled[i]
            values[f"{key}_macro{k}"] = per_label[:, i].mean()
            values[f"{key}_weighted{k}"] = (
                np.average(per_label[:, i], weights=support)
                if support.sum() > 0
                else per_label[:, i].mean()
            )
    return values


@SETTINGS
@given(table=probability_tables())
def test_the_calibration_errors_match_calibration_curve(engine, table):
    df, y_true, y_score, weights = table
    weight = None if weights is None else "weight"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # never ill-defined
        result = engine.evaluate(df, CALIBRATION_KEYS, weight=weight)
    # The weights 0, 0.5, 1, 3 doubled to whole repetitions: the errors are ratios, unchanged by
    # a common factor.
    doubled = None if weights is None else 2 * weights
    expected = sklearn_calibration_keys(y_true.astype(int), y_score, doubled)
    for key in CALIBRATION_KEYS:
        assert result[key][0] == pytest.approx(expected[key], rel=1e-12, abs=1e-12), key


QUANTILE_KEYS = [key.replace("ce_", "ce_quantile_") for key in CALIBRATION_KEYS]


@SETTINGS
@given(table=probability_tables())
def test_the_equal_mass_calibration_errors_match_calibration_curve(engine, table):
    """ece_quantile_A@K, mce_quantile_A@K: calibration_curve(strategy="quantile") per label and
    pooled; a sample's whole weight w counts as w repetitions of it (the drawn weights doubled
    to whole numbers: 0, 1, 2, 6), also where buckets split the samples."""
    df, y_true, y_score, weights = table
    if weights is not None:
        weights = 2 * weights
        df = df.with_columns(pl.col("weight") * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # never ill-defined
        result = engine.evaluate(df, QUANTILE_KEYS, weight=None if weights is None else "weight")
    expected = sklearn_calibration_keys(y_true.astype(int), y_score, weights, "quantile")
    for key in QUANTILE_KEYS:
        assert result[key][0] == pytest.approx(expected[key], rel=1e-12, abs=1e-12), key


@SETTINGS
@given(
    table=probability_tables(),
    n_bins=st.sampled_from([1, 2, 5, 10, 15]),
    strategy=st.sampled_from(["uniform", "quantile"]),
)
def test_the_calibration_table_is_calibration_curve_per_label(engine, table, n_bins, strategy):
    df, y_true, y_score, _ = table
    df = df.drop("weight", strict=False)
    result = engine._call(rm.calibration_table, df, n_bins=n_bins, strategy=strategy)
    y_true = y_true.astype(int)
    labels = sorted(df["label"].unique().to_list())
    for j, label in [(None, None), *enumerate(labels)]:
        rows = result.filter(
            pl.col("label").is_null() if label is None else pl.col("label") == label
        ).sort("bin")
        y, p = (y_true.ravel(), y_score.ravel()) if j is None else (y_true[:, j], y_score[:, j])
        prob_true, prob_pred = calibration_curve(y, p, n_bins=n_bins, strategy=strategy)
        np.testing.assert_allclose(rows["observed"], prob_true, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(rows["mean_score"], prob_pred, rtol=1e-12, atol=1e-12)
        counts = sklearn_bins(p, n_bins, strategy)
        assert rows["bin"].to_list() == np.flatnonzero(counts).tolist()
        assert rows["count"].to_list() == counts[counts > 0].tolist()


# The drawn tables hold labels without positives or predictions: their set scores and curves
# warn, beside the probability columns tested here.
@pytest.mark.filterwarnings("ignore::polars_rankmetrics.UndefinedMetricWarning")
@SETTINGS
@given(table=probability_tables())
def test_the_label_report_gives_each_labels_losses_and_calibration_error(engine, table):
    """label_report's probability columns (present where every score lies in [0, 1]) per label:
    scikit-learn's log_loss and brier_score_loss with the sample weights, and the ECE of
    calibration_curve's 15 bins over the samples repeated by their (doubled) weights."""
    df, y_true, y_score, weights = table
    y_true = y_true.astype(int)
    report = engine.report(df, weight=None if weights is None else "weight")
    assert report.columns[-3:] == ["log_loss", "brier", "ece"]
    w = np.ones(len(y_true)) if weights is None else weights
    y, p = expanded(y_true, y_score, None if weights is None else 2 * weights)
    labels = sorted(df["label"].unique().to_list())
    for j, label in enumerate(labels):
        row = report.filter(pl.col("label") == label).row(0, named=True)
        expected = {
            "log_loss": skm.log_loss(y_true[:, j], y_score[:, j], labels=[0, 1], sample_weight=w),
            "brier": skm.brier_score_loss(y_true[:, j], y_score[:, j], pos_label=1,
                                          sample_weight=w),
            "ece": sklearn_calibration(y[:, j], p[:, j], 15)[0],
        }  # fmt: skip
        for column, value in expected.items():
            assert row[column] == pytest.approx(value, rel=1e-12, abs=1e-12), column


def test_the_label_report_reads_probabilities_when_asked_or_seen():
    df = rm.from_dense([[1, 0], [0, 1]], [[0.9, 0.2], [0.6, 0.7]])
    assert "ece" in rm.label_report(df).columns
    assert "ece" not in rm.label_report(df, probabilities=False).columns
    logits = df.with_columns(pl.col("score") * 4 - 2)
    assert "ece" not in rm.label_report(logits).columns
    with pytest.raises(ValueError, match=r"must hold probabilities in \[0, 1\].*score=1.6"):
        rm.label_report(logits, probabilities=True)


def test_a_score_on_an_edge_falls_in_the_bin_below():
    """As calibration_curve: linspace's edges (0.30000000000000004 for 3 of 10) and a score on
    one (0.5) in the bin below; 0 in the first bin, 1 in the last."""
    scores = [0.0, 0.1, 0.3, 0.5, 0.7, 1.0]
    df = rm.from_dense([[1, 0, 1, 1, 0, 1]], [scores])
    table = rm.calibration_table(df, n_bins=10).filter(pl.col("label").is_null())
    assert table["bin"].to_list() == np.unique(
        np.searchsorted(np.linspace(0, 1, 11)[1:-1], scores)
    ).tolist() == [0, 2, 4, 6, 9]  # fmt: skip


def test_equal_mass_edges_under_a_total_weight_of_one():
    """Weights as repetitions: a label whose cells weigh 1 in all has every edge on its highest
    score (numpy's percentile of one value), so all its cells share the first bin; below 1,
    every edge on the lowest score, so the others share the last bin."""
    df = rm.from_dense([[1, 0], [0, 1], [1, 1]], [[0.9, 0.2], [0.6, 0.7], [0.4, 0.8]])
    for weight, bins in ((1 / 3, [0]), (0.25, [0, 3])):
        weighted = df.with_columns(weight=pl.lit(weight))
        table = rm.calibration_table(weighted, weight="weight", n_bins=4, strategy="quantile")
        for label in (0, 1):
            rows = table.filter(pl.col("label") == label)
            assert rows["bin"].to_list() == bins, (weight, label)
            assert rows["count"].sum() == pytest.approx(3 * weight)


def test_the_calibration_table_refuses_what_it_cannot_do():
    df = rm.from_dense([[1, 0]], [[0.9, 0.2]])
    with pytest.raises(ValueError, match="strategy must be 'uniform' or 'quantile', not 'mass'"):
        rm.calibration_table(df, strategy="mass")
    with pytest.raises(ValueError, match="n_bins must be a positive integer, not 0"):
        rm.calibration_table(df, n_bins=0)
    with pytest.raises(ValueError, match="k must be a positive integer"):
        rm.evaluate(df, ["ece_micro@0"])


def test_the_calibration_table_by_group_and_weight(engine):
    """With by and weights: each group's bins are its own cells' weighted sums."""
    table = random_probabilities(3)
    result = engine._call(rm.calibration_table, table, by="model", weight="weight", n_bins=4)
    for (model,), part in table.group_by("model"):
        part = part.with_columns(bin=np.searchsorted([0.25, 0.5, 0.75], part["score"].to_numpy()))
        expected = (
            part.group_by("label", "bin")
            .agg(
                count=pl.col("weight").sum(),
                mean_score=(pl.col("weight") * pl.col("score")).sum() / pl.col("weight").sum(),
                observed=(pl.col("weight") * pl.col("truth")).sum() / pl.col("weight").sum(),
            )
            .filter(pl.col("count") > 0)
            .sort("label", "bin")
        )
        ours = result.filter(pl.col("model") == model, pl.col("label").is_not_null())
        assert_frame_equal(ours.drop("model"), expected, check_exact=False, rel_tol=1e-12,
                           check_dtypes=False)  # fmt: skip


# A score outside [0, 1], refused for these keys alone, from every source and on every engine.
def _bad_score(value: float) -> pl.DataFrame:
    df = valid()
    return df.with_columns(
        pl.when(pl.int_range(pl.len()) == BAD_ROW).then(value).otherwise(pl.col("score"))
        .alias("score")
    )  # fmt: skip


OUTSIDE = {"above 1": 1.5, "below 0": -0.5}
PROBABILITY_KEYS = ("log_loss_macro", "brier_samples", "lrap")


@pytest.mark.parametrize("case", OUTSIDE)
def test_a_score_outside_the_unit_interval_is_refused_naming_column_sample_and_value(case):
    value = OUTSIDE[case]
    with pytest.raises(ValueError) as error:
        rm.evaluate(_bad_score(value), PROBABILITY_KEYS, weight="w")
    assert str(error.value) == (
        "column 'score' (score) must hold probabilities in [0, 1] for log_loss_macro, "
        f"brier_samples, but has another value (at sample=2, label='b', score={value!r})"
    )
    # The ranking and threshold keys read any real score.
    assert rm.evaluate(_bad_score(value), ["lrap", "f1_samples"], weight="w").height == 1


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("kind", SOURCES)
def test_every_source_and_engine_refuses_it_the_same(kind, engine, tmp_path):
    for case, value in OUTSIDE.items():
        with pytest.raises(ValueError) as expected:
            rm.evaluate(_bad_score(value), PROBABILITY_KEYS, weight="w")
        data = write(_bad_score(value), kind, tmp_path / case.replace(" ", "-"))
        with pytest.raises(ValueError) as got:
            rm.evaluate(data, PROBABILITY_KEYS, weight="w", engine=engine)
        assert str(got.value) == str(expected.value)


def test_the_sql_engines_refuse_it_the_same(sql_engine):
    cols = Columns.of(weight="w")
    for value in OUTSIDE.values():
        with pytest.raises(ValueError) as expected:
            rm.evaluate(_bad_score(value), PROBABILITY_KEYS, weight="w")
        with pytest.raises(ValueError) as got:
            driver.run(sql_engine, _bad_score(value), cols, parse_keys(PROBABILITY_KEYS),
                       parameters=parameters())  # fmt: skip
        assert str(got.value) == str(expected.value)
