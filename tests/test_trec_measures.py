"""The TREC keys and rm.trec_eval against pytrec_eval-terrier (trec_eval's own C code) on
hypothesis-made runs with heavy ties, unjudged and negatively judged documents, graded qrels
and topics missing on either side; the tie rules against each other on a worked example; the
name parsers."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
import pytrec_eval
from conftest import Engine
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from sklearn.metrics import (
    average_precision_score,
    coverage_error,
    f1_score,
    hamming_loss,
    label_ranking_average_precision_score,
)
from sql_engines import SQLTestEngine

import polars_rankmetrics as rm
from polars_rankmetrics.engines import driver, topk
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.registry import Context, MetricKey, parse_key, parse_keys
from polars_rankmetrics.trec.measures import measures

# Every family computed, with cut-offs that small runs reach.
MEASURES = [
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P.1,2,3", "recall.1,2,4", "infAP", "gm_bpref",
    "Rprec_mult", "utility", "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg",
    "ndcg_cut.1,3", "map_cut.1,3",
    "relative_P.1,3", "success.1,2", "set_P", "set_relative_P", "set_recall", "set_map",
    "set_F", "num_nonrel_judged_ret",
]  # fmt: skip
SUMMARY_ONLY = {"num_q", "gm_map", "gm_bpref"}
# Document ids whose text order differs from their numeric order ("d10" < "d9").
DOCS = ["d1", "d2", "d9", "d10", "D3", "d1a"]
TOPICS = ["q1", "q10", "q2"]


@st.composite
def cases(draw):
    """(run rows, qrels rows): scores from few values (heavy ties), relevance in {-1, 0, 1, 2,
    3}, documents retrieved and not judged or judged and not retrieved, topics in the run only
    or the qrels only; a rank column with arbitrary values (never read)."""
    run, qrels = [], []
    for topic in TOPICS:
        in_run, in_qrels = draw(st.sampled_from([(True, True), (True, True), (True, False),
                                                 (False, True)]))  # fmt: skip
        for doc in DOCS:
            if in_run and draw(st.booleans()):
                score = draw(st.sampled_from([0.0, 0.5, 0.5, 1.0, 1.0, -2.0]))
                run.append((topic, doc, score, draw(st.integers(0, 9))))
            if in_qrels and draw(st.integers(0, 2)):
                qrels.append((topic, doc, draw(st.sampled_from([-1, 0, 0, 1, 1, 2, 3]))))
        if in_qrels and all(rel < 0 for t, _, rel in qrels if t == topic):
            # A qrels topic without a judgment >= 0 crashes trec_eval's C code (rel_levels of
            # size max_rel + 1 <= 0): one judged non-relevant document it never retrieves.
            qrels.append((topic, "d0", 0))
    return run, qrels


def _frames(run, qrels):
    run_frame = pl.DataFrame(
        run, orient="row",
        schema={"sample": pl.String, "label": pl.String, "score": pl.Float64, "rank": pl.Int64},
    ).with_columns(pl.lit("tag").alias("run"))  # fmt: skip
    qrels_frame = pl.DataFrame(
        qrels, orient="row", schema={"sample": pl.String, "label": pl.String, "truth": pl.Int64}
    )
    return run_frame, qrels_frame


def _in_trec_order(run):
    """The run's rows per topic in trec_eval's order, written out here: score descending, then
    document id descending as text."""
    return sorted(run, key=lambda row: (row[0], -row[2], [-ord(c) for c in row[1]] + [1]))


def pytrec_oracle(run, qrels, measures, *, level, judged_only, complete, max_docs):
    """pytrec_eval's per-topic values of ``measures`` (its -m arguments): the run cut at
    ``max_docs`` documents per topic (in the order written out above, as trec_eval's -M cuts);
    with ``complete``, a qrels topic missing from the run as an empty ranking (trec_eval's -c)."""
    qrels_dict: dict[str, dict[str, int]] = {}
    for topic, doc, rel in qrels:
        qrels_dict.setdefault(topic, {})[doc] = rel
    run_dict: dict[str, dict[str, float]] = {}
    taken: dict[str, int] = {}
    for topic, doc, score, _ in _in_trec_order(run):
        taken[topic] = taken.get(topic, 0) + 1
        if max_docs is None or taken[topic] <= max_docs:
            run_dict.setdefault(topic, {})[doc] = score
    if complete:
        for topic in qrels_dict:
            run_dict.setdefault(topic, {})

    def evaluated(rankings):
        evaluator = pytrec_eval.RelevanceEvaluator(
            qrels_dict, set(measures), relevance_level=level, judged_docs_only_flag=judged_only
        )
        return evaluator.evaluate(rankings)

    values = evaluated({t: docs for t, docs in run_dict.items() if docs})
    # An empty ranking (-c) reads uninitialised memory in pytrec_eval-terrier's C code (some
    # measure sets crash, others give num_rel 0), so its values are written out: trec_eval's
    # formulas on no document retrieved are 0 but for num_q (1), num_rel (R) and the
    # geometric means' logarithms (of the floor 1e-5). The names come from a ranking of the
    # topic's most relevant judged document.
    for topic in (t for t, docs in run_dict.items() if not docs):
        judged = qrels_dict[topic]
        names = evaluated({topic: {max(judged, key=judged.__getitem__): 0.0}})[topic]
        r = sum(1 for rel in judged.values() if rel >= level)
        floor = math.log(1e-5)
        values[topic] = {name: 0.0 for name in names} | {
            name: value for name, value in
            {"num_q": 1.0, "num_rel": float(r), "gm_map": floor, "gm_bpref": floor}.items()
            if name in names
        }  # fmt: skip
    return values, qrels_dict, run_dict


def _oracle(run, qrels, *, level, judged_only, complete, max_docs):
    """pytrec_eval's per-topic values of MEASURES, with trec_eval 10.0's interpolated
    precisions (:func:`_interpolated`)."""
    values, qrels_dict, run_dict = pytrec_oracle(
        run, qrels, [m for m in MEASURES if m != "runid"], level=level,
        judged_only=judged_only, complete=complete, max_docs=max_docs,
    )  # fmt: skip
    for topic, topic_values in values.items():
        relevance = qrels_dict[topic]
        ranked = [doc for _, doc, _, _ in _in_trec_order(
            [(topic, doc, score, 0) for doc, score in run_dict[topic].items()]
        ) if not judged_only or relevance.get(doc, -1) >= 0]  # fmt: skip
        points = _interpolated(ranked, relevance, level, judged_only)
        topic_values.update({f"iprec_at_recall_{x:3.2f}": v for x, v in points.items()})
        topic_values["11pt_avg"] = sum(points.values()) / len(points)
    return values


def _interpolated(ranked, relevance, level, judged_only):
    """trec_eval 10.0's interpolated precisions at recall 0, 0.1, ..., 1, written out from
    m_iprec_at_recall.c: the cut-off of recall x is round(x * R) relevant documents (10.0
    rounds; pytrec_eval-terrier builds trec_eval 9, which truncates x * R + 0.9). Walking up
    from the last document retrieved, the largest precision seen so far is the value of every
    cut-off reached at a relevant document; cut-offs past the relevant documents retrieved are
    0; those never reached take the largest precision: where nothing was retrieved, 0 / 0
    under -J (nan), and 0 otherwise (a topic -c adds: trec_eval ranks a placeholder document,
    which only -J removes)."""
    r = sum(1 for rel in relevance.values() if rel >= level)
    hits = [relevance.get(doc, -1) >= level for doc in ranked]
    found = sum(hits)
    cuts = {x / 10: math.floor(x / 10 * r + 0.5) for x in range(11)}
    values = {x: 0.0 for x, cut in cuts.items() if cut > found}
    best = found / len(ranked) if ranked else math.nan if judged_only else 0.0
    so_far = found
    for i in range(len(ranked), 0, -1):
        if so_far == 0:
            break
        best = max(best, so_far / i)
        if hits[i - 1]:
            for x, cut in cuts.items():
                if cut == so_far and x not in values:
                    values[x] = best
            so_far -= 1
    return {x: values.get(x, best) for x in cuts}


def _printed(measure, value):
    """What trec_eval prints for ``value``: C's printf("%6.4f") of its 0 / 0 on x86-64 is
    ``  -nan``."""
    if math.isnan(value):
        return "  -nan"
    return f"{round(value)}" if measure.startswith("num_") else f"{value:.4f}"


def _close(ours: float, theirs: float) -> bool:
    return (math.isnan(ours) and math.isnan(theirs)) or math.isclose(
        ours, theirs, rel_tol=1e-9, abs_tol=1e-12
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cases(),
    st.sampled_from([1, 1, 2]),
    st.booleans(),
    st.booleans(),
    st.sampled_from([None, None, 2]),
)
def test_trec_eval_equals_pytrec_eval(case, level, judged_only, complete, max_docs):
    run, qrels = case
    # trec_eval's bpref reads rel_levels[0 .. level - 1], an array of max_rel + 1 entries:
    # past its end on a topic judged below level - 1 (its C code may crash there). One judged
    # document of relevance level - 1, never retrieved, keeps the read within the array.
    for topic in {t for t, _, _ in qrels}:
        if max(rel for t, _, rel in qrels if t == topic) < level - 1:
            qrels = [*qrels, (topic, "d00", level - 1)]
    expected = _oracle(
        run, qrels, level=level, judged_only=judged_only, complete=complete, max_docs=max_docs
    )
    run_frame, qrels_frame = _frames(run, qrels)
    if not expected or not run:  # no topic in common, or no run to evaluate
        with pytest.raises(ValueError, match="no topic|empty"):
            rm.trec_eval(run_frame, qrels_frame, MEASURES, complete=complete)
        return
    got = rm.trec_eval(
        run_frame, qrels_frame, MEASURES, per_topic=True, complete=complete,
        relevance_level=level, judged_only=judged_only, max_docs=max_docs,
    )  # fmt: skip
    per_topic = got.filter(pl.col("topic") != "all")
    assert set(per_topic["topic"]) == set(expected)
    names = set()
    for _, measure, topic, value, text in per_topic.iter_rows():
        names.add(measure)
        assert _close(value, expected[topic][measure]), (measure, topic, value, expected[topic])
        assert text == _printed(measure, value)
    assert names == set(expected[next(iter(expected))]) - SUMMARY_ONLY
    summary = got.filter(pl.col("topic") == "all")
    assert summary["measure"].to_list() == [m.name for m in measures(MEASURES)]
    for _, measure, _, value, text in summary.iter_rows():
        if measure == "runid":
            assert (value, text) == (None, "tag")
            continue
        values = [expected[topic][measure] for topic in expected]
        if measure.startswith("gm_"):  # pytrec_eval gives each topic's log
            want = math.exp(sum(values) / len(values))
        elif measure.startswith("num_"):
            want = sum(values)
        else:
            want = sum(values) / len(values)
        assert _close(value, want), (measure, value, want)


# A worked example where the tie rules differ: q1 retrieves d1 and d2 tied, d3 below; only d1
# is relevant. trec_eval's order puts d2 (the larger id) first.
TIED_RUN = pl.DataFrame(
    {"sample": ["q1"] * 3, "label": ["d1", "d2", "d3"], "score": [0.5, 0.5, 0.2]}
)
TIED_QRELS = pl.DataFrame({"sample": ["q1"], "label": ["d1"], "truth": [1]})


def test_tie_rules_on_a_worked_example():
    keys = ["precision@1", "mrr", "map"]
    average = rm.evaluate(TIED_RUN, keys, truth_table=TIED_QRELS)
    trec = rm.evaluate(TIED_RUN, keys, truth_table=TIED_QRELS, ties="trec_eval")
    # Over the two orders of {d1, d2}: d1 first half the time.
    assert average.row(0) == pytest.approx((0.5, 0.75, 0.75))
    # d2 then d1: nothing at 1, d1 at position 2.
    assert trec.row(0) == pytest.approx((0.0, 0.5, 0.5))
    named = rm.evaluate(TIED_RUN, ["P_1", "RR", "AP"], truth_table=TIED_QRELS)
    assert named.row(0) == pytest.approx((0.0, 0.5, 0.5))
    assert named.columns == ["P_1", "RR", "AP"]
    # Dense tables take the rule too; label order is text order ("d10" before "d9").
    dense = pl.DataFrame(
        {"sample": [1, 1, 1], "label": ["d9", "d10", "x"], "score": [1.0, 1.0, 0.0],
         "truth": [0, 1, 0]}
    )  # fmt: skip
    assert rm.evaluate(dense, "precision@1", ties="trec_eval").item() == 0.0
    assert rm.evaluate(dense, "precision@1").item() == 0.5


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_the_tie_rule_leaves_what_reads_the_scores_themselves(engine):
    """ties='trec_eval' orders tied scores within a sample. A key reading the scores' values
    (a threshold, one label's scores across samples, probabilities) is refused with it, where
    the tie-broken scores would give other numbers on a table without a tie; the keys reading
    the order within each sample give scikit-learn's numbers there, as without the rule."""
    untied = pl.DataFrame({"sample": [1, 1, 2, 2], "label": ["a", "b", "a", "b"],
                           "score": [0.9, 0.8, 0.2, 0.1], "truth": [1, 1, 0, 1]})  # fmt: skip
    y_true = np.array([[1, 1], [0, 1]])
    y_score = np.array([[0.9, 0.8], [0.2, 0.1]])
    for key, reads in (
        ("hamming_loss", "the scores against the threshold"),
        ("f1_micro", "the scores against the threshold"),
        ("roc_auc_macro", "each label's scores across the samples"),
        ("average_precision_micro", "each label's scores across the samples"),
        ("brier_micro", "the scores as probabilities"),
        ("ece_micro@5", "the scores as probabilities"),
    ):
        with pytest.raises(ValueError, match=f"which {key} does not read: it reads {reads}"):
            rm.evaluate(untied, [key], ties="trec_eval", engine=engine)
    # With the decisions in a pred column, the threshold keys read no score.
    decided = untied.with_columns(pred=pl.col("score") >= 0.5)
    tied = rm.evaluate(decided, ["hamming_loss", "f1_micro"], pred="pred", ties="trec_eval",
                       engine=engine)  # fmt: skip
    predicted = (y_score >= 0.5).astype(int)
    assert tied.row(0) == pytest.approx((
        hamming_loss(y_true, predicted), f1_score(y_true, predicted, average="micro"),
    ))  # fmt: skip
    keys = ["lrap", "coverage_error", "average_precision_samples"]
    assert rm.evaluate(untied, keys, ties="trec_eval", engine=engine).row(0) == pytest.approx((
        label_ranking_average_precision_score(y_true, y_score),
        coverage_error(y_true, y_score),
        average_precision_score(y_true, y_score, average="samples"),
    ))  # fmt: skip


def test_ndcg_gains_and_relevance_level():
    run = pl.DataFrame(
        {"run": "r", "sample": "q1", "label": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]}
    )
    qrels = pl.DataFrame({"sample": "q1", "label": ["a", "b", "c"], "truth": [0, 1, 2]})
    got = rm.trec_eval(run, qrels, ["ndcg.1=3,2=9", "P.1,3"], relevance_level=2)
    # dcg = 3 / log2(3) + 9 / log2(4); ideal = 9 + 3 / log2(3).
    dcg, ideal = 3 / math.log2(3) + 9 / 2, 9 + 3 / math.log2(3)
    assert got["measure"].to_list() == ["P_1", "P_3", "ndcg_1=3,2=9"]
    assert got["value"].to_list() == pytest.approx([0.0, 1 / 3, dcg / ideal])


def test_names():
    assert parse_key("P_5") == MetricKey("trec_p", 5, alias="P_5")
    assert parse_key("P(rel=2)@5") == MetricKey("trec_p", 5, (("rel", 2),), "P(rel=2)@5")
    assert parse_key("nDCG@10").name == parse_key("ndcg_cut_10").name == "trec_ndcg"
    assert parse_key("iprec_at_recall_0.50").param("recall") == 0.5
    assert parse_key("map") == MetricKey("map")  # the library's key
    assert parse_keys(["map", "ndcg"]) == [MetricKey("map"), MetricKey("ndcg")]
    # Beside a TREC key, trec_eval's names name trec_eval's measures, under the name asked.
    assert parse_keys(["P_5", "map", "ndcg", "ndcg@5"]) == [
        parse_key("P_5"), MetricKey("trec_map", alias="map"),
        MetricKey("trec_ndcg", alias="ndcg"), MetricKey("ndcg", 5),
    ]  # fmt: skip
    with pytest.raises(ValueError, match="closest known names: bpref, Bpref"):
        parse_key("bpreff")
    with pytest.raises(ValueError, match="unknown metric 'P_0'"):
        parse_key("P_0")
    assert [m.name for m in measures(["P.10,5", "map", "P"])] == ["map", "P_5", "P_10"]
    assert [m.name for m in measures("official")][:3] == ["runid", "num_q", "num_ret"]
    assert [m.name for m in measures("iprec_at_recall.0,.5")] == [
        "iprec_at_recall_0.00", "iprec_at_recall_0.50"
    ]  # fmt: skip
    for bad, why in (("foo", "unknown"), ("P.x", "positive"), ("map.3", "no parameters"),
                     ("ndcg.1", "level=gain")):  # fmt: skip
        with pytest.raises(ValueError, match=why):
            measures(bad)


def test_refusals():
    with pytest.raises(ValueError, match="give truth_table"):
        rm.evaluate(TIED_RUN.with_columns(truth=1), ["P_1", "precision@1"])
    with pytest.raises(ValueError, match="give truth_table"):
        rm.evaluate(TIED_RUN.with_columns(truth=1), ["P_1"])
    with pytest.raises(ValueError, match="trec_eval's tie rule"):
        rm.evaluate(TIED_RUN, ["P_1"], truth_table=TIED_QRELS, ties="average")
    with pytest.raises(ValueError, match="ties must be one of"):
        rm.evaluate(TIED_RUN, ["precision@1"], truth_table=TIED_QRELS, ties="random")
    with pytest.raises(ValueError, match="of the TREC keys"):
        rm.evaluate(TIED_RUN, ["precision@1"], truth_table=TIED_QRELS, max_docs=3)
    with pytest.raises(ValueError, match="must hold integers"):
        rm.evaluate(TIED_RUN, ["P_1"], truth_table=TIED_QRELS.with_columns(truth=0.5))
    with pytest.raises(ValueError, match="column 'run' not found in the run"):
        rm.trec_eval(TIED_RUN, TIED_QRELS)


@settings(max_examples=10, deadline=None)
@given(cases())
def test_tie_report_flags_every_sample_where_the_rules_differ(case):
    run, qrels = case
    run_frame, qrels_frame = _frames(run, qrels)
    if run_frame.height == 0:
        return
    run_frame = run_frame.with_columns(group=pl.col("sample"))
    # The library's keys read binary truth.
    qrels_frame = qrels_frame.with_columns(group=pl.col("sample"), truth=pl.col("truth") > 0)
    keys = ["precision@1", "precision@2"]
    values = {
        ties: rm.evaluate(run_frame, keys, truth_table=qrels_frame, by="group", ties=ties)
        for ties in ("average", "trec_eval")
    }
    report = rm.tie_report(run_frame, [1, 2], truth_table=qrels_frame, by="group")
    assert report["samples"].to_list() == [1] * report.height
    flagged = {row["group"]: row for row in report.iter_rows(named=True)}
    for average, trec in zip(values["average"].iter_rows(named=True),
                             values["trec_eval"].iter_rows(named=True), strict=True):  # fmt: skip
        row = flagged.get(average["group"])
        for k in (1, 2):
            if not math.isclose(average[f"precision@{k}"], trec[f"precision@{k}"]):
                assert row is not None and row[f"mixed@{k}"] == 1
    # A tie straddling a cut-off is a tie; a mixed block straddling it straddles it.
    for row in report.iter_rows(named=True):
        assert row["tied"] >= row["straddling@1"] >= row["mixed@1"]
    # qrels shared by runs (no by column): the same counts.
    shared = rm.tie_report(run_frame, [1, 2], truth_table=qrels_frame.drop("group"), by="group")
    assert_frame_equal(shared, report)


def test_measures_outside_pytrec_eval():
    """rbp, rbp_resid, unj (trec_eval 10.0, not in pytrec_eval), relstring and ir_measures'
    Judged, worked out by hand: a (relevance 2), b (not in the qrels), c (0), d (-1: pooled,
    unjudged) retrieved in that order."""
    run = pl.DataFrame(
        {"run": "r", "sample": "q1", "label": ["a", "b", "c", "d"], "score": [3.0, 2.0, 1, 0.5]}
    )
    qrels = pl.DataFrame({"sample": "q1", "label": ["a", "c", "d", "e"], "truth": [2, 0, -1, 1]})
    got = rm.trec_eval(run, qrels, ["rbp", "rbp_resid", "unj.2,5"])
    # rbp's gains are scaled by the largest relevance, 2: a's gain is 1, at position 1.
    resid = 0.9**4 + 0.1 * (0.9**1 + 0.9**3)  # b and d unjudged, at 2 and 4
    assert got["measure"].to_list() == ["rbp", "rbp_resid", "unj_2", "unj_5"]
    assert got["value"].to_list() == pytest.approx([0.1, resid, 1 / 2, 2 / 5])
    strings = rm.trec_eval(run, qrels, ["relstring", "relstring.3", "num_ret"], per_topic=True)
    # The first request with parameters wins, as in trec_eval; relstring has no summary.
    assert strings.rows() == [
        ("r", "num_ret", "q1", 4.0, "4"), ("r", "relstring_3", "q1", None, "'2-0'"),
        ("r", "num_ret", "all", 4.0, "4"),
    ]  # fmt: skip
    named = rm.evaluate(
        run, ["RBP", "RBP(p=0.5)", "rbp", "Judged@2", "Judged@4"], truth_table=qrels
    )
    assert named.row(0) == pytest.approx((0.2, 0.5, 0.1, 1 / 2, 3 / 4))


def test_compare_runs_on_trec_keys():
    """compare's paired deltas over topics on TREC keys: the mean of pytrec_eval's per-topic
    differences (runs tied throughout, one qrels for both)."""
    run_rows, qrels = [], []
    for topic in range(8):
        for doc in range(6):
            for tag in ("base", "new"):
                score = float((topic * 7 + doc * (3 if tag == "new" else 5)) % 4)
                run_rows.append((f"q{topic}", f"d{doc}", score, 0, tag))
            if (topic + doc) % 3:
                qrels.append((f"q{topic}", f"d{doc}", (topic * doc) % 3))
    run = pl.DataFrame(
        run_rows, orient="row",
        schema={"sample": pl.String, "label": pl.String, "score": pl.Float64, "rank": pl.Int64,
                "run": pl.String},
    )  # fmt: skip
    _, qrels_frame = _frames([], qrels)
    got = rm.compare(run, ["P_3", "AP"], truth_table=qrels_frame, by="run", baseline="base")
    evaluator = pytrec_eval.RelevanceEvaluator(
        {q: {d: r for t, d, r in qrels if t == q} for q, _, _ in qrels}, {"P.3", "map"}
    )
    values = {
        tag: evaluator.evaluate({q: {d: s for q2, d, s, _, t in run_rows if q2 == q and t == tag}
                                 for q, _, _, _, _ in run_rows})
        for tag in ("base", "new")
    }  # fmt: skip
    for metric, name in (("P_3", "P_3"), ("AP", "map")):
        deltas = [values["new"][q][name] - values["base"][q][name] for q in values["new"]]
        row = got.filter(pl.col("metric") == metric)
        assert row["delta"].item() == pytest.approx(sum(deltas) / len(deltas))
    with pytest.raises(ValueError, match="geometric"):
        rm.compare(run, ["gm_map"], truth_table=qrels_frame, by="run", baseline="base")


def test_several_runs_are_evaluated_apart():
    """Two run tags in one table give each run's own block, as each run alone (topics of the
    qrels missing from one run only count in it with complete=True)."""
    run = pl.DataFrame(
        {"run": ["b", "b", "b", "a", "a"], "sample": ["q1", "q1", "q2", "q1", "q1"],
         "label": ["x", "y", "x", "y", "z"], "score": [1.0, 1.0, 0.5, 2.0, 1.0]}
    )  # fmt: skip
    qrels = pl.DataFrame(
        {"sample": ["q1", "q1", "q2"], "label": ["x", "y", "x"], "truth": [1, 0, 2]}
    )
    for complete in (False, True):
        both = rm.trec_eval(run, qrels, ["official"], per_topic=True, complete=complete)
        assert both["run"].unique(maintain_order=True).to_list() == ["a", "b"]
        for tag in ("a", "b"):
            alone = rm.trec_eval(
                run.filter(pl.col("run") == tag), qrels, ["official"], per_topic=True,
                complete=complete,
            )  # fmt: skip
            assert_frame_equal(both.filter(pl.col("run") == tag), alone)
        num_q = both.filter(pl.col("measure") == "num_q")["value"].to_list()
        assert num_q == ([2.0, 2.0] if complete else [1.0, 2.0])


def test_the_tie_rule_on_duckdb():
    """ties='trec_eval' orders the rows before any engine reads them."""
    keys = ["precision@1", "map"]
    polars = rm.evaluate(TIED_RUN, keys, truth_table=TIED_QRELS, ties="trec_eval")
    duck = rm.evaluate(TIED_RUN, keys, truth_table=TIED_QRELS, ties="trec_eval", engine="duckdb")
    assert_frame_equal(polars, duck)
    assert polars.row(0) == pytest.approx((0.0, 0.5))


SQL_KEYS = [
    "num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "AP", "map_cut_2",
    "gm_map", "Rprec", "bpref", "gm_bpref", "RR", "infAP", "binG", "set_P", "set_recall",
    "set_relative_P", "set_map", "set_F", "utility", "P_1", "P_3", "recall_2", "success_1",
    "relative_P_2", "unj_2", "nDCG", "ndcg_cut_1", "ndcg_cut_3",
]  # fmt: skip


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.booleans(), st.booleans(), st.sampled_from([None, 2]))
def test_the_trec_keys_on_duckdb(case, judged_only, complete, max_docs):
    """The TREC keys that sql/19_trec_per_sample.sql computes give the Polars engine's values
    per topic on DuckDB, in buckets (the Polars values equal pytrec_eval's, above)."""
    run, qrels = case
    judged_topics = {topic for topic, _, _ in qrels}
    if not {topic for topic, *_ in run} & judged_topics:  # nothing to evaluate (tested above)
        return
    run_frame, qrels_frame = _frames(run, qrels)
    options = dict(truth_table=qrels_frame, by="run", per_sample=True, judged_only=judged_only,
                   complete=complete, max_docs=max_docs)  # fmt: skip
    polars = rm.evaluate(run_frame, SQL_KEYS, **options)
    # In buckets of a few rows, out of core.
    duck = Engine("duckdb", 7).evaluate(run_frame, SQL_KEYS, **options)
    assert_frame_equal(polars, duck, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)


