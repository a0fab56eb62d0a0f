"""trec_eval's edges: ``-nan`` under ``-J``, several run files, a tag that varies by line.

The expected lines are trec_eval 10.0's output for the files below (the binary built from its
10.0 source, run by hand on them and pasted here), not this library's.
"""

import shlex

import pytest

from polars_rankmetrics.cli import main

# Topic 1 keeps a relevant document under -J; 2 and 4 (missing from the run) and 3 and 5
# (only unjudged documents retrieved) are left with none; 3 and 5 have no relevant document.
QRELS = (
    "q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 x 1\nq2 0 y 0\nq2 0 z 1\nq3 0 m 0\nq3 0 n 0\n"
    "q4 0 p 1\nq5 0 s 0\n"
)
RUN = "q1 Q0 a 1 3.0 sys\nq3 Q0 k 2 0.5 sys\nq5 Q0 t 1 0.5 sys\n"
# trec_eval 10.0: trec_eval -c -J -q -m num_ret -m num_rel -m iprec_at_recall.0,.2,.3,.5
# -m 11pt_avg qrels run. iprec_at_recall divides 0 by 0 on a topic left with no document, at
# the points where lround(x R) is 0; 11pt_avg and the means take the NaN on.
NAN_COMPLETE = """\
num_ret               \tq1\t1
num_rel               \tq1\t2
iprec_at_recall_0.00  \tq1\t1.0000
iprec_at_recall_0.20  \tq1\t1.0000
iprec_at_recall_0.30  \tq1\t1.0000
iprec_at_recall_0.50  \tq1\t1.0000
11pt_avg              \tq1\t0.7273
num_ret               \tq2\t0
num_rel               \tq2\t2
iprec_at_recall_0.00  \tq2\t  -nan
iprec_at_recall_0.20  \tq2\t  -nan
iprec_at_recall_0.30  \tq2\t0.0000
iprec_at_recall_0.50  \tq2\t0.0000
11pt_avg              \tq2\t  -nan
num_ret               \tq3\t0
num_rel               \tq3\t0
iprec_at_recall_0.00  \tq3\t  -nan
iprec_at_recall_0.20  \tq3\t  -nan
iprec_at_recall_0.30  \tq3\t  -nan
iprec_at_recall_0.50  \tq3\t  -nan
11pt_avg              \tq3\t  -nan
num_ret               \tq4\t0
num_rel               \tq4\t1
iprec_at_recall_0.00  \tq4\t  -nan
iprec_at_recall_0.20  \tq4\t  -nan
iprec_at_recall_0.30  \tq4\t  -nan
iprec_at_recall_0.50  \tq4\t0.0000
11pt_avg              \tq4\t  -nan
num_ret               \tq5\t0
num_rel               \tq5\t0
iprec_at_recall_0.00  \tq5\t  -nan
iprec_at_recall_0.20  \tq5\t  -nan
iprec_at_recall_0.30  \tq5\t  -nan
iprec_at_recall_0.50  \tq5\t  -nan
11pt_avg              \tq5\t  -nan
num_ret               \tall\t1
num_rel               \tall\t5
iprec_at_recall_0.00  \tall\t  -nan
iprec_at_recall_0.20  \tall\t  -nan
iprec_at_recall_0.30  \tall\t  -nan
iprec_at_recall_0.50  \tall\t  -nan
11pt_avg              \tall\t  -nan
"""
# trec_eval 10.0: trec_eval -J -q -m num_ret -m iprec_at_recall.0,.5 -m 11pt_avg on the
# qrels of topics q1, q3 and q5 alone (without -c trec_eval 10.0 stops on q2).
NAN_RUN_TOPICS = """\
num_ret               \tq1\t1
iprec_at_recall_0.00  \tq1\t1.0000
iprec_at_recall_0.50  \tq1\t1.0000
11pt_avg              \tq1\t0.7273
num_ret               \tq3\t0
iprec_at_recall_0.00  \tq3\t  -nan
iprec_at_recall_0.50  \tq3\t  -nan
11pt_avg              \tq3\t  -nan
num_ret               \tq5\t0
iprec_at_recall_0.00  \tq5\t  -nan
iprec_at_recall_0.50  \tq5\t  -nan
11pt_avg              \tq5\t  -nan
num_ret               \tall\t1
iprec_at_recall_0.00  \tall\t  -nan
iprec_at_recall_0.50  \tall\t  -nan
11pt_avg              \tall\t  -nan
"""
# trec_eval 10.0: trec_eval -l0 -q -m Rndcg: a topic judged 0 throughout at level 0.
RNDCG_NAN = """\
Rndcg                 \tq1\t  -nan
Rndcg                 \tq2\t1.0000
Rndcg                 \tall\t  -nan
"""
# Each way the command computes: in memory in one pass, by evaluate's buckets, in SQL.
ENGINES = ["", "--memory-limit 1GB", "--engine duckdb"]


def _trec(arguments, directory, capsys):
    words = [str(directory / w) if (directory / w).exists() else w for w in shlex.split(arguments)]
    status = main(["trec", "--quiet", *words])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "qrels135").write_text(
        "".join(line + "\n" for line in QRELS.splitlines() if line[:2] in ("q1", "q3", "q5"))
    )
    (tmp_path / "run").write_text(RUN)
    (tmp_path / "qrels0").write_text("q1 0 a 0\nq1 0 b 0\nq2 0 c 1\n")
    (tmp_path / "run0").write_text("q1 Q0 a 1 1 s\nq2 Q0 c 1 1 s\n")
    return tmp_path


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("arguments", "expected"), [
    ("-c -J -q -m num_ret -m num_rel -m iprec_at_recall.0,.2,.3,.5 -m 11pt_avg qrels run",
     NAN_COMPLETE),
    ("-J -q -m num_ret -m iprec_at_recall.0,.5 -m 11pt_avg qrels135 run", NAN_RUN_TOPICS),
    ("-l0 -q -m Rndcg qrels0 run0", RNDCG_NAN),
], ids=["complete", "run_topics", "rndcg"])  # fmt: skip
def test_nan_where_trec_eval_prints_it(arguments, expected, engine, files, capsys):
    assert _trec(f"{engine} {arguments}", files, capsys) == (0, expected, "")


