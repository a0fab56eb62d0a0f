"""``rankmetrics trec``: trec_eval 10.0's command, options and output, line for line.

The expected outputs are trec_eval's own: the files of its test folder
(``tests/data/trec_eval``, see its README), and for the small files below the output of the
trec_eval binary built from its 10.0 source, pasted here.
"""

import doctest
import json
import re
import shlex
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from reference import SHIPPED, pytrec_means

from polars_rankmetrics.cli import TIE_RULES, main
from polars_rankmetrics.trec import output
from polars_rankmetrics.trec.output import trec_eval_lines

DATA = Path(__file__).parent / "data" / "trec_eval"

# trec_eval's test commands (its Makefile's quicktest) and the file of their expected output.
OFFICIAL = [
    ("out.test", "qrels.test results.test"),
    ("out.test", "qrels.test.with-comments results.test"),
    ("out.test.a", "-m all_trec qrels.test results.test"),
    ("out.test.aq", "-m all_trec -q qrels.test results.test"),
    ("out.test.aqc", "-m all_trec -q -c qrels.test results.trunc"),
    ("out.test.aqcM", "-m all_trec -q -c -M100 qrels.test results.trunc"),
    ("out.test.aql", "-m all_trec -mrelstring.20 -q -l2 qrels.rel_level results.test"),
    ("out.test.meas_params", "-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m "
     "recall.20,2000 -m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 "
     "-mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20 qrels.test results.test"),
]  # fmt: skip


def _trec(arguments, directory, capsys):
    """``rankmetrics trec ARGUMENTS`` run in ``directory``: its status, stdout and stderr."""
    words = shlex.split(arguments)
    files = [w for w in words if not w.startswith("-") and (directory / w).exists()]
    words = [str(directory / w) if w in files else w for w in words]
    try:
        status = main(["trec", *words])
    except SystemExit as usage:  # argparse's one-line usage errors
        status = usage.code
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize(("expected", "arguments"), OFFICIAL, ids=[a for _, a in OFFICIAL])
def test_trec_eval_test_expectations(expected, arguments, capsys):
    status, out, err = _trec(arguments, DATA, capsys)
    assert (status, err.splitlines()[-1:]) == (0, [TIES])
    assert out.splitlines() == (DATA / expected).read_text().splitlines()


TIES = (
    "rankmetrics: ties broken by score descending, then by docno descending (as text), as trec_eval"
)
# Ties (b before a, u before c), an unjudged document (u), a negative relevance (d: in the pool,
# unjudged), grades (a: 2), a run topic missing from the qrels (4: ignored) and, in QRELS_B, a
# qrels topic missing from the run (3: an error in trec_eval 10.0 without -c).
QRELS_A = "1 0 a 2\n1 0 b 0\n1 0 c 1\n1 0 d -1\n1 0 e 1\n2 0 a 1\n2 0 x 0\n"
QRELS_B = QRELS_A + "3 0 z 1\n"
RUN = (
    "1 Q0 a 1 1.0 r\n1 Q0 b 2 1.0 r\n1 Q0 c 3 0.5 r\n1 Q0 u 4 0.5 r\n1 Q0 d 5 0.2 r\n"
    "2 Q0 x 1 3 r\n2 Q0 y 2 2 r\n2 Q0 a 3 1 r\n4 Q0 a 1 1 r\n"
)
RUN2 = "1 Q0 e 1 2 s\n1 Q0 a 2 1 s\n2 Q0 a 1 5 s\n"