# A worked run: ties, a document outside the qrels (d1, d4), pooled unjudged (d6), graded
# relevance, a qrels topic the run lacks (q3).
WORKED_RUN = pl.DataFrame(
    {"run": "r", "sample": ["q1"] * 4 + ["q2"] * 3,
     "label": ["d1", "d2", "d3", "d4", "d1", "d5", "d6"],
     "score": [1.0, 0.5, 0.5, 0.2, 0.3, 0.3, 0.1]}
)  # fmt: skip
WORKED_QRELS = pl.DataFrame(
    {"sample": ["q1", "q1", "q1", "q2", "q2", "q3"],
     "label": ["d2", "d3", "d9", "d5", "d6", "d1"], "truth": [1, 2, 0, 1, -1, 1]}
)  # fmt: skip


@pytest.mark.parametrize("dialect", ["datafusion", "sqlite", "postgres"])
def test_the_trec_keys_in_exported_sql(dialect, request):
    """sql/19_trec_per_sample.sql exported to the other verified engines gives the Polars
    engine's values on the worked run (every topic: complete=True)."""
    dsn = request.getfixturevalue("postgres") if dialect == "postgres" else None
    cols = Columns.of(by="run")
    run, qrels = topk.trec_tables(WORKED_RUN.lazy(), WORKED_QRELS.lazy(), cols, complete=True)
    got = driver.run(
        SQLTestEngine(dialect, dsn), run.collect(), cols, parse_keys(SQL_KEYS),
        parameters=Context(), inputs=driver.TopK(qrels.collect()), per_sample=True,
    )  # fmt: skip
    expected = rm.evaluate(
        WORKED_RUN, SQL_KEYS, truth_table=WORKED_QRELS, by="run", per_sample=True, complete=True
    )
    # The driver gives the geometric keys' per-topic logarithms; evaluate() exponentiates them.
    got = got.select(expected.columns).with_columns(pl.col("gm_map", "gm_bpref").exp())
    assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)


