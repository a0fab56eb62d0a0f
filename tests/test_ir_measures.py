"""polars_rankmetrics.ir_measures against ir_measures' own providers: the same per-topic
values as pytrec_eval's (and the judged provider's, and gdeval's) on runs with heavy ties,
from every run and qrels form ir_measures reads; register() and unregister() on its default
pipeline. ir_measures' own tests run with the provider in tests/ir_measures_suite/."""

from __future__ import annotations

import io
import math

import ir_measures
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ir_measures import (
    AP,
    ERR,
    RR,
    Bpref,
    Compat,
    IPrec,
    Judged,
    NumQ,
    NumRel,
    NumRet,
    P,
    R,
    Rprec,
    SetAP,
    SetF,
    SetP,
    SetR,
    Success,
    infAP,
    nDCG,
)

import polars_rankmetrics.ir_measures as rm_ir

provider = rm_ir.provider

# pytrec_eval's measures, with the parameters each takes.
PYTREC_EVAL = [
    P @ 1, P @ 3, P(rel=2) @ 2, P(judged_only=True) @ 3, R @ 2, R(rel=2) @ 5, Success @ 1,
    Success(rel=2) @ 3, AP, AP @ 3, AP(rel=2), AP(judged_only=True), RR, RR(rel=2), Rprec,
    Rprec(rel=2), nDCG, nDCG @ 3, nDCG(judged_only=True) @ 5, nDCG(gains={0: 0, 1: 1, 2: 5}),
    nDCG(gains={1: 2, 3: 0}) @ 2, Bpref, Bpref(rel=2), infAP, infAP(rel=2), NumRet,
    NumRet(rel=1), NumRet(rel=2), NumQ, NumRel, SetAP, SetF, SetF(beta=0.5), SetP,
    SetP(relative=True), SetR, IPrec @ 0.0, IPrec @ 0.5, IPrec(judged_only=True) @ 1.0,
]  # fmt: skip
JUDGED = [Judged, Judged @ 1, Judged @ 3, Judged @ 20]
TOPICS = ["1", "2", "3", "10"]
DOCS = [f"d{i}" for i in range(7)]


@st.composite
def cases(draw):
    """(run, qrels) as dicts of dicts: scores from few values (heavy ties), relevance in {-1,
    0, 1, 2, 3}, documents retrieved and not judged or judged and not retrieved, topics in the
    run only or the qrels only."""
    run, qrels = {}, {}
    for topic in TOPICS:
        in_run, in_qrels = draw(st.sampled_from([(True, True), (True, True), (True, False),
                                                 (False, True)]))  # fmt: skip
        for doc in DOCS:
            if in_run and draw(st.booleans()):
                run.setdefault(topic, {})[doc] = draw(st.sampled_from([0.0, 0.5, 1.0, -2.0]))
            if in_qrels and draw(st.integers(0, 2)):
                qrels.setdefault(topic, {})[doc] = draw(st.sampled_from([-1, 0, 0, 1, 1, 2, 3]))
        if in_qrels and all(rel < 0 for rel in qrels.get(topic, {}).values()):
            # pytrec_eval crashes on a topic without a judgment >= 0 (as trec_eval)
            qrels.setdefault(topic, {})["d0"] = 0
    return run, qrels


def _values(metrics) -> dict[tuple[str, str], float]:
    values = {}
    for metric in metrics:
        key = (str(metric.measure), str(metric.query_id))
        assert key not in values, f"{key} twice"
        values[key] = float(metric.value)
    return values


def _assert_same(got, expected):
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        if math.isnan(value):  # trec_eval's -nan under -J
            assert math.isnan(got[key]), (key, got[key], value)
            continue
        assert math.isclose(got[key], value, rel_tol=1e-9, abs_tol=1e-12), (key, got[key], value)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_values_are_pytrec_eval_providers_on_tied_runs(case):
    run, qrels = case
    expected = _values(ir_measures.pytrec_eval.iter_calc(PYTREC_EVAL, qrels, run))
    _assert_same(_values(provider.iter_calc(PYTREC_EVAL, qrels, run)), expected)


