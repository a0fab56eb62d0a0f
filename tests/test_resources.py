"""Resources are released on every path: connections, temporary views, spill directories."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest

import polars_rankmetrics as rm
from polars_rankmetrics.engines import driver
from polars_rankmetrics.engines import duckdb as duckdb_engine
from polars_rankmetrics.engines.duckdb import register_views, unregister_views

EXAMPLE = Path(__file__).parent.parent / "data" / "example.parquet"


def test_the_duckdb_connection_is_closed_after_an_error(monkeypatch):
    opened = []
    real = duckdb_engine.connect

    def recording(*args, **options):
        opened.append(real(*args, **options))
        return opened[-1]

    monkeypatch.setattr(duckdb_engine, "connect", recording)
    bad = pl.DataFrame({"sample": [1, 1], "label": [0, 1], "score": [0.5, None], "truth": [1, 0]})
    with pytest.raises(ValueError, match="has a null"):
        rm.evaluate(bad, engine="duckdb", memory_limit="200MB")
    assert opened
    for con in opened:
        with pytest.raises(duckdb.ConnectionException):
            con.execute("SELECT 1")


def test_register_views_leaves_nothing_in_a_database_file(tmp_path):
    database = tmp_path / "user.duckdb"
    con = duckdb.connect(str(database))
    con.execute("CREATE TABLE preds AS SELECT * FROM read_parquet(?)", [str(EXAMPLE)])
    register_views(con, "preds", by="model")
    assert con.execute("SELECT count(*) FROM rankmetrics_summary").fetchall()[0][0] == 2
    con.close()
    con = duckdb.connect(str(database))
    saved = con.execute(
        "SELECT count(*) FROM duckdb_views() WHERE view_name LIKE 'rankmetrics%'"
    ).fetchall()[0][0]
    assert saved == 0
    assert con.execute("SELECT count(*) FROM preds").fetchall()[0][0] == 160_000


def test_unregister_views_removes_them():
    con = duckdb.connect()
    register_views(con, str(EXAMPLE), by="model")
    unregister_views(con)
    left = con.execute(
        "SELECT (SELECT count(*) FROM duckdb_views() WHERE view_name LIKE 'rankmetrics%') "
        "+ (SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE 'rankmetrics%')"
    ).fetchall()[0][0]
    assert left == 0


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(done.stdout)


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_spill_files_go_to_temp_dir_and_stale_ones_are_removed(tmp_path, engine, monkeypatch):
    stale = tmp_path / f"rankmetrics-{_dead_pid()}-old"
    (stale / "buckets").mkdir(parents=True)
    alive = tmp_path / f"rankmetrics-{os.getpid()}-running"
    alive.mkdir()
    seen = []
    real = driver.managed_directory

    def spying(parent):
        with real(parent) as path:
            seen.append(path)
            yield path

    monkeypatch.setattr(driver, "managed_directory", driver.contextmanager(spying))
    rm.evaluate(
        EXAMPLE, ["lrap"], by="model", engine=engine, memory_limit="64MB", temp_dir=tmp_path
    )
    assert seen and seen[0].parent == tmp_path
    assert not stale.exists()  # its process no longer runs
    assert alive.exists()  # this one does
    assert sorted(p.name for p in tmp_path.iterdir()) == [alive.name]  # the run's own is gone


def test_a_missing_temp_dir_is_refused(tmp_path):
    with pytest.raises(ValueError, match="temp_dir .* is not a directory"):
        rm.evaluate(EXAMPLE, temp_dir=tmp_path / "nowhere")


@pytest.mark.parametrize(
    "engine, sig",
    [("polars", signal.SIGINT), ("duckdb", signal.SIGINT), ("duckdb", signal.SIGTERM)],
)
def test_a_signal_stops_the_run_removes_its_files_and_exits_cleanly(tmp_path, engine, sig):
    """Ctrl-C (SIGINT) or SIGTERM in the middle of a bucketed run: the run stops within seconds
    (DuckDB's running query is interrupted, not waited for), its temporary files are gone, and
    one line says so, with status 128 + the signal."""
    rng = np.random.default_rng(0)
    n_samples, n_labels = 100_000, 40
    path = tmp_path / "big.parquet"
    pl.DataFrame({
        "sample": np.repeat(np.arange(n_samples), n_labels),
        "label": np.tile(np.arange(n_labels, dtype=np.int32), n_samples),
        "score": rng.random(n_samples * n_labels).astype(np.float32),
        "truth": rng.random(n_samples * n_labels) < 0.05,
    }).write_parquet(path)  # fmt: skip
    spill = tmp_path / "spill"
    spill.mkdir()
    run = subprocess.Popen(
        [sys.executable, "-m", "polars_rankmetrics.cli", "evaluate", str(path), "--engine", engine,
         "--memory-limit", "64MB", "--temp-dir", str(spill)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not any(spill.glob("rankmetrics-*/buckets")) and time.monotonic() < deadline:
        assert run.poll() is None, run.communicate()
        time.sleep(0.05)
    assert any(spill.glob("rankmetrics-*/buckets")), "the run never split its table"
    run.send_signal(sig)
    _, stderr = run.communicate(timeout=10)
    assert run.returncode == 128 + sig, stderr
    name = "interrupted" if sig == signal.SIGINT else "terminated"
    assert stderr.strip().splitlines() == [f"rankmetrics: {name}"]
    assert list(spill.iterdir()) == []
