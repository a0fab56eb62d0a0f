"""The TREC keys on the SQL engines (sql/19_trec_per_sample.sql), with trec_eval's parameters
and relevance levels: on DuckDB against pytrec_eval-terrier (trec_eval's C code) where it has
the measure and parameters, and against the Polars engine (itself checked against pytrec_eval
in test_trec_measures.py) for every measure; on Spark and in the SQL exported to PostgreSQL,
DataFusion and SQLite against the Polars engine, on hypothesis-made runs with heavy ties,
graded and negative relevance, unjudged documents and topics missing on either side."""

from __future__ import annotations

import math

import polars as pl
import pytest
from conftest import Engine
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from sql_engines import SQLTestEngine
from test_trec_measures import _frames, cases, pytrec_oracle

import polars_rankmetrics as rm
from polars_rankmetrics.engines import driver, topk
from polars_rankmetrics.engines.sql.export import trec_queries
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.registry import Context, parse_key, parse_keys
from polars_rankmetrics.trec.measures import measures

# trec_eval's -m arguments whose values pytrec_eval-terrier gives as trec_eval 10.0 does, with
# parameters where it reads them.
ORACLE = [
    "num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "map", "gm_map",
    "Rprec", "bpref", "gm_bpref", "recip_rank", "infAP", "binG", "utility", "ndcg",
    "P.1,2,3", "recall.1,2,4", "success.1,2", "relative_P.1,3", "map_cut.1,3",
    "ndcg_cut.1,3", "Rprec_mult.0.2,0.5,2", "set_P", "set_recall", "set_relative_P",
    "set_map", "set_F.0.5", "G", "ndcg_rel", "Rndcg",
]  # fmt: skip
# The others: pytrec_eval has no rbp, rbp_resid nor unj, reads no utility coefficients nor
# ndcg gains, and computes iprec_at_recall and 11pt_avg as trec_eval 9 did.
NO_ORACLE = [
    "iprec_at_recall.0,0.25,0.5,1", "11pt_avg.0.2,0.6", "unj.1,3", "rbp.p=0.5",
    "rbp_resid.p=0.8",
]  # fmt: skip
# Gains that reorder the ideal, make a relevance of 0 gain and give a negative gain.
GAINS_AND_COEFFICIENTS = [
    "ndcg.1=3,2=9", "utility.2,-1,0.5,0.1", "G.1=3,2=9", "ndcg_rel.0=1,2=-1",
    "Rndcg.1=3,3=0.5",
]  # fmt: skip
SUMMARY_ONLY = {"num_q", "gm_map", "gm_bpref"}
PYTREC_EVAL_NAMES = {"set_F_0.5": "set_F"}  # trec_eval prints no parameter of set_F
# ir_measures' names with a relevance level or a persistence of their own, beside trec_eval's,
# and ERR@K (gdeval's, which pytrec_eval lacks: against the Polars key, test_trec_measures.py
# checks that against gdeval's formula).
IR_MEASURES = [
    "P(rel=2)@2", "R(rel=3)@3", "AP(rel=0)", "RBP", "RBP(p=0.5)", "Judged@2", "ERR@1", "ERR@3",
    "ERR@20",
]  # fmt: skip


def _keys(arguments):
    return [m.key for m in measures(arguments) if m.key is not None]


def _oracle(run, qrels, *, level, judged_only, complete, max_docs):
    """pytrec_eval's per-topic values of ORACLE (the run cut as trec_eval's -M cuts it)."""
    values, _, _ = pytrec_oracle(
        run, qrels, ORACLE, level=level, judged_only=judged_only, complete=complete,
        max_docs=max_docs,
    )  # fmt: skip
    return values


def _close(ours: float, theirs: float) -> bool:
    """Equal to 1e-12, or both NaN (trec_eval's 0 / 0, Rndcg's where no gain is positive)."""
    both_nan = math.isnan(ours) and math.isnan(theirs)
    return both_nan or math.isclose(ours, theirs, rel_tol=1e-9, abs_tol=1e-12)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.integers(0, 3), st.booleans(), st.booleans(), st.sampled_from([None, None, 2]))
