"""The TREC keys under a memory limit, the run and qrels split into buckets of whole topics and
each bucket put in trec_eval's order apart: every family against pytrec_eval-terrier on
hypothesis-made runs (heavy ties, unjudged and negatively judged documents, topics missing on
either side, two runs sharing the qrels, -M, -J, -c), on Polars and DuckDB; the whole-table
refusals with the same message whether or not the tables are split; rm.compare's paired
values per topic."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_trec_measures import DOCS, MEASURES, SUMMARY_ONLY, _close, _oracle

import polars_rankmetrics as rm
from polars_rankmetrics.engines.driver import pieces
from polars_rankmetrics.trec.measures import measures

TOPICS = ["q1", "q10", "q2", "q3", "q4", "q5"]
RUNS = ["a", "b"]


@pytest.fixture(autouse=True)
def four_buckets(monkeypatch):
    """Any memory limit splits the tables into 4 buckets."""
    monkeypatch.setattr(pieces, "bucket_count", lambda *args, **kwargs: 4)


@st.composite
def runs(draw):
    """(run rows of each run tag, qrels rows shared by the runs): as test_trec_measures'
    cases, over more topics (so that each of 4 buckets may hold some) and two runs."""
    qrels = []
    for topic in TOPICS:
        if draw(st.integers(0, 3)):
            judged = [(topic, doc, draw(st.sampled_from([-1, 0, 0, 1, 1, 2, 3])))
                      for doc in DOCS if draw(st.integers(0, 2))]  # fmt: skip
            # A topic without a judgment >= 0 crashes trec_eval's C code (test_trec_measures).
            if judged and any(rel >= 0 for *_, rel in judged):
                qrels += judged
    by_run = {}
    for tag in RUNS:
        rows = []
        for topic in TOPICS:
            if draw(st.integers(0, 3)):
                for doc in DOCS:
                    if draw(st.booleans()):
                        score = draw(st.sampled_from([0.0, 0.5, 0.5, 1.0, 1.0, -2.0]))
                        rows.append((topic, doc, score, draw(st.integers(0, 9))))
        by_run[tag] = rows
    return by_run, qrels


def _frames(by_run, qrels):
    run_frame = pl.DataFrame(
        [(tag, *row) for tag, rows in by_run.items() for row in rows], orient="row",
        schema={"run": pl.String, "sample": pl.String, "label": pl.String, "score": pl.Float64,
                "rank": pl.Int64},
    )  # fmt: skip
    qrels_frame = pl.DataFrame(
        qrels, orient="row", schema={"sample": pl.String, "label": pl.String, "truth": pl.Int64}
    )
    return run_frame, qrels_frame


OPTIONS = (
    runs(),
    st.sampled_from([1, 2]),
    st.booleans(),
    st.booleans(),
    st.sampled_from([None, 2]),
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(*OPTIONS)
def test_every_family_in_buckets_equals_pytrec_eval_on_polars(
    case, level, judged_only, complete, max_docs
):
    _check("polars", case, level, judged_only, complete, max_docs)


# Fewer examples: a DuckDB evaluation of every family costs seconds (a view per key and bucket).
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(*OPTIONS)
def test_every_family_in_buckets_equals_pytrec_eval_on_duckdb(
    case, level, judged_only, complete, max_docs
):
    _check("duckdb", case, level, judged_only, complete, max_docs)


def _check(engine, case, level, judged_only, complete, max_docs):
    """rm.trec_eval per topic in 4 buckets on ``engine`` equals pytrec_eval's values."""
    by_run, qrels = case
    # trec_eval's bpref reads past its array on a topic judged below level - 1
    # (test_trec_measures): one judged document of relevance level - 1 keeps it within.
    for topic in {t for t, _, _ in qrels}:
        if max(rel for t, _, rel in qrels if t == topic) < level - 1:
            qrels = [*qrels, (topic, "d00", level - 1)]
    options = dict(level=level, judged_only=judged_only, complete=complete, max_docs=max_docs)
    # A run without a row is no run (no group); a qrels topic no run retrieves is one of its
    # empty rankings only with -c.
    expected = {tag: _oracle(rows, qrels, **options) for tag, rows in by_run.items() if rows}
    run_frame, qrels_frame = _frames(by_run, qrels)
    call = dict(engine=engine, memory_limit="1GB", complete=complete)
    if not any(expected.values()):  # no topic in common, or no run at all
        with pytest.raises(ValueError, match="no topic|empty"):
            rm.trec_eval(run_frame, qrels_frame, MEASURES, **call)
        return
    got = rm.trec_eval(
        run_frame, qrels_frame, MEASURES, per_topic=True, relevance_level=level,
        judged_only=judged_only, max_docs=max_docs, **call,
    ).filter(pl.col("topic") != "all")  # fmt: skip
    names = {m.name for m in measures(MEASURES)} - SUMMARY_ONLY - {"runid"}
    for tag, values in expected.items():
        ours = got.filter(run=tag)
        assert set(ours["topic"]) == set(values)
        assert set(ours["measure"]) == (names if values else set())
        for _, measure, topic, value, _ in ours.iter_rows():
            assert _close(value, values[topic][measure]), (tag, measure, topic, value)


