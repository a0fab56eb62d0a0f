"""Faults named by their cause, on every engine: a full temporary directory names the directory
and the lack of space (not the memory budget), a budget too small says so (not the disk), and
an input file removed or truncated while a run reads it is named.

The full directory is a real one where the test can mount a file system (a tmpfs, filled but
for :data:`LEFT` bytes: CI runs as root, and a failed mount fails there). Everywhere, the same
bodies also run on a full disk injected into each engine (:func:`inject_full_disk`), so that
they run without root too.
"""

from __future__ import annotations

import errno
import os
import re
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_rankmetrics as rm
import polars_rankmetrics.engines.driver as driver
import polars_rankmetrics.engines.duckdb as duckdb_engine
import polars_rankmetrics.engines.polars as polars_engine
from polars_rankmetrics import cli

ENGINES = ["polars", pytest.param("duckdb", marks=pytest.mark.slow)]
LEFT = 128 * 1024  # the free bytes a full disk leaves
# The smallest budget the library accepts: DuckDB's share of it (38.4 MB) spills the table of
# big_table() in the rank table's aggregations, and the Polars engine splits it into buckets.
BUDGET = "64MB"


def table(n_samples: int, n_labels: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    n = n_samples * n_labels
    return pl.DataFrame({
        "sample": np.repeat(np.arange(n_samples), n_labels),
        "label": np.tile(np.arange(n_labels), n_samples),
        "score": rng.random(n),
        "truth": rng.integers(0, 2, n),
    })  # fmt: skip


@pytest.fixture(scope="module")
def big_table(tmp_path_factory) -> Path:
    """500,000 rows in a Parquet file: more than DuckDB's share of :data:`BUDGET` holds."""
    path = tmp_path_factory.mktemp("big") / "big.parquet"
    table(50_000, 10).write_parquet(path)
    return path


def causes(error: BaseException) -> str:
    """The messages of ``error`` and of every error it was raised from or during."""
    seen: list[str] = []
    current: BaseException | None = error
    while current is not None:
        seen.append(str(current))
        current = current.__cause__ or current.__context__
    return "\n".join(seen)


def one_line(err: str) -> str:
    assert err.startswith("rankmetrics: error: ") and err.count("\n") == 1, err
    return err.removeprefix("rankmetrics: error: ").rstrip("\n")


def run_cli(argv: list[str], capsys) -> tuple[int, str]:
    status = cli.main(argv)
    return status, one_line(capsys.readouterr().err)


@dataclass(frozen=True)
class FullDisk:
    """A temporary directory with no room: ``path``, and the files that fill it (``kept``)."""

    path: Path
    kept: list[str]


def inject_full_disk(patch: pytest.MonkeyPatch) -> None:
    """What a full disk does to each engine, without one. DuckDB caps its spill files at
    ``max_temp_directory_size``, which it sets from the free space of their directory: the cap
    is set to what a full disk leaves. Polars' bucket files fail with ``ENOSPC``, after a first
    partial file (which the run must remove)."""
    connect = duckdb_engine.connect

    def capped(*args: object, **kwargs: object):
        con = connect(*args, **kwargs)  # type: ignore[arg-type]
        con.execute(f"SET max_temp_directory_size = '{LEFT}B'")
        return con

    def write_buckets(lf: object, keys: object, n: int, directory: Path) -> list[list[Path]]:
        part = directory / "__bucket=0" / "0.parquet"
        part.parent.mkdir(parents=True)
        part.write_bytes(b"PAR1")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(part))

    patch.setattr(duckdb_engine, "connect", capped)
    patch.setattr(polars_engine, "write_buckets", write_buckets)