SMALL = {
    "per_topic": (
        "-q -m runid -m num_q -m map -m gm_map -m bpref -m P.2 -m ndcg_cut.3 "
        "-m num_nonrel_judged_ret",
        "qrels_a",
        (
            "map                   \t1\t0.3333\n"
            "bpref                 \t1\t0.0000\n"
            "P_2                   \t1\t0.5000\n"
            "ndcg_cut_3            \t1\t0.4030\n"
            "num_nonrel_judged_ret \t1\t1\n"
            "map                   \t2\t0.3333\n"
            "bpref                 \t2\t0.0000\n"
            "P_2                   \t2\t0.0000\n"
            "ndcg_cut_3            \t2\t0.5000\n"
            "num_nonrel_judged_ret \t2\t1\n"
            "runid                 \tall\tr\n"
            "num_q                 \tall\t2\n"
            "map                   \tall\t0.3333\n"
            "gm_map                \tall\t0.3333\n"
            "bpref                 \tall\t0.0000\n"
            "P_2                   \tall\t0.2500\n"
            "ndcg_cut_3            \tall\t0.4515\n"
            "num_nonrel_judged_ret \tall\t2\n"
        ),
    ),
    "complete": (
        "-c -q -m map -m P.2 -m num_ret",
        "qrels_b",
        (
            "num_ret               \t1\t5\n"
            "map                   \t1\t0.3333\n"
            "P_2                   \t1\t0.5000\n"
            "num_ret               \t2\t3\n"
            "map                   \t2\t0.3333\n"
            "P_2                   \t2\t0.0000\n"
            "num_ret               \t3\t0\n"
            "map                   \t3\t0.0000\n"
            "P_2                   \t3\t0.0000\n"
            "num_ret               \tall\t8\n"
            "map                   \tall\t0.2222\n"
            "P_2                   \tall\t0.1667\n"
        ),
    ),
    "max_docs": (
        "-M3 -q -m map -m num_ret",
        "qrels_a",
        (
            "num_ret               \t1\t3\n"
            "map                   \t1\t0.1667\n"
            "num_ret               \t2\t3\n"
            "map                   \t2\t0.3333\n"
            "num_ret               \tall\t6\n"
            "map                   \tall\t0.2500\n"
        ),
    ),
    "relevance_level": (
        "-l2 -q -m map -m num_rel",
        "qrels_a",
        (
            "num_rel               \t1\t1\n"
            "map                   \t1\t0.5000\n"
            "num_rel               \t2\t0\n"
            "map                   \t2\t0.0000\n"
            "num_rel               \tall\t1\n"
            "map                   \tall\t0.2500\n"
        ),
    ),
    "judged_only": (
        "-J -q -m map -m P.2",
        "qrels_a",
        (
            "map                   \t1\t0.3889\n"
            "P_2                   \t1\t0.5000\n"
            "map                   \t2\t0.5000\n"
            "P_2                   \t2\t0.5000\n"
            "map                   \tall\t0.4444\n"
            "P_2                   \tall\t0.5000\n"
        ),
    ),
    "no_summary": (
        "-n -q -m map",
        "qrels_a",
        ("map                   \t1\t0.3333\nmap                   \t2\t0.3333\n"),
    ),
    "nothing": ("-n -m map", "qrels_a", ()),
}
TWO_RUNS = (
    "runid                 \tall\tr\n"
    "map                   \tall\t0.3333\n"
    "P_1                   \tall\t0.0000\n"
    "runid                 \tall\ts\n"
    "map                   \tall\t0.8333\n"
    "P_1                   \tall\t1.0000\n"
)


@pytest.fixture
def small(tmp_path):
    for name, text in [("qrels_a", QRELS_A), ("qrels_b", QRELS_B), ("run", RUN), ("run2", RUN2)]:
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize("case", SMALL)
def test_options_as_trec_eval(case, small, capsys):
    options, qrels, expected = SMALL[case]
    status, out, err = _trec(f"{options} {qrels} run", small, capsys)
    assert (status, out, err) == (0, "".join(expected), TIES + "\n")


def test_under_a_memory_limit_the_same_lines(small, capsys):
    # The files are then scanned by the engine within the budget, not read into memory first.
    options, qrels, expected = SMALL["per_topic"]
    status, out, err = _trec(f"{options} --memory-limit 1GB {qrels} run", small, capsys)
    assert (status, out) == (0, "".join(expected))


def test_several_runs_one_block_each(small, capsys):
    status, out, err = _trec("-m runid -m map -m P.1 --quiet qrels_a run2 run", small, capsys)
    assert (status, out, err) == (0, "".join(TWO_RUNS), "")