def test_without_judged_only_a_missing_topic_scores_zero(files, capsys):
    # trec_eval 10.0 ranks a placeholder document for a topic -c adds: 0, not -nan (its
    # summary line of trec_eval -c -m iprec_at_recall.0 -m 11pt_avg qrels run).
    status, out, _ = _trec("-c -m iprec_at_recall.0 -m 11pt_avg qrels run", files, capsys)
    assert out == "iprec_at_recall_0.00  \tall\t0.2000\n11pt_avg              \tall\t0.1455\n"


# Two files of one tag (a system run twice with other parameters: the same documents in other
# orders), and a file whose tag varies by line (one run per tag here; trec_eval would take
# the file as one run). The second file has a comment and tabs: the line-by-line reader.
RUN_FILES = {
    "bm25_k1.txt": "q1 Q0 a 1 3.0 bm25\nq1 Q0 b 2 2.0 bm25\nq1 Q0 c 3 1.0 bm25\n"
                   "q2 Q0 x 1 2.0 bm25\nq2 Q0 y 2 2.0 bm25\n",
    "bm25_k2.txt": "# k1 = 2\nq1\tQ0\tc 1 3.0 bm25\nq1 Q0 a 2 2.0 bm25\nq1 Q0 b 3 1.0 bm25\n"
                   "q2 Q0 y 1 1.0 bm25\nq2 Q0 z 2 0.5 bm25\n",
    "mixed.txt": "q1 Q0 b 1 1.0 dense\nq1 Q0 a 2 0.5 dense\nq2 Q0 z 1 1.0 rerank\n"
                 "q2 Q0 x 2 1.0 rerank\n",
}  # fmt: skip
QRELS_FILES = "q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 x 1\nq2 0 y 0\nq2 0 z 1\n"
# (run name, file, tag): each run is its file's lines of its tag.
RUNS = [
    ("bm25 (bm25_k1.txt)", "bm25_k1.txt", "bm25"),
    ("bm25 (bm25_k2.txt)", "bm25_k2.txt", "bm25"),
    ("dense", "mixed.txt", "dense"),
    ("rerank", "mixed.txt", "rerank"),
]
MEASURES = ["map", "P_2", "ndcg_cut_3", "recip_rank", "bpref", "num_rel_ret"]


@pytest.fixture
def run_files(tmp_path):
    for name, text in RUN_FILES.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "qrels").write_text(QRELS_FILES)
    return tmp_path


def _pytrec_means(directory, file, tag):
    """pytrec_eval's (trec_eval's C code) mean of each of MEASURES over the topics of the
    lines of ``file`` with ``tag``: the run evaluated alone."""
    import pytrec_eval

    qrels, run = {}, {}
    for line in (directory / "qrels").read_text().splitlines():
        topic, _, doc, rel = line.split()
        qrels.setdefault(topic, {})[doc] = int(rel)
    for line in (directory / file).read_text().splitlines():
        fields = line.split()
        if fields[0].startswith("#") or fields[5] != tag:
            continue
        run.setdefault(fields[0], {})[fields[2]] = float(fields[4])
    asked = {"map", "P.2", "ndcg_cut.3", "recip_rank", "bpref", "num_rel_ret"}
    per_topic = pytrec_eval.RelevanceEvaluator(qrels, asked).evaluate(run)
    values = [[topic[m] for m in MEASURES] for topic in per_topic.values()]
    means = [sum(column) / len(column) for column in zip(*values, strict=True)]
    means[-1] *= len(values)  # num_rel_ret: trec_eval's sum over topics
    return means


def test_each_file_is_evaluated_apart_runs_named_by_tag_and_file(run_files, capsys):
    names = ["bm25_k1.txt", "bm25_k2.txt", "mixed.txt"]
    arguments = " ".join(f"-m {m.replace('_2', '.2').replace('_3', '.3')}" for m in MEASURES)
    status, out, err = _trec(f"-m runid {arguments} qrels {' '.join(names)}", run_files, capsys)
    assert (status, err) == (0, "")
    blocks = [block.splitlines() for block in out.split("runid                 \tall\t")[1:]]
    assert [block[0] for block in blocks] == [name for name, _, _ in RUNS]
    for block, (_, file, tag) in zip(blocks, RUNS, strict=True):
        got = {line.split("\t")[0].strip(): float(line.split("\t")[2]) for line in block[1:]}
        want = _pytrec_means(run_files, file, tag)
        assert [got[m] for m in MEASURES] == pytest.approx(want, abs=5e-5), (file, tag)


def test_reader_names_runs_by_tag_and_file(run_files):
    import polars_rankmetrics as rm

    paths = [run_files / name for name in RUN_FILES]
    runs = rm.read_trec_run(paths).group_by("run").len().sort("run").collect().rows()
    assert runs == [("bm25 (bm25_k1.txt)", 5), ("bm25 (bm25_k2.txt)", 5), ("dense", 2),
                    ("rerank", 2)]  # fmt: skip
    # A tag that one file alone holds keeps its name; a file given twice is refused.
    assert rm.read_trec_run(paths[0]).select("run").unique().collect().item() == "bm25"
    with pytest.raises(ValueError, match="given twice"):
        rm.read_trec_run([paths[0], paths[0]])
