"""Threshold metrics (the seeds' example-based metrics): every engine path against scikit-learn."""

import warnings
from functools import partial

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import finite_scores
from sklearn import metrics as skm
from strategies import long_tables

import polars_rankmetrics as rm
from polars_rankmetrics.metrics.registry import CLASSIFICATION_METRICS

SETTINGS = settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def sklearn_values(
    y_true, y_pred, weights, *, beta, zero_division, y_score=None
) -> dict[str, float]:
    """scikit-learn's value of every threshold metric, and with ``y_score`` of every curve
    metric (its warnings about 0/0 and one-class labels silenced)."""
    y_true, y_pred = y_true.astype(int), y_pred.astype(int)
    curves = {} if y_score is None else _curve_values(y_true, y_score, weights)
    options = {"sample_weight": weights}
    averaged = {"average": "samples", "zero_division": zero_division, **options}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return curves | {
            "hamming_loss": skm.hamming_loss(y_true, y_pred, **options),
            "subset_accuracy": skm.accuracy_score(y_true, y_pred, **options),
            "zero_one_loss": skm.zero_one_loss(y_true, y_pred, **options),
            "precision_samples": skm.precision_score(y_true, y_pred, **averaged),
            "recall_samples": skm.recall_score(y_true, y_pred, **averaged),
            "f1_samples": skm.f1_score(y_true, y_pred, **averaged),
            "fbeta_samples": skm.fbeta_score(y_true, y_pred, beta=beta, **averaged),
            "jaccard_samples": _jaccard(y_true, y_pred, weights, zero_division),
            **{
                f"{name}_{average}": score(
                    y_true, y_pred, average=average, zero_division=zero_division, **options
                )
                for name, score in {
                    "precision": skm.precision_score,
                    "recall": skm.recall_score,
                    "f1": skm.f1_score,
                    "fbeta": partial(skm.fbeta_score, beta=beta),
                }.items()
                for average in ("micro", "macro", "weighted")
            },  # fmt: skip
            **{
                f"jaccard_{average}": _jaccard_labels(
                    y_true, y_pred, weights, zero_division, average
                )
                for average in ("micro", "macro", "weighted")
            },
            # The per-sample counts behind the micro averages, averaged over samples.
            "true_positives": _mean((y_true & y_pred).sum(axis=1), weights),
            "false_positives": _mean(
                (~y_true.astype(bool) & y_pred.astype(bool)).sum(axis=1), weights
            ),
            "false_negatives": _mean(
                (y_true.astype(bool) & ~y_pred.astype(bool)).sum(axis=1), weights
            ),
        }


def _mean(values, weights) -> float:
    if weights is not None and np.sum(weights) == 0:
        return float("nan")
    return float(np.average(values, weights=weights))


def _curve_values(y_true, y_score, weights) -> dict[str, float]:
    y_score = finite_scores(y_score)  # scikit-learn refuses infinities; the order is kept
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            f"{name}_{average}": score(y_true, y_score, average=average, sample_weight=weights)
            for name, score in {
                "average_precision": skm.average_precision_score,
                "roc_auc": skm.roc_auc_score,
            }.items()
            for average in ("samples", "micro", "macro", "weighted")
        }


def _jaccard_labels(y_true, y_pred, weights, zero_division, average):
    """As :func:`_jaccard`, averaged over labels: scikit-learn's where it takes the
    zero_division; for NaN by hand, from each label's weighted counts."""
    if not np.isnan(zero_division):
        return skm.jaccard_score(
            y_true, y_pred, average=average, zero_division=zero_division, sample_weight=weights
        )
    w = (np.ones(len(y_true)) if weights is None else weights)[:, None]
    tp = (w * (y_true & y_pred)).sum(axis=0)
    union = (w * (y_true | y_pred)).sum(axis=0)
    if average == "micro":
        return tp.sum() / union.sum() if union.sum() > 0 else np.nan
    kept = union > 0
    support = (w * y_true).sum(axis=0)
    if not kept.any():
        return np.nan
    scores = tp[kept] / union[kept]
    if average == "weighted" and support[kept].sum() > 0:
        return np.average(scores, weights=support[kept])
    return scores.mean()  # scikit-learn's average falls back to the plain mean too


