"""Crash-safe writes (``polars_rankmetrics.outputs``): a writer of a state, an HTML page or the
command's ``--output``, killed with SIGKILL at random moments, leaves its target absent, the old
file, or a whole new one, never a part; two writers of one path leave one whole file.

Each writer runs in a child forked by a launcher process that has imported the library but run
nothing (so each child starts Polars' thread pools of its own): a kill then costs a fork, not a
Python start. A child writes the target over and over, alternating two versions; the test waits
for the child's k-th change to the directory (k from 1 to 4: a temporary file created, grown or
renamed over the target; with no target yet, or an old one), waits a random time up to about
two writes, and kills the child. A temporary file left behind shows that the kill landed
mid-write (between the temporary file's creation and its rename; "a part written" when it holds
less than a whole version); the test counts those and removes them, as docs/cli.md tells a user
to. The trigger reads the directory, not the temporary files' names: a writer writing in place
would be killed mid-write as often, and fail the test.

The HTML kind writes pages of its own through ``Report.save``, the write of ``html_report(path=)``
and ``rankmetrics report --html``: drawing a real page's charts takes seconds, and the write
does not read what the page says.
"""

from __future__ import annotations

import errno
import html.parser
import io
import json
import os
import random
import select
import signal
import stat
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankmetrics as rm
from polars_rankmetrics.cli import main
from polars_rankmetrics.outputs import TEMPORARY_MARK, replacing, write_text
from polars_rankmetrics.report.page import Report
from polars_rankmetrics.states import write

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forks its writers (POSIX)")

# Kills per output kind (the --output kind alternates a JSON and a CSV target): at least
# KILLS, and more, up to MOST_KILLS, until MID_WRITE of them have landed mid-write (a loaded
# machine delays the test's kills more than a writer's writes).
KILLS, MOST_KILLS, MID_WRITE = 24, 96, 3
# How long a child may take to start writing, or a launcher to answer, before the test fails.
PATIENCE = 120.0

# The launcher: forks a child per request; the child writes a kind's versions to a target
# (``count`` writes, or until killed when count is -1) and exits 0, or 3 on any error (its
# traceback in ``log``).
LAUNCHER = r"""
import json, os, sys, traceback
from pathlib import Path

import polars as pl
from polars_rankmetrics.cli import main
from polars_rankmetrics.report.page import Report
from polars_rankmetrics.states import write

def writer(kind, payload, target):
    if kind == "state":
        frames = [pl.read_parquet(payload / f"state{v}.parquet") for v in (0, 1)]
        return lambda v: write(frames[v], target)
    if kind == "html":
        pages = [(payload / f"page{v}.html").read_text(encoding="utf-8") for v in (0, 1)]
        reports = [Report(pl.DataFrame(), None, None, page) for page in pages]
        return lambda v: reports[v].save(target)
    def run(v):
        status = main(["evaluate", str(payload / f"data{v}.parquet"), "--per-sample", "--quiet",
                       "-o", target])
        if status != 0:
            raise RuntimeError(f"rankmetrics evaluate exited with {status}")
    return run

def child(kind, payload, target, versions, count, log):
    try:
        with open(log, "w") as out:
            os.dup2(out.fileno(), 1)
            os.dup2(out.fileno(), 2)
        run = writer(kind, Path(payload), target)
        done = 0
        while count < 0 or done < count:
            run(versions[done % len(versions)])
            done += 1
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(3)
    os._exit(0)

for line in sys.stdin:
    request = json.loads(line)
    if request["do"] == "fork":
        pid = os.fork()
        if pid == 0:
            child(request["kind"], request["payload"], request["target"], request["versions"],
                  request["count"], request["log"])
        print(pid, flush=True)
    else:  # "reap" waits for the child's end, "poll" does not (-1: still running)
        pid, status = os.waitpid(request["pid"], 0 if request["do"] == "reap" else os.WNOHANG)
        print(status if pid else -1, flush=True)
"""