def _refusal(engine, run, qrels, *, memory_limit):
    with pytest.raises(ValueError) as raised:
        rm.evaluate(run, ["AP", "P_2"], truth_table=qrels, by="run", engine=engine,
                    memory_limit=memory_limit)  # fmt: skip
    return str(raised.value)


RUN = pl.DataFrame({
    "run": "r", "sample": ["q1", "q1", "q2", "q2", "q3", "q4"],
    "label": ["d1", "d2", "d1", "d3", "d1", "d2"], "score": [1.0, 0.5, 0.5, 0.5, 0.2, 0.1],
})  # fmt: skip
QRELS = pl.DataFrame(
    {"sample": ["q1", "q2", "q3", "q4"], "label": ["d1", "d3", "d2", "d2"], "truth": [1, 2, 0, 1]}
)


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize(
    ("run", "qrels", "message"),
    [
        (RUN.with_columns(label=pl.when(pl.col("label") == "d3").then(pl.lit("d1"))
                          .otherwise("label")), QRELS, "repeats label 'd1'"),
        (RUN.with_columns(score=pl.when(pl.col("sample") == "q3").then(None)
                          .otherwise("score")), QRELS, "null"),
        (RUN.with_columns(score=pl.when(pl.col("sample") == "q4").then(float("nan"))
                          .otherwise("score")), QRELS, "NaN"),
        (RUN, QRELS.with_columns(pl.col("truth").cast(pl.Float64) / 2), "must hold integers"),
        (RUN, QRELS.with_columns(sample=pl.lit("q9")), "empty"),
    ],
    ids=["repeated_docno", "null_score", "nan_score", "relevance_not_integer", "no_topic"],
)  # fmt: skip
def test_a_whole_table_check_refuses_alike_in_buckets(engine, run, qrels, message):
    whole = _refusal(engine, run, qrels, memory_limit=None)
    in_buckets = _refusal(engine, run, qrels, memory_limit="1GB")
    assert whole == in_buckets
    assert any(part in whole for part in message.split("|")), whole


def test_compare_in_buckets_takes_the_paired_values_of_pytrec_eval():
    """rm.compare of two runs by a TREC key, in buckets: the means of pytrec_eval's values
    per topic and their difference, over the topics both runs retrieve."""
    by_run = {
        tag: [(t, d, s, 0) for t in TOPICS for d, s in zip(DOCS, scores, strict=True)]
        for tag, scores in (("a", [1.0, 0.5, 0.5, 0.2, 0.0, 0.0]),
                            ("b", [0.0, 0.5, 1.0, 0.5, 0.2, 0.2]))
    }  # fmt: skip
    qrels = [(t, d, (i + j) % 4 - 1) for i, t in enumerate(TOPICS) for j, d in enumerate(DOCS)]
    run_frame, qrels_frame = _frames(by_run, qrels)
    compared = rm.compare(
        run_frame, ["AP", "P_2"], by="run", baseline="a", truth_table=qrels_frame,
        memory_limit="1GB", n_resamples=99, n_boot=99,
    )  # fmt: skip
    options = dict(level=1, judged_only=False, complete=False, max_docs=None)
    oracle = {tag: _oracle(rows, qrels, **options) for tag, rows in by_run.items()}
    for row in compared.iter_rows(named=True):
        measure = {"AP": "map", "P_2": "P_2"}[row["metric"]]
        mean = {tag: sum(v[measure] for v in oracle[tag].values()) / len(oracle[tag])
                for tag in RUNS}  # fmt: skip
        assert math.isclose(row["value"], mean["b"], abs_tol=1e-12)
        assert math.isclose(row["baseline_value"], mean["a"], abs_tol=1e-12)
        assert math.isclose(row["delta"], mean["b"] - mean["a"], abs_tol=1e-12)
    assert compared.select("run", "metric").rows() == [("b", "AP"), ("b", "P_2")]
