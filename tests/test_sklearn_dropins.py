"""polars_rankmetrics.sklearn: scikit-learn's calls, scikit-learn's numbers."""

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import finite_scores
from sklearn import metrics as skm
from strategies import matrices

from polars_rankmetrics import sklearn as ours

BINARY = ["coverage_error", "label_ranking_average_precision_score", "label_ranking_loss"]


@settings(max_examples=40, deadline=None)
@given(data=matrices(), name=st.sampled_from(BINARY), weighted=st.booleans(),
       sparse=st.booleans())  # fmt: skip
def test_ranking_drop_ins_match_sklearn(data, name, weighted, sparse):
    y_true, y_score = data
    y_true = (y_true > 0).astype(int)
    weights = np.linspace(0.5, 2.0, len(y_true)) if weighted else None
    expected = getattr(skm, name)(y_true, finite_scores(y_score), sample_weight=weights)
    truth = scipy.sparse.csr_matrix(y_true) if sparse else y_true
    value = getattr(ours, name)(truth, y_score, sample_weight=weights)
    assert isinstance(value, float)
    assert value == pytest.approx(expected, rel=1e-9, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(data=matrices(graded=True), k=st.sampled_from([None, 1, 3]),
       ignore_ties=st.booleans(), weighted=st.booleans())  # fmt: skip
def test_dcg_and_ndcg_drop_ins_match_sklearn(data, k, ignore_ties, weighted):
    y_true, y_score = data
    y_score = finite_scores(y_score)
    weights = np.linspace(0.5, 2.0, len(y_true)) if weighted else None
    options = {"k": k, "sample_weight": weights, "ignore_ties": ignore_ties}
    assert ours.ndcg_score(y_true, y_score, **options) == pytest.approx(
        skm.ndcg_score(y_true, y_score, **options), rel=1e-9, abs=1e-12
    )
    assert ours.dcg_score(y_true, y_score, log_base=10, **options) == pytest.approx(
        skm.dcg_score(y_true, y_score, log_base=10, **options), rel=1e-9, abs=1e-12
    )


def test_bad_input_is_a_value_error():
    with pytest.raises(ValueError, match="y_true has shape"):
        ours.coverage_error([[1, 0]], [[0.5, 0.2, 0.1]])
    with pytest.raises(ValueError, match="one weight per sample"):
        ours.label_ranking_loss([[1, 0]], [[0.5, 0.2]], sample_weight=[1.0, 2.0])
    with pytest.raises(ValueError, match="must be 0 or 1"):
        ours.label_ranking_loss([[2, 0]], [[0.5, 0.2]])