@pytest.fixture(params=["tmpfs", "injected"])
def full_disk(request, tmp_path) -> Iterator[FullDisk]:
    """A full temporary directory: a tmpfs of 8 MB filled but for :data:`LEFT` bytes, or a
    directory with a full disk injected (:func:`inject_full_disk`). A tmpfs that cannot be
    mounted fails the run under CI (which runs as root) and skips elsewhere, where the injected
    variant runs the same body."""
    path = tmp_path / "full"
    path.mkdir()
    if request.param == "injected":
        with pytest.MonkeyPatch.context() as patch:
            inject_full_disk(patch)
            yield FullDisk(path, [])
        return
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(path)],
        capture_output=True, text=True,
    )  # fmt: skip
    if mounted.returncode != 0:
        reason = f"cannot mount a tmpfs here: {mounted.stderr.strip() or mounted.returncode}"
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI runs as root and must mount one)")
        pytest.skip(f"{reason}; the injected variant runs the same test")
    try:
        free = os.statvfs(path)
        (path / "filler").write_bytes(bytes(free.f_bavail * free.f_frsize - LEFT))
        yield FullDisk(path, ["filler"])
    finally:
        subprocess.run(["umount", "-l", str(path)], check=True)


def left_in(disk: FullDisk) -> list[str]:
    return sorted(p.name for p in disk.path.iterdir())


# What a run's failure on a full disk says in the engine's words: DuckDB's spill files reaching
# the free space of their directory; Polars' bucket files, the OS's error.
ENGINE_WORDS = {"duckdb": "failed to offload data block", "polars": "No space left on device"}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_full_temporary_directory_is_named_not_the_budget(engine, big_table, full_disk, capsys):
    message = (
        f"the temporary directory '{full_disk.path}' ran out of space for this run's spill and "
        "bucket files: free space there, or give a directory with more room (temp_dir=, "
        "--temp-dir)"
    )
    with pytest.raises(ValueError) as raised:
        rm.evaluate(big_table, ["lrap"], engine=engine, memory_limit=BUDGET,
                    temp_dir=full_disk.path)  # fmt: skip
    assert str(raised.value) == message
    assert ENGINE_WORDS[engine] in causes(raised.value)  # the fault this test is about
    assert left_in(full_disk) == full_disk.kept
    argv = ["evaluate", str(big_table), "--metrics", "lrap", "--engine", engine,
            "--memory-limit", BUDGET, "--temp-dir", str(full_disk.path)]  # fmt: skip
    assert run_cli(argv, capsys) == (1, message)
    assert left_in(full_disk) == full_disk.kept


def test_duckdb_spills_into_the_run_directory_without_a_budget(tmp_path):
    """Without a budget DuckDB still spills beyond its default limit: into the run's directory
    (the one a full disk names), not its default ``.tmp`` in the working directory."""
    con = duckdb_engine.connect(None, tmp_path)
    setting = con.sql("SELECT current_setting('temp_directory')").fetchall()
    con.close()
    assert setting == [(str(tmp_path / "duckdb"),)]


@pytest.fixture(scope="module")
def too_large_for_the_budget(tmp_path_factory) -> dict[str, Path]:
    """Per engine, a table :data:`BUDGET` is too small for whatever the disk: for DuckDB, JSON
    lines of two models (its reader's buffers do not spill); for Polars, one sample of 200,000
    labels (a bucket holds whole samples)."""
    directory = tmp_path_factory.mktemp("budget")
    example = pl.read_parquet(Path(__file__).parents[1] / "data" / "example.parquet")
    example.head(400).write_ndjson(directory / "rows.ndjson")
    table(1, 200_000).write_parquet(directory / "one_sample.parquet")
    return {"duckdb": directory / "rows.ndjson", "polars": directory / "one_sample.parquet"}


BUDGET_MESSAGES = {
    "duckdb": r"memory_limit '64MB' is too small for DuckDB here: its share of it \(38400000B\) "
    r"ran out \(Out of Memory Error: .*\); give a larger memory_limit",
    "polars": r"memory limit '64MB' is too small for this table \(200,000 rows, up to 200,000 a "
    r"sample\): give at least \d+MB",
}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_budget_too_small_is_named_not_the_disk(engine, too_large_for_the_budget, full_disk):
    by = "model" if engine == "duckdb" else None
    with pytest.raises(ValueError) as raised:
        rm.evaluate(too_large_for_the_budget[engine], ["lrap"], by=by, engine=engine,
                    memory_limit=BUDGET, temp_dir=full_disk.path)  # fmt: skip
    assert re.fullmatch(BUDGET_MESSAGES[engine], str(raised.value)), raised.value
    assert left_in(full_disk) == full_disk.kept


