"""Calls that mix trec_eval's names with the library's keys: each key by its own rules.

The oracles: pytrec_eval (trec_eval's C code) for trec_eval's names, and the library's
retrieval keys written out on one ranked list, averaged over the orders of each tied block
(``reference.expected_over_orders``), on the qrels read as relevant at ``relevance_level``.
"""

import polars as pl
import pytest
from reference import expected_over_orders

import polars_rankmetrics as rm

# Two runs with tied scores, graded qrels with a -1 (pooled, unjudged) and 0s; q3 is judged
# and not retrieved by run s; q4 is retrieved and not judged.
RUN = [
    ("r", "q1", "a", 2.0), ("r", "q1", "b", 2.0), ("r", "q1", "c", 1.0), ("r", "q1", "u", 0.5),
    ("r", "q2", "x", 3.0), ("r", "q2", "y", 1.0), ("r", "q2", "z", 1.0),
    ("r", "q3", "m", 1.0), ("r", "q4", "a", 1.0),
    ("s", "q1", "c", 3.0), ("s", "q1", "a", 1.0), ("s", "q1", "d", 1.0),
    ("s", "q2", "z", 2.0), ("s", "q2", "w", 2.0), ("s", "q2", "x", 2.0),
]  # fmt: skip
QRELS = [
    ("q1", "a", 2), ("q1", "b", 0), ("q1", "c", 1), ("q1", "d", -1),
    ("q2", "x", 1), ("q2", "y", 0), ("q2", "z", 2), ("q3", "m", 1), ("q3", "n", 2),
]  # fmt: skip
TREC = {"map": "map", "ndcg": "ndcg", "P_2": "P.2", "recip_rank": "recip_rank"}
LIBRARY = {"precision@2": ("precision", 2), "recall@2": ("recall", 2), "mrr": ("mrr", None)}


def _frames():
    run = pl.DataFrame(RUN, schema=["run", "sample", "label", "score"], orient="row")
    qrels = pl.DataFrame(QRELS, schema=["sample", "label", "truth"], orient="row")
    return run, qrels


def _pytrec(tag, level, rows=RUN):
    """pytrec_eval's mean of each of TREC over the topics of both the run (``rows``) and the
    qrels."""
    import pytrec_eval

    qrels, run = {}, {}
    for topic, doc, rel in QRELS:
        qrels.setdefault(topic, {})[doc] = rel
    for name, topic, doc, score in rows:
        if name == tag:
            run.setdefault(topic, {})[doc] = score
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(TREC.values()), relevance_level=level)
    per_topic = evaluator.evaluate(run)
    means = {}
    for name, measure in TREC.items():
        printed = measure.replace(".", "_")
        means[name] = sum(v[printed] for v in per_topic.values()) / len(per_topic)
    return means


def _library(tag, level, rows=RUN):
    """The library's keys over the topics of either table (the run: ``rows``), ties
    averaged, a relevance at least ``level`` relevant."""
    topics = sorted({t for n, t, _, _ in rows if n == tag} | {t for t, _, _ in QRELS})
    means = {}
    for name, (metric, k) in LIBRARY.items():
        values = []
        for topic in topics:
            relevant = {d for t, d, rel in QRELS if t == topic and rel >= level}
            scored = [(s, d in relevant, 1.0) for n, t, d, s in rows if n == tag and t == topic]
            values.append(expected_over_orders(metric, k, scored, [1.0] * len(relevant)))
        means[name] = sum(values) / len(values)
    return means


@pytest.mark.parametrize("level", [1, 2])
def test_each_key_by_its_own_rules(level):
    run, qrels = _frames()
    keys = [*TREC, *LIBRARY]
    got = rm.evaluate(run, keys, truth_table=qrels, by="run", relevance_level=level)
    assert got.columns == ["run", *keys]  # each named as asked
    for row in got.iter_rows(named=True):
        want = _pytrec(row["run"], level) | _library(row["run"], level)
        assert [row[k] for k in keys] == pytest.approx([want[k] for k in keys], abs=1e-12)


