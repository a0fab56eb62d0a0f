"""The compiled route of rm.trec_eval on run files (trec/compiled.py): its scores parsed as
Polars parses them, and its values those of the frame route (Polars' sort and join) on the
same rows, on runs with ties, string docnos and qrels in the pool but unjudged."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_rankmetrics as rm
from polars_rankmetrics.inputs import run_lines, trec
from polars_rankmetrics.trec import compiled
from polars_rankmetrics.trec.measures import measures

evaluate_module = sys.modules["polars_rankmetrics.evaluate"]

_NUMBERS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=64).map(repr),
    st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: f"{x:.4f}"),
    st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: f"{x:.6e}"),
    st.integers(-(10**20), 10**20).map(str),
    st.sampled_from(["0", "-0.0", ".5", "5.", "+1.25", "1e22", "1e23", "123456789012345.6"]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_NUMBERS, min_size=1, max_size=20))
def test_scores_are_parsed_as_polars_parses_them(numbers):
    text = "".join(f"1 Q0 d{i} {i} {x} tag\n" for i, x in enumerate(numbers)).encode()
    places, scores, parsed, ok = run_lines.split_run(np.frombuffer(text, dtype=np.uint8))
    assert ok
    expected = pl.Series(numbers).cast(pl.Float64).to_numpy()
    assert np.array_equal(scores[parsed], expected[parsed])
    assert all(parsed[i] or "e" in x.lower() or len(x) > 15 for i, x in enumerate(numbers))


@st.composite
def _files(draw):
    docnos = st.text("ab9Zé", min_size=1, max_size=3)
    run, qrels = [], []
    for topic in draw(st.lists(st.sampled_from(["1", "2", "10", "x"]), unique=True, min_size=1)):
        names = draw(st.lists(docnos, unique=True, min_size=1, max_size=12))
        scores = draw(st.lists(st.sampled_from(["1", "0.5", "2.25", "-3"]), min_size=len(names),
                               max_size=len(names)))  # fmt: skip
        run += [f"{topic} Q0 {d} 0 {s} tag" for d, s in zip(names, scores, strict=True)]
        judged = draw(st.lists(st.sampled_from([*names, "zz", "a9"]), unique=True, min_size=1,
                               max_size=6))  # fmt: skip
        qrels += [f"{topic} 0 {d} {draw(st.integers(-1, 3))}" for d in judged]
    return run, qrels


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _files(), st.sampled_from([None, 3]), st.booleans(), st.sampled_from([1, 2]),
    st.integers(1, 300),
)  # fmt: skip
def test_values_are_those_of_the_frame_route(files, max_docs, judged_only, level, size):
    run, qrels = files
    with tempfile.TemporaryDirectory() as directory:
        run_path, qrels_path = Path(directory) / "run", Path(directory) / "qrels"
        run_path.write_text("\n".join(run) + "\n")
        qrels_path.write_text("\n".join(qrels) + "\n")
        judged = rm.read_trec_qrels(qrels_path).collect()
        options = {"max_docs": max_docs, "judged_only": judged_only,
                   "relevance_level": level}  # fmt: skip
        frame = rm.read_trec_run(run_path).collect()
        if not set(frame["sample"]) & set(judged["sample"]):
            return
        expected = rm.trec_eval(frame, judged, "all_trec", per_topic=True, **options)
        results, evaluate = [], compiled.evaluate
        original = trec._BUCKET_BYTES

        def recorded(*args):
            results.append(evaluate(*args))
            return results[-1]

        try:
            compiled.evaluate = recorded
            got = rm.trec_eval(trec.TrecRun(run_path), judged, "all_trec", per_topic=True,
                               **options)  # fmt: skip
            trec._BUCKET_BYTES = size  # several topics a piece, or one
            small = rm.trec_eval(trec.TrecRun(run_path), judged, "all_trec", per_topic=True,
                                 **options)  # fmt: skip
        finally:
            compiled.evaluate, trec._BUCKET_BYTES = evaluate, original
    assert len(results) == 2 and all(r is not None for r in results)  # the compiled route
    for table in (got, small):
        assert_frame_equal(table.drop("value"), expected.drop("value"))
        assert_frame_equal(table, expected, check_exact=False, rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.parametrize(
    "options",
    [{}, {"judged_only": True}, {"complete": True}, {"relevance_level": 2, "max_docs": 5}],
)
def test_evaluate_takes_the_one_pass_route_with_duckdbs_values(options):
    # evaluate's TREC keys on Polars (the one-pass route of trec_eval) against DuckDB's SQL
    # views of the same keys, per topic and their means, on tied scores and two runs.
    rng = np.random.default_rng(3)
    run = pl.DataFrame({
        "run": rng.choice(["a", "b"], 1500), "sample": rng.integers(0, 25, 1500).astype(str),
        "label": rng.integers(0, 200, 1500).astype(str),
        "score": np.round(rng.random(1500), 1),
    }).unique(["run", "sample", "label"])  # fmt: skip
    qrels = pl.DataFrame({
        "sample": rng.integers(0, 25, 400).astype(str),
        "label": rng.integers(0, 200, 400).astype(str), "truth": rng.integers(-1, 4, 400),
    }).unique(["sample", "label"])  # fmt: skip
    keys = [m.name for m in measures("all_trec") if m.key is not None]
    results, one_pass = [], evaluate_module._in_one_pass

    def recorded(*args, **kwargs):
        results.append(one_pass(*args, **kwargs))
        return results[-1]

    try:
        evaluate_module._in_one_pass = recorded
        for per_sample in (True, False):
            got = rm.evaluate(run, keys, truth_table=qrels, by="run", per_sample=per_sample,
                              **options)  # fmt: skip
            expected = rm.evaluate(run, keys, truth_table=qrels, by="run", engine="duckdb",
                                   per_sample=per_sample, **options)  # fmt: skip
            assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)
    finally:
        evaluate_module._in_one_pass = one_pass
    # The Polars calls took the one-pass route; the DuckDB calls, their engine's.
    assert [r is not None for r in results] == [True, False, True, False]
