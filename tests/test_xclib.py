"""polars_rankmetrics.xclib against napkinXC's metrics (pyxclib's numbers: napkinXC's tests
compare the two; pyxclib itself is not on PyPI, benchmarks/xclib.py compares with it) on random
sparse cases: tie-free scores, empty truth rows, samples with fewer than k stored scores or none,
labels never seen in training; and the tie rule against every order of the tied blocks."""

import itertools
import math

import napkinxc.metrics as nx
import numpy as np
import polars as pl
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_rankmetrics as rm
from polars_rankmetrics import xclib


@st.composite
def cases(draw):
    """A test set: scores stored for some labels of each sample (tie-free), the truth (some rows
    empty), and a training set that never sees some labels (and has rows without a label)."""
    seed = draw(st.integers(0, 2**32 - 1))
    n = draw(st.integers(1, 12))
    m = draw(st.integers(1, 15))
    rng = np.random.default_rng(seed)
    stored = rng.random((n, m)) < rng.random((n, 1))  # each row its own density, some empty
    scores = rng.permutation(n * m).reshape(n, m) / (n * m) - 0.3  # distinct, some negative
    truth = rng.random((n, m)) < rng.random((n, 1)) * 0.5
    train = rng.random((max(n, 2) + 3, m)) < 0.2
    X = sp.csr_matrix(
        (scores[stored], np.nonzero(stored)[1], np.r_[0, np.cumsum(stored.sum(1))]), (n, m)
    )  # explicit stored entries, a stored score may be 0
    k = draw(st.integers(1, 7))
    return X, sp.csr_matrix(truth.astype(np.float64)), sp.csr_matrix(train.astype(float)), k


@settings(max_examples=40, deadline=None)
@given(cases())
def test_precision_recall_ndcg_equal_napkinxc(case):
    X, y, _, k = case
    np.testing.assert_allclose(xclib.precision(X, y, k=k), nx.precision_at_k(y, X, k=k), atol=1e-12)
    np.testing.assert_allclose(xclib.recall(X, y, k=k), nx.recall_at_k(y, X, k=k), atol=1e-12)
    np.testing.assert_allclose(xclib.ndcg(X, y, k=k), nx.ndcg_at_k(y, X, k=k), atol=1e-12)


def _close(got, expected):
    """Equal to 1e-12, NaN where napkinXC's is (0 / 0: no sample has a true label)."""
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(cases())
def test_propensity_scored_metrics_equal_napkinxc(case):
    X, y, train, k = case
    inv_ps = xclib.compute_inv_propesity(train)  # some labels never seen in training
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = {
            "psprecision": nx.psprecision_at_k(y, X, inv_ps=inv_ps, k=k),
            "psndcg": nx.psndcg_at_k(y, X, inv_ps=inv_ps, k=k),
            "psrecall": nx.psrecall_at_k(y, X, inv_ps=inv_ps, k=k),
        }
    for name, values in expected.items():
        _close(getattr(xclib, name)(X, y, inv_ps, k=k), values)


@settings(max_examples=25, deadline=None)
@given(cases())
def test_metrics_eval_equals_napkinxc(case):
    X, y, train, k = case
    inv_ps = xclib.compute_inv_propesity(train)
    p, n, psp, psn = xclib.Metrics(y, inv_ps).eval(X, K=k)
    _close(p, nx.precision_at_k(y, X, k=k))
    _close(n, nx.ndcg_at_k(y, X, k=k))
    with np.errstate(invalid="ignore", divide="ignore"):
        _close(psp, nx.psprecision_at_k(y, X, inv_ps=inv_ps, k=k))
        _close(psn, nx.psndcg_at_k(y, X, inv_ps=inv_ps, k=k))


def test_remove_invalid_leaves_out_samples_without_a_true_label():
    y = sp.csr_matrix(np.array([[0, 1, 0], [0, 0, 0], [1, 0, 0]], dtype=float))
    X = sp.csr_matrix(np.array([[0.1, 0.9, 0], [0.5, 0, 0], [0, 0.3, 0.2]]))
    kept = [0, 2]
    p, n = xclib.Metrics(y, remove_invalid=True).eval(X, K=2)
    np.testing.assert_allclose(p, nx.precision_at_k(y[kept], X[kept], k=2), atol=1e-12)
    np.testing.assert_allclose(n, nx.ndcg_at_k(y[kept], X[kept], k=2), atol=1e-12)