def _jaccard(y_true, y_pred, weights, zero_division):
    """scikit-learn's jaccard_score takes no zero_division=nan: by hand for it, each sample's
    |y and y_hat| / |y or y_hat|, a 0/0 sample left out (as its other scores are)."""
    if not np.isnan(zero_division):
        return skm.jaccard_score(
            y_true, y_pred, average="samples", zero_division=zero_division, sample_weight=weights
        )
    # As scikit-learn's other sample scores: counts weighted per sample (a sample of weight 0 is
    # a 0/0 too), 0/0 samples left out, NaN when none is left.
    w = np.ones(len(y_true)) if weights is None else weights
    union = w * (y_true | y_pred).sum(axis=1)
    kept = union > 0
    if not kept.any():
        return np.nan
    values = w[kept] * (y_true & y_pred).sum(axis=1)[kept] / union[kept]
    return np.average(values, weights=w[kept])


def assert_close(ours, theirs):
    np.testing.assert_allclose(np.asarray(ours, dtype=float), theirs, rtol=1e-9, atol=1e-12)


# The drawn tables hold labels and samples without positives on purpose: their average
# precision and ROC AUC warn (test_warnings_are_sklearns checks where).
CURVES_ILL_DEFINED = pytest.mark.filterwarnings("ignore::polars_rankmetrics.UndefinedMetricWarning")


PARAMETERS = st.fixed_dictionaries({
    "threshold": st.sampled_from([0.5, 0.0, 0.25, 1.0, -1.0]),
    "beta": st.sampled_from([1.0, 0.5, 2.0]),
    "zero_division": st.sampled_from([0.0, 1.0, float("nan")]),
})  # fmt: skip


@CURVES_ILL_DEFINED
@SETTINGS
@given(table=long_tables(), parameters=PARAMETERS, use_pred=st.booleans(), lazy=st.booleans())
def test_threshold_metrics_match_sklearn(engine, table, parameters, use_pred, lazy):
    df, y_true, y_score, weights = table
    y_pred = y_score >= parameters["threshold"]
    options = dict(parameters)
    if use_pred:  # the decisions as a column of their own (bool or 0/1), scores left as they are
        decision = (pl.col("score").cast(pl.Float64) >= parameters["threshold"]).alias("decision")
        df = df.with_columns(decision if lazy else decision.cast(pl.Int8))
        options = {"pred": "decision", "beta": parameters["beta"],
                   "zero_division": parameters["zero_division"]}  # fmt: skip
    weight = "weight" if weights is not None else None
    data = df.lazy() if lazy else df
    result = engine.evaluate(data, list(CLASSIFICATION_METRICS), weight=weight, **options)
    expected = sklearn_values(
        y_true, y_pred, weights, beta=parameters["beta"], zero_division=parameters["zero_division"],
        y_score=y_score,
    )  # fmt: skip
    for key in CLASSIFICATION_METRICS:
        assert_close(result[key][0], expected[key])


@CURVES_ILL_DEFINED
@settings(SETTINGS, max_examples=15)
@given(table=long_tables(), zero_division=st.sampled_from([0.0, 1.0, float("nan")]))
def test_per_sample_threshold_metrics_match_sklearn_row_by_row(engine, table, zero_division):
    df, y_true, y_score, _ = table
    keys = [
        "hamming_loss",
        "subset_accuracy",
        "precision_samples",
        "recall_samples",
        "jaccard_samples",
        "average_precision_samples",
        "roc_auc_samples",
    ]
    result = engine.evaluate(df, keys, per_sample=True, zero_division=zero_division)
    y_pred = y_score >= 0.5
    rows = [
        sklearn_values(y_true[i : i + 1], y_pred[i : i + 1], None, beta=1.0,
                       zero_division=zero_division, y_score=y_score[i : i + 1])
        for i in range(len(y_true))
    ]  # fmt: skip
    for key in keys:
        assert_close(result[key].fill_null(np.nan), [row[key] for row in rows])