def test_the_trec_keys_on_spark_and_in_polars_buckets(spark):
    """The worked run on Spark and on the Polars engine in buckets: the Polars engine's values
    in one piece, every topic (complete=True: q3 is in the qrels only)."""
    run, qrels = WORKED_RUN, WORKED_QRELS
    options = dict(truth_table=qrels, by="run", per_sample=True, complete=True)
    polars = rm.evaluate(run, SQL_KEYS, **options)
    assert polars["sample"].to_list() == ["q1", "q2", "q3"]
    for other in (Engine("spark"), Engine("polars", 3)):
        assert_frame_equal(
            polars, other.evaluate(run, SQL_KEYS, **options), check_exact=False, rel_tol=1e-9,
            abs_tol=1e-12,
        )  # fmt: skip


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.sampled_from([0, 1, 2]), st.booleans(), st.booleans())
def test_rows_in_position_order_give_what_each_topic_sorted_gives(case, level, judged, complete):
    # rm.trec_eval reads the rows in position order and no measure sorts; within a memory
    # limit it goes through evaluate, where each topic's measures sort its rows: the same
    # formulas, two ways of reading the rows, one set of numbers on every all_trec measure and
    # on the parameters that change which rows are read (gains, cut-offs, recall points).
    run, qrels = case
    if not run or not {t for t, *_ in run} & {t for t, *_ in qrels}:
        return
    run_frame, qrels_frame = _frames(run, qrels)
    asked = ["all_trec", "ndcg.1=3,2=9", "ndcg_cut.3", "G.2=5", "11pt_avg.0.2,0.7"]
    options = {"relevance_level": level, "judged_only": judged, "complete": complete}
    ordered = rm.trec_eval(run_frame, qrels_frame, asked, per_topic=True, **options)
    sorted_ = rm.trec_eval(
        run_frame, qrels_frame, asked, per_topic=True, memory_limit="4GB", **options
    )
    assert ordered["measure"].to_list() == sorted_["measure"].to_list()
    # Sums in another order may differ in the last bit, and so the printed text of a value
    # at a rounding boundary (0.41855 against 0.41855000000000003): the text is compared
    # where the values are the same double.
    assert_frame_equal(ordered.drop("text"), sorted_.drop("text"), check_exact=False,
                       rel_tol=1e-12, abs_tol=1e-12)  # fmt: skip
    same = ordered["value"].eq_missing(sorted_["value"])
    assert ordered.filter(same)["text"].to_list() == sorted_.filter(same)["text"].to_list()


