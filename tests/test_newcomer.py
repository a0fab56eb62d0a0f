"""A newcomer's first hour (issue 39): the README's commands and the pages it links, tried as a
new user tries them: no traceback, no silent misalignment, docs that agree with the code."""

import json
import os
import pty
import re
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from servers import java_missing, spark_environment
from sklearn import metrics as skm
from test_sql_engines import random_cases

import polars_rankmetrics as rm
from polars_rankmetrics import cli
from polars_rankmetrics.duckdb_engine import register_views
from polars_rankmetrics.report import page as report_page

ROOT = Path(__file__).parent.parent
EXAMPLE = ROOT / "data" / "example.parquet"
README = (ROOT / "README.md").read_text()


def run(*args: str, **options) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "polars_rankmetrics.cli", *args],
        capture_output=True,
        text=True,
        **options,
    )


def one_line_error(done: subprocess.CompletedProcess) -> str:
    """The one line a failed command printed (no traceback, a non-zero status)."""
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rankmetrics: error: "), done.stderr
    return lines[0]


# 1. compare without --by: Python's default, and never a traceback.


def sklearn_by_model(metric, df: pl.DataFrame) -> dict[str, float]:
    """scikit-learn's ``metric`` of each model of a long table (dense matrices, sorted ids)."""
    values = {}
    for (model,), part in df.group_by("model"):
        wide = part.sort("sample", "label")
        n_labels = wide["label"].n_unique()
        y_true = wide["truth"].cast(pl.Int8).to_numpy().reshape(-1, n_labels)
        y_score = wide["score"].to_numpy().reshape(-1, n_labels)
        values[model] = metric(y_true, y_score)
    return values


def test_compare_without_by_takes_the_model_column_as_python_does():
    done = run(
        "compare", str(EXAMPLE), "--baseline", "baseline", "--metrics", "lrap",
        "--format", "json", "--n-resamples", "200", "--n-boot", "100",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)
    expected = sklearn_by_model(skm.label_ranking_average_precision_score, pl.read_parquet(EXAMPLE))
    assert row["model"] == "candidate"
    assert row["value"] == pytest.approx(expected["candidate"])
    assert row["baseline_value"] == pytest.approx(expected["baseline"])


def test_compare_help_shows_the_default_by():
    done = run("compare", "--help")
    assert done.returncode == 0
    assert "(default: model" in " ".join(done.stdout.split())


def test_compare_with_an_empty_by_is_one_line():
    line = one_line_error(run("compare", str(EXAMPLE), "--baseline", "baseline", "--by", ""))
    assert "--by" in line


def test_an_unexpected_error_is_one_line_without_traceback(monkeypatch, capsys):
    def broken(*args, **options):
        raise TypeError("'NoneType' object is not iterable")

    monkeypatch.setattr(cli.commands, "compare", broken)
    monkeypatch.delenv("RANKMETRICS_TRACEBACK", raising=False)
    status = cli.main(["compare", str(EXAMPLE), "--baseline", "baseline"])
    err = capsys.readouterr().err
    assert status == 1
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "TypeError: 'NoneType' object is not iterable" in err
    monkeypatch.setenv("RANKMETRICS_TRACEBACK", "1")
    with pytest.raises(TypeError):
        cli.main(["compare", str(EXAMPLE), "--baseline", "baseline"])


# 2. from_dense matches DataFrames by name (and pandas frames by index).

LABELS = ["dog", "cat", "owl", "bee", "ant"]