def test_every_input_form_of_x_gives_the_same_values():
    rng = np.random.default_rng(3)
    scores = rng.random((6, 5))
    y = sp.csr_matrix((rng.random((6, 5)) < 0.4).astype(float))
    order = np.argsort(-scores, axis=1)
    forms = {
        "csr": sp.csr_matrix(scores), "dense": scores,
        "indices in rank order": order,
        "dict": {"indices": order[:, ::-1], "scores": -np.sort(-scores, axis=1)[:, ::-1]},
        "truth dense": None,
    }  # fmt: skip
    expected = nx.precision_at_k(y, sp.csr_matrix(scores), k=3)
    for name, X in forms.items():
        truth = y.toarray() if X is None else y
        got = xclib.precision(sp.csr_matrix(scores) if X is None else X, truth, k=3)
        np.testing.assert_allclose(got, expected, atol=1e-12, err_msg=name)


def _tied_cases(draw_seed: int):
    rng = np.random.default_rng(draw_seed)
    n, m = 4, 6
    stored = rng.random((n, m)) < 0.8
    scores = rng.integers(0, 3, (n, m)).astype(float)  # ties everywhere
    truth = rng.random((n, m)) < 0.4
    return stored, scores, truth


def _orders(stored_row: np.ndarray, score_row: np.ndarray):
    """Every ranking of a row's stored labels, tied blocks in every order."""
    labels = np.flatnonzero(stored_row)
    blocks = [
        [int(j) for j in labels if score_row[j] == s]
        for s in sorted({score_row[j] for j in labels}, reverse=True)
    ]
    for choice in itertools.product(*(itertools.permutations(b) for b in blocks)):
        yield [j for block in choice for j in block]


@pytest.mark.parametrize("seed", range(4))
def test_ties_take_the_expected_value_over_every_order(seed):
    """Per sample, napkinXC's value averaged over every order of the tied blocks (a slow,
    obviously correct reference of the rule), then averaged over the samples."""
    stored, scores, truth = _tied_cases(seed)
    X = sp.csr_matrix(
        (scores[stored], np.nonzero(stored)[1], np.r_[0, np.cumsum(stored.sum(1))]), scores.shape
    )
    y = sp.csr_matrix(truth.astype(float))
    k = 3
    expected = {"precision": [], "recall": [], "ndcg": []}
    functions = {"precision": nx.precision_at_k, "recall": nx.recall_at_k, "ndcg": nx.ndcg_at_k}
    for i in range(scores.shape[0]):
        true = [list(np.flatnonzero(truth[i]))]
        for name, function in functions.items():
            values = [function(true, [order], k=k) for order in _orders(stored[i], scores[i])]
            expected[name].append(np.mean(values, axis=0))
    for name in functions:
        got = getattr(xclib, name)(X, y, k=k)
        np.testing.assert_allclose(got, np.mean(expected[name], axis=0), atol=1e-12)
    # PSP: the expected sum of the samples' propensity-scored precision over the sum of their
    # best (which no order changes).
    inv_ps = 1 + np.arange(scores.shape[1]) / 3
    numerators, best = [], []
    for i in range(scores.shape[0]):
        true = [list(np.flatnonzero(truth[i]))]
        ideal = [sorted(true[0], key=lambda j: -inv_ps[j])]
        metric = nx.PSPrecisionAtK(inv_ps, k=k, normalize=False)
        orders = list(_orders(stored[i], scores[i]))
        numerators.append(np.mean([metric.calculate(true, [o]) for o in orders], axis=0))
        best.append(metric.calculate(true, ideal))
    expected_psp = np.sum(numerators, axis=0) / np.sum(best, axis=0)
    np.testing.assert_allclose(xclib.psprecision(X, y, inv_ps, k=k), expected_psp, atol=1e-12)


@st.composite
def tied_cases(draw):
    """Scores tied everywhere (a few distinct values, float32 or float64, the entries of a row
    in any order), rows with fewer than k entries or none, rows without a true label, as a CSR
    matrix or a dense array."""
    seed = draw(st.integers(0, 2**32 - 1))
    n, m = draw(st.integers(1, 10)), draw(st.integers(1, 12))
    rng = np.random.default_rng(seed)
    stored = rng.random((n, m)) < rng.random((n, 1))
    scores = rng.integers(-1, draw(st.integers(1, 4)), (n, m)).astype(np.float64)
    truth = rng.random((n, m)) < rng.random((n, 1)) * 0.6
    columns = [rng.permutation(np.flatnonzero(row)) for row in stored]  # unsorted indices
    X = sp.csr_matrix(
        (np.concatenate([scores[i, c] for i, c in enumerate(columns)]),
         np.concatenate(columns).astype(np.int64), np.r_[0, np.cumsum(stored.sum(1))]),
        (n, m),
    )  # fmt: skip
    if draw(st.booleans()):
        X = X.astype(np.float32)
    if draw(st.booleans()):
        X = X.toarray()  # every cell a candidate
    inv_ps = 1 + rng.permutation(m) / 4
    return X, sp.csr_matrix(truth.astype(float)), inv_ps, draw(st.integers(1, 6))


