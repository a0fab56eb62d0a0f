"""from_sparse: every shape of extreme classification's predictions to the top-k table, against
a slow reference that sorts each sample's stored entries (score descending, label ascending)
and keeps the first k."""

import napkinxc.metrics as nx
import numpy as np
import polars as pl
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_rankmetrics as rm


def _reference(scores: np.ndarray, stored: np.ndarray, k: int | None) -> list[tuple]:
    """(sample, label, score) of each row's k best stored entries, in rank order."""
    rows = []
    for i in range(scores.shape[0]):
        entries = sorted((-scores[i, j], j) for j in range(scores.shape[1]) if stored[i, j])
        rows += [(i, int(j), float(-s)) for s, j in entries[:k]]
    return rows


def _csr(scores: np.ndarray, stored: np.ndarray) -> sp.csr_matrix:
    """The stored cells as a CSR matrix, explicit zeros kept."""
    rows, cols = np.nonzero(stored)
    indptr = np.concatenate([[0], np.cumsum(stored.sum(axis=1))])
    return sp.csr_matrix((scores[rows, cols], cols, indptr), shape=scores.shape)


@st.composite
def matrices(draw, ties: bool):
    n = draw(st.integers(1, 6))
    m = draw(st.integers(1, 7))
    if ties:  # few distinct scores, zeros among them
        values = st.sampled_from([0.0, 0.5, 1.0, -2.0])
    else:
        values = st.floats(-10, 10, allow_nan=False, width=32)
    scores = np.array(draw(st.lists(values, min_size=n * m, max_size=n * m))).reshape(n, m)
    stored = np.array(draw(st.lists(st.booleans(), min_size=n * m, max_size=n * m))).reshape(n, m)
    k = draw(st.none() | st.integers(1, 8))
    return scores, stored, k


def _forms(scores: np.ndarray, stored: np.ndarray) -> dict[str, object]:
    """The same stored entries in every shape from_sparse takes."""
    csr = _csr(scores, stored)
    pairs = [[(j, scores[i, j]) for j in np.flatnonzero(stored[i])] for i in range(len(stored))]
    forms: dict[str, object] = {
        "csr_matrix": csr, "csr_array": sp.csr_array(csr), "csc": csr.tocsc(),
        "coo": csr.tocoo(), "lil": csr.tolil(), "bsr": csr.tobsr(blocksize=(1, 1)),
        "napkinxc pairs": pairs,
    }  # fmt: skip
    if stored.all():
        forms["dense"] = scores
        order = np.argsort(-scores, axis=1, kind="stable")
        forms["pyxclib dict"] = {
            "indices": order[:, ::-1].copy(),  # any order: the scores decide
            "scores": np.take_along_axis(scores, order[:, ::-1], axis=1),
        }
    return forms


@settings(max_examples=60, deadline=None)
@given(matrices(ties=True))
def test_every_form_keeps_the_k_best_ties_by_label(case):
    scores, stored, k = case
    truth = np.zeros(scores.shape)
    expected = _reference(scores, stored, k)
    for name, form in _forms(scores, stored).items():
        predictions, _ = rm.from_sparse(form, truth, k=k)
        assert predictions.columns == ["sample", "label", "score"], name
        assert predictions.rows() == expected, name


@settings(max_examples=30, deadline=None)
@given(matrices(ties=False))
def test_a_dense_array_makes_every_cell_a_candidate(case):
    scores, _, k = case
    predictions, _ = rm.from_sparse(scores, np.zeros(scores.shape), k=k)
    expected = _reference(scores, np.ones(scores.shape, dtype=bool), k)
    assert predictions.rows() == expected


def test_napkinxc_lists_of_labels_are_rankings():
    predictions, truth = rm.from_sparse([[3, 1, 2], [], [0]], [[1], [], [0, 2]], k=2)
    assert predictions.rows() == [(0, 3, 1.0), (0, 1, 0.5), (2, 0, 1.0)]
    assert truth.rows() == [(0, 1), (2, 0), (2, 2)]


def test_an_explicit_zero_is_a_prediction_and_an_unstored_cell_is_not():
    scores = sp.csr_matrix((np.array([0.0, -1.0]), np.array([2, 0]), np.array([0, 2])), (1, 4))
    predictions, _ = rm.from_sparse(scores, np.zeros((1, 4)))
    assert predictions.rows() == [(0, 2, 0.0), (0, 0, -1.0)]


def test_rows_of_many_lengths_come_back_in_sample_order():
    rng = np.random.default_rng(0)
    stored = rng.random((300, 40)) < rng.random((300, 1))  # every row its own density
    scores = rng.random((300, 40))
    predictions, _ = rm.from_sparse(_csr(scores, stored), np.zeros((300, 40)), k=5)
    assert predictions.rows() == _reference(scores, stored, 5)


def test_truth_table_rows_are_the_true_pairs_with_a_gain_only_when_graded():
    y_true = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 1]]))
    _, truth = rm.from_sparse(np.zeros((2, 3)), y_true)
    assert truth.columns == ["sample", "label"]
    assert truth.rows() == [(0, 1), (1, 0), (1, 2)]
    _, graded = rm.from_sparse(np.zeros((2, 3)), np.array([[0, 2, 0], [1, 0, 0]]))
    assert graded.rows() == [(0, 1, 2.0), (1, 0, 1.0)]
    stored_zero = sp.csr_matrix((np.array([0.0, 1.0]), np.array([0, 2]), np.array([0, 2])), (1, 3))
    assert rm.from_sparse(np.zeros((1, 3)), stored_zero)[1].rows() == [(0, 2)]