def test_a_budget_does_not_apply_to_spark():
    with pytest.raises(ValueError, match="^memory_limit does not apply to the spark engine"):
        rm.evaluate(table(2, 2), ["lrap"], engine="spark", memory_limit=BUDGET)


def remove(path: Path) -> None:
    path.unlink()


def truncate(path: Path) -> None:
    """Half of ``path`` left: a CSV file's first half of whole lines."""
    body = path.read_bytes()
    half = len(body) // 2
    path.write_bytes(body[: body.rindex(b"\n", 0, half) + 1 if path.suffix == ".csv" else half])


@contextmanager
def damaged_after_the_checks(path: Path, damage: Callable[[Path], None]) -> Iterator[None]:
    """Runs in which ``damage`` befalls ``path`` once the whole-table checks have read it,
    before the engine reads it again for the numbers."""
    split = driver.split

    def split_then_damage(*args: object, **kwargs: object):
        pieces = split(*args, **kwargs)  # type: ignore[arg-type]
        damage(path)
        return pieces

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(driver, "split", split_then_damage)
        yield


DAMAGES = {
    "removed": (remove, r"disappeared during the run \(removed or renamed\): keep the input "
                "files in place until the run ends"),
    "truncated": (truncate, r"was truncated during the run \((?P<before>[\d,]+) bytes when the "
                  r"run started, (?P<after>[\d,]+) now\): evaluate it again once it is written "
                  "whole"),
}  # fmt: skip


# Spark, whose start and query planning outweigh a small run many times, on one case: its
# error for a file gone (a Py4JJavaError) is none of the errors the engine declares.
FILES = [("removed", "parquet"), ("truncated", "parquet"), ("truncated", "csv")]
CHANGES = [
    *(("polars", *case) for case in FILES),
    *(pytest.param("duckdb", *case, marks=pytest.mark.slow) for case in FILES),
    pytest.param("spark", "removed", "parquet", marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("engine", "damage", "suffix"), CHANGES)
def test_an_input_file_changed_during_a_run_is_named(engine, damage, suffix, request, tmp_path):
    """Two files of one table, the second damaged mid-run. A CSV file cut after a whole line
    reads as a shorter table: DuckDB gave the numbers of what was left."""
    if engine == "spark":
        request.getfixturevalue("spark")
    rows = table(400, 5, seed=2)
    first, second = tmp_path / f"a.{suffix}", tmp_path / f"b.{suffix}"
    for path, part in ((first, rows.head(1000)), (second, rows.tail(1000))):
        getattr(part, f"write_{suffix}")(path)
    size = second.stat().st_size
    apply, problem = DAMAGES[damage]
    with damaged_after_the_checks(second, apply), pytest.raises(ValueError) as raised:
        rm.evaluate(str(tmp_path), ["lrap"], engine=engine)
    found = re.fullmatch(f"the input file '{second}' {problem}", str(raised.value))
    assert found, raised.value
    if damage == "truncated":
        after = second.stat().st_size
        assert (found["before"], found["after"]) == (f"{size:,}", f"{after:,}") and after < size


def test_the_command_names_an_input_file_removed_during_a_run(tmp_path, capsys):
    path = tmp_path / "t.parquet"
    table(100, 5).write_parquet(path)
    with damaged_after_the_checks(path, remove):
        status, message = run_cli(["evaluate", str(path)], capsys)
    assert (status, message) == (
        1, f"the input file '{path}' disappeared during the run (removed or renamed): keep the "
        "input files in place until the run ends",
    )  # fmt: skip
