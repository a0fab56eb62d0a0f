"""Run a command as a child process and report its wall time and peak resident memory; where
the benchmarks write their data."""

from __future__ import annotations

import contextlib
import os
import resource
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

OUT = Path(__file__).parent / "out"  # ignored by git


@contextlib.contextmanager
def data_directory(small: bool) -> Iterator[Path]:
    """Where a benchmark writes its data: ``benchmarks/out/``, kept between runs so that each
    size is written once; with ``small`` (a script's ``--small`` mode, which CI runs) a
    temporary directory of its own, removed when done, so that runs side by side share no file
    and leave none."""
    if not small:
        OUT.mkdir(exist_ok=True)
        yield OUT
        return
    with tempfile.TemporaryDirectory(prefix="rankmetrics-benchmark-") as directory:
        yield Path(directory)


@dataclass(frozen=True)
class Run:
    seconds: float
    peak_rss_mib: float
    returncode: int
    stdout: str
    stderr: str


def _tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and all its descendants now (a JVM that pyspark starts is a
    grandchild whose memory ``wait4`` does not report)."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        try:
            with open(f"/proc/{current}/statm") as statm:
                total += int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as children:
                    pending += [int(c) for c in children.read().split()]
        except (OSError, ValueError):
            continue
    return total


def run(command: list[str]) -> Run:
    """Wall time and peak RSS: the child's own (``ru_maxrss`` from ``wait4``) or, if larger,
    its whole process tree's, sampled every 0.2 s. A thread blocks in ``wait4``, so that the
    end is taken when the child exits, not at the next sample (which added up to 0.2 s)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=out, stderr=err, text=True)
        ended: list[tuple[float, int, resource.struct_rusage]] = []

        def wait() -> None:
            _, status, usage = os.wait4(child.pid, 0)
            ended.append((time.perf_counter(), status, usage))

        waiter = threading.Thread(target=wait)
        waiter.start()
        tree_peak = 0
        while waiter.is_alive():
            tree_peak = max(tree_peak, _tree_rss(child.pid))
            waiter.join(0.2)
        end, status, usage = ended[0]
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        peak_mib = max(usage.ru_maxrss / 1024, tree_peak / 2**20)
        return Run(end - start, peak_mib, child.returncode, out.read(), err.read())


def uncompiled(command: list[str]) -> list[str]:
    """``command`` with numba's compiler off (``NUMBA_DISABLE_JIT``). The ``--small`` modes run
    ranx this way: its code runs interpreted, the same calls on a few hundred rows, where
    compiling it (in a fresh environment, before numba's cache holds it) costs many times a
    small mode's whole run."""
    return ["env", "NUMBA_DISABLE_JIT=1", *command]


def environment() -> dict[str, object]:
    """Where a figure was measured: the date, the machine and the versions that matter."""
    import platform

    import duckdb
    import polars

    import polars_rankmetrics

    return {
        "date": time.strftime("%Y-%m-%d"),
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "polars": polars.__version__,
        "duckdb": duckdb.__version__,
        "polars_rankmetrics": polars_rankmetrics.__version__,
    }


def rounds(text: str) -> int:
    """``--rounds``: a positive count (argparse's ``type``)."""
    count = int(text)
    if count < 1:
        raise ValueError(f"--rounds must be at least 1, not {count}")
    return count


def fastest(runs: list[dict]) -> dict:
    """A measurement's rounds as one figure: the fastest round (its ``seconds`` and the fields
    beside them), every round's seconds (``runs``) and the highest peak RSS of any round
    (``peak_rss_mib``: a memory budget bounds every round, not the fastest alone)."""
    best = min(runs, key=lambda r: r["seconds"])
    return {
        **best,
        "peak_rss_mib": max(r["peak_rss_mib"] for r in runs),
        "runs": [round(r["seconds"], 4) for r in runs],
    }