class Launcher:
    """The launcher process and its requests (one line of JSON each, one line of answer)."""

    def __init__(self) -> None:
        # One BLAS thread: a child forked from a process with no thread pool running.
        env = os.environ | {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-c", LAUNCHER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, env=env,
        )  # fmt: skip
        self.logs: dict[int, Path] = {}

    def _ask(self, **request: object) -> int:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], PATIENCE)
        assert ready, f"the launcher did not answer {request} in {PATIENCE} s"
        line = self.process.stdout.readline()
        assert line, f"the launcher exited (status {self.process.wait()})"
        return int(line)

    def fork(self, kind: str, payload: Path, target: Path, versions: list[int], count: int) -> int:
        """A child writing ``versions`` in turn to ``target``, ``count`` times (-1: until
        killed); its pid."""
        log = payload / f"{target.name}.{time.monotonic_ns()}.log"
        pid = self._ask(do="fork", kind=kind, payload=str(payload), target=str(target),
                        versions=versions, count=count, log=str(log))  # fmt: skip
        self.logs[pid] = log
        return pid

    def reap(self, pid: int) -> int:
        """The child's wait status, once it has ended."""
        return self._ask(do="reap", pid=pid)

    def poll(self, pid: int) -> int | None:
        """The child's wait status if it has ended, else None."""
        status = self._ask(do="poll", pid=pid)
        return None if status == -1 else status

    def log(self, pid: int) -> str:
        path = self.logs.get(pid)
        return path.read_text() if path is not None and path.exists() else ""

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=PATIENCE)


@pytest.fixture(scope="module")
def launcher():
    started = Launcher()
    yield started
    started.close()