def test_library_keys_alone_are_unchanged():
    # map and ndcg name the library's keys without a TREC key beside them: ties averaged.
    run, qrels = _frames()
    binary = qrels.with_columns(pl.col("truth").ge(1).cast(pl.Int64))
    got = rm.evaluate(run, ["map", "mrr"], truth_table=binary, by="run")
    for row in got.iter_rows(named=True):
        topics = sorted({t for n, t, _, _ in RUN if n == row["run"]} | {t for t, _, _ in QRELS})
        values = []
        for topic in topics:
            relevant = {d for t, d, rel in QRELS if t == topic and rel >= 1}
            scored = [(s, d in relevant, 1.0) for n, t, d, s in RUN
                      if n == row["run"] and t == topic]  # fmt: skip
            values.append(expected_over_orders("map", None, scored, [1.0] * len(relevant)))
        assert row["map"] == pytest.approx(sum(values) / len(values), abs=1e-12)
    with pytest.raises(ValueError, match="must be 0 or 1"):  # graded qrels: refused, as before
        rm.evaluate(run, ["map", "mrr"], truth_table=qrels, by="run")


def test_per_sample_each_key_over_its_own_topics():
    run, qrels = _frames()
    got = rm.evaluate(run, ["P_2", "precision@2"], truth_table=qrels, by="run", per_sample=True)
    rows = {
        (r["run"], r["sample"]): (r["P_2"], r["precision@2"]) for r in got.iter_rows(named=True)
    }
    # q4 has no qrels: neither counts it; q3 is in the qrels: trec_eval evaluates it only for
    # the run that retrieved in it, the library's keys for both runs (0 for s).
    assert sorted(rows) == [("r", "q1"), ("r", "q2"), ("r", "q3"), ("r", "q4"), ("s", "q1"),
                            ("s", "q2"), ("s", "q3")]  # fmt: skip
    assert rows["s", "q3"] == (None, 0.0)
    assert rows["r", "q4"] == (None, 0.0)


def test_compare_of_mixed_keys_reads_each_keys_values():
    run, qrels = _frames()
    keys = ["map", "P_2", "precision@2", "mrr"]
    compared = rm.compare(run, keys, truth_table=qrels, by="run", baseline="r", n_resamples=200,
                          n_boot=100, on_missing="drop")  # fmt: skip
    assert compared["metric"].to_list() == keys
    trec, library = _pytrec("s", 1), _library("s", 1)
    values = dict(zip(compared["metric"], compared["value"], strict=True))
    # The comparison reads the samples both runs hold (q4 is r's alone): map and P_2 on q1 and
    # q2 (s did not retrieve for q3, which trec_eval then leaves out), the library's keys on
    # q1, q2 and q3: each of s's means over all its own topics.
    assert values["precision@2"] == pytest.approx(library["precision@2"], abs=1e-12)
    assert values["mrr"] == pytest.approx(library["mrr"], abs=1e-12)
    assert values["map"] == pytest.approx(trec["map"], abs=1e-12)
    assert values["P_2"] == pytest.approx(trec["P_2"], abs=1e-12)


def test_docs_name_table_names_keys_of_each_tool():
    # docs/trec.md's table of names: each trec_eval and ir_measures name it gives (K = 10,
    # X = 0.5) is a key here, and each ir_measures name is one ir_measures parses.
    import re
    from pathlib import Path

    import ir_measures

    from polars_rankmetrics.metrics.registry import parse_key

    text = (Path(__file__).parent.parent / "docs" / "trec.md").read_text()
    table = text.split("## One measure, four names")[1].split("\n\n")[2]
    rows = [line.split(" | ") for line in table.splitlines()[2:]]
    checked = 0
    for row in rows:
        for column in (1, 2):
            if "not taken here" in row[column]:
                continue
            for name in re.findall(r"`([^`]+)`", row[column]):
                name = name.replace("_K", "_10").replace("@K", "@10").replace("_X", "_0.50")
                name = name.replace("@X", "@0.5")
                assert parse_key(name) is not None, name
                if column == 2:
                    assert ir_measures.parse_measure(name) is not None, name
                checked += 1
    assert checked > 40


def test_docs_example_of_mixed_names():
    # docs/trec.md: a (relevant) and b tie at 1.0, then c (relevant). trec_eval orders b, a,
    # c: AP (1/2 + 2/3) / 2, P_1 0; the library averages over (a, b, c) and (b, a, c):
    # precision@1 (1 + 0) / 2, mrr (1 + 1/2) / 2.
    run = pl.DataFrame({"sample": "q1", "label": ["a", "b", "c"], "score": [1.0, 1.0, 0.5]})
    qrels = pl.DataFrame({"sample": "q1", "label": ["a", "b", "c"], "truth": [1, 0, 1]})
    got = rm.evaluate(run, ["map", "P_1", "precision@1", "mrr"], truth_table=qrels)
    assert got.row(0) == pytest.approx(((1 / 2 + 2 / 3) / 2, 0.0, 0.5, 0.75), abs=1e-12)


