"""Run a command as a child process and report its wall time and peak resident memory."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Run:
    seconds: float
    peak_rss_mib: float
    returncode: int
    stdout: str
    stderr: str


def run(command: list[str]) -> Run:
    """Wall time and peak RSS of the child alone (``ru_maxrss`` from ``wait4``)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Run(seconds, usage.ru_maxrss / 1024, child.returncode, out.read(), err.read())
