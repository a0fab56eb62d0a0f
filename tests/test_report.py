"""The per-label report against scikit-learn's per-label scores (``average=None``), on every
engine path, and from the command line."""

import json
import re
import subprocess
import sys
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import finite_scores
from sklearn import metrics as skm
from strategies import long_tables

import polars_rankmetrics as rm

SETTINGS = settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def sklearn_report(y_true, y_score, weights, threshold, zero_division) -> dict[str, np.ndarray]:
    """Per label, in label order, as scikit-learn computes each column."""
    y_true = y_true.astype(int)
    y_pred = (y_score >= threshold).astype(int)
    w = np.ones(len(y_true)) if weights is None else weights
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        precision, recall, f1, support = skm.precision_recall_fscore_support(
            y_true, y_pred, average=None, sample_weight=weights, zero_division=zero_division
        )
        finite = finite_scores(y_score)
        return {
            "support": (w[:, None] * y_true).sum(axis=0),
            "predicted": (w[:, None] * y_pred).sum(axis=0),
            "precision": precision, "recall": recall, "f1": f1,
            "average_precision": skm.average_precision_score(
                y_true, finite, average=None, sample_weight=weights
            ),
            "roc_auc": skm.roc_auc_score(y_true, finite, average=None, sample_weight=weights),
        }  # fmt: skip


# The drawn tables hold labels without positives on purpose: their curves warn.
@pytest.mark.filterwarnings("ignore::polars_rankmetrics.UndefinedMetricWarning")
@SETTINGS
@given(
    table=long_tables(),
    threshold=st.sampled_from([0.5, 0.0, 1.0]),
    zero_division=st.sampled_from([0.0, 1.0, float("nan")]),
)
def test_the_report_matches_sklearn_label_by_label(engine, table, threshold, zero_division):
    df, y_true, y_score, weights = table
    weight = "weight" if weights is not None else None
    options = {"weight": weight, "threshold": threshold, "zero_division": zero_division}
    report = engine.report(df, **options)
    expected = sklearn_report(y_true, y_score, weights, threshold, zero_division)
    assert report["label"].to_list() == sorted(df["label"].unique().to_list())
    for column, values in expected.items():
        np.testing.assert_allclose(
            report[column].to_numpy(), values, rtol=1e-9, atol=1e-12, err_msg=column
        )
    # Per-class lwlrap as lwlrap_per_class gives it, and its weights add up to lwlrap.
    per_class = rm.lwlrap_per_class(df, weight=weight)
    np.testing.assert_allclose(report["lwlrap"].to_numpy(), per_class["lwlrap"].to_numpy(),
                               rtol=1e-9)  # fmt: skip
    np.testing.assert_allclose(
        report["lwlrap_weight"].to_numpy(), per_class["weight"].to_numpy(), rtol=1e-9
    )


# The example's first samples leave labels without positives: their scores warn.
@pytest.mark.filterwarnings("ignore::polars_rankmetrics.UndefinedMetricWarning")
def test_the_report_by_group_is_the_report_of_each_group(engine):
    df = pl.read_parquet("data/example.parquet").filter(pl.col("sample") < "clip_00008")
    report = engine.report(df, by="model", weight="weight")
    for model in ("baseline", "candidate"):
        alone = engine.report(df.filter(model=model), weight="weight")
        part = report.filter(model=model).drop("model")
        np.testing.assert_allclose(part.drop("label").to_numpy(), alone.drop("label").to_numpy(),
                                   rtol=1e-9)  # fmt: skip


def test_the_cli_prints_the_report():
    done = subprocess.run(
        [sys.executable, "-m", "polars_rankmetrics.cli", "report", "data/example.parquet",
         "--by", "model", "--weight", "weight", "--format", "json", "--threshold", "0.6"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    expected = rm.label_report(
        "data/example.parquet", by="model", weight="weight", threshold=0.6
    ).fill_nan(None)
    assert len(rows) == expected.height == 80
    for row, want in zip(rows, expected.iter_rows(named=True), strict=True):
        assert row.keys() == want.keys()
        assert row["model"] == want["model"] and row["label"] == want["label"]
        assert row["f1"] == want["f1"] or abs(row["f1"] - want["f1"]) < 1e-12


def test_the_cli_report_refuses_bad_input_in_one_line():
    done = subprocess.run(
        [sys.executable, "-m", "polars_rankmetrics.cli", "report", "data/example.parquet"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.startswith("rankmetrics: error: column 'label' repeats label")
    assert len(done.stderr.strip().splitlines()) == 1


def test_probabilities_true_refuses_scores_outside_the_unit_interval_saying_why():
    # Logits: one label's scores run from -2.5 to 3.1; the message names what was asked for
    # (probabilities=True, its columns), the range of the scores and the first one outside.
    table = pl.DataFrame({
        "id": [1, 1, 2, 2, 3, 3], "tag": ["a", "b"] * 3,
        "logit": [0.2, -2.5, 0.9, 3.1, 0.4, 0.6], "truth": [1, 0, 0, 1, 1, 1],
    })  # fmt: skip
    columns = {"sample": "id", "label": "tag", "score": "logit"}
    message = (
        "column 'logit' must hold probabilities in [0, 1] for probabilities=True (the columns "
        "log_loss, brier, ece), but holds scores from -2.5 to 3.1 (e.g. tag='b', logit=-2.5): "
        "probabilities=None leaves those columns out"
    )
    for engine in ("polars", "duckdb"):
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            rm.label_report(table, probabilities=True, engine=engine, **columns)
    assert "ece" not in rm.label_report(table, **columns).columns
    inside = table.with_columns(pl.col("logit").clip(0, 1))
    assert "ece" in rm.label_report(inside, probabilities=True, **columns).columns