@settings(max_examples=30, deadline=None)
@given(tied_cases(), st.booleans())
def test_the_compiled_pass_equals_the_evaluation_of_the_tables(case, remove_invalid):
    """Without run options the values come from one compiled pass over the rows
    (polars_rankmetrics.engines.sparse_pass); with them, from evaluate() on the top-k tables,
    whose tie rule the other tests check: both give one value."""
    X, y, inv_ps, k = case
    if remove_invalid and y.nnz == 0:
        return  # no sample left to average over
    compiled = xclib.Metrics(y, inv_ps, remove_invalid=remove_invalid).eval(X, K=k)
    evaluated = xclib.Metrics(y, inv_ps, remove_invalid=remove_invalid, engine="polars").eval(
        X, K=k
    )
    compiled += [xclib.recall(X, y, k=k), xclib.psrecall(X, y, inv_ps, k=k)]
    evaluated += [
        xclib.recall(X, y, k=k, engine="polars"),
        xclib.psrecall(X, y, inv_ps, k=k, engine="polars"),
    ]
    for got, expected in zip(compiled, evaluated, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_compute_inv_propesity_equals_napkinxc_with_rows_without_a_label():
    rng = np.random.default_rng(0)
    train = rng.random((30, 12)) < 0.15  # some rows empty, some labels never seen
    train[:, 5] = False
    matrix = sp.csr_matrix(train.astype(float))
    for a, b in ((0.55, 1.5), (0.5, 0.4), (0.6, 2.6)):
        got = xclib.compute_inv_propesity(matrix, a, b)
        expected = nx.Jain_et_al_inverse_propensity(matrix, A=a, B=b)
        np.testing.assert_allclose(got, expected, rtol=1e-12)
        assert got[5] == pytest.approx(1 + (math.log(30) - 1) * (b + 1) ** a * b**-a, rel=1e-12)


def test_pyxclib_arguments_are_accepted_and_change_nothing():
    X = sp.csr_matrix(np.array([[0.9, 0.0, 0.4], [0.0, 0.7, 0.2]]))
    y = sp.csr_matrix(np.array([[0, 0, 1], [0, 1, 0]], dtype=float))
    plain = xclib.precision(X, y, k=2)
    np.testing.assert_array_equal(xclib.precision(X, y, 2, True, True), plain)
    np.testing.assert_array_equal(xclib.precision(X, y, k=2, engine="duckdb"), plain)
    np.testing.assert_array_equal(xclib.Metrics(y).eval(X, 2, sorted=True)[0], plain)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda X, y: xclib.precision(X, y * 2), "true_labels holds 2.0 for sample 0"),
        (lambda X, y: xclib.precision(X[:1], y), "X has 1 samples .* true_labels has 2"),
        (lambda X, y: xclib.precision(X[:, :2], y), "X has 2 labels .* true_labels has 3"),
        (lambda X, y: xclib.precision(X, y, k=0), "k must be a positive integer"),
        (lambda X, y: xclib.precision([[0]], y), "X must be a scipy sparse matrix"),
        (lambda X, y: xclib.Metrics(y).eval(X, K=-1), "K must be a positive integer"),
        (lambda X, y: xclib.Metrics(y, inv_psp=[1.0, 2.0]), "inv_psp holds 2 values for the 3"),
        (lambda X, y: xclib.Metrics(y, inv_psp=[1.0, 0.5, 1.0]), "inv_psp holds 0.5 for label 1"),
        (
            lambda X, y: xclib.precision(
                {"indices": np.array([[3], [0]]), "scores": np.ones((2, 1))}, y
            ),
            "X holds label 3 for sample 0, past the 3 labels",
        ),
    ],
)
def test_bad_input_is_refused_with_a_message(call, message):
    X = sp.csr_matrix(np.array([[0.9, 0.0, 0.4], [0.0, 0.7, 0.2]]))
    y = sp.csr_matrix(np.array([[0, 0, 1], [0, 1, 0]], dtype=float))
    with pytest.raises(ValueError, match=message):
        call(X, y)


def test_the_tables_hold_each_samples_best_k_and_a_row_for_every_sample():
    """pyxclib evaluates every row: a sample without scores and without a true label still
    counts (0), through the padding labels."""
    y = sp.csr_matrix(np.array([[0, 1, 0], [0, 0, 0]], dtype=float))
    X = sp.csr_matrix((2, 3))
    assert xclib.precision(X, y, k=1)[0] == 0.0
    X = sp.csr_matrix(np.array([[0.0, 0.9, 0.0], [0.0, 0.0, 0.0]]))
    assert xclib.precision(X, y, k=1)[0] == 0.5  # half the samples hit
    result = rm.evaluate(
        pl.DataFrame({"sample": [0], "label": [1], "score": [0.9]}),
        ["precision@1"], truth_table=pl.DataFrame({"sample": [0], "label": [1]}),
    )  # fmt: skip
    assert result.item() == 1.0  # the second sample is in neither table, so not counted