def test_iprec_judged_only_is_nan_on_a_topic_without_relevant_documents():
    qrels, run = {"2": {"d0": 0}}, {"2": {"d2": 0.0}}
    measure = IPrec(judged_only=True) @ 1.0
    assert math.isnan(next(ir_measures.pytrec_eval.iter_calc([measure], qrels, run)).value)
    assert math.isnan(next(provider.iter_calc([measure], qrels, run)).value)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_judged_is_the_judged_providers(case):
    run, qrels = case
    expected = _values(ir_measures.judged.iter_calc(JUDGED, qrels, run))
    _assert_same(_values(provider.iter_calc(JUDGED, qrels, run)), expected)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_err_is_gdevals(case):
    run, qrels = case
    measures = [ERR @ 1, ERR @ 3, ERR @ 10]
    expected = _values(ir_measures.gdeval.iter_calc(measures, qrels, run))
    got = _values(provider.iter_calc(measures, qrels, run))
    # gdeval prints 5 decimals (rounded half away from zero)
    assert got.keys() == expected.keys()
    assert all(abs(got[key] - expected[key]) <= 5e-6 + 1e-12 for key in expected), (got, expected)


RUN_TEXT = """1 Q0 d1 1 2.0 tag
1 Q0 d2 2 1.0 tag
1 Q0 d3 3 1.0 tag
2 Q0 d1 1 0.5 tag
7 Q0 d1 1 0.5 tag
"""
QRELS_TEXT = """1 0 d2 1
1 0 d3 2
1 0 d9 0
2 0 d4 1
3 0 d1 1
"""
MEASURES = [P @ 2, AP, nDCG @ 10, Judged @ 2, RR, NumRet, R @ 3]


def _forms(text: str, reader, columns: list[str], tmp_path):
    """One TREC text in each form ir_measures reads."""
    rows = list(reader(text))
    path = tmp_path / f"{columns[-1]}.txt"
    path.write_text(text)
    frame = pd.DataFrame(rows)[columns]
    nested: dict[str, dict[str, float]] = {}
    for row in rows:
        nested.setdefault(row.query_id, {})[row.doc_id] = getattr(row, columns[-1])
    return {
        "namedtuples": lambda: rows,
        "generator": lambda: reader(str(path)),
        "file object": lambda: reader(io.StringIO(text)),
        "dataframe": lambda: frame,
        "dataframe with int ids": lambda: frame.assign(query_id=frame["query_id"].astype(int)),
        "dict": lambda: nested,
    }


def test_every_form_gives_the_default_pipelines_values(tmp_path):
    runs = _forms(RUN_TEXT, ir_measures.read_trec_run, ["query_id", "doc_id", "score"], tmp_path)
    qrels_forms = _forms(
        QRELS_TEXT, ir_measures.read_trec_qrels, ["query_id", "doc_id", "relevance"], tmp_path
    )
    expected = _values(ir_measures.iter_calc(MEASURES, qrels_forms["dict"](), runs["dict"]()))
    for run_form, run in runs.items():
        for qrels_form, qrels in qrels_forms.items():
            got = _values(provider.iter_calc(MEASURES, qrels(), run()))
            assert got == pytest.approx(expected), (run_form, qrels_form)


def test_register_serves_the_pipeline_and_unregister_restores_it(monkeypatch):
    before = list(ir_measures.DefaultPipeline.providers)
    served = _counted(monkeypatch)
    qrels = list(ir_measures.read_trec_qrels(QRELS_TEXT))
    run = list(ir_measures.read_trec_run(RUN_TEXT))
    # Compat and RR@2 are served by the compat and msmarco providers
    measures = [*MEASURES, Compat(p=0.8), RR @ 2]
    expected = ir_measures.calc_aggregate(measures, qrels, run)
    rm_ir.register()
    rm_ir.register()
    try:
        assert ir_measures.DefaultPipeline.providers == [provider, *before]
        got = ir_measures.calc_aggregate(measures, qrels, run)
        per_topic = _values(ir_measures.iter_calc(measures, qrels, run))
    finally:
        rm_ir.unregister()
    assert ir_measures.DefaultPipeline.providers == before
    assert "polars_rankmetrics" not in ir_measures.providers.registry
    assert served == [set(MEASURES), set(MEASURES)]
    assert got == pytest.approx(expected)
    assert per_topic == pytest.approx(_values(ir_measures.iter_calc(measures, qrels, run)))


def test_unsupported_measures_are_left_to_the_others():
    assert not provider.supports(RR @ 10)  # msmarco's cut RR
    assert not provider.supports(nDCG(dcg="exp-log2") @ 10)  # gdeval's
    assert not provider.supports(Compat(p=0.8))
    assert provider.supports(nDCG(gains={0: 0, 1: 1}) @ 5)
    with pytest.raises(ValueError, match="unsupported measure"):
        provider.evaluator([RR @ 10], {"1": {"d1": 1}})