@pytest.mark.parametrize(("arguments", "message"), [
    ("-m nope qrels_a run", "measure 'nope': unknown; the measures are "),
    ("qrels_a nothere", "no run file matches 'nothere'"),
    ("missing run", "no qrels file matches 'missing'"),
    ("qrels_a bad_run", "run file '{dir}/bad_run', line 2: the score 'x' is not a number"),
    ("-M0 qrels_a run", "argument -M: not a positive integer: '0'"),
])  # fmt: skip
def test_errors_in_one_line(arguments, message, small, capsys):
    (small / "bad_run").write_text("1 Q0 a 1 1.0 r\n1 Q0 b 2 x r\n")
    status, out, err = _trec(arguments, small, capsys)
    assert status in (1, 2) and out == ""
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("rankmetrics: error: " + message.format(dir=small))


def test_lines_of_a_hand_made_table():
    table = pl.DataFrame({
        "run": "r", "measure": ["a_name_longer_than_22_chars", "P_5", "P_5"],
        "topic": ["q1", "q1", "all"], "value": [1.0, 0.4, 0.4],
        "text": ["1", "0.4000", "0.4000"],
    })  # fmt: skip
    assert list(trec_eval_lines(table)) == [
        "a_name_longer_than_22_chars\tq1\t1",
        "P_5                   \tq1\t0.4000",
        "P_5                   \tall\t0.4000",
    ]
    assert list(trec_eval_lines(table, summary=False)) == [
        "a_name_longer_than_22_chars\tq1\t1",
        "P_5                   \tq1\t0.4000",
    ]
    with pytest.raises(ValueError, match="column 'text' is missing"):
        list(trec_eval_lines(table.drop("text")))


def test_docs_worked_example_of_ties():
    """docs/trec.md's table of the tie rules: the library's numbers under both rules, and
    pytrec_eval's (trec_eval's C code)."""
    import pytrec_eval

    import polars_rankmetrics as rm

    doc = (Path(__file__).parent.parent / "docs" / "trec.md").read_text()
    scores = {"a": 1.0, "b": 1.0, "c": 0.5}
    judged = {"a": 1, "b": 0, "c": 1}
    run = pl.DataFrame(
        {"run": "r", "sample": "q1", "label": list(scores), "score": list(scores.values())}
    )
    qrels = pl.DataFrame({"sample": "q1", "label": list(judged), "truth": list(judged.values())})
    keys = ["map", "mrr", "precision@1"]
    trec, average = (
        rm.evaluate(run, keys, truth_table=qrels, ties=ties).row(0)
        for ties in ("trec_eval", "average")
    )
    tagged = rm.evaluate(run, ["AP", "RR", "P_1"], truth_table=qrels).row(0)
    measures = ("map", "recip_rank", "P_1")
    oracle = pytrec_eval.RelevanceEvaluator({"q1": judged}, set(measures)).evaluate({"q1": scores})
    assert trec == tagged == tuple(oracle["q1"][m] for m in measures)
    with pytest.raises(ValueError, match="ties='average' is for the library's keys"):
        rm.evaluate(run, ["AP"], truth_table=qrels, ties="average")
    # Descending as text: "9" before "10" (the trec_eval binary gives P_1 = 1 on these files).
    numbers = pl.DataFrame({"run": "r", "sample": "q1", "label": ["10", "9"], "score": 1.0})
    judged_9 = pl.DataFrame({"sample": "q1", "label": ["9", "10"], "truth": [1, 0]})
    assert rm.evaluate(numbers, ["P_1"], truth_table=judged_9).item() == 1.0
    # rbp keeps trec_eval's p (0.9), RBP ir_measures' (0.8): a and c relevant at ranks 1 and 3
    untied = run.with_columns(score=pl.Series([3.0, 2.0, 1.0]))
    rbp = rm.evaluate(untied, ["rbp", "RBP", "RBP(p=0.9)"], truth_table=qrels).row(0)
    assert rbp == pytest.approx([(1 - p) * (1 + p**2) for p in (0.9, 0.8, 0.9)])
    assert average == pytest.approx((17 / 24, 3 / 4, 1 / 2))  # by hand, as the table shows
    rows = ["| average precision |", "| reciprocal rank |", "| precision at 1 |"]
    for row, first, mean in zip(rows, trec, average, strict=True):
        line = next(line for line in doc.splitlines() if line.startswith(row))
        assert f"= {first:.4f} |" in line and line.endswith(f"= {mean:.4f} |")