def test_command_states_both_tie_rules(tmp_path, capsys):
    from polars_rankmetrics.cli import TIE_RULES, main

    run, qrels = _frames()
    run.write_parquet(tmp_path / "run.parquet")
    qrels.write_parquet(tmp_path / "qrels.parquet")
    arguments = [str(tmp_path / "run.parquet"), "--truth-table", str(tmp_path / "qrels.parquet"),
                 "--by", "run", "--format", "csv"]  # fmt: skip
    assert main(["evaluate", *arguments, "--metrics", "map,P_2,precision@2"]) == 0
    out, err = capsys.readouterr()
    assert err == (
        f"rankmetrics: TREC keys: {TIE_RULES['trec_eval']}; the library's keys: "
        f"{TIE_RULES['average']}\n"
    )
    got = pl.read_csv(out.encode())
    want = rm.evaluate(run, ["map", "P_2", "precision@2"], truth_table=qrels, by="run")
    assert got.columns == want.columns and got["map"].to_list() == pytest.approx(want["map"])


# The report's runs: RUN without q4 (no qrels) and with s retrieving in q3, so that each key
# holds the same topics for both runs and the comparison needs none dropped.
REPORTED = [row for row in RUN if row[1] != "q4"] + [("s", "q3", "n", 1.0)]
REPORT_KEYS = [*TREC, *LIBRARY]


@pytest.fixture(scope="module")
def mixed_report():
    run = pl.DataFrame(REPORTED, schema=["run", "sample", "label", "score"], orient="row")
    qrels = _frames()[1]
    options = {"truth_table": qrels, "by": "run", "relevance_level": 2}
    report = rm.html_report(run, metrics=REPORT_KEYS, baseline="r", ci=0.9, n_boot=100,
                            **options)  # fmt: skip
    return run, options, report


def test_report_of_mixed_keys_has_evaluates_and_compares_numbers(mixed_report):
    from polars.testing import assert_frame_equal

    run, options, report = mixed_report
    # The summary: each key by its own rules (pytrec_eval for trec_eval's names, the written-out
    # library keys on qrels read as relevant at 2), and evaluate's intervals.
    for row in report.summary.iter_rows(named=True):
        want = _pytrec(row["run"], 2, REPORTED) | _library(row["run"], 2, REPORTED)
        assert [row[k] for k in REPORT_KEYS] == pytest.approx([want[k] for k in REPORT_KEYS])
    evaluated = rm.evaluate(run, REPORT_KEYS, ci=0.9, n_boot=100, **options)
    assert_frame_equal(report.summary, evaluated, check_exact=False, rel_tol=1e-12)
    compared = rm.compare(run, REPORT_KEYS, baseline="r", ci=0.9, n_boot=100, **options)
    assert_frame_equal(report.comparison, compared, check_exact=False, rel_tol=1e-12)
    assert "The TREC keys (map, ndcg, P_2, recip_rank)" in report.html
    assert "The library&#x27;s keys (precision@2, recall@2, mrr)" in report.html


def test_report_refuses_keys_it_cannot_show():
    run, qrels = _frames()
    for metrics, message in [
        (["map", "bogus@3"], "unknown metric 'bogus@3'"),
        (["P_5", "gm_map"], "gm_map is a geometric mean"),
        (["P_5", "f1_macro"], "f1_macro is averaged over labels"),
    ]:
        with pytest.raises(ValueError, match=message):
            rm.html_report(run, truth_table=qrels, by="run", metrics=metrics)
    with pytest.raises(ValueError, match="P_5 evaluates a run against qrels"):
        rm.html_report(run, by="run", metrics=["P_5"])


