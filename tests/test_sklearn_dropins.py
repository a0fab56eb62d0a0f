"""polars_rankmetrics.sklearn: scikit-learn's calls, scikit-learn's numbers and warnings."""

import math
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import finite_scores
from sklearn import metrics as skm
from sklearn_suite.plugin import differences
from strategies import matrices

from polars_rankmetrics import UndefinedMetricWarning
from polars_rankmetrics import sklearn as ours
from polars_rankmetrics.sklearn import undefined

BINARY = ["coverage_error", "label_ranking_average_precision_score", "label_ranking_loss"]
SET_SCORES = [
    "precision_score", "recall_score", "f1_score", "fbeta_score", "jaccard_score",
    "precision_recall_fscore_support",
]  # fmt: skip
AVERAGES = [None, "micro", "macro", "weighted", "samples"]


def answer(function, *args, **kwargs):
    """``function``'s value and the warnings it gives, as (class, message) pairs."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = function(*args, **kwargs)
    return value, {(w.category, str(w.message)) for w in caught}


def assert_same(value, expected):
    """Equal to scikit-learn's value as the suite's plugin compares them: floats to 1e-9
    relative, NaN as NaN, None as None, texts but for a halfway number's rounding."""
    assert not differences(value, expected)


def assert_like_sklearn(name, *args, **kwargs):
    """The drop-in ``name`` gives scikit-learn's value and warnings on the same call."""
    expected, expected_warnings = answer(getattr(skm, name), *args, **kwargs)
    value, given = answer(getattr(ours, name), *args, **kwargs)
    assert_same(value, expected)
    assert given == expected_warnings


def sample_weights(draw, n_samples):
    """None, or one weight per sample, some maybe 0, not all."""
    if not draw(st.booleans()):
        return None
    weights = st.sampled_from([0.0, 0.5, 1.0, 3.0])
    drawn = np.array(draw(st.lists(weights, min_size=n_samples, max_size=n_samples)))
    return drawn if drawn.sum() else drawn + 1.0


@st.composite
def predictions(draw):
    """(y_true, y_pred, sample_weight or None): 0/1 matrices with empty rows and columns."""
    y_true, y_score = draw(matrices())
    y_true, y_pred = (y_true > 0).astype(int), (y_score >= 0.5).astype(int)
    return y_true, y_pred, sample_weights(draw, len(y_true))


@settings(max_examples=60, deadline=None)
@given(data=predictions(), name=st.sampled_from(SET_SCORES), average=st.sampled_from(AVERAGES),
       zero_division=st.sampled_from(["warn", 0, 1, np.nan]), beta=st.sampled_from([0, 0.5, 2]),
       sparse=st.booleans(), labels=st.data())  # fmt: skip
def test_set_scores_match_sklearn(data, name, average, zero_division, beta, sparse, labels):
    y_true, y_pred, weights = data
    if name == "jaccard_score" and isinstance(zero_division, float):
        zero_division = 0  # scikit-learn's jaccard_score takes no NaN
    columns = None
    if labels.draw(st.booleans()):
        order = labels.draw(st.permutations(range(y_true.shape[1])))
        columns = order[: labels.draw(st.integers(1, len(order)))]
    options = {"average": average, "sample_weight": weights, "zero_division": zero_division,
               "labels": columns}  # fmt: skip
    if name == "fbeta_score" or name == "precision_recall_fscore_support":
        options["beta"] = beta
    if sparse:
        y_true, y_pred = scipy.sparse.csr_matrix(y_true), scipy.sparse.csr_matrix(y_pred)
    assert_like_sklearn(name, y_true, y_pred, **options)


@settings(max_examples=40, deadline=None)
@given(data=predictions(), normalize=st.booleans())
def test_sample_metrics_match_sklearn(data, normalize):
    y_true, y_pred, weights = data
    for name in ("accuracy_score", "zero_one_loss"):
        assert_like_sklearn(name, y_true, y_pred, normalize=normalize, sample_weight=weights)
    assert_like_sklearn("hamming_loss", y_true, y_pred, sample_weight=weights)


@settings(max_examples=30, deadline=None)
@given(data=predictions(), samplewise=st.booleans())
def test_confusion_matrices_and_report_match_sklearn(data, samplewise):
    y_true, y_pred, weights = data
    assert_like_sklearn("multilabel_confusion_matrix", y_true, y_pred, sample_weight=weights,
                        samplewise=samplewise)  # fmt: skip
    assert_like_sklearn("classification_report", y_true, y_pred, sample_weight=weights, digits=4)
    names = [f"tag {j}" for j in range(y_true.shape[1])]
    assert_like_sklearn("classification_report", y_true, y_pred, target_names=names,
                        output_dict=True, zero_division=0)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(data=matrices(), name=st.sampled_from(["average_precision_score", "roc_auc_score"]),
       average=st.sampled_from(AVERAGES), weights=st.data())  # fmt: skip
def test_curves_match_sklearn(data, name, average, weights):
    y_true, y_score = data
    weights = sample_weights(weights.draw, len(y_true))
    assert_like_sklearn(name, (y_true > 0).astype(int), finite_scores(y_score), average=average,
                        sample_weight=weights)  # fmt: skip


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