def test_duckdb_gives_pytrec_eval_and_the_polars_engine(case, level, judged_only, complete, most):
    run, qrels = case
    # trec_eval's bpref reads rel_levels[0 .. level - 1], an array of max_rel + 1 entries (see
    # test_trec_measures.py): a judged document of relevance level - 1, never retrieved.
    for topic in {t for t, _, _ in qrels}:
        if max(rel for t, _, rel in qrels if t == topic) < level - 1:
            qrels = [*qrels, (topic, "d00", level - 1)]
    judged = {topic for topic, _, _ in qrels}
    if not run or not (judged if complete else judged & {topic for topic, *_ in run}):
        return  # nothing to evaluate (test_trec_measures.py)
    run_frame, qrels_frame = _frames(run, qrels)
    arguments = [*ORACLE, *NO_ORACLE]
    options = dict(per_topic=True, complete=complete, relevance_level=level,
                   judged_only=judged_only, max_docs=most)  # fmt: skip
    duck = rm.trec_eval(run_frame, qrels_frame, arguments, engine="duckdb", **options)
    if level > 0:  # pytrec_eval takes no relevance level 0
        expected = _oracle(
            run, qrels, level=level, judged_only=judged_only, complete=complete, max_docs=most
        )
        names = set()
        for _, printed, topic, value, _ in duck.filter(pl.col("topic") != "all").iter_rows():
            measure = PYTREC_EVAL_NAMES.get(printed, printed)
            if measure in expected[topic]:
                names.add(measure)
                assert _close(value, expected[topic][measure]), (measure, topic, value)
        assert names == set(expected[next(iter(expected))]) - SUMMARY_ONLY
    polars = rm.trec_eval(run_frame, qrels_frame, arguments, **options)
    assert_frame_equal(
        duck.drop("text"), polars.drop("text"), check_exact=False, rel_tol=1e-9, abs_tol=1e-12
    )
    # ndcg's gains, utility's coefficients and ir_measures' names, each at its own level or
    # persistence, in buckets out of core.
    keys = [*_keys(GAINS_AND_COEFFICIENTS), *parse_keys(IR_MEASURES)]
    evaluated = dict(truth_table=qrels_frame, by="run", per_sample=True, complete=complete,
                     relevance_level=level, judged_only=judged_only, max_docs=most)  # fmt: skip
    assert_frame_equal(
        Engine("duckdb", 7).evaluate(run_frame, keys, **evaluated),
        rm.evaluate(run_frame, keys, **evaluated),
        check_exact=False, rel_tol=1e-9, abs_tol=1e-12,
    )  # fmt: skip


# A worked run: ties, documents outside the qrels (d1, d4), pooled unjudged (d6), relevance
# 0 to 3, a qrels topic the run lacks (q3), a run topic the qrels lack (q4).
WORKED_RUN = pl.DataFrame(
    {"run": "r", "sample": ["q1"] * 6 + ["q2"] * 3 + ["q4"],
     "label": ["d1", "d2", "d3", "d4", "d7", "d8", "d1", "d5", "d6", "d1"],
     "score": [1.0, 0.5, 0.5, 0.2, 0.2, 0.1, 0.3, 0.3, 0.1, 1.0]}
)  # fmt: skip
WORKED_QRELS = pl.DataFrame(
    {"sample": ["q1", "q1", "q1", "q1", "q1", "q2", "q2", "q2", "q3"],
     "label": ["d2", "d3", "d9", "d7", "d8", "d5", "d6", "d2", "d1"],
     "truth": [1, 3, 0, 2, -1, 1, -1, 2, 1]}
)  # fmt: skip
SQL_KEYS = [*_keys([*ORACLE, *NO_ORACLE, *GAINS_AND_COEFFICIENTS]), *parse_keys(IR_MEASURES)]


def _expected(keys, level: int) -> pl.DataFrame:
    return rm.evaluate(
        WORKED_RUN, keys, truth_table=WORKED_QRELS, by="run", per_sample=True,
        complete=True, relevance_level=level,
    )  # fmt: skip


# One key of each kind of parameter and of each group of columns of the SQL, for Spark.
SPARK_KEYS = [
    *_keys(["P.2", "ndcg_cut.3", "map", "gm_map", "bpref", "infAP", "binG", "recip_rank",
            "iprec_at_recall.0.5", "11pt_avg.0.2,0.6", "Rprec_mult.0.5", "set_F.0.5",
            "unj.2", "rbp_resid.p=0.8", "G", "ndcg_rel", *GAINS_AND_COEFFICIENTS]),
    *parse_keys(["P(rel=3)@2", "RBP", "Judged@2", "num_rel", "ERR@3"]),
]  # fmt: skip


def test_the_trec_keys_with_parameters_on_spark(spark):
    """One Spark cell: a key of each kind of parameter at relevance level 2."""
    got = Engine("spark").evaluate(
        WORKED_RUN, SPARK_KEYS, truth_table=WORKED_QRELS, by="run", per_sample=True,
        complete=True, relevance_level=2,
    )  # fmt: skip
    expected = _expected(SPARK_KEYS, 2)
    assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)
    # The parameter relations go with the session's other views.
    views = {row.viewName for row in spark.sql("SHOW VIEWS").collect() if row.isTemporary}
    assert not {v for v in views if v.startswith("rankmetrics_")}