def test_docstring_examples():
    result = doctest.testmod(output, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_docs_example_prints_what_it_shows(capsys):
    doc = (Path(__file__).parent.parent / "docs" / "trec.md").read_text()
    block = doc.split("$ rankmetrics trec ", 1)[1].split("```", 1)[0].splitlines()
    status, out, err = _trec(block[0], DATA, capsys)
    assert (status, err.splitlines(), out.splitlines()) == (0, block[1:2], block[2:])


def _cli(arguments, capsys):
    """``rankmetrics ARGUMENTS`` in process: its status, stdout and stderr's lines."""
    try:
        status = main(arguments)
    except SystemExit as usage:  # argparse's one-line usage errors
        status = usage.code
    out, err = capsys.readouterr()
    return status, out, err.splitlines()


def test_ties_option_of_evaluate_compare_and_report(tmp_path, capsys):
    import polars_rankmetrics as rm

    # The worked example of docs/trec.md: a (relevant) and b tie at 1.0, c (relevant) at 0.5;
    # model n ranks a first. By hand: trec_eval's order (b, a, c) gives AP (1/2 + 2/3) / 2,
    # RR 1/2, P_1 0; the average over (a, b, c) and (b, a, c) 17/24, 3/4, 1/2.
    run, qrels, state = (str(tmp_path / name) for name in ("r.parquet", "q.parquet", "s.parquet"))
    pl.DataFrame(
        {"model": ["m"] * 3 + ["n"] * 3, "sample": "q1", "label": ["a", "b", "c"] * 2,
         "score": [1.0, 1.0, 0.5, 1.0, 0.5, 0.2]}
    ).write_parquet(run)  # fmt: skip
    pl.DataFrame({"sample": "q1", "label": ["a", "c"], "truth": [1, 1]}).write_parquet(qrels)
    library = ["evaluate", run, "--truth-table", qrels, "--n-labels", "3", "--format", "json",
               "--metrics", "map,mrr,precision@1"]  # fmt: skip
    said = {rule: f"rankmetrics: {text}" for rule, text in TIE_RULES.items()}
    expected = {"trec_eval": (7 / 12, 1 / 2, 0.0), "average": (17 / 24, 3 / 4, 1 / 2)}
    # The library's keys read a truth table per model: one model's rows, one truth table.
    pl.read_parquet(run).filter(model="m").write_parquet(run)
    for given, rule in ((["--ties", "trec_eval"], "trec_eval"), (["--ties", "average"], "average"),
                        ([], "average")):  # fmt: skip
        status, out, err = _cli([*library, *given], capsys)
        row = json.loads(out)
        assert status == 0 and err == ([said[rule]] if given else [])
        assert (row["map"], row["mrr"], row["precision@1"]) == pytest.approx(expected[rule])
    # The TREC keys state trec_eval's rule unasked, and refuse the average.
    trec = ["evaluate", run, "--truth-table", qrels, "--metrics", "AP,RR,P_1", "--format", "json"]
    status, out, err = _cli(trec, capsys)
    assert (status, err) == (0, [said["trec_eval"]])
    assert tuple(json.loads(out).values()) == pytest.approx(expected["trec_eval"])
    assert _cli([*trec, "--quiet"], capsys)[2] == []
    status, _, err = _cli([*trec, "--ties", "average"], capsys)
    assert status == 1 and len(err) == 1 and "ties='average' is for the library's keys" in err[0]
    # compare: both models against the same qrels, tie rule passed on and stated.
    pl.DataFrame(
        {"model": ["m"] * 3 + ["n"] * 3, "sample": "q1", "label": ["a", "b", "c"] * 2,
         "score": [1.0, 1.0, 0.5, 1.0, 0.5, 0.2]}
    ).write_parquet(run)  # fmt: skip
    # The library's map reads a truth table per model.
    per_model = str(tmp_path / "per_model.parquet")
    pl.read_parquet(qrels).join(pl.DataFrame({"model": ["m", "n"]}), how="cross").write_parquet(
        per_model
    )
    compared = ["compare", run, "--truth-table", per_model, "--n-labels", "3", "--baseline", "m",
                "--metrics", "map", "--format", "json", "--ties", "trec_eval"]  # fmt: skip
    status, out, err = _cli(compared, capsys)
    assert (status, err) == (0, [said["trec_eval"]])
    assert json.loads(out)[0]["baseline_value"] == pytest.approx(7 / 12)
    # report's per-label table follows scikit-learn's tie rules: trec_eval's goes with --html.
    status, _, err = _cli(["report", run, "--ties", "trec_eval"], capsys)
    assert status == 2 and len(err) == 1 and "--ties trec_eval goes with --html" in err[0]
    # A state file records its evaluation: --ties is refused with it.
    dense = str(tmp_path / "dense.parquet")
    pl.DataFrame({"sample": "s", "label": ["a", "b"], "score": [1.0, 0.5], "truth": [1, 0]}
                 ).write_parquet(dense)  # fmt: skip
    assert _cli(["state", dense, "-o", state], capsys)[0] == 0
    with pytest.raises(ValueError, match="ties= does not apply to states"):
        rm.compare(state, ties="trec_eval", bootstrap="poisson")
    status, _, err = _cli(["evaluate", state, "--ties", "trec_eval"], capsys)
    assert status == 2 and err == [
        "rankmetrics: error: --ties does not apply to state files: they are evaluated already, "
        "with the options they record"
    ]


def test_cli_docs_trec_example_on_the_shipped_files(capsys, monkeypatch):
    # docs/cli.md's command, run from the repository's root as tests/test_readme.py runs it,
    # prints the lines shown under it; the values are pytrec_eval's.
    doc = (SHIPPED.parent / "docs" / "cli.md").read_text()
    command = next(b for b in re.findall(r"```bash\n(.*?)```", doc, flags=re.S) if " trec " in b)
    shown = doc.split(command, 1)[1].split("```text\n", 1)[1].split("```", 1)[0].splitlines()
    monkeypatch.chdir(SHIPPED.parent)
    status, out, err = _cli(shlex.split(command)[1:], capsys)
    assert (status, err, out.splitlines()) == (0, shown[:1], shown[1:])
    measures = ("map", "P_5", "ndcg_cut_10")
    expected = []
    for tag, means in pytrec_means(measures).items():
        expected.append(f"{'runid':<22}\tall\t{tag}")
        expected += [f"{m:<22}\tall\t{mean:.4f}" for m, mean in zip(measures, means, strict=True)]
    assert shown[1:] == expected


# The report of runs: trec_eval's measures, as pytrec_eval names them and as it is asked for them.
REPORTED = ["map", "recip_rank", "ndcg_cut_5", "P_5", "recall_5"]
ASKED = ["map", "recip_rank", "ndcg_cut.5", "P.1,2,3,4,5", "recall.1,2,3,4,5"]


def test_html_report_of_runs_against_shared_graded_qrels():
    import polars_rankmetrics as rm
    from polars_rankmetrics.report import chart_data

    run = rm.read_trec_run(SHIPPED / "trec_runs.txt")
    qrels = rm.read_trec_qrels(SHIPPED / "trec_qrels.txt")
    report = rm.html_report(run, truth_table=qrels, by="run", k=5, ties="trec_eval")
    summary = report.summary.sort("run")
    cuts = [f"{name}_{k}" for name in ("P", "recall") for k in range(1, 6)]
    oracle = pytrec_means([*REPORTED[:3], *cuts], ASKED)
    shown = ["AP", *REPORTED[1:3], *cuts]  # AP: trec_eval's map (the library's map is its own)
    assert summary.select(shown).rows() == [pytest.approx(means) for means in oracle.values()]
    # The chart draws P_K and recall_K at K = 1 .. 5, pytrec_eval's; the page states the rule.
    for row, means in zip(summary.iter_rows(named=True), oracle.values(), strict=True):
        ks, precision, recall = chart_data.at_k(row, cuts[:5], cuts[5:])
        assert list(ks) == [1, 2, 3, 4, 5]
        assert [*precision, *recall] == pytest.approx(means[3:])
    assert "P_K and recall_K" in report.html and "then by document id descending" in report.html
    assert report.labels is None and report.html.count("<svg") == 1


def test_html_report_of_runs_with_heavy_ties_missing_topics_and_unjudged_documents(tmp_path):
    import polars_rankmetrics as rm

    # Two runs, scores from 3 values (heavy ties), a topic of the qrels missing from the runs
    # and one of the runs missing from the qrels, unjudged documents, negative relevance.
    rng = np.random.default_rng(7)
    qrels = [f"t{t} 0 d{d} {rng.choice([-1, 0, 0, 1, 2])}" for t in range(12) for d in range(8)]
    runs = [
        f"t{t} Q0 d{d} {rank} {rng.choice([0.5, 1.0, 2.0])} {tag}"
        for tag in ("base", "next") for t in range(1, 14)
        for rank, d in enumerate(rng.choice(12, 6, replace=False))
    ]  # fmt: skip
    (tmp_path / "trec_qrels.txt").write_text("\n".join(qrels) + "\n")
    (tmp_path / "trec_runs.txt").write_text("\n".join(runs) + "\n")
    oracle = pytrec_means(REPORTED, ASKED, directory=tmp_path)
    shown = ["AP", *REPORTED[1:]]
    for engine in ({}, {"engine": "duckdb", "memory_limit": "200MB"}):
        report = rm.html_report(
            rm.read_trec_run(tmp_path / "trec_runs.txt"), ties="trec_eval", by="run", k=5,
            truth_table=rm.read_trec_qrels(tmp_path / "trec_qrels.txt"), **engine,
        )  # fmt: skip
        assert report.summary.sort("run").select(shown).rows() == [
            pytest.approx(means) for means in oracle.values()
        ], engine


def test_html_report_of_runs_compares_over_topics_as_compare():
    import polars_rankmetrics as rm

    run = rm.read_trec_run(SHIPPED / "trec_runs.txt")
    qrels = rm.read_trec_qrels(SHIPPED / "trec_qrels.txt")
    report = rm.html_report(run, truth_table=qrels, by="run", k=5, ties="trec_eval",
                            baseline="baseline", ci=0.9, n_boot=200, seed=3)  # fmt: skip
    keys = ["AP", "recip_rank", "ndcg_cut_5", "P_5", "recall_5"]
    compared = rm.compare(run, keys, truth_table=qrels, by="run", baseline="baseline",
                          ties="trec_eval", n_boot=200, ci=0.9, seed=3)  # fmt: skip
    assert_frame_equal(report.comparison, compared)
    intervals = rm.evaluate(run, keys, truth_table=qrels, by="run", ci=0.9, n_boot=200, seed=3)
    assert_frame_equal(report.summary.select(intervals.columns), intervals)
    assert "Comparison with the baseline" in report.html


def test_html_report_and_compare_of_runs_take_trec_evals_options():
    import polars_rankmetrics as rm

    run = rm.read_trec_run(SHIPPED / "trec_runs.txt")
    qrels = rm.read_trec_qrels(SHIPPED / "trec_qrels.txt")
    options = {"relevance_level": 2, "max_docs": 3, "judged_only": True, "complete": True}
    keys = ["AP", "recip_rank", "ndcg_cut_5", "P_5", "recall_5"]
    expected = rm.evaluate(run, keys, truth_table=qrels, by="run", **options).sort("run")
    assert not expected.equals(rm.evaluate(run, keys, truth_table=qrels, by="run").sort("run"))
    report = rm.html_report(run, truth_table=qrels, by="run", k=5, ties="trec_eval",
                            baseline="baseline", n_boot=50, **options)  # fmt: skip
    assert_frame_equal(report.summary.select(expected.columns).sort("run"), expected)
    for stated in ("-l 2)", "first 3 documents of each topic are read (-M)", "(-J)", "-c)"):
        assert stated in report.html, stated
    compared = rm.compare(run, keys, truth_table=qrels, by="run", baseline="baseline",
                          ties="trec_eval", n_boot=50, **options)  # fmt: skip
    assert_frame_equal(report.comparison, compared)
    baseline = expected.filter(run="baseline").row(0, named=True)
    assert compared["baseline_value"].to_list() == pytest.approx([baseline[k] for k in keys])
    with pytest.raises(ValueError, match="are trec_eval's options of the TREC keys"):
        rm.compare(run, ["precision@5"], truth_table=qrels, by="run", baseline="baseline",
                   relevance_level=2)  # fmt: skip


def test_command_passes_trec_evals_options_on(tmp_path, capsys):
    import polars_rankmetrics as rm

    run_file, qrels_file = str(SHIPPED / "trec_runs.txt"), str(SHIPPED / "trec_qrels.txt")
    run, qrels = rm.read_trec_run(run_file), rm.read_trec_qrels(qrels_file)
    run_path, qrels_path = str(tmp_path / "run.parquet"), str(tmp_path / "qrels.parquet")
    run.collect().write_parquet(run_path)
    qrels.collect().write_parquet(qrels_path)
    options = {"relevance_level": 2, "max_docs": 3, "judged_only": True, "complete": True}
    flags = ["--relevance-level", "2", "--max-docs", "3", "--judged-only", "--complete"]
    keys = ["AP", "P_5"]
    expected = rm.evaluate(run, keys, truth_table=qrels, by="run", **options).sort("run")
    evaluated = ["evaluate", run_path, "--truth-table", qrels_path, "--by", "run",
                 "--metrics", ",".join(keys), "--format", "json", *flags]  # fmt: skip
    status, out, _ = _cli(evaluated, capsys)
    assert status == 0
    got = pl.DataFrame(json.loads(out)).sort("run")
    assert got["run"].to_list() == expected["run"].to_list()
    for key in keys:
        assert got[key].to_list() == pytest.approx(expected[key].to_list())
    status, out, _ = _cli(["compare", run_path, "--truth-table", qrels_path, "--by", "run",
                           "--baseline", "baseline", "--metrics", "AP", "--format", "json",
                           *flags], capsys)  # fmt: skip
    baseline = expected.filter(run="baseline")["AP"][0]
    assert status == 0 and json.loads(out)[0]["baseline_value"] == pytest.approx(baseline)
    page = tmp_path / "page.html"
    status, _, _ = _cli(["report", run_file, "--truth-table", qrels_file, "--trec", "--html",
                         str(page), "--k", "5", *flags], capsys)  # fmt: skip
    assert status == 0 and "first 3 documents of each topic are read (-M)" in page.read_text()
    # Where they do not apply: one line, exit 2 (a usage error).
    status, _, err = _cli(["report", run_path, "--complete"], capsys)
    assert status == 2 and err == ["rankmetrics: error: --complete goes with --html"]
    status, _, err = _cli(["report", run_path, "--relevance-level", "1"], capsys)
    assert status == 2 and err == ["rankmetrics: error: --relevance-level goes with --html"]
    status, _, err = _cli(["report", run_path, "--by", "run", "--html", str(page),
                           "--max-docs", "3"], capsys)  # fmt: skip
    assert status == 1 and len(err) == 1 and "they go with ties='trec_eval'" in err[0]
    status, _, err = _cli(["evaluate", run_path, "--truth-table", qrels_path, "--by", "run",
                           "--metrics", "precision@5", "--max-docs", "3"], capsys)  # fmt: skip
    assert status == 1 and len(err) == 1 and "trec_eval's options of the TREC keys" in err[0]


def test_html_report_of_runs_refuses_what_trec_eval_does_not_take():
    import polars_rankmetrics as rm

    run = rm.read_trec_run(SHIPPED / "trec_runs.txt")
    qrels = rm.read_trec_qrels(SHIPPED / "trec_qrels.txt")
    with pytest.raises(ValueError, match="ties must be one of average, trec_eval, not 'trec'"):
        rm.html_report(run, truth_table=qrels, by="run", ties="trec")
    for given in ({}, {"truth_table": qrels, "n_labels": 10}):
        with pytest.raises(ValueError, match="ties='trec_eval' reports trec_eval's measures"):
            rm.html_report(run, by="run", ties="trec_eval", **given)


def _summary_of_page(page):
    """The summary table of a report's page: {metric: [its value printed for each model]}."""
    table = page.split("<h2>Summary</h2>", 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr><td title=\"[^\"]*\">([^<]+)</td>(.*?)</tr>", table)
    return {name: re.findall(r"<td>([^<]+)</td>", cells) for name, cells in rows}


def test_cli_report_of_trec_files_has_pytrec_evals_numbers(tmp_path, capsys):
    page = tmp_path / "runs.html"
    status, _, err = _cli(
        ["report", "--trec", "--html", str(page), "--truth-table",
         str(SHIPPED / "trec_qrels.txt"), str(SHIPPED / "trec_runs.txt"), "--k", "5"], capsys,
    )  # fmt: skip
    assert status == 0 and err == [
        f"rankmetrics: {TIE_RULES['trec_eval']}",
        f"rankmetrics: wrote {page}",
    ]
    printed = _summary_of_page(page.read_text(encoding="utf-8"))
    oracle = list(zip(*pytrec_means(REPORTED, ASKED).values(), strict=True))
    assert list(printed) == ["AP", *REPORTED[1:]]
    assert list(printed.values()) == [[f"{v:.4f}" for v in means] for means in oracle]
    # --ties trec_eval on data read by the library: the same page's numbers, the rule stated.
    run, qrels = (str(tmp_path / name) for name in ("run.parquet", "qrels.parquet"))
    from polars_rankmetrics.inputs.trec import read_trec_qrels, read_trec_run

    read_trec_run(SHIPPED / "trec_runs.txt").sink_parquet(run)
    read_trec_qrels(SHIPPED / "trec_qrels.txt").sink_parquet(qrels)
    again = tmp_path / "again.html"
    status, _, err = _cli(
        ["report", run, "--truth-table", qrels, "--by", "run", "--ties", "trec_eval", "--k", "5",
         "--html", str(again)], capsys,
    )  # fmt: skip
    assert (status, err[:1]) == (0, [f"rankmetrics: {TIE_RULES['trec_eval']}"])
    assert _summary_of_page(again.read_text(encoding="utf-8")) == printed


@pytest.mark.parametrize(
    ("arguments", "status", "message"),
    [
        (["--ties", "trec"], 2, "argument --ties: invalid choice: 'trec'"),
        (["--k", "0"], 2, "argument --k: not a positive integer: '0'"),
        (["--trec"], 2, "--trec reads TREC run files against qrels: give --truth-table"),
        (["--n-labels", "9", "--trec", "--truth-table", str(SHIPPED / "trec_qrels.txt")], 1,
         "without n_labels="),
    ],
)  # fmt: skip
def test_cli_report_of_runs_refuses_bad_options_in_one_line(arguments, status, message, tmp_path,
                                                            capsys):  # fmt: skip
    html = ["--html", str(tmp_path / "page.html")]
    given = _cli(["report", str(SHIPPED / "trec_runs.txt"), *html, *arguments], capsys)
    assert given[0] == status and len(given[2]) == 1 and message in given[2][0], given
    assert not (tmp_path / "page.html").exists()