def test_the_seeds_worked_example():
    """../shared/seeds/003: its "precision" and "recall" are swapped against scikit-learn's
    (precision is |y and y_hat| / |y_hat|): 0.375 and 0.5 here, as scikit-learn gives."""
    y_true = [[0, 1, 0], [0, 1, 1], [1, 0, 1], [0, 0, 1]]
    y_pred = [[0, 1, 1], [0, 1, 1], [0, 1, 0], [0, 0, 0]]
    df = rm.from_dense(y_true, y_pred).rename({"score": "decision"})
    expected = {
        "subset_accuracy": 0.25, "zero_one_loss": 0.75, "jaccard_samples": 0.375,
        "hamming_loss": 5 / 12, "precision_samples": 0.375, "recall_samples": 0.5,
        "f1_samples": 5 / 12, "fbeta_samples": 5 / 12,
    }  # fmt: skip
    result = rm.evaluate(df, list(expected), pred="decision", score="decision", zero_division=0)
    assert result.row(0, named=True) == pytest.approx(expected)


def test_threshold_and_ranking_metrics_in_one_call_by_group(engine):
    df = pl.read_parquet("data/example.parquet").filter(pl.col("sample") < "clip_00010")
    result = engine.evaluate(
        df, ["lrap", "f1_samples", "hamming_loss"], by="model", weight="weight", threshold=0.7
    )
    for model in ("baseline", "candidate"):
        part = df.filter(model=model).sort("sample", "label")
        y_true = part["truth"].to_numpy().reshape(-1, 40)
        y_score = part["score"].to_numpy().reshape(-1, 40)
        w = part["weight"].to_numpy().reshape(-1, 40)[:, 0]
        expected = sklearn_values(y_true, y_score >= 0.7, w, beta=1.0, zero_division=0.0)
        row = result.filter(model=model)
        assert_close(row["f1_samples"][0], expected["f1_samples"])
        assert_close(row["hamming_loss"][0], expected["hamming_loss"])
        assert_close(
            row["lrap"][0],
            skm.label_ranking_average_precision_score(y_true, y_score, sample_weight=w),
        )


BAD = [
    ({"pred": "decision"}, {"decision": [1, 0, 2, 0]}, r"'decision' \(pred\) must be 0 or 1"),
    ({"pred": "decision"}, {"decision": [1, None, 0, 0]}, r"'decision' \(pred\) has a null"),
    ({"pred": "decision"}, {"decision": ["a", "b", "c", "d"]}, r"'decision' \(pred\) must be bool"),
    ({"zero_division": 2}, {}, r"zero_division must be 0, 1, nan or 'warn'"),
    ({"zero_division": "often"}, {}, r"zero_division must be 0, 1, nan or 'warn'"),
    ({"beta": 0}, {}, r"beta must be positive"),
    ({"threshold": float("nan")}, {}, r"threshold must be a finite number"),
]


@pytest.mark.parametrize("options, columns, message", BAD)
def test_bad_threshold_input(engine, options, columns, message):
    df = pl.DataFrame({
        "sample": [1, 1, 2, 2], "label": ["a", "b", "a", "b"], "score": [0.9, 0.1, 0.4, 0.6],
        "truth": [1, 0, 0, 1], **columns,
    }, strict=False)  # fmt: skip
    with pytest.raises(ValueError, match=message):
        engine.evaluate(df, ["f1_samples"], **options)


def test_label_averages_have_no_per_sample_value():
    df = rm.from_dense([[1, 0]], [[0.9, 0.1]])
    with pytest.raises(ValueError, match="f1_macro is averaged over labels"):
        rm.evaluate(df, ["lrap", "f1_macro"], per_sample=True)


