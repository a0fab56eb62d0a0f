"""The HTML report: its numbers are the library's, its page stands alone, and it renders in a
real browser (headless Chromium) without errors or network requests, its charts drawn and its
table sorting on a click."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from browser import Browser, chromium
from conftest import ENGINES
from polars.testing import assert_frame_equal
from sklearn.calibration import calibration_curve

import polars_rankmetrics as rm
from polars_rankmetrics.metrics.label_averages import score_counts
from polars_rankmetrics.report.chart_data import Reliability
from polars_rankmetrics.report.contents import PROBABILITY_KEYS, SAMPLE_KEYS

EXAMPLE = "data/example.parquet"
# The example page's screenshot, linked from docs/report.md and the README.
SCREENSHOT = Path(__file__).parent.parent / "docs" / "report.png"


@pytest.fixture(scope="module")
def example_report() -> rm.Report:
    return rm.html_report(EXAMPLE, by="model", baseline="baseline", ci=0.9, n_boot=200,
                          weight="weight")  # fmt: skip


def test_the_numbers_are_those_of_evaluate_label_report_and_compare(example_report):
    options = {"by": "model", "weight": "weight"}
    labels = rm.label_report(EXAMPLE, **options)
    assert_frame_equal(example_report.labels, labels, check_exact=False, rel_tol=1e-12)
    assert example_report.labels.columns[-3:] == ["log_loss", "brier", "ece"]
    keys = ["lrap", "lwlrap", "ndcg@10", "f1_samples", "f1_macro", "roc_auc_micro",
            *PROBABILITY_KEYS]  # fmt: skip
    plain = rm.evaluate(EXAMPLE, keys, **options)
    assert_frame_equal(example_report.summary.select(plain.columns), plain, rel_tol=1e-12)
    intervals = rm.evaluate(EXAMPLE, ["lrap", "ndcg@10"], ci=0.9, n_boot=200, **options)
    assert_frame_equal(example_report.summary.select(intervals.columns), intervals, rel_tol=1e-12)
    compared = rm.compare(EXAMPLE, list(SAMPLE_KEYS),
                          baseline="baseline", ci=0.9, n_boot=200, **options)  # fmt: skip
    assert_frame_equal(example_report.comparison, compared, rel_tol=1e-12)


def test_the_page_stands_alone_and_is_small(example_report, tmp_path):
    page = example_report.html
    assert len(page.encode()) <= 3_000_000
    # No script, style, image or font from anywhere else: SVG's namespaces are names, not loads.
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert not re.search(r"url\((?!#)", page) and "@import" not in page  # url(#id): in the page
    # Micro PR and ROC, per-label PR and ROC, differences, scores, reliability (the example's
    # scores are probabilities).
    assert page.count("<svg") == 7
    assert "Calibration: the scores read as probabilities" in page
    assert example_report._repr_html_() == page
    path = tmp_path / "report.html"
    example_report.save(path)
    assert path.read_text(encoding="utf-8") == page


# Against the Polars engine's one piece: its buckets, and DuckDB's (which also splits).
@pytest.mark.parametrize("engine", [e for e in ENGINES if e.bucket_rows], ids=str)
# The example's first samples leave labels without positives: their scores warn.
@pytest.mark.filterwarnings("ignore::polars_rankmetrics.UndefinedMetricWarning")
def test_the_report_does_not_depend_on_buckets_or_engine(engine):
    table = pl.read_parquet(EXAMPLE)
    table = table.filter(pl.col("sample").is_in(table["sample"].unique().sort().head(30).implode()))
    options = {"by": "model", "baseline": "baseline", "ci": 0.9, "n_boot": 200, "weight": "weight"}
    whole = rm.html_report(table, **options)
    report = engine._call(rm.html_report, table, **options)
    assert_frame_equal(report.summary, whole.summary, rel_tol=1e-9)
    assert_frame_equal(report.labels, whole.labels, rel_tol=1e-9)
    assert_frame_equal(report.comparison, whole.comparison, rel_tol=1e-9)


def test_the_reliability_diagrams_numbers_are_calibration_curves():
    """Per model, every label's cells pooled: the points and the bin counts are scikit-learn's
    calibration_curve on the raveled matrices (without weights), 15 bins."""
    table = pl.read_parquet(EXAMPLE)
    for (model,), part in table.group_by("model"):
        part = part.sort("sample", "label")
        counts = score_counts(part.lazy(), [], "label", "score", "truth", pl.lit(1.0)).collect()
        points = Reliability.of(counts, 15)
        y, p = part["truth"].cast(pl.Int64).to_numpy(), part["score"].to_numpy()
        prob_true, prob_pred = calibration_curve(y, p, n_bins=15)
        np.testing.assert_allclose(points.observed, prob_true, rtol=1e-12, err_msg=model)
        np.testing.assert_allclose(points.mean_score, prob_pred, rtol=1e-12, err_msg=model)
        cells = np.bincount(np.searchsorted(np.linspace(0, 1, 16)[1:-1], p), minlength=15)
        assert points.bin.tolist() == np.flatnonzero(cells).tolist()
        assert points.count.tolist() == cells[cells > 0].tolist()


# The example's first samples leave labels without positives: their scores warn.
@pytest.mark.filterwarnings("ignore::polars_rankmetrics.UndefinedMetricWarning")
def test_scores_outside_the_unit_interval_are_not_read_as_probabilities():
    """A score outside [0, 1] (a logit): no reliability diagram, no probability columns or
    keys (the example's probabilities have them all: the first tests)."""
    table = pl.read_parquet(EXAMPLE)
    table = table.filter(pl.col("sample").is_in(table["sample"].unique().sort().head(30).implode()))
    logits = table.with_columns(pl.col("score") * 4 - 2)
    report = rm.html_report(logits, by="model", weight="weight")
    assert "Calibration" not in report.html and report.html.count("<svg") == 5
    assert not set(report.labels.columns) & {"log_loss", "brier", "ece"}
    assert not set(report.summary.columns) & set(PROBABILITY_KEYS)


def test_a_top_k_report_draws_precision_and_recall_at_each_cut_off():
    rng = np.random.default_rng(0)
    predictions = pl.DataFrame({
        "model": ["a"] * 60 + ["b"] * 60,
        "sample": list(np.repeat(np.arange(20), 3)) * 2,
        "label": rng.integers(0, 50, 120),
        "score": rng.random(120),
    }).unique(["model", "sample", "label"])  # fmt: skip
    truth = pl.DataFrame({"sample": np.arange(20), "label": rng.integers(0, 50, 20)})
    truth = pl.concat([truth.with_columns(model=pl.lit(m)) for m in ("a", "b")])
    report = rm.html_report(predictions, by="model", truth_table=truth, n_labels=50, k=3)
    expected = rm.evaluate(predictions, ["precision@2", "recall@3", "mrr"], by="model",
                           truth_table=truth, n_labels=50)  # fmt: skip
    assert_frame_equal(report.summary.select(expected.columns), expected)
    assert report.labels is None and report.html.count("<svg") == 1
    assert "precision@K and recall@K" in report.html


def test_a_top_k_report_takes_intervals_and_a_baseline_as_a_dense_one():
    rng = np.random.default_rng(1)
    predictions = pl.DataFrame({
        "model": ["a"] * 90 + ["b"] * 90,
        "sample": list(np.repeat(np.arange(30), 3)) * 2,
        "label": rng.integers(0, 20, 180),
        "score": rng.random(180),
    }).unique(["model", "sample", "label"])  # fmt: skip
    truth = pl.DataFrame({"sample": np.arange(30), "label": rng.integers(0, 20, 30)})
    truth = pl.concat([truth.with_columns(model=pl.lit(m)) for m in ("a", "b")])
    report = rm.html_report(predictions, by="model", truth_table=truth, k=2, ci=0.9,
                            baseline="a", n_boot=200, seed=5)  # fmt: skip
    keys = ["mrr", "map", "precision@2", "recall@2"]
    intervals = rm.evaluate(predictions, keys, by="model", truth_table=truth, ci=0.9,
                            n_boot=200, seed=5)  # fmt: skip
    assert_frame_equal(report.summary.select(intervals.columns), intervals, rel_tol=1e-12)
    compared = rm.compare(predictions, keys, baseline="a", truth_table=truth, n_boot=200,
                          ci=0.9, seed=5)  # fmt: skip
    assert_frame_equal(report.comparison, compared, rel_tol=1e-12)
    assert "Comparison with the baseline" in report.html


def test_the_command_writes_the_page(tmp_path):
    out = tmp_path / "report.html"
    done = subprocess.run(
        [sys.executable, "-m", "polars_rankmetrics", "report", EXAMPLE, "--by", "model",
         "--baseline", "baseline", "--html", str(out)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    bad = subprocess.run(
        [sys.executable, "-m", "polars_rankmetrics", "report", EXAMPLE, "--by", "model",
         "--baseline", "nobody", "--html", str(out)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert bad.returncode == 1
    assert (
        bad.stderr.count("\n") == 1 and "baseline" in bad.stderr and "Traceback" not in bad.stderr
    )


@pytest.mark.skipif(chromium() is None, reason="needs Chromium (Debian: apt-get install chromium)")
def test_the_page_renders_in_a_real_browser(example_report, tmp_path):
    path = tmp_path / "report.html"
    example_report.save(path)
    browser = Browser(chromium())  # type: ignore[arg-type]
    try:
        browser.open(path)
        assert browser.problems() == []
        assert browser.requests() == [path.resolve().as_uri()]
        marks = browser.evaluate(
            "Array.from(document.querySelectorAll('svg'))"
            ".map(svg => svg.querySelectorAll('path, rect, line, polyline').length)"
        )
        assert len(marks) == 7 and min(marks) > 10, marks
        sizes = browser.evaluate(
            "Array.from(document.querySelectorAll('svg'))"
            ".map(svg => svg.getBoundingClientRect().width * svg.getBoundingClientRect().height)"
        )
        assert min(sizes) > 10_000, sizes  # every chart laid out with a visible area
        column = browser.evaluate(
            "Array.from(document.querySelectorAll('table.sortable')).pop()"
            ".tHead.rows[0].cells.length"
        )
        support = browser.evaluate(
            "Array.from(Array.from(document.querySelectorAll('table.sortable')).pop()"
            ".tHead.rows[0].cells).findIndex(th => th.textContent.startsWith('support'))"
        )
        assert 0 < support < column
        read = (
            "Array.from(Array.from(document.querySelectorAll('table.sortable')).pop().tBodies[0]"
            f".rows).map(row => parseFloat(row.cells[{support}].getAttribute('data-value')))"
        )
        before = browser.evaluate(read)
        header = (
            "Array.from(document.querySelectorAll('table.sortable')).pop()"
            f".tHead.rows[0].cells[{support}]"
        )
        browser.evaluate(f"{header}.dispatchEvent(new MouseEvent('click', {{bubbles: true}}))")
        ascending = browser.evaluate(read)
        browser.evaluate(f"{header}.dispatchEvent(new MouseEvent('click', {{bubbles: true}}))")
        descending = browser.evaluate(read)
        assert ascending == sorted(before) and ascending != before
        assert descending == sorted(before, reverse=True)
        assert browser.problems() == []
        browser.screenshot(SCREENSHOT)
    finally:
        browser.close()
    assert SCREENSHOT.stat().st_size > 50_000


@pytest.mark.skipif(chromium() is None, reason="needs Chromium (Debian: apt-get install chromium)")
def test_the_page_of_runs_draws_trec_evals_measures_in_a_real_browser(tmp_path):
    run = rm.read_trec_run("data/trec_runs.txt")
    qrels = rm.read_trec_qrels("data/trec_qrels.txt")
    path = tmp_path / "runs.html"
    rm.html_report(run, truth_table=qrels, by="run", k=5, ties="trec_eval", baseline="baseline",
                   ci=0.9, n_boot=100, path=path)  # fmt: skip
    browser = Browser(chromium())  # type: ignore[arg-type]
    try:
        browser.open(path)
        assert browser.problems() == []
        assert browser.requests() == [path.resolve().as_uri()]
        charts = browser.evaluate(
            "Array.from(document.querySelectorAll('svg')).map(svg => [svg.querySelectorAll("
            "'path, rect, line, polyline').length, svg.getBoundingClientRect().width * "
            "svg.getBoundingClientRect().height, svg.textContent])"
        )
        assert len(charts) == 1 and charts[0][0] > 10 and charts[0][1] > 10_000, charts
        legend = charts[0][2]
        assert all(f"{run}: {key}" in legend for run in ("baseline", "candidate")
                   for key in ("P_K", "recall_K")), legend  # fmt: skip
        summary = browser.evaluate(
            "Array.from(document.querySelectorAll('section')).find(s => s.querySelector('h2')"
            ".textContent === 'Summary').innerText"
        )
        assert "ties='trec_eval'" in summary and "AP" in summary and "ndcg_cut_5" in summary
    finally:
        browser.close()


def test_a_dense_report_of_chosen_keys_is_evaluates_beside_the_per_label_sections():
    # Two labels and logits (no calibration section): few charts to draw. The comparison of
    # chosen keys is checked on runs (tests/test_mixed_names.py): the same code.
    rng = np.random.default_rng(2)
    truth = rng.integers(0, 2, (40, 2))
    df = pl.concat([
        rm.from_dense(truth, rng.normal(size=(40, 2))).with_columns(model=pl.lit(m))
        for m in "ab"
    ])  # fmt: skip
    keys = ["ndcg@1", "lrap", "f1_macro"]
    report = rm.html_report(df, by="model", metrics=keys, ci=0.9, n_boot=100)
    assert report.summary.columns == ["model", "ndcg@1", "ndcg@1_lo", "ndcg@1_hi", "lrap",
                                      "lrap_lo", "lrap_hi", "f1_macro"]  # fmt: skip
    plain = rm.evaluate(df, keys, by="model")
    assert_frame_equal(report.summary.select(plain.columns), plain, rel_tol=1e-12)
    intervals = rm.evaluate(df, keys[:2], by="model", ci=0.9, n_boot=100)
    assert_frame_equal(report.summary.select(intervals.columns), intervals, rel_tol=1e-12)
    # The per-label sections stay as on the page of its own keys.
    assert_frame_equal(report.labels, rm.label_report(df, by="model"), rel_tol=1e-12)
    assert "Per-label curves" in report.html
    with pytest.raises(ValueError, match="metrics= names none"):
        rm.html_report(df, by="model", metrics=["f1_macro"], baseline="a")
