import numpy as np
import polars as pl
import pytest
import scipy.sparse as sp
from polars.testing import assert_frame_equal
from reference import dense

import polars_rankmetrics as rm


def test_from_dense_round_trips_through_the_oracle_pivot():
    rng = np.random.default_rng(0)
    y_true = (rng.random((5, 4)) < 0.3).astype(int)
    y_score = rng.random((5, 4))
    long = rm.from_dense(y_true, y_score)
    assert long.height == 20
    _, t, s = dense(long)
    np.testing.assert_array_equal(t, y_true)
    np.testing.assert_array_equal(s, y_score)


def test_from_dense_accepts_scipy_sparse_and_ids():
    long = rm.from_dense(
        sp.csr_matrix([[0, 1], [1, 0]]),
        [[0.2, 0.8], [0.6, 0.4]],
        sample_ids=["x", "y"],
        label_ids=["cat", "dog"],
    )
    assert long.sort("sample", "label").rows() == [
        ("x", "cat", 0.2, 0),
        ("x", "dog", 0.8, 1),
        ("y", "cat", 0.6, 1),
        ("y", "dog", 0.4, 0),
    ]


def test_from_dense_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="different|shape"):
        rm.from_dense([[1, 0]], [[0.1, 0.2, 0.3]])
    with pytest.raises(ValueError, match="2 label ids"):
        rm.from_dense([[1, 0]], [[0.1, 0.2]], label_ids=["a"])


LISTS = pl.DataFrame(
    {
        "sample": ["q1", "q2"],
        "labels": [["a", "b", "c"], ["a", "b", "c"]],
        "scores": [[0.9, 0.5, 0.1], [0.2, 0.3, 0.4]],
        "truths": [[1, 0, 0], [0, 1, 1]],
        "positives": [["a"], ["b", "c"]],
    }
)
EXPECTED = pl.DataFrame(
    {
        "sample": ["q1"] * 3 + ["q2"] * 3,
        "label": ["a", "b", "c"] * 2,
        "score": [0.9, 0.5, 0.1, 0.2, 0.3, 0.4],
        "truth": [1, 0, 0, 0, 1, 1],
    }
)


def test_from_lists_with_truth_lists():
    long = rm.from_lists(LISTS, truths="truths").sort("sample", "label")
    assert_frame_equal(long, EXPECTED)


def test_from_lists_with_positive_labels_matches_truth_lists():
    by_positives = rm.from_lists(LISTS.lazy(), positives="positives")
    assert isinstance(by_positives, pl.LazyFrame)
    long = by_positives.collect().sort("sample", "label")
    assert_frame_equal(long, EXPECTED, check_dtypes=False)
    assert rm.evaluate(long)["lrap"][0] == rm.evaluate(EXPECTED)["lrap"][0]


def test_from_lists_rejects_unlisted_positive_and_ragged_lists():
    bad = LISTS.with_columns(positives=pl.Series([["z"], ["b"]]))
    with pytest.raises(ValueError, match="label 'z' for sample 'q1'"):
        rm.from_lists(bad, positives="positives")
    ragged = LISTS.with_columns(scores=pl.Series([[0.9, 0.5], [0.2, 0.3, 0.4]]))
    with pytest.raises(ValueError, match="different lengths for sample 'q1'"):
        rm.from_lists(ragged, truths="truths")
    with pytest.raises(ValueError, match="exactly one of"):
        rm.from_lists(LISTS)