# Ill-defined almost everywhere: label 1 is never true, label 2 never predicted, label 3
# neither; sample 1 is empty (the counts pooled over labels are well defined).
Y_TRUE = np.array([[1, 0, 1, 0], [0, 0, 0, 0], [1, 0, 1, 0]])
Y_PRED = np.array([[1, 1, 0, 0], [0, 0, 0, 0], [0, 1, 0, 0]])


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("average", AVERAGES)
def test_every_engine_warns_as_sklearn(engine, average):
    for name in SET_SCORES:
        beta = {"beta": 2} if name == "fbeta_score" else {}
        expected = answer(getattr(skm, name), Y_TRUE, Y_PRED, average=average, **beta)
        value = answer(getattr(ours, name), Y_TRUE, Y_PRED, average=average, engine=engine,
                       **beta)  # fmt: skip
        assert value[1] == expected[1], name
        assert expected[1] or average == "micro"
        assert_same(value[0], expected[0])
    scores = np.array([[0.9, 0.1, 0.4, 0.2], [0.3, 0.2, 0.1, 0.6], [0.5, 0.5, 0.8, 0.1]])
    for name in ("average_precision_score", "roc_auc_score"):
        expected = answer(getattr(skm, name), Y_TRUE, scores, average=average)
        value = answer(getattr(ours, name), Y_TRUE, scores, average=average, engine=engine)
        assert value[1] == expected[1], name
        assert expected[1] or average == "micro"
        assert_same(value[0], expected[0])


def test_warnings_name_the_drop_in_s_caller():
    with pytest.warns(skm._classification.UndefinedMetricWarning) as record:
        ours.f1_score(Y_TRUE, Y_PRED, average="macro")
    assert [w.filename for w in record] == [__file__]


def test_the_callers_filters_apply():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(skm._classification.UndefinedMetricWarning, match="F-score is"):
            ours.f1_score(Y_TRUE, Y_PRED, average="samples")
        ours.f1_score(Y_TRUE, Y_PRED, average="samples", zero_division=0)  # silent
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = ours.f1_score(Y_TRUE, Y_PRED, average="samples")
        assert value == pytest.approx(skm.f1_score(Y_TRUE, Y_PRED, average="samples"))


def test_without_sklearn_the_library_s_own_warning_holds_sklearn_s_cases(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn.exceptions", None)  # importing it fails
    with pytest.warns(UndefinedMetricWarning) as record:
        ours.recall_score(Y_TRUE, Y_PRED, average=None)
    (warning,) = record
    assert [(c.key, c.score, c.unit, c.count) for c in warning.message.cases] == [
        ("recall", "recall", "label", 2)
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours.recall_score(Y_TRUE, Y_PRED, average="micro")  # nothing is ill-defined


def test_other_warnings_pass_through():
    assert_like_sklearn("f1_score", Y_TRUE, Y_PRED, average="macro", pos_label=2,
                        zero_division=0)  # fmt: skip


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: ours.f1_score([1, 0, 1], [1, 1, 0], average="macro"), "takes multilabel"),
        (lambda: ours.f1_score([[0, 2], [1, 0]], [[0, 1], [1, 0]], average="macro"), "holds 2,"),
        (lambda: ours.f1_score([[0], [1]], [[0], [1]], average="macro"), "1 label column"),
        (lambda: ours.precision_score(Y_TRUE, Y_PRED), "average='binary'"),
        (lambda: ours.recall_score(Y_TRUE, Y_PRED, average="mean"), "average has to be"),
        (lambda: ours.jaccard_score(Y_TRUE, Y_PRED, average="macro", zero_division=np.nan),
         "zero_division must be"),
        (lambda: ours.f1_score(Y_TRUE, Y_PRED, average="macro", labels=[0, 4]),
         r"Got 4 > 3"),
        (lambda: ours.f1_score(Y_TRUE, Y_PRED, average="macro", labels=["a"]),
         "column indices"),
        (lambda: ours.roc_auc_score(Y_TRUE, Y_PRED, max_fpr=0.5), "max_fpr"),
        (lambda: ours.average_precision_score(Y_TRUE, Y_PRED, pos_label=0), "pos_label"),
        (lambda: ours.hamming_loss(Y_TRUE, Y_PRED[:2]), "y_pred has shape"),
    ],
)  # fmt: skip
def test_input_the_drop_ins_do_not_take_is_a_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_bad_input_is_a_value_error():
    with pytest.raises(ValueError, match="y_true has shape"):
        ours.coverage_error([[1, 0]], [[0.5, 0.2, 0.1]])
    with pytest.raises(ValueError, match="one weight per sample"):
        ours.label_ranking_loss([[1, 0]], [[0.5, 0.2]], sample_weight=[1.0, 2.0])
    with pytest.raises(ValueError, match="must be 0 or 1"):
        ours.label_ranking_loss([[2, 0]], [[0.5, 0.2]])


def test_messages_follow_sklearn_s_rules():
    call = undefined.Call(undefined.SET_SCORES, n_samples=3, n_labels=1)
    case = undefined.IllDefined("precision_macro", "precision", "label", 1, 1, (0,), 0.0)
    assert call.messages(case)[0][1].startswith("Precision is ill-defined and being set to 0.0 due")
    samples = undefined.IllDefined("f1_samples", "f-score", "sample", 2, None, (), 0.0)
    assert call.messages(samples)[0][1] == (
        "F-score is ill-defined and being set to 0.0 in samples with no true nor predicted "
        "labels. Use `zero_division` parameter to control this behavior."
    )
    assert not undefined.Call(("f-score",), 3, 3).warns(case)
    curve = undefined.IllDefined("roc_auc_weighted", "roc_auc", "label", 1, 3, (0,), math.nan)
    assert not undefined.Call(undefined.CURVES, 3, 3, quiet_curves=True).warns(curve)