def test_ids_name_the_rows_and_columns():
    predictions, truth = rm.from_sparse(
        [[(2, 0.3), (0, 0.9)]], [[2]], sample_ids=["q1"], label_ids=["a", "b", "c"]
    )
    assert predictions.rows() == [("q1", "a", 0.9), ("q1", "c", 0.3)]
    assert truth.rows() == [("q1", "c")]


def test_evaluate_reads_the_tables_as_napkinxc_reads_the_matrices():
    rng = np.random.default_rng(5)
    stored = rng.random((30, 12)) < 0.5
    y_score = _csr(rng.random((30, 12)), stored)
    y_true = sp.csr_matrix((rng.random((30, 12)) < 0.3).astype(float))
    predictions, truth = rm.from_sparse(y_score, y_true, k=3)
    result = rm.evaluate(predictions, ["precision@3", "recall@3"], truth_table=truth)
    counted = np.flatnonzero(stored.any(axis=1) | (y_true.getnnz(axis=1) > 0))  # in a table
    expected = (
        nx.precision_at_k(y_true[counted], y_score[counted], k=3)[-1],
        nx.recall_at_k(y_true[counted], y_score[counted], k=3)[-1],
    )
    assert result.row(0) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("y_score", "y_true", "kwargs", "message"),
    [
        (np.array([[0.1, np.nan]]), np.zeros((1, 2)), {}, "y_score holds NaN for sample 0"),
        (
            sp.csr_matrix((np.ones(3), np.array([1, 0, 1]), np.array([0, 0, 3])), (2, 2)),
            np.zeros((2, 2)),
            {},
            "y_score holds label 1 twice for sample 1",
        ),
        ([[(0, 0.1), (0, 0.2)]], [[0]], {}, "y_score holds label 0 twice for sample 0"),
        ([[1], [-1]], [[1], [0]], {}, "y_score holds label -1 for sample 1"),
        ([[1], [0.5]], [[1], [0]], {}, "y_score holds label 0.5 for sample 1"),
        ([[1, (0, 0.2)]], [[1]], {}, r"y_score holds \(0, 0.2\) for sample 0"),
        ([[3]], [[0]], {"label_ids": ["a", "b"]}, "y_score holds label 3 for sample 0"),
        (
            {"indices": np.array([[0, 1]]), "scores": np.array([[0.1]])},
            [[0]],
            {},
            "y_score\\['indices'\\] and y_score\\['scores'\\]",
        ),
        ({"labels": np.array([[0]])}, [[0]], {}, "'indices' and 'scores'"),
        (np.zeros((2, 3)), np.zeros((3, 3)), {}, "y_score has 2 samples .* y_true has 3"),
        (np.zeros((2, 3)), np.zeros((2, 4)), {}, "y_score has 3 labels .* y_true has 4"),
        (np.zeros((1, 2)), np.array([[0, -1]]), {}, "y_true holds -1.0 for sample 0, label 1"),
        (np.zeros((1, 2)), {"indices": 0}, {}, "y_true must be"),
        (np.array(["a"]), np.zeros(1), {}, "y_score holds <U1 values"),
        (np.zeros(3), np.zeros(3), {}, "y_score must be a 2-d matrix"),
        ("scores", np.zeros((1, 1)), {}, "y_score must be .* not str"),
        (np.zeros((1, 2)), np.zeros((1, 2)), {"k": 0}, "k must be a positive integer"),
        (np.zeros((1, 2)), np.zeros((1, 2)), {"k": True}, "k must be a positive integer"),
        (np.zeros((2, 2)), np.zeros((2, 2)), {"sample_ids": ["a"]}, "sample_ids holds 1 ids"),
        (np.zeros((2, 2)), np.zeros((2, 2)), {"sample_ids": ["a", "a"]}, "holds 'a' twice"),
    ],
)
def test_bad_input_names_the_argument_and_a_sample(y_score, y_true, kwargs, message):
    with pytest.raises(ValueError, match=message):
        rm.from_sparse(y_score, y_true, **kwargs)


def test_the_input_matrix_is_left_as_it_was():
    csr = sp.csr_matrix((np.array([0.1, 0.9]), np.array([3, 1]), np.array([0, 2])), (1, 4))
    before = (csr.indices.copy(), csr.data.copy())
    predictions, _ = rm.from_sparse(csr, np.zeros((1, 4)), k=1)
    assert predictions.rows() == [(0, 1, 0.9)]
    assert (csr.indices == before[0]).all() and (csr.data == before[1]).all()
    assert pl.DataFrame(predictions).height == 1


@pytest.mark.parametrize("seed", range(3))
def test_label_coverage_of_the_tables_equals_napkinxc(seed):
    rng = np.random.default_rng(seed)
    stored = rng.random((40, 15)) < rng.random((40, 1))  # some rows short or empty
    y_score = _csr(rng.permutation(600).reshape(40, 15) / 600, stored)  # tie-free
    y_true = sp.csr_matrix((rng.random((40, 15)) < 0.2).astype(float))
    predictions, truth = rm.from_sparse(y_score, y_true)
    keys = [f"label_coverage@{k}" for k in range(1, 6)]
    result = rm.evaluate(predictions, keys, truth_table=truth)
    expected = nx.coverage_at_k(y_true, y_score, k=5)
    assert list(result.row(0)) == pytest.approx(list(expected), rel=1e-12)