def _gdeval_err(run, qrels, k):
    """ERR@k per topic as the TREC Web track's gdeval.pl computes it (ir_measures runs it for
    ERR), written out: the run in its order (score descending, docno descending), gain
    (2^grade - 1) / 2^4 for a judgement above 0 (gdeval keeps no other), the cascade over the
    first k documents. gdeval refuses a grade above 4, counted as 4 here."""
    grades = {(t, d): min(rel, 4) for t, d, rel in qrels if rel > 0}
    values = {}
    for topic in {t for t, *_ in run} & {t for t, *_ in qrels}:
        ranked = [doc for t, doc, _, _ in _in_trec_order(run) if t == topic]
        err, reach = 0.0, 1.0
        for position, doc in enumerate(ranked[:k], start=1):
            stop = (2 ** grades.get((topic, doc), 0) - 1) / 2**4
            err += reach * stop / position
            reach *= 1 - stop
        values[topic] = err
    return values


def test_err_of_a_worked_topic():
    # Grades 3, 0, 2 in that order: 7/16 at 1, then (3/16) / 3 reached with chance 9/16.
    run = [("q1", "a", 3.0, 1), ("q1", "b", 2.0, 2), ("q1", "c", 1.0, 3), ("q1", "e", 0.5, 4)]
    qrels = [("q1", "a", 3), ("q1", "c", 2), ("q1", "e", 9), ("q1", "d", 4)]
    run_frame, qrels_frame = _frames(run, qrels)
    got = rm.evaluate(run_frame, ["ERR@3", "ERR@4"], truth_table=qrels_frame, ties="trec_eval")
    assert got["ERR@3"][0] == pytest.approx(7 / 16 + 9 / 16 * 3 / 16 / 3)
    assert got["ERR@4"][0] == pytest.approx(_gdeval_err(run, qrels, 4)["q1"])
    on_duckdb = rm.evaluate(
        run_frame, ["ERR@3", "ERR@4"], truth_table=qrels_frame, ties="trec_eval", engine="duckdb"
    )
    assert on_duckdb.row(0) == pytest.approx(got.row(0), abs=1e-12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.sampled_from([1, 2, 3, 20]))
def test_err_equals_gdeval(case, k):
    run, qrels = case
    expected = _gdeval_err(run, qrels, k)
    if not expected:
        return
    run_frame, qrels_frame = _frames(run, qrels)
    got = rm.evaluate(
        run_frame, [f"ERR@{k}"], truth_table=qrels_frame, ties="trec_eval", per_sample=True
    )
    assert dict(got.select("sample", f"ERR@{k}").iter_rows()) == pytest.approx(expected)
