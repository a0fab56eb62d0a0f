"""Throwaway database servers for the SQL tests: a PostgreSQL cluster on 127.0.0.1 and a local
Spark session, each started once per test session and removed afterwards.

Both say why when they cannot start (no PostgreSQL server binaries, no Java); the tests that need
them then skip with that reason, which fails a CI run (see conftest.py): .ci/run installs both.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def postgres_bindir() -> Path | None:
    """The PostgreSQL server binaries (initdb, pg_ctl), or None."""
    candidates = []
    if shutil.which("pg_config"):
        done = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True)
        candidates.append(done.stdout.strip())
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for candidate in candidates:
        if candidate and (Path(candidate) / "initdb").exists():
            return Path(candidate)
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def postgres_server() -> Iterator[str]:
    """A new cluster on 127.0.0.1 (trust authentication, ``jit = off``); yields a connection
    string. initdb refuses root, so as root the cluster runs as the ``postgres`` user."""
    bindir = postgres_bindir()
    if bindir is None:
        raise RuntimeError("no PostgreSQL server binaries (initdb) on this machine")
    root = Path(tempfile.mkdtemp(prefix="rankmetrics-pg-"))
    data = root / "data"
    prefix: list[str] = []
    user = os.environ.get("USER", "postgres")
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        prefix, user = ["runuser", "-u", "postgres", "--"], "postgres"
    port = _free_port()
    run = lambda *args: subprocess.run([*prefix, *args], check=True, capture_output=True)  # noqa: E731
    try:
        run(str(bindir / "initdb"), "-D", str(data), "--auth=trust", "-U", user, "-E", "UTF8")
        options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c jit=off -c fsync=off"
        run(
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            options,
            "-l",
            str(root / "log"),
            "-w",
            "start",
        )
        try:
            yield f"host=127.0.0.1 port={port} user={user} dbname=postgres"
        finally:
            run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def java_missing() -> str | None:
    """Why Spark cannot start here, or None."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "no Java runtime (Spark needs one)"
    return None