def test_report_command_takes_mixed_metrics(mixed_report, tmp_path, capsys):
    import re

    from polars_rankmetrics.cli import TIE_RULES, main

    run, _, report = mixed_report
    run.write_parquet(tmp_path / "run.parquet")
    _frames()[1].write_parquet(tmp_path / "qrels.parquet")
    page = tmp_path / "page.html"
    arguments = ["report", str(tmp_path / "run.parquet"), "--truth-table",
                 str(tmp_path / "qrels.parquet"), "--by", "run", "--relevance-level", "2",
                 "--html", str(page), "--metrics"]  # fmt: skip
    assert main([*arguments, ",".join(REPORT_KEYS)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (
        f"rankmetrics: TREC keys: {TIE_RULES['trec_eval']}; the library's keys: "
        f"{TIE_RULES['average']}"
    )
    table = page.read_text().split("<h2>Summary</h2>", 1)[1].split("</table>", 1)[0]
    shown = dict(re.findall(r'<tr><td title="[^"]*">([^<]+)</td><td>([^<]+)</td>', table))
    want = report.summary.filter(run="r").row(0, named=True)
    assert shown == {key: f"{want[key]:.4f}" for key in REPORT_KEYS}
    for bad, status in [("map,bogus@3", 1), ("", 2)]:
        assert main([*arguments, bad]) == status
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("rankmetrics: error:"), err
    assert main(arguments[:2] + ["--metrics", "map"]) == 2
    assert capsys.readouterr().err == "rankmetrics: error: --metrics goes with --html\n"


def test_docs_name_table_names_every_retrieval_key_of_the_library():
    # docs/trec.md's last column: each name is a key, and every retrieval key (and dcg, ndcg)
    # of the registry has a row.
    import re
    from pathlib import Path

    from polars_rankmetrics.metrics.registry import REGISTRY, parse_key

    text = (Path(__file__).parent.parent / "docs" / "trec.md").read_text()
    table = text.split("## One measure, four names")[1].split("\n\n")[2]
    named = set()
    for line in table.splitlines()[2:]:
        for name in re.findall(r"`([^`]+)`", line.split(" | ")[4]):
            if name.endswith("="):  # an argument named beside a key (n_labels=)
                continue
            assert parse_key(name.replace("@K", "@10")) is not None, name
            named.add(name.split("@")[0])
    wanted = {n for n, m in REGISTRY.items() if m.family == "retrieval"} | {"dcg", "ndcg"}
    assert wanted <= named, wanted - named


def test_report_takes_propensities_for_the_propensity_scored_keys(mixed_report):
    from polars.testing import assert_frame_equal

    run, options, _ = mixed_report
    labels = sorted({label for _, _, label, _ in REPORTED} | {label for _, label, _ in QRELS})
    shares = [0.3 + 0.05 * i for i in range(len(labels))]
    propensities = pl.DataFrame({"label": labels, "propensity": shares})
    keys = ["P_2", "psprecision@2", "psndcg@2"]
    report = rm.html_report(run, metrics=keys, propensities=propensities, **options)
    evaluated = rm.evaluate(run, keys, propensities=propensities, **options)
    assert_frame_equal(report.summary, evaluated, check_exact=False, rel_tol=1e-12)
    with pytest.raises(ValueError, match="propensit"):
        rm.html_report(run, metrics=keys, **options)


def test_report_of_mixed_keys_draws_by_units_and_ranks_many_runs(mixed_report):
    from polars.testing import assert_frame_equal

    run, options, _ = mixed_report
    keys = ["AP", "precision@2"]  # AP: trec_eval's map by ir_measures' name
    poisson = {"ci": 0.9, "n_boot": 100, "bootstrap": "poisson", **options}
    report = rm.html_report(run, metrics=keys, baseline="r", **poisson)
    evaluated = rm.evaluate(run, keys, **poisson)
    assert_frame_equal(report.summary, evaluated, check_exact=False, rel_tol=1e-12)
    compared = rm.compare(run, keys, baseline="r", **poisson)
    assert_frame_equal(report.comparison, compared, check_exact=False, rel_tol=1e-12)
    # A third run: the systems section's tables are leaderboard's and compare's of all pairs.
    third = run.filter(run="s").with_columns(run=pl.lit("t"), score=-pl.col("score"))
    runs = pl.concat([run, third])
    many = {"ci": 0.9, "n_boot": 100, **options}
    report = rm.html_report(runs, metrics=keys, **many)
    board = rm.leaderboard(runs, keys, test="tukey_hsd", **many)
    assert_frame_equal(report.leaderboard, board, check_exact=False, rel_tol=1e-12)
    pairs = rm.compare(runs, keys, baseline=None, test="tukey_hsd", **many)
    assert_frame_equal(report.pairs, pairs, check_exact=False, rel_tol=1e-12)