@pytest.mark.parametrize("dialect", ["datafusion", "sqlite", "postgres"])
def test_the_trec_keys_with_parameters_in_exported_sql(dialect, request):
    """The exported SQL on the other verified engines gives the Polars engine's values on the
    worked run, at relevance level 2 (every topic: complete=True)."""
    dsn = request.getfixturevalue("postgres") if dialect == "postgres" else None
    cols = Columns.of(by="run")
    run, qrels = topk.trec_tables(WORKED_RUN.lazy(), WORKED_QRELS.lazy(), cols, complete=True)
    got = driver.run(
        SQLTestEngine(dialect, dsn), run.collect(), cols, SQL_KEYS,
        parameters=Context(relevance_level=2), inputs=driver.TopK(qrels.collect()),
        per_sample=True,
    )  # fmt: skip
    expected = _expected(SQL_KEYS, 2)
    # The driver gives the geometric keys' per-topic logarithms; evaluate() exponentiates them.
    got = got.select(expected.columns).with_columns(pl.col("gm_map", "gm_bpref").exp())
    assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)


def test_each_parameter_set_is_a_row_of_its_own():
    """Keys that differ in a parameter or level read rows of their own; a key at trec_eval's
    defaults reads the row of its cut-off; the relations hold numbers alone."""
    p5, rel5, rbp, rbp8 = (parse_key(t) for t in ("P_5", "P(rel=1)@5", "rbp", "RBP"))
    assert p5.sql_row == 5 and rbp.sql_row is None
    assert len({p5.sql_row, rel5.sql_row, rbp.sql_row, rbp8.sql_row}) == 4
    assert min(rel5.sql_row, rbp8.sql_row) >= 2**61
    queries = trec_queries([5, None], [p5, rel5, rbp8], relevance_level=2)
    assert f"CAST({rel5.sql_row} AS BIGINT) AS k" in queries["rankmetrics_trec_parameters"]
    assert "CAST(0.8 AS DOUBLE) AS p" in queries["rankmetrics_trec_parameters"]
    assert queries["rankmetrics_trec_gains"].endswith("WHERE 1 = 0")


def test_the_gain_keys_read_the_ideal_at_each_position():
    """G, ndcg_rel, Rndcg and ERR@K on DuckDB, worked out by hand on one topic: run d1 (gain
    2), d2 (not judged), d3 (gain 1); qrels d1 2, d3 1, d4 3 (not retrieved). Ideal gains 3, 2,
    1 (costs 3, 5, 6; ideal dcg 3, 3 + 2 / log2 3, ... + 1 / 2)."""
    run = pl.DataFrame({"sample": "q", "label": ["d1", "d2", "d3"], "score": [3.0, 2.0, 1.0]})
    qrels = pl.DataFrame({"sample": "q", "label": ["d1", "d3", "d4"], "truth": [2, 1, 3]})
    got = rm.evaluate(
        run, ["G", "ndcg_rel", "Rndcg", "ERR@3"], truth_table=qrels, engine="duckdb"
    ).row(0, named=True)
    ideal = [3.0, 3.0 + 2 / math.log2(3), 3.0 + 2 / math.log2(3) + 0.5]
    dcg = [2.0, 2.0, 2.0 + 0.5]  # to positions 1, 2, 3
    # G: d1 at 1 (cost 3, got 2), d3 at 3 (cost 6, got 3); over the ideal's sum, 6.
    assert got["G"] == pytest.approx((2 / math.log2(3) + 1 / math.log2(5)) / 6, abs=1e-12)
    # ndcg_rel: d1 at 1, d3 at 3, d4 not retrieved (the whole run over the whole ideal).
    rel = (dcg[0] / ideal[0] + dcg[2] / ideal[2] + dcg[2] / ideal[2]) / 3
    assert got["ndcg_rel"] == pytest.approx(rel, abs=1e-12)
    # Rndcg: one boundary per gain value (1, 2, 3); the run retrieved 3 <= n + 1 documents.
    points = [d / i for d, i in zip(dcg, ideal, strict=True)]
    assert got["Rndcg"] == pytest.approx(sum(points) / 3, abs=1e-12)
    # ERR@3: d1 stops with 3/16, d3 with 1/16 once d1 (and d2, R 0) did not.
    assert got["ERR@3"] == pytest.approx(3 / 16 + (13 / 16) * (1 / 16) / 3, abs=1e-12)


def test_err_caps_the_grade_at_four_in_sql():
    """gdeval's largest grade is 4: a relevance of 9 stops the reader with chance 15/16, as the
    Polars key (checked against gdeval's formula in test_trec_measures.py) gives."""
    run = pl.DataFrame({"sample": "q", "label": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    qrels = pl.DataFrame({"sample": "q", "label": ["a", "b", "c"], "truth": [0, 9, 2]})
    got = rm.evaluate(run, ["ERR@3"], truth_table=qrels, engine="duckdb")["ERR@3"][0]
    assert got == pytest.approx(15 / 16 / 2 + (1 / 16) * (3 / 16) / 3, abs=1e-12)
    assert got == pytest.approx(rm.evaluate(run, ["ERR@3"], truth_table=qrels)["ERR@3"][0])
