"""Progress on long runs: a callback in the API, a line on a terminal's stderr in the CLI."""

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BUDGET, rows_per_bucket

import polars_rankmetrics as rm

EXAMPLE = Path(__file__).parent.parent / "data" / "example.parquet"


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("options", [{}, {"memory_limit": "64MB"}])
def test_progress_callback_reaches_the_end(engine, options):
    calls = []
    rm.evaluate(
        EXAMPLE,
        by="model",
        engine=engine,
        progress=lambda done, total: calls.append((done, total)),
        **options,
    )
    assert calls, "no progress reported"
    assert calls[-1][0] == calls[-1][1]
    assert all(0 <= done <= total for done, total in calls)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)


def run_on_a_terminal(*args):
    """Run the CLI with stderr on a pseudo-terminal; return (exit code, stdout, terminal output)."""
    leader, follower = pty.openpty()
    done = subprocess.run(
        [sys.executable, "-m", "polars_rankmetrics.cli", *args],
        stdout=subprocess.PIPE,
        stderr=follower,
        text=True,
    )
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    return done.returncode, done.stdout, seen.decode()


def test_cli_shows_progress_on_a_terminal_and_not_with_quiet():
    args = ["evaluate", str(EXAMPLE), "--by", "model", "--memory-limit", "64MB"]
    code, stdout, terminal = run_on_a_terminal(*args)
    assert code == 0 and "candidate" in stdout
    assert "100% done" in terminal
    code, stdout, terminal = run_on_a_terminal(*args, "--quiet")
    assert code == 0 and "% done" not in terminal


def test_cli_shows_no_progress_when_stderr_is_not_a_terminal():
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "polars_rankmetrics.cli",
            "evaluate",
            str(EXAMPLE),
            "--by",
            "model",
            "--engine",
            "duckdb",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and done.stderr == ""


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_buckets_report_each_bucket(engine):
    calls = []
    with rows_per_bucket(40_000):  # 4 buckets of the example's 160,000 rows
        rm.evaluate(
            EXAMPLE,
            by="model",
            engine=engine,
            memory_limit=BUDGET,
            progress=lambda done, total: calls.append((done, total)),
        )
    assert {total for _, total in calls} == {5}  # the whole-table checks, then 4 buckets
    assert {1, 2, 3, 4, 5} <= {done for done, _ in calls}
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)