def test_the_cli_takes_the_threshold_options():
    import subprocess
    import sys

    args = ["--by", "model", "--metrics", "f1_samples,precision_samples,hamming_loss",
            "--threshold", "0.7", "--zero-division", "nan", "--format", "csv"]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "polars_rankmetrics.cli", "evaluate", "data/example.parquet", *args],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    expected = rm.evaluate(
        "data/example.parquet", ["f1_samples", "precision_samples", "hamming_loss"], by="model",
        threshold=0.7, zero_division="nan",
    )  # fmt: skip
    from polars.testing import assert_frame_equal

    assert_frame_equal(pl.read_csv(done.stdout.encode()), expected, check_exact=False)
    bad = subprocess.run(
        [sys.executable, "-m", "polars_rankmetrics.cli", "evaluate", "data/example.parquet",
         "--by", "model", "--metrics", "f1_samples", "--zero-division", "2"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert bad.returncode == 1
    assert bad.stderr.strip() == (
        "rankmetrics: error: zero_division must be 0, 1, nan or 'warn', not 2.0"
    )


@CURVES_ILL_DEFINED
@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(first=long_tables(), second=long_tables())
def test_by_groups_are_evaluated_as_tables_of_their_own(engine, first, second):
    """Two random tables stacked with a ``model`` column: each group's row is scikit-learn's
    value on that table alone (label sets may differ between groups)."""
    parts, expected = [], []
    for name, (df, y_true, y_score, weights) in zip(("a", "b"), (first, second), strict=True):
        w = np.ones(len(y_true)) if weights is None else weights
        if weights is None:
            df = df.with_columns(weight=pl.lit(1.0))
        parts.append(df.with_columns(model=pl.lit(name), score=pl.col("score").cast(pl.Float64),
                                     truth=pl.col("truth").cast(pl.Int64)))  # fmt: skip
        expected.append(
            sklearn_values(y_true, y_score >= 0.5, w, beta=1.0, zero_division=0.0, y_score=y_score)
        )
    keys = list(CLASSIFICATION_METRICS)
    result = engine.evaluate(pl.concat(parts, how="diagonal_relaxed"), keys, by="model",
                             weight="weight", zero_division=0.0)  # fmt: skip
    assert result["model"].to_list() == ["a", "b"]
    for row, values in zip(result.iter_rows(named=True), expected, strict=True):
        for key in keys:
            assert_close(row[key], values[key])


def test_a_sample_of_weight_0_is_a_0_over_0_as_in_sklearn(engine):
    """scikit-learn weights each sample's counts: with zero_division NaN, a sample of weight 0
    drops out like a 0/0 one, and a mean over none of them is NaN."""
    y_true = np.array([[0, 0, 0], [1, 1, 0], [0, 1, 1]])
    y_score = np.array([[0.1, 0.2, 0.3], [0.1, 0.9, 0.2], [0.1, 0.2, 0.3]])
    df = rm.from_dense(y_true, y_score).with_columns(
        weight=pl.col("sample").replace_strict({0: 1.0, 1: 0.0, 2: 0.0})
    )
    keys = ["precision_samples", "recall_samples", "f1_samples", "jaccard_samples"]
    result = engine.evaluate(df, keys, weight="weight", zero_division=float("nan"))
    expected = sklearn_values(
        y_true, y_score >= 0.5, np.array([1.0, 0.0, 0.0]), beta=1.0, zero_division=float("nan")
    )
    for key in keys:
        assert np.isnan(expected[key])
        assert_close(result[key][0], expected[key])


# scikit-learn's call for each key averaged over labels or samples that can be ill-defined.
_SET_CALLS = {
    "precision": skm.precision_score, "recall": skm.recall_score, "f1": skm.f1_score,
    "jaccard": skm.jaccard_score,
}  # fmt: skip
_CURVE_CALLS = {"average_precision": skm.average_precision_score, "roc_auc": skm.roc_auc_score}
AVERAGES = ("samples", "micro", "macro", "weighted")
WARNING_KEYS = [f"{name}_{a}" for name in (*_SET_CALLS, "fbeta", *_CURVE_CALLS) for a in AVERAGES]


def sklearn_warns(key, y_true, y_pred, y_score, weights, zero_division="warn") -> bool:
    """Whether scikit-learn warns that ``key`` is ill-defined: an UndefinedMetricWarning of
    the set scores and ROC AUC, average precision's "No positive class found" UserWarning."""
    name, average = key.rsplit("_", 1)
    options = {"average": average, "sample_weight": weights}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if name in _CURVE_CALLS:
            _CURVE_CALLS[name](y_true, finite_scores(y_score), **options)
        elif name == "fbeta":
            skm.fbeta_score(y_true, y_pred, beta=2.0, zero_division=zero_division, **options)
        else:
            _SET_CALLS[name](y_true, y_pred, zero_division=zero_division, **options)
    return any(
        issubclass(w.category, skm._classification.UndefinedMetricWarning)
        or "No positive class found" in str(w.message)
        for w in caught
    )


def warned_keys(call) -> tuple[object, dict[str, rm.UndefinedMetricWarning]]:
    """``call()``'s result and, per key, the cases of the one UndefinedMetricWarning it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    ours = [w for w in caught if issubclass(w.category, rm.UndefinedMetricWarning)]
    assert len(ours) <= 1, [str(w.message) for w in ours]
    cases = {case.key: case for w in ours for case in w.message.cases}
    return result, cases


@SETTINGS
@given(table=long_tables(), threshold=st.sampled_from([0.5, 0.0, 1.0]))
def test_warnings_are_sklearns(engine, table, threshold):
    """Each key warns exactly where scikit-learn warns (zero_division="warn", its default; in
    buckets the counts add up to one warning), with the value scikit-learn gives."""
    df, y_true, y_score, weights = table
    y_true = y_true.astype(int)
    y_pred = (y_score >= threshold).astype(int)
    result, cases = warned_keys(lambda: engine.evaluate(
        df, WARNING_KEYS, weight="weight" if weights is not None else None, threshold=threshold,
        beta=2.0,
    ))  # fmt: skip
    for key in WARNING_KEYS:
        assert (key in cases) == sklearn_warns(key, y_true, y_pred, y_score, weights), key
    expected = sklearn_values(y_true, y_pred, weights, beta=2.0, zero_division=0.0,
                              y_score=y_score)  # fmt: skip
    for key in WARNING_KEYS:
        assert_close(result[key][0], expected[key])


def test_a_chosen_zero_division_silences_the_set_scores_only(engine):
    df = rm.from_dense([[1, 0, 0], [0, 0, 0]], [[0.9, 0.1, 0.2], [0.1, 0.2, 0.3]])
    keys = ["precision_macro", "recall_samples", "roc_auc_macro", "f1_micro"]
    _, cases = warned_keys(lambda: engine.evaluate(df, keys, zero_division=0))
    assert set(cases) == {"roc_auc_macro"}
    for zero_division in (1, "nan"):
        _, cases = warned_keys(partial(engine.evaluate, df, keys[:2], zero_division=zero_division))
        assert cases == {}


def test_the_warning_names_the_metric_the_count_a_few_labels_and_the_remedy(engine):
    """Four of five labels never predicted (two of them never true either), over two models:
    the counts are summed over the groups, a few labels named, the way out said."""
    y_true = [[1, 0, 0, 0, 1], [1, 0, 0, 1, 0]]
    y_score = [[0.9, 0.1, 0.1, 0.1, 0.1], [0.8, 0.2, 0.2, 0.2, 0.2]]
    one = rm.from_dense(y_true, y_score, label_ids=["a", "b", "c", "d", "e"])
    df = pl.concat([one.with_columns(model=pl.lit(m)) for m in ("x", "y")])
    with pytest.warns(rm.UndefinedMetricWarning) as caught:
        engine.evaluate(df, ["precision_macro", "f1_weighted", "lrap"], by="model")
    assert len(caught) == 1
    warning = caught[0]
    assert issubclass(warning.category, UserWarning)
    # Attributed to the caller's line (here the tests' engine fixture), not the package's.
    assert warning.filename.endswith("conftest.py")
    message = str(warning.message)
    assert "precision_macro on 8 of 10 labels ('b', 'c', 'd', ...) with no predicted samples" in (
        message
    )
    assert "f1_weighted on 4 of 10 labels ('b', 'c') with no true nor predicted samples" in message
    assert "zero_division=0, 1 or 'nan'" in message
    (precision, f1) = warning.message.cases
    assert (precision.unit, precision.count, precision.total, precision.value) == (
        "label",
        8,
        10,
        0,
    )
    assert (f1.score, f1.examples) == ("f-score", ("b", "c"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a pipeline's filter on the class silences it
        warnings.simplefilter("ignore", rm.UndefinedMetricWarning)
        engine.evaluate(df, ["precision_macro"], by="model")


@settings(SETTINGS, max_examples=15)
@given(table=long_tables())
def test_the_label_report_warns_as_sklearn_without_average(engine, table):
    df, y_true, y_score, weights = table
    y_true, y_pred = y_true.astype(int), (y_score >= 0.5).astype(int)
    _, cases = warned_keys(
        lambda: engine.report(df, weight="weight" if weights is not None else None)
    )
    calls = {
        "precision": lambda: skm.precision_score(y_true, y_pred, average=None,
                                                 sample_weight=weights),
        "recall": lambda: skm.recall_score(y_true, y_pred, average=None, sample_weight=weights),
        "f1": lambda: skm.f1_score(y_true, y_pred, average=None, sample_weight=weights),
        "average_precision": lambda: skm.average_precision_score(
            y_true, finite_scores(y_score), average=None, sample_weight=weights),
        "roc_auc": lambda: skm.roc_auc_score(
            y_true, finite_scores(y_score), average=None, sample_weight=weights),
    }  # fmt: skip
    for column, call in calls.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        assert (column in cases) == bool(caught), column


def test_every_verb_warns_once_with_the_same_counts(engine):
    """Per-sample output, intervals, a comparison and the HTML report count the ill-defined
    samples from the per-sample rows (in buckets too), one warning per call."""
    y_true = [[1, 0, 0], [0, 0, 0], [1, 0, 1], [0, 1, 1]]
    y_score = [[0.9, 0.1, 0.2], [0.1, 0.2, 0.3], [0.8, 0.1, 0.4], [0.3, 0.45, 0.8]]
    one = rm.from_dense(y_true, y_score)
    df = pl.concat([one.with_columns(model=pl.lit(m)) for m in ("a", "b")])
    keys = ["precision_samples", "average_precision_samples", "lrap"]
    calls = {
        "means": partial(engine.evaluate, df, keys, by="model"),
        "per_sample": partial(engine.evaluate, df, keys, by="model", per_sample=True),
        "ci": partial(engine.evaluate, df, keys, by="model", ci=0.9, n_boot=20),
        "compare": partial(engine._call, rm.compare, df, keys, by="model", baseline="a",
                           n_boot=20, n_resamples=20),
    }  # fmt: skip
    for name, call in calls.items():
        _, cases = warned_keys(call)
        assert {k: c.count for k, c in cases.items()} == {
            "precision_samples": 2, "average_precision_samples": 2,
        }, name  # fmt: skip
    if engine.name == "polars" and not engine.bucket_rows:
        _, cases = warned_keys(partial(rm.html_report, df, by="model", baseline="a", n_boot=20))
        assert cases["f1_samples"].count == 2  # the per-sample values': sample 1 of each
        assert cases["precision"].count == 2  # the per-label table's: label 1 of each


def test_the_command_prints_the_warning_once_on_one_line_of_stderr(tmp_path):
    import subprocess
    import sys

    df = rm.from_dense([[1, 0, 0], [0, 0, 0]], [[0.9, 0.1, 0.2], [0.1, 0.2, 0.3]])
    df.write_parquet(tmp_path / "t.parquet")
    for engine in ("polars", "duckdb"):
        done = subprocess.run(
            [sys.executable, "-m", "polars_rankmetrics.cli", "evaluate",
             str(tmp_path / "t.parquet"), "--metrics", "precision_macro,recall_samples,lrap",
             "--engine", engine, "--memory-limit", "1GB"],
            capture_output=True, text=True,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        lines = [line for line in done.stderr.splitlines() if "warning" in line]
        assert len(lines) == 1, done.stderr
        assert lines[0].startswith("rankmetrics: warning: ill-defined metrics: ")
        assert "precision_macro on 2 of 3 labels (1, 2) with no predicted samples" in lines[0]
        assert "recall_samples on 1 sample with no true labels" in lines[0]
        assert "Traceback" not in done.stderr
