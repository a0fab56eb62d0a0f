"""Top-k tables: every ranking metric equals scikit-learn on the dense matrix whose unscored
cells hold a score below all scored ones; bad input is refused naming the table."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import polars as pl
import pytest
from conftest import ENGINES
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from reference import finite_scores, sklearn_value
from sklearn import metrics as skm
from strategies import matrices

import polars_rankmetrics as rm
from polars_rankmetrics.engines import topk
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.ranks import BLOCK_START, RANK, window_ranks
from polars_rankmetrics.metrics.registry import parse_key

TOP_K_ENGINES = [replace(engine, bucket_rows=engine.bucket_rows and 7) for engine in ENGINES]
# scikit-learn warns on the degenerate rows (no positive label) that these tables hold on purpose.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning:sklearn")
RANKING = ["coverage_error", "lrap", "ranking_loss", "lwlrap", "dcg", "ndcg", "dcg@2", "ndcg@3"]


@st.composite
def top_k_tables(draw):
    """(predictions, truth table, n_labels, dense y_true, dense y_score, weights): a dense
    matrix of which some cells are not predicted, plus label columns no table mentions."""
    y_true, y_score = draw(matrices(graded=draw(st.booleans())))
    n_samples, width = y_true.shape
    extra = draw(st.integers(0, 3))
    scored = np.array(draw(st.lists(st.booleans(), min_size=y_true.size, max_size=y_true.size)))
    scored = scored.reshape(y_true.shape)
    predictions, truth = [], []
    for i in range(n_samples):
        for j in range(width):
            if scored[i, j]:
                predictions.append((i, f"l{j}", float(y_score[i, j])))
            if y_true[i, j] > 0:
                truth.append((i, f"l{j}", float(y_true[i, j])))
    # The samples either table has; the dense oracle gets the same, every unscored cell below
    # every scored one, and the labels no table mentions as unscored negative columns.
    present = sorted({i for i, _, _ in predictions} | {i for i, _, _ in truth})
    dense_score = finite_scores(np.where(scored, y_score, np.nan))
    finite = dense_score[np.isfinite(dense_score)]
    low = (finite.min() if finite.size else 0.0) - 1.0
    dense_score = np.where(scored, dense_score, low)
    dense_true = np.hstack([y_true, np.zeros((n_samples, extra))])[present]
    dense_score = np.hstack([dense_score, np.full((n_samples, extra), low)])[present]
    weights = None
    if draw(st.booleans()):
        n = len(present)
        weights = np.array(draw(st.lists(st.sampled_from([0.5, 1.0, 3.0]), min_size=n, max_size=n)))
    tables = (
        pl.DataFrame(predictions, schema={"sample": pl.Int64, "label": pl.String,
                                          "score": pl.Float64}, orient="row"),
        pl.DataFrame(truth, schema={"sample": pl.Int64, "label": pl.String,
                                    "truth": pl.Float64}, orient="row"),
    )  # fmt: skip
    if draw(st.booleans()):  # in rank order, as top-k predictions are written (scanned)
        order = draw(st.permutations(range(tables[0].height)))
        tables = (tables[0][order].sort("sample", "score", descending=[False, True]), tables[1])
    return *tables, width + extra, dense_true, dense_score, weights, present


def _with_weights(predictions, truth, weights, present):
    """The weights as a column of both tables (a sample may have rows in either only)."""
    by_sample = dict(zip(present, weights.tolist(), strict=True))
    weight = pl.col("sample").replace_strict(by_sample, return_dtype=pl.Float64)
    return predictions.with_columns(weight.alias("w")), truth


@pytest.mark.parametrize("engine", TOP_K_ENGINES, ids=str)
# The drawn tables hold samples without positives, whose average precision and ROC AUC warn.
@pytest.mark.filterwarnings("ignore::polars_rankmetrics.UndefinedMetricWarning")
@settings(max_examples=25, deadline=None)
@given(table=top_k_tables(), every_row=st.booleans())
def test_ranking_metrics_equal_scikit_learn_on_the_filled_matrix(engine, table, every_row):
    predictions, truth, n_labels, y_true, y_score, weights, present = table
    if not present or n_labels < 2:
        return
    graded = bool(((y_true > 0) & (y_true != 1)).any())
    keys = [k for k in RANKING if not graded or k.startswith(("dcg", "ndcg"))]
    # roc_auc_samples ranks every row (the rank table); without it the keys are ranked on the
    # positive rows alone (polars_engine.per_sample): both plans are checked.
    keys += [] if graded else ["average_precision_samples"] + ["roc_auc_samples"] * every_row
    options = {"truth_table": truth, "n_labels": n_labels}
    if weights is not None:
        # A sample with true labels only has no weight (it is read from the predictions).
        if set(truth["sample"]) - set(predictions["sample"]):
            return
        predictions, truth = _with_weights(predictions, truth, weights, present)
        options["weight"] = "w"
    result = engine.evaluate(predictions, keys, **options)
    for key in keys:
        if key == "average_precision_samples":
            expected = skm.average_precision_score(y_true, y_score, average="samples",
                                                   sample_weight=weights)  # fmt: skip
        elif key == "roc_auc_samples":
            expected = _roc_auc_samples(y_true, y_score, weights)
        else:
            expected = sklearn_value(parse_key(key), y_true, y_score, sample_weight=weights)
        np.testing.assert_allclose(result[key][0], expected, rtol=1e-9, atol=1e-12, err_msg=key)


@pytest.mark.parametrize("engine", TOP_K_ENGINES[::2], ids=str)
@settings(max_examples=25, deadline=None)
@given(table=top_k_tables())
def test_cut_dcg_alone_equals_scikit_learn(engine, table):
    # Only cut keys: the discounts are not read past the largest cut (with_discounts' cut),
    # which may lie past the label space (ndcg@10 on a few labels).
    predictions, truth, n_labels, y_true, y_score, weights, present = table
    if not present or n_labels < 2:
        return
    keys = ["dcg@2", "ndcg@3", "ndcg@10"]
    result = engine.evaluate(predictions, keys, truth_table=truth, n_labels=n_labels)
    for key in keys:
        expected = sklearn_value(parse_key(key), y_true, y_score)
        np.testing.assert_allclose(result[key][0], expected, rtol=1e-9, atol=1e-12, err_msg=key)


def _roc_auc_samples(y_true, y_score, weights):
    """scikit-learn's per-sample ROC AUC mean, NaN where a sample of positive weight has one
    class (it raises for the whole matrix then)."""
    values = []
    for i in range(len(y_true)):
        if len(set(y_true[i])) < 2:
            values.append(np.nan)
        else:
            values.append(skm.roc_auc_score(y_true[i], y_score[i]))
    w = np.ones(len(values)) if weights is None else weights
    values = np.array(values)
    keep = w > 0
    return float(np.sum(values[keep] * w[keep]) / np.sum(w[keep]))


def test_a_sample_with_no_prediction_has_every_label_unscored():
    predictions = pl.DataFrame({"sample": [0, 0], "label": ["a", "b"], "score": [0.9, 0.1]})
    truth = pl.DataFrame({"sample": [0, 1, 1], "label": ["b", "a", "c"]})
    result = rm.evaluate(
        predictions, ["coverage_error", "lrap", "precision@1", "recall@5"], truth_table=truth,
        n_labels=4, per_sample=True,
    )  # fmt: skip
    # sample 1: both true labels tie with the two others at the bottom: rank 4, precision 2/4.
    assert result.row(1, named=True) == {
        "sample": 1,
        "coverage_error": 4.0,
        "lrap": 0.5,
        "precision@1": 0.0,
        "recall@5": 0.0,
    }
    # sample 0: b is second of the scored labels.
    assert result.row(0, named=True)["lrap"] == 0.5


def _tables():
    predictions = pl.DataFrame({"sample": [0, 0, 1], "label": ["a", "b", "a"],
                                "score": [0.9, 0.2, 0.5]})  # fmt: skip
    truth = pl.DataFrame({"sample": [0, 1], "label": ["b", "c"], "truth": [1, 1]})
    return predictions, truth


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p, t: (pl.concat([p, p.head(1)]), t),
         r"column 'label' of the predictions repeats label 'a' within one sample \(sample=0\)"),
        (lambda p, t: (pl.concat([p.head(1), p]), t),  # still in rank order
         r"column 'label' of the predictions repeats label 'a' within one sample \(sample=0\)"),
        (lambda p, t: (p, pl.concat([t, t.head(1)])),
         r"column 'label' of the truth table repeats label 'b' within one sample \(sample=0\)"),
        (lambda p, t: (p, t.with_columns(truth=-t["truth"])),
         r"column 'truth' \(truth\) of the truth table has a negative value \(at sample=0"),
        (lambda p, t: (p.drop("score"), t),
         r"column 'score' not found in the predictions"),
        (lambda p, t: (p, t.drop("sample")),
         r"column 'sample' not found in the truth table"),
        (lambda p, t: (p.with_columns(score=pl.lit(None, pl.Float64)), t),
         r"column 'score' \(score\) of the predictions has a null \(at sample=[01], "
         r"label='[ab]'\)"),
    ],
    ids=["repeated prediction", "repeated prediction in rank order", "repeated truth",
         "negative gain", "no score column", "no sample column", "null score"],
)  # fmt: skip
def test_bad_input_names_the_table_column_and_sample(change, message):
    predictions, truth = change(*_tables())
    with pytest.raises(ValueError, match=message):
        rm.evaluate(predictions, ["ndcg", "dcg@2"], truth_table=truth, n_labels=5)


@pytest.mark.parametrize("engine", [e for e in TOP_K_ENGINES if e.bucket_rows], ids=str)
def test_a_bad_row_in_any_bucket_of_a_top_k_table_is_refused(engine):
    """Each bucket of a top-k table checks its rows as it is evaluated, the first or a later one
    (a DuckDB bucket counts them in its sample counts' pass)."""
    samples = 12
    predictions = pl.DataFrame({
        "sample": np.repeat(np.arange(samples), 3), "label": np.tile([0, 1, 2], samples),
        "score": np.tile([0.9, 0.5, 0.1], samples),
    })  # fmt: skip
    truth = pl.DataFrame({"sample": np.arange(samples), "label": [1] * samples, "truth": 1})
    keys = ["ndcg@2", "dcg"]  # graded: a negative value is the problem found
    clean = engine.evaluate(predictions, keys, truth_table=truth, n_labels=5)
    assert clean.row(0) == pytest.approx((1 / np.log2(3),) * 2)  # each true label second
    for bad in range(samples):
        negative = pl.when(pl.col("sample") == bad).then(-1).otherwise(pl.col("truth"))
        found = truth.with_columns(negative.alias("truth"))
        message = rf"truth table has a negative value \(at sample={bad},"
        with pytest.raises(ValueError, match=message):
            engine.evaluate(predictions, keys, truth_table=found, n_labels=5)


def test_more_labels_than_n_labels_is_refused():
    predictions, truth = _tables()
    with pytest.raises(ValueError, match=r"sample=0 has 2 distinct labels .* than n_labels=1"):
        rm.evaluate(predictions, "mrr", truth_table=truth, n_labels=1)


def test_metrics_that_count_unscored_labels_need_n_labels():
    predictions, truth = _tables()
    with pytest.raises(ValueError, match=r"lrap counts the unscored labels .* give n_labels"):
        rm.evaluate(predictions, ["mrr", "lrap"], truth_table=truth)
    with pytest.raises(ValueError, match=r"n_labels must be a positive integer, not 0"):
        rm.evaluate(predictions, "mrr", truth_table=truth, n_labels=0)
    with pytest.raises(ValueError, match=r"give truth_table= too"):
        rm.evaluate(predictions.with_columns(truth=1), "mrr", n_labels=3)
    with pytest.raises(ValueError, match=r"hamming_loss is not defined on top-k tables"):
        rm.evaluate(predictions, "hamming_loss", truth_table=truth, n_labels=3)


def test_cut_offs_are_checked():
    predictions, truth = _tables()
    with pytest.raises(ValueError, match=r"'precision' needs a cut-off: ask for precision@K"):
        rm.evaluate(predictions, "precision", truth_table=truth)
    with pytest.raises(ValueError, match=r"k must be a positive integer, not 0"):
        rm.evaluate(predictions, "precision@0", truth_table=truth)


def test_propensities_are_needed_and_complete(engine):
    predictions, truth = _tables()
    with pytest.raises(ValueError, match=r"psprecision@1 needs label propensities"):
        engine.evaluate(predictions, "psprecision@1", truth_table=truth)
    partial = pl.DataFrame({"label": ["a", "b"], "propensity": [0.5, 0.5]})
    with pytest.raises(ValueError, match=r"no row for a true label; .* \(at sample=1, label='c'\)"):
        engine.evaluate(predictions, "psprecision@1", truth_table=truth, propensities=partial)
    zero = pl.DataFrame({"label": ["a", "b", "c"], "propensity": [0.5, 0.0, 0.5]})
    with pytest.raises(ValueError, match=r"must be in \(0, 1\], but a true label has another"):
        engine.evaluate(predictions, "psprecision@1", truth_table=truth, propensities=zero)


def test_sql_alone_joins_the_two_tables(tmp_path):
    """`rankmetrics sql --input PRED --truth-table TRUTH --n-labels N`: the statements alone,
    run on DuckDB over two tables, give the library's numbers."""
    import subprocess
    import sys

    import duckdb

    predictions, truth = _tables()
    truth = pl.concat([truth, pl.DataFrame({"sample": [2], "label": ["d"], "truth": [1]})])
    done = subprocess.run(
        [sys.executable, "-m", "polars_rankmetrics", "sql", "--input", "run", "--truth-table",
         "qrels", "--gain", "--n-labels", "6", "--k", "2"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    con = duckdb.connect()
    con.register("run", predictions.to_arrow())
    con.register("qrels", truth.to_arrow())
    con.execute(done.stdout)
    got = con.sql(
        "SELECT r.sample, r.lrap, g.ndcg, q.map, q.precision FROM rankmetrics_ranking_per_sample r "
        "JOIN rankmetrics_gain_per_sample g ON g.sample = r.sample AND g.k = 2 "
        "JOIN rankmetrics_retrieval_per_sample q ON q.sample = r.sample AND q.k = 2 "
        "ORDER BY r.sample"
    ).pl()
    keys = ["lrap", "ndcg@2", "map@2", "precision@2"]
    expected = rm.evaluate(predictions, keys, truth_table=truth, n_labels=6, per_sample=True)
    assert got["sample"].to_list() == expected["sample"].to_list() == [0, 1, 2]
    for ours, key in zip(["lrap", "ndcg", "map", "precision"], keys, strict=True):
        np.testing.assert_allclose(got[ours], expected[key], rtol=1e-12)


@pytest.mark.parametrize("every_row", [False, True], ids=["positive rows", "every row"])
@pytest.mark.parametrize(
    ("scores", "true", "y_true"),
    [
        ([0.9, 0.1], ["a", "c"], [1, 0, 1, 0, 0]),
        # The only true label unscored: its block starts after the two (tied) scored labels,
        # past every rank a positive row has (found by the hypothesis test on buckets).
        ([0.0, 0.0], ["c"], [0, 0, 1, 0, 0]),
    ],
)
def test_an_unscored_true_label_ties_with_the_unscored_block_on_both_plans(
    every_row, scores, true, y_true
):
    """The unscored block of a sample spans positions s + 1 .. n_labels (s scored labels): dcg
    averages the discounts of those positions, as scikit-learn's ndcg does over tied scores."""
    predictions = pl.DataFrame({"sample": [1, 1], "label": ["a", "b"], "score": scores})
    truth = pl.DataFrame({"sample": [1] * len(true), "label": true})
    keys = ["ndcg", "dcg", "lrap", "ranking_loss", "coverage_error"]
    keys += ["roc_auc_samples"] * every_row  # ranks every row (the rank table)
    result = rm.evaluate(predictions, keys, truth_table=truth, n_labels=5)
    y_true, y_score = np.array([y_true]), np.array([[*scores, -1.0, -1.0, -1.0]])
    for key in keys:
        expected = (
            sklearn_value(parse_key(key), y_true, y_score)
            if key != "roc_auc_samples"
            else (skm.roc_auc_score(y_true[0], y_score[0]))
        )
        np.testing.assert_allclose(result[key][0], expected, rtol=1e-12, err_msg=key)


def test_predictions_in_rank_order_are_ranked_by_scans_before_the_join():
    """Top-k predictions come sorted by sample and descending score: the Polars engine ranks
    them by scans and shows that no sample repeats a label by runs of rows (topk.Piece.join),
    with the window ranks' values; any other order, or a repeated label, takes the plan that
    does not rely on order."""
    predictions = pl.DataFrame({
        "model": ["a"] * 5 + ["b"] * 3,
        "sample": [0, 0, 0, 1, 1, 0, 0, 0],
        "label": ["x", "y", "z", "x", "y", "x", "y", "z"],
        "score": [0.9, 0.5, 0.5, 0.7, 0.7, 0.3, 0.2, 0.2],
    })  # fmt: skip
    truth = pl.DataFrame({"model": ["a", "a", "b"], "sample": [0, 2, 0], "label": ["z", "x", "y"]})
    cols = replace(Columns(by=("model",)).opened(), top_k=True)

    def joined(pred: pl.DataFrame, true: pl.DataFrame = truth) -> topk.Joined:
        return topk.Piece(pred.lazy(), true.lazy(), cols).join(rank_order=True)

    scanned = joined(predictions)
    assert scanned.ranked and scanned.unique_labels
    keys = ["model", "sample", "label"]
    scored = scanned.table.filter(pl.col("score").is_not_null()).sort(keys)
    windows = window_ranks(
        scored.drop(RANK, BLOCK_START), sample=["model", "sample"], blocks=True
    ).collect()
    assert scored.select(RANK, BLOCK_START).equals(windows.sort(keys).select(RANK, BLOCK_START))
    assert scanned.table.filter(pl.col("score").is_null())[RANK].is_null().all()
    # The same rows and types as the join by keys (the gains scattered into the predictions),
    # whatever the gains' type.
    for gains in (
        truth,
        truth.with_columns(truth=True),
        truth.with_columns(truth=pl.Series([None, 2.0, 3.0])),
    ):
        by_keys = topk.Piece(predictions.lazy(), gains.lazy(), cols).lazy().collect()
        scattered = joined(predictions, gains).table.drop(RANK, BLOCK_START)
        assert_frame_equal(scattered.sort(keys), by_keys.sort(keys))
    assert not joined(predictions.reverse()).ranked
    assert not joined(predictions.with_columns(score=-pl.col("score"))).ranked
    assert not topk.Piece(predictions.lazy(), truth.lazy(), cols).join().ranked
    unranked = topk.Piece(predictions.lazy(), truth.lazy(), cols).join(
        rank_order=True, ranked=False
    )
    assert unranked.unique_labels and not unranked.ranked and RANK not in unranked.table.columns
    repeated = joined(pl.concat([predictions.head(1), predictions]))
    assert repeated.ranked and not repeated.unique_labels
    assert not joined(predictions, pl.concat([truth, truth.head(1)])).unique_labels
    options = {"truth_table": truth, "n_labels": 4, "by": "model", "per_sample": True}
    keys_asked = ["lrap", "ndcg@2", "map", "mrr", "precision@2"]
    in_order = rm.evaluate(predictions, keys_asked, **options)
    shuffled = rm.evaluate(predictions.sample(fraction=1.0, shuffle=True, seed=1), keys_asked,
                           **options)  # fmt: skip
    assert_frame_equal(in_order, shuffled)


@pytest.mark.parametrize(
    ("by", "samples", "labels", "packed"),
    [
        (None, [-5, -5, 7, 7], pl.Series([3, -2, 3, 9]), True),
        (None, [0, 0, 1, 1], pl.Series([2**64 - 2, 2**64 - 1, 2**64 - 9, 2**64 - 1]), True),
        ("model", [1, 1, 2, 2], pl.Series([-(2**31), 2**31 - 1, 0, 1], dtype=pl.Int32), True),
        ("name", [1, 1, 2, 2], pl.Series([0, 1, 0, 1]), False),
        (None, [0, 0, 1, 1], pl.Series([-(2**63), 0, 2**63 - 1, 0]), False),
        (None, [0, 0, 1, 1], pl.Series(["a", "b", "a", "c"]), False),
    ],
    ids=["negative", "uint64-top", "int32-extremes-by", "string-by", "int64-extremes", "strings"],
)  # fmt: skip
def test_integer_keys_are_joined_as_one_packed_key_with_the_same_rows(by, samples, labels, packed):
    """Integer ids whose ranges multiply within 64 bits are matched as one packed key
    (topk._packed_key); the scattered table has the rows of the join by keys either way."""
    predictions = pl.DataFrame({
        "model": [3, 3, 4, 4], "name": ["a", "a", "b", "b"], "sample": samples,
        "label": labels, "score": [0.9, 0.5, 0.8, 0.1],
    })  # fmt: skip
    ids = [c for c in ("model", "name") if c == by]
    predictions = predictions.select(*ids, "sample", "label", "score")
    truth = predictions.drop("score").slice(1, 2)
    truth = pl.concat([truth, predictions.drop("score").head(1)])
    truth = truth.with_columns(pl.col("sample").reverse())  # one true label not predicted
    cols = replace(Columns(by=(by,) if by else ()).opened(), top_k=True)
    keys = [*cols.by, "sample", "label"]
    assert (topk._packed_key([predictions, truth], keys) is not None) == packed
    piece = topk.Piece(predictions.lazy(), truth.lazy(), cols)
    scattered = piece.join(rank_order=True).table.drop(RANK, BLOCK_START, strict=False)
    assert_frame_equal(scattered.sort(keys), piece.lazy().collect().sort(keys))