def matrices(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y_true = rng.integers(0, 2, (12, len(LABELS)))
    y_true[:, 0] = 1  # a positive in every sample
    return y_true, rng.random((12, len(LABELS)))


def lrap(long: pl.DataFrame) -> float:
    return rm.evaluate(long, ["lrap"])["lrap"][0]


@pytest.mark.parametrize("frame", ["pandas", "polars"])
def test_from_dense_matches_dataframes_by_column_name(frame):
    y_true, y_score = matrices()
    order = [2, 0, 4, 1, 3]
    # The test can fail: scoring the columns in the other order gives another number.
    assert skm.label_ranking_average_precision_score(y_true, y_score[:, order]) != pytest.approx(
        skm.label_ranking_average_precision_score(y_true, y_score)
    )
    true_frame = pd.DataFrame(y_true, columns=LABELS)
    score_frame = pd.DataFrame(y_score[:, order], columns=[LABELS[i] for i in order])
    if frame == "polars":
        true_frame, score_frame = pl.from_pandas(true_frame), pl.from_pandas(score_frame)
    long = rm.from_dense(true_frame, score_frame)
    assert lrap(long) == pytest.approx(skm.label_ranking_average_precision_score(y_true, y_score))
    assert long["label"].unique(maintain_order=True).to_list() == LABELS
    cat = long.filter(pl.col("label") == "cat").sort("sample")
    assert cat["score"].to_list() == pytest.approx(y_score[:, 1].tolist())


@pytest.mark.parametrize("frame", ["pandas", "polars"])
def test_from_dense_refuses_dataframes_naming_different_labels(frame):
    y_true, y_score = matrices()
    true_frame = pd.DataFrame(y_true, columns=LABELS)
    score_frame = pd.DataFrame(y_score, columns=["hound", *LABELS[1:]])
    if frame == "polars":
        true_frame, score_frame = pl.from_pandas(true_frame), pl.from_pandas(score_frame)
    with pytest.raises(ValueError, match=r"different column names.*'dog'.*'hound'"):
        rm.from_dense(true_frame, score_frame)


def test_from_dense_matches_pandas_frames_by_index():
    y_true, y_score = matrices()
    ids = [f"clip_{i:02d}" for i in range(len(y_true))]
    true_frame = pd.DataFrame(y_true, columns=LABELS, index=ids)
    shuffled = np.random.default_rng(1).permutation(len(ids))
    score_frame = pd.DataFrame(y_score, columns=LABELS, index=ids).iloc[shuffled]
    long = rm.from_dense(true_frame, score_frame)
    assert lrap(long) == pytest.approx(skm.label_ranking_average_precision_score(y_true, y_score))
    assert long["sample"].unique(maintain_order=True).to_list() == ids
    per_sample = rm.evaluate(long, ["lrap"], per_sample=True).sort("sample")
    expected = [skm.label_ranking_average_precision_score(t[None], s[None]) for t, s in
                zip(y_true, y_score, strict=True)]  # fmt: skip
    assert per_sample["lrap"].to_list() == pytest.approx(expected)


def test_from_dense_refuses_pandas_frames_with_different_indexes():
    y_true, y_score = matrices()
    ids = [f"clip_{i:02d}" for i in range(len(y_true))]
    true_frame = pd.DataFrame(y_true, columns=LABELS, index=ids)
    with pytest.raises(ValueError, match=r"different index values.*'clip_00'.*y_score.index"):
        rm.from_dense(true_frame, pd.DataFrame(y_score, columns=LABELS))
    repeated = pd.DataFrame(y_score, columns=LABELS, index=["clip_00"] * len(ids))
    with pytest.raises(ValueError, match=r"y_score's index repeats 'clip_00'"):
        rm.from_dense(true_frame, repeated)


def test_from_dense_takes_a_frames_names_next_to_a_matrix():
    y_true, y_score = matrices()
    ids = [f"clip_{i:02d}" for i in range(len(y_true))]
    long = rm.from_dense(pd.DataFrame(y_true, columns=LABELS, index=ids), y_score)
    assert long["label"].unique(maintain_order=True).to_list() == LABELS
    assert long["sample"].unique(maintain_order=True).to_list() == ids
    assert lrap(long) == pytest.approx(skm.label_ranking_average_precision_score(y_true, y_score))


def test_from_dense_refuses_a_column_that_is_not_a_label():
    y_true, y_score = matrices()
    with_ids = pl.DataFrame(y_score, schema=LABELS).with_columns(clip=pl.lit("x"))
    with pytest.raises(ValueError, match=r"y_score's column 'clip' is not numeric.*sample_ids="):
        rm.from_dense(pl.DataFrame(y_true, schema=LABELS), with_ids)


# 3. The HTML report needs matplotlib: said in the README, checked before any work.


def test_html_report_checks_for_matplotlib_before_any_work(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails

    def work(*args, **options):
        raise AssertionError("the report started its work before checking for matplotlib")

    monkeypatch.setattr(report_page.driver, "collect", work)
    monkeypatch.setattr(report_page.driver, "run", work)
    with pytest.raises(ImportError, match=r"matplotlib.*pip install"):
        rm.html_report(EXAMPLE, by="model", baseline="baseline")


def test_cli_html_report_without_matplotlib_stops_before_reading_the_data():
    # The input does not exist: a check made before any work reports matplotlib, not the file.
    script = (
        "import sys; sys.modules['matplotlib'] = None; from polars_rankmetrics.cli import main; "
        "sys.exit(main(['report', '/nonexistent/x.parquet', '--html', 'r.html']))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    line = one_line_error(done)
    assert "matplotlib" in line and "pip install" in line


def test_readme_says_the_report_needs_matplotlib_where_the_command_is_shown():
    section = README.split("### The HTML report", 1)[1].split("```bash", 1)[0]
    assert 'pip install ".[report]"' in section


# 4. The SQL contract: three relations, said the same way everywhere.

RELATIONS = ("rankmetrics_input", "rankmetrics_cutoffs", "rankmetrics_parameters")


def test_the_command_and_the_docs_name_the_three_relations():
    for args in (["--help"], ["sql", "--help"]):
        shown = " ".join(run(*args).stdout.split())
        assert all(name in shown for name in RELATIONS), args
        assert "docs/engines.md" in shown
    engines = (ROOT / "docs" / "engines.md").read_text()
    alone = engines.split("## SQL alone", 1)[1].split("\n## ", 1)[0]
    assert "two relations" not in alone and "three relations" in alone
    assert all(f"`{name}(" in alone for name in RELATIONS)
    readme = README.split("### SQL alone", 1)[1].split("\n## ", 1)[0]
    assert all(name in readme for name in RELATIONS)


def test_the_printed_sql_names_what_it_reads_and_a_missing_relation_is_named():
    printed = run("sql").stdout
    first = printed.splitlines()[0]
    assert first.startswith("--") and all(name in first for name in RELATIONS)
    assert "docs/engines.md" in first
    con = duckdb.connect()
    con.sql(
        "CREATE VIEW rankmetrics_input AS SELECT 0 AS grp, sample, label, score, "
        "CAST(truth AS DOUBLE) AS truth, 1.0 AS weight, CAST(score >= 0.5 AS DOUBLE) AS pred, "
        f"1 AS predicted, NULL::DOUBLE AS propensity FROM read_parquet('{EXAMPLE}')"
    )
    con.sql(
        "CREATE TABLE rankmetrics_cutoffs AS SELECT NULL::BIGINT AS k, NULL::DOUBLE AS unscored"
    )
    # As docs/engines.md says: the engine names the relation left out.
    with pytest.raises(duckdb.CatalogException, match="rankmetrics_parameters"):
        con.execute(printed)


def test_register_views_refuses_a_source_named_like_its_views():
    con = duckdb.connect()
    con.execute(f"CREATE TABLE rankmetrics_input AS SELECT * FROM read_parquet('{EXAMPLE}')")
    with pytest.raises(ValueError, match=r"'rankmetrics_input'.*docs/engines.md"):
        register_views(con, "rankmetrics_input", by="model")


def test_register_views_needs_a_cut_off():
    with pytest.raises(ValueError, match=r"cutoffs= needs at least one cut-off"):
        register_views(duckdb.connect(), EXAMPLE, by="model", cutoffs=[])


# 5. The frame functions refuse scikit-learn's call, naming the one that takes it.

FRAME_FUNCTIONS = [
    "coverage_error", "dcg_score", "label_ranking_average_precision_score",
    "label_ranking_loss", "lwlrap", "ndcg_score",
]  # fmt: skip


@pytest.mark.parametrize("name", FRAME_FUNCTIONS)
def test_a_frame_function_called_as_scikit_learn_says_where_that_call_is(name):
    y_true, y_score = matrices()
    for call in (
        lambda: getattr(rm, name)(y_true, y_score),
        lambda: getattr(rm, name)(y_true=y_true, y_score=y_score),
    ):
        with pytest.raises(TypeError, match="long table") as refused:
            call()
        message = str(refused.value)
        assert f"rm.{name}(rm.from_dense(y_true, y_score))" in message
        if name != "lwlrap":  # scikit-learn has no lwlrap
            assert f"polars_rankmetrics.sklearn.{name}(y_true, y_score)" in message
    # The calls it names work, with scikit-learn's numbers.
    value = getattr(rm, name)(rm.from_dense(y_true, y_score)).item()
    if name == "lwlrap":
        expected = skm.label_ranking_average_precision_score(
            y_true, y_score, sample_weight=y_true.sum(axis=1)
        )
    else:
        expected = getattr(skm, name)(y_true, y_score)
        from polars_rankmetrics import sklearn

        assert getattr(sklearn, name)(y_true, y_score) == pytest.approx(expected)
    assert value == pytest.approx(expected)


def test_a_matrix_where_the_long_table_goes_points_to_from_dense():
    y_true, _ = matrices()
    for data in (y_true, y_true.tolist()):
        with pytest.raises(TypeError, match=r"rm.from_dense\(y_true, y_score\)"):
            rm.evaluate(data)


# 6. A wide table points to from_dense.


def wide_table() -> pl.DataFrame:
    y_true, y_score = matrices()
    return pl.DataFrame(y_score, schema=LABELS)


def test_a_wide_table_points_to_from_dense(tmp_path):
    with pytest.raises(ValueError, match=r"column 'sample' not found.*rm\.from_dense"):
        rm.evaluate(wide_table())
    path = tmp_path / "wide.parquet"
    wide_table().write_parquet(path)
    assert "rm.from_dense" in one_line_error(run("evaluate", str(path)))


def test_a_table_of_lists_points_to_from_lists():
    lists = pl.DataFrame({"sample": ["q1"], "labels": [["a", "b"]], "scores": [[0.9, 0.1]]})
    with pytest.raises(ValueError, match=r"column 'label' not found.*rm\.from_lists"):
        rm.evaluate(lists)


def test_a_very_wide_table_lists_some_of_its_columns():
    wide = pl.DataFrame({f"tag_{i:03d}": [0.5] for i in range(500)})
    with pytest.raises(ValueError, match=r"'tag_009', \.\.\.\] \(500 columns\)") as refused:
        rm.evaluate(wide)
    assert "tag_010" not in str(refused.value)


# 7. compare says which samples wins/ties/losses count.


def test_compare_says_how_many_samples_wins_ties_losses_count():
    df = pl.read_parquet(EXAMPLE)
    samples = df["sample"].n_unique()
    # The samples with a positive for both models (both carry the same truth).
    with_positives = (
        df.group_by("model", "sample").agg(pl.col("truth").any())
        .group_by("sample").agg(pl.col("truth").all())["truth"].sum()
    )  # fmt: skip
    assert with_positives < samples
    done = run(
        "compare", str(EXAMPLE), "--by", "model", "--baseline", "baseline",
        "--metrics", "lrap,lwlrap", "--n-resamples", "200", "--n-boot", "100",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    note = done.stdout.strip().splitlines()[-1]
    assert note.startswith("wins/ties/losses count the samples where the metric is defined")
    assert f"{samples:,} (lwlrap: {with_positives:,})" in note
    assert "without positives" in note
    for row in done.stdout.splitlines()[1:3]:  # the table's wins/ties/losses add up to them
        wins, ties, losses = map(int, re.search(r"(\d+)/(\d+)/(\d+)", row).groups())
        expected = with_positives if " lwlrap " in row else samples
        assert wins + ties + losses == expected
    comparing = (ROOT / "docs" / "comparing.md").read_text()
    assert f"{with_positives:,} for lwlrap" in comparing and f"{samples:,} for lrap" in comparing


# 8. Spark: the progress line from the start, and what its start costs.


def on_a_terminal(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run the command (in ``env``, by default this process's environment) with stderr on a
    pseudo-terminal, read as it is written (so that a long run never fills the terminal's
    buffer); return (status, stdout, what the terminal got)."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "polars_rankmetrics.cli", *args],
        stdout=subprocess.PIPE,
        stderr=follower,
        text=True,
        env=env,
    )
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    stdout = process.stdout.read()
    return process.wait(), stdout, seen.decode(errors="replace")


PROGRESS = re.compile(r"rankmetrics: +(\d+)% done, (\d+) s")


def test_the_progress_line_shows_from_the_start_with_the_time():
    status, stdout, terminal = on_a_terminal("evaluate", str(EXAMPLE), "--by", "model")
    assert status == 0 and "candidate" in stdout
    shown = PROGRESS.findall(terminal)
    assert shown[0][0] == "0" and shown[-1][0] == "100", terminal


@pytest.mark.slow
@pytest.mark.skipif(java_missing() is not None, reason=str(java_missing()))
def test_spark_says_it_is_starting_and_shows_the_progress_line(tmp_path):
    """The command on Spark, in a process (and a JVM) of its own, started with the tests' Spark
    settings (tests/servers.py): it says it is starting Spark, shows the progress line, and
    prints evaluate()'s numbers on tests/test_sql_engines.py's random cases (ties, empty and
    full rows, zero weights, a model without positives)."""
    path = tmp_path / "cases.parquet"
    table = random_cases(3)
    table.write_parquet(path)
    started = time.monotonic()
    status, stdout, terminal = on_a_terminal(
        "evaluate", str(path), "--engine", "spark", "--by", "model", "--weight", "weight",
        "--metrics", "lrap,ndcg@3", "--format", "csv", env=spark_environment(),
    )  # fmt: skip
    took = time.monotonic() - started
    assert status == 0, terminal
    expected = rm.evaluate(table, ["lrap", "ndcg@3"], by="model", weight="weight")
    assert_frame_equal(pl.read_csv(stdout.encode()), expected, check_exact=False, rel_tol=1e-9)
    assert terminal.index("rankmetrics: starting Spark") < PROGRESS.search(terminal).start()
    shown = PROGRESS.findall(terminal)
    assert shown[0][0] == "0" and shown[-1][0] == "100"
    # Redrawn every second: a line for (nearly) every second of the run.
    assert len({seconds for _, seconds in shown}) >= took / 2


def test_the_docs_say_what_starting_spark_costs():
    engines = (ROOT / "docs" / "engines.md").read_text()
    spark = engines.split("## Spark", 1)[1]
    assert "JVM" in spark and re.search(r"\d+ to \d+ s", spark)


# 9. A column of the wrong type: the message says how to cast it.


@pytest.mark.parametrize("role", ["score", "truth", "weight", "pred"])
@pytest.mark.parametrize("name", ["same", "other"])
def test_a_column_of_the_wrong_type_says_how_to_cast_it(role, name):
    column = role if name == "same" else f"my_{role}"
    df = pl.DataFrame({
        "sample": [1, 1, 2, 2], "label": ["a", "b", "a", "b"], "score": [0.9, 0.1, 0.4, 0.6],
        "truth": [1, 0, 0, 1], "weight": [1.0, 1.0, 2.0, 2.0], "pred": [1, 0, 0, 1],
    }).with_columns(pl.col(role).cast(pl.String)).rename({role: column})  # fmt: skip
    options = {"weight": "weight", "pred": "pred", role: column}
    with pytest.raises(ValueError) as refused:
        rm.evaluate(df, ["lrap", "f1_samples"], **options)
    message = str(refused.value)
    assert f"pl.col({column!r}).cast(pl.Float64)" in message
    assert f"{role}=" in message and f"--{role}" in message
    assert f"({role}) ({role})" not in message and f"{role!r} ({role})" not in message
    if name == "other":
        assert f"column {column!r} ({role}) must be" in message


def test_a_column_of_the_wrong_type_is_one_line_from_the_command(tmp_path):
    path = tmp_path / "text.parquet"
    pl.read_parquet(EXAMPLE).with_columns(pl.col("score").cast(pl.String)).write_parquet(path)
    line = one_line_error(run("evaluate", str(path), "--by", "model"))
    assert "column 'score' must be numeric, not String" in line and "--score" in line


# 10. The README says what the suite needs and how long it takes.


def test_the_readme_says_what_the_tests_need_and_how_long_they_take():
    first_block, after = README.split("```bash\n", 1)[1].split("```\n", 1)
    assert first_block.strip().splitlines()[1] == 'pip install ".[test]" && pytest'
    said = " ".join(after.split("\n## ", 1)[0].split())
    for needed in ("Java", "PostgreSQL", "Chromium"):
        assert needed in said
    assert "skip" in said and "CI" in said
    assert re.search(r"\d+ minutes", said)


def test_python_compare_without_by_says_it_needs_by():
    import polars_rankmetrics as rm

    with pytest.raises(ValueError, match="compare needs by="):
        rm.compare(str(EXAMPLE), ["lrap"], by=None)