def _table(samples: int, labels: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = samples * labels
    return pl.DataFrame({
        "sample": np.repeat([f"s{i:05d}" for i in range(samples)], labels),
        "label": np.tile([f"tag_{j:02d}" for j in range(labels)], samples),
        "score": rng.integers(0, 50, rows) / 50,  # ties
        "truth": rng.random(rows) < 0.3,
    })  # fmt: skip


def _page(version: int) -> str:
    rows = "\n".join(f"<tr><td>{version}</td><td>row {i}</td></tr>" for i in range(12_000))
    return (
        f"<!DOCTYPE html>\n<html><head><title>version {version}</title></head>"
        f"<body><table>\n{rows}\n</table></body></html>\n"
    )


class _Closed(html.parser.HTMLParser):
    """Whether a page closes every element it opens, ``</html>`` last."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.closed_html = False

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open.pop() == tag, f"</{tag}> closes nothing open"
        self.closed_html = tag == "html"


def _html_whole(data: bytes) -> bool:
    parser = _Closed()
    parser.feed(data.decode("utf-8"))
    parser.close()
    return parser.closed_html and not parser.open


class Kind:
    """An output kind: its two versions (each written whole, with no kill), whether some bytes
    are one of them, and the targets a child writes."""

    def __init__(self, name: str, payload: Path) -> None:
        self.name, self.payload = name, payload
        self.whole: dict[str, list[bytes]] = {}  # a target's suffix -> each version's bytes
        if name == "state":
            keys = ["lrap", "ndcg@10", "f1_micro"]
            for v in (0, 1):
                frame = rm.state(_table(800, 10, v), keys, intervals=True, per_label=True)
                started = time.perf_counter()
                write(frame, payload / f"state{v}.parquet")
                took = time.perf_counter() - started
                assert_frame_equal(pl.read_parquet(payload / f"state{v}.parquet"), frame)
            self.targets = [payload / "out" / "day.parquet"]
            self.whole[".parquet"] = [(payload / f"state{v}.parquet").read_bytes() for v in (0, 1)]
        elif name == "html":
            for v in (0, 1):
                started = time.perf_counter()
                Report(pl.DataFrame(), None, None, _page(v)).save(payload / f"page{v}.html")
                took = time.perf_counter() - started
                assert _html_whole((payload / f"page{v}.html").read_bytes())
            self.targets = [payload / "out" / "report.html"]
            self.whole[".html"] = [(payload / f"page{v}.html").read_bytes() for v in (0, 1)]
        else:
            for v in (0, 1):
                _table(400, 8, 10 + v).write_parquet(payload / f"data{v}.parquet")
            self.targets = [payload / "out" / "result.json", payload / "out" / "result.csv"]
            for suffix in (".json", ".csv"):
                written = []
                for v in (0, 1):
                    reference = payload / f"whole{v}{suffix}"
                    assert main(["evaluate", str(payload / f"data{v}.parquet"), "--per-sample",
                                 "--quiet", "-o", str(reference)]) == 0  # fmt: skip
                    written.append(reference.read_bytes())
                self.whole[suffix] = written
            started = time.perf_counter()  # the write alone, after the evaluation
            write_text(payload / "timed.json", self.whole[".json"][1].decode("utf-8"))
            took = time.perf_counter() - started
        (payload / "out").mkdir()
        # About two writes of a version: the span the kills spread over after a write starts.
        self.span = 2 * took
        for suffix, versions in self.whole.items():
            assert [self.which(v, suffix) for v in versions] == [0, 1]

    def which(self, data: bytes, suffix: str) -> int | None:
        """Which version ``data`` is whole, or None. A state or a page is one version's bytes
        (each parsed above: Parquet read, HTML closed); the command's JSON or CSV is parsed and
        its numbers compared to 1e-12, the engine's sums being free to differ in the last bit
        from one run to the next."""
        if suffix in (".parquet", ".html"):
            versions = self.whole[suffix]
            return versions.index(data) if data in versions else None
        try:
            read = _parsed(data, suffix)
        except (ValueError, pl.exceptions.PolarsError):  # JSON or CSV cut short
            return None
        for v, whole in enumerate(self.whole[suffix]):
            try:
                assert_frame_equal(read, _parsed(whole, suffix), rel_tol=1e-12)
            except AssertionError:
                continue
            return v
        return None

    def version(self, path: Path) -> int | None:
        """Which whole version ``path`` holds; None if absent. Fails on a part or anything else."""
        if not path.exists():
            return None
        data = path.read_bytes()
        held = self.which(data, path.suffix)
        assert held is not None, f"{path.name} holds {len(data)} bytes, neither whole version"
        return held


def _parsed(data: bytes, suffix: str) -> pl.DataFrame:
    if suffix == ".json":
        rows = json.loads(data)
        assert isinstance(rows, list)
        return pl.DataFrame(rows)
    return pl.read_csv(io.BytesIO(data))


def _temporaries(target: Path) -> list[Path]:
    return sorted(target.parent.glob(f".{target.name}{TEMPORARY_MARK}*"))


def _snapshot(directory: Path) -> frozenset[tuple[str, int, int, int]]:
    """What a writer changes in ``directory``: each file's name, inode, size and mtime."""
    seen = set()
    for entry in os.scandir(directory):
        try:
            found = entry.stat()
        except FileNotFoundError:  # renamed or removed since the listing
            continue
        seen.add((entry.name, found.st_ino, found.st_size, found.st_mtime_ns))
    return frozenset(seen)


def _kill_after_changes(
    launcher: Launcher, kind: Kind, target: Path, first: int, k: int, sig: int = signal.SIGKILL
) -> tuple[int, bool]:
    """Start a child writing ``target`` over and over; send it ``sig`` a random time after its
    k-th change to the directory (a temporary file created, grown or renamed; or, were a writer
    to write in place, the target itself). Its pid, and whether a temporary file was there
    just before the signal."""
    last = _snapshot(target.parent)
    pid = launcher.fork(kind.name, kind.payload, target, [first, 1 - first], -1)
    changes, deadline = 0, time.monotonic() + PATIENCE
    while changes < k:
        now = _snapshot(target.parent)
        changes, last = changes + (now != last), now
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            launcher.reap(pid)
            pytest.fail(f"no write of {target.name} started: {launcher.log(pid)}")
        time.sleep(0)
    # A busy wait: a sleep on a loaded machine would give the processor up for longer than a
    # write lasts.
    until = time.perf_counter() + random.uniform(0, kind.span)
    while time.perf_counter() < until:
        pass
    during = bool(_temporaries(target))
    os.kill(pid, sig)
    return pid, during


@pytest.mark.parametrize("name", ["state", "html", "output"])
def test_a_killed_writer_leaves_no_file_the_old_one_or_the_whole_new_one(name, launcher, tmp_path):
    kind = Kind(name, tmp_path)
    random.seed(51)
    outcomes: Counter[str] = Counter()
    mid_write = partial = i = 0
    while i < KILLS or (mid_write < MID_WRITE and i < MOST_KILLS):
        target = kind.targets[i % len(kind.targets)]
        if i % 6 == 0:
            target.unlink(missing_ok=True)  # the first write of a path, with no old file
        existed = target.exists()
        pid, _ = _kill_after_changes(launcher, kind, target, first=i % 2, k=random.randint(1, 4))
        status = launcher.reap(pid)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (
            launcher.log(pid)
        )  # fmt: skip
        held = kind.version(target)
        # An old file is replaced by a rename, never removed: the target is absent only where
        # no file was there before the writer started.
        assert held is not None or not existed, f"{target.name} vanished on kill {i}"
        outcomes["absent" if held is None else f"version {held}"] += 1
        left = _temporaries(target)
        assert len(left) <= 1, left
        for leftover in left:
            mid_write += 1
            partial += kind.which(leftover.read_bytes(), target.suffix) is None
            leftover.unlink()
        i += 1
    print(
        f"\n{name}: {i} kills, {mid_write} mid-write (a temporary file left), {partial} of "
        f"them with a part written; the target: {dict(sorted(outcomes.items()))}"
    )
    # Kills that never land mid-write would prove nothing.
    assert mid_write >= MID_WRITE, (mid_write, outcomes)


def test_sigterm_to_the_command_mid_write_leaves_no_temporary_file(launcher, tmp_path):
    """The command turns SIGTERM into an exception (exit status 143): the write in progress
    removes its temporary file on the way out. At least 12 signals, and more (up to 48) until 2
    have come while a temporary file was there."""
    kind = Kind("output", tmp_path)
    random.seed(143)
    mid_write = sent = 0
    ends: Counter[str] = Counter()
    while sent < 12 or (mid_write < 2 and sent < 48):
        target = kind.targets[sent % 2]
        k = random.randint(1, 4)
        pid, during = _kill_after_changes(launcher, kind, target, sent % 2, k, signal.SIGTERM)
        status = launcher.reap(pid)
        log = launcher.log(pid)
        # The command's exit status (143) stops the child; a signal between two runs of the
        # command, outside its handler, ends it.
        assert os.WIFSIGNALED(status) or "rankmetrics evaluate exited with" in log, log
        ends["signal" if os.WIFSIGNALED(status) else log.strip().rsplit(" ", 1)[-1]] += 1
        kind.version(target)
        assert _temporaries(target) == []
        mid_write += during
        sent += 1
    print(f"\nSIGTERM: {sent} signals, {mid_write} with a temporary file there, none left "
          f"after; the command's ends: {dict(ends)}")  # fmt: skip
    assert mid_write >= 2


@pytest.mark.parametrize("name", ["state", "html", "output"])
def test_two_writers_of_one_path_leave_one_whole_file(name, launcher, tmp_path):
    kind = Kind(name, tmp_path)
    target = kind.targets[-1]
    count = 3 if name == "output" else 12
    pids = [launcher.fork(name, tmp_path, target, [v], count) for v in (0, 1)]
    read = Counter[int | None]()
    statuses = {}
    while len(statuses) < len(pids):
        read[kind.version(target)] += 1  # whole at every moment, while both write
        for pid in pids:
            status = None if pid in statuses else launcher.poll(pid)
            if status is not None:
                statuses[pid] = status
    assert all(os.WIFEXITED(s) and os.WEXITSTATUS(s) == 0 for s in statuses.values()), [
        launcher.log(pid) for pid in pids
    ]
    assert kind.version(target) in (0, 1)
    assert _temporaries(target) == []
    print(f"\n{name}: the target read {sum(read.values())} times while both wrote: {dict(read)}")


def test_a_failed_write_removes_its_temporary_file_and_keeps_the_old_one(tmp_path):
    target = tmp_path / "kept.txt"
    target.write_text("old\n")
    for error in (ValueError("the writer failed"), KeyboardInterrupt()):
        with pytest.raises(type(error)), replacing(target) as temporary:
            temporary.write_text("half a ")
            raise error
        assert target.read_text() == "old\n"
        assert _temporaries(target) == []


def test_a_write_keeps_the_mode_and_the_link_and_names_a_missing_directory(tmp_path):
    real = tmp_path / "real.html"
    real.write_text("old")
    real.chmod(0o640)
    link = tmp_path / "link.html"
    link.symlink_to(real)
    write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "new"
    assert real.stat().st_mode & 0o777 == 0o640
    missing = tmp_path / "no such directory" / "out.json"
    with pytest.raises(FileNotFoundError) as raised:
        write_text(missing, "{}")
    assert raised.value.filename == str(missing)


@pytest.mark.parametrize("what", ["state", "html", "output"])
def test_each_writer_over_a_directory_fails_leaving_it_and_no_temporary_file(
    what, tmp_path, capsys
):
    """The target a directory: every writer raises (the command: one line, status 1) and leaves
    nothing behind."""
    table = _table(20, 3, 0)
    target = tmp_path / ("taken.parquet" if what == "state" else "taken.json")
    target.mkdir()
    if what in ("state", "html"):
        with pytest.raises(IsADirectoryError) as raised:
            if what == "state":
                rm.state(table, ["lrap"], path=target)
            else:
                Report(pl.DataFrame(), None, None, _page(0)).save(target)
        assert str(raised.value) == f"[Errno 21] Is a directory: {str(target)!r}"
    else:
        data = tmp_path / "data.parquet"
        table.write_parquet(data)
        assert main(["evaluate", str(data), "-o", str(target)]) == 1
        stderr = capsys.readouterr().err
        assert stderr.count("\n") == 1 and f"cannot write {str(target)!r}" in stderr, stderr
    assert target.is_dir() and list(target.iterdir()) == []
    assert _temporaries(target) == []


@pytest.mark.parametrize("errno_", [errno.EINVAL, errno.ENOTSUP])
def test_a_directory_that_refuses_fsync_still_counts_as_written(
    errno_, monkeypatch, tmp_path, capsys
):
    """Some filesystems refuse fsync on a directory (EINVAL, ENOTSUP): the file is renamed
    over its target by then, so the write succeeds; any other error still fails it."""
    real_fsync = os.fsync

    def refusing(handle: int) -> None:
        if _is_directory(handle):
            raise OSError(errno_, os.strerror(errno_))
        real_fsync(handle)

    monkeypatch.setattr(os, "fsync", refusing)
    target = tmp_path / "out.txt"
    write_text(target, "whole\n")
    assert target.read_text() == "whole\n"
    data = tmp_path / "data.parquet"
    _table(20, 3, 0).write_parquet(data)
    assert main(["evaluate", str(data), "--quiet", "-o", str(tmp_path / "r.json")]) == 0
    assert capsys.readouterr().err == ""
    assert json.loads((tmp_path / "r.json").read_text())

    def failing(handle: int) -> None:
        if _is_directory(handle):
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_fsync(handle)

    monkeypatch.setattr(os, "fsync", failing)
    with pytest.raises(OSError) as raised:
        write_text(target, "again\n")
    assert raised.value.errno == errno.EIO


def _is_directory(handle: int) -> bool:
    return stat.S_ISDIR(os.fstat(handle).st_mode)