@pytest.mark.parametrize(
    ("run", "message"),
    [
        (pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["d1", "d1"], "score": [1.0, 2.0]}),
         "repeats label 'd1'"),
        (pd.DataFrame({"query_id": ["1"], "doc_id": ["d1"], "score": [float("nan")]}), "NaN"),
        (pd.DataFrame({"query_id": ["1"], "doc_id": ["d1"], "score": ["high"]}),
         "score must be a number"),
        (pd.DataFrame({"query_id": ["1"], "doc_id": ["d1"]}), "missing columns.*score"),
        ([("1", "d1", 1.0)], "not a namedtuple"),
    ],
)  # fmt: skip
def test_bad_runs_are_refused_naming_the_problem(run, message):
    with pytest.raises(ValueError, match=message):
        list(provider.iter_calc([P @ 5], {"1": {"d1": 1}}, run))


@pytest.mark.parametrize(
    ("qrels", "message"),
    [
        (pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["d1", "d1"], "relevance": [1, 0]}),
         "repeats label 'd1'"),
        (pd.DataFrame({"query_id": ["1"], "doc_id": ["d1"], "relevance": [1.5]}),
         "relevance must be a number \\(integer\\)"),
        ({"1": {"d1": "high"}}, "relevance must be a number"),
    ],
)  # fmt: skip
def test_bad_qrels_are_refused_naming_the_problem(qrels, message):
    with pytest.raises(ValueError, match=message):
        list(provider.iter_calc([P @ 5], qrels, {"1": {"d1": 1.0}}))


def test_a_run_without_a_qrels_topic_gives_the_defaults():
    qrels = {"1": {"d1": 1}, "2": {"d2": 0}}
    got = _values(provider.iter_calc([P @ 5, Judged @ 2], qrels, {"9": {"d1": 1.0}}))
    assert got == {(m, q): 0.0 for m in ("P@5", "Judged@2") for q in ("1", "2")}
    assert _values(provider.iter_calc([P @ 5], qrels, [])) == {("P@5", "1"): 0.0, ("P@5", "2"): 0.0}


def _counted(monkeypatch) -> list[set]:
    """The measures of each evaluator the provider makes, from here on."""
    served: list[set] = []
    evaluator = rm_ir.RankmetricsProvider._evaluator

    def counted(self, measures, qrels):
        served.append(set(measures))
        return evaluator(self, measures, qrels)

    monkeypatch.setattr(rm_ir.RankmetricsProvider, "_evaluator", counted)
    return served


def test_pyterrier_experiment_gives_the_same_table(monkeypatch):
    # PyTerrier evaluates result DataFrames through ir_measures' default pipeline; Terrier's
    # Java is not started for them
    pt = pytest.importorskip("pyterrier")
    topics = pd.DataFrame({"qid": ["1", "2", "3"], "query": ["a", "b", "c"]})
    qrels = pd.DataFrame(
        {"qid": ["1", "1", "2", "3", "3"], "docno": ["d1", "d2", "d3", "d1", "d4"],
         "label": [1, 2, 0, 1, -1]}
    )  # fmt: skip
    systems = [
        pd.DataFrame({"qid": ["1", "1", "1", "2"], "docno": ["d1", "d2", "d3", "d3"],
                      "score": [2.0, 1.0, 1.0, 0.5]}),
        pd.DataFrame({"qid": ["1", "1", "3", "3"], "docno": ["d3", "d2", "d1", "d4"],
                      "score": [2.0, 1.0, 1.0, 1.0]}),
    ]  # fmt: skip
    metrics = [AP, nDCG @ 10, P @ 2, RR, Judged @ 2, "map", "ndcg_cut_10", "recall_5"]

    def tables():
        options = {"eval_metrics": metrics, "names": ["one", "two"]}
        summary = pt.Experiment(systems, topics, qrels, baseline=0, **options)
        per_query = pt.Experiment(systems, topics, qrels, perquery=True, **options)
        # the columns come in the order the measures do, which is a set's
        return (
            summary[sorted(summary.columns)],
            per_query.sort_values(["name", "qid", "measure"], ignore_index=True),
        )

    expected = tables()
    served = _counted(monkeypatch)
    rm_ir.register()
    try:
        got = tables()
    finally:
        rm_ir.unregister()
    assert served and not pt.java.started()
    for got_table, expected_table in zip(got, expected, strict=True):
        pd.testing.assert_frame_equal(got_table, expected_table, check_exact=False, rtol=1e-12)
