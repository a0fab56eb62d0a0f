"""Throwaway servers for the tests: a PostgreSQL cluster on 127.0.0.1 and a local Spark session
for the SQL tests, each started once per test session and removed afterwards, and an HTTP file
server on 127.0.0.1 for remote sources.

Both say why when they cannot start (no PostgreSQL server binaries, no Java); the tests that need
them then skip with that reason, which fails a CI run (see conftest.py): .ci/run installs both.
"""

from __future__ import annotations

import functools
import glob
import http.server
import io
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
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


# The tests' Spark settings, for tables of a few rows: no adaptive query execution (re-planning
# each query's stages costs more than it saves), one shuffle partition, and expressions
# interpreted rather than compiled to Java (compiling each query's code costs more than running
# it). They change the plans, never a value.
SPARK_TEST_CONF = {
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.shuffle.partitions": "1",
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}
# The JVM's own: one garbage collector thread, on heaps of a few hundred MB. (Its first
# just-in-time tier alone would plan the state's large view graphs at half the speed.)
SPARK_TEST_JVM = "-XX:+UseSerialGC"


def spark_environment() -> dict[str, str]:
    """The environment under which a process starts its JVM with the tests' settings: pyspark
    passes ``PYSPARK_SUBMIT_ARGS`` to spark-submit, whose ``--conf`` settings a session built
    in that process starts with (those it sets itself win)."""
    confs = " ".join(f"--conf {key}={value}" for key, value in SPARK_TEST_CONF.items())
    args = f"--driver-java-options '{SPARK_TEST_JVM}' {confs} pyspark-shell"
    return {**os.environ, "PYSPARK_SUBMIT_ARGS": args}


def spark_session():
    """The library's local Spark session with :data:`SPARK_TEST_CONF`, its JVM started with
    :data:`SPARK_TEST_JVM`. One catalog call cannot run interpreted: ``catalog.listTables()``
    (list views with ``SHOW VIEWS``)."""
    from polars_rankmetrics.engines.spark import local_session

    os.environ["PYSPARK_SUBMIT_ARGS"] = spark_environment()["PYSPARK_SUBMIT_ARGS"]
    session = local_session()
    for key, value in SPARK_TEST_CONF.items():
        session.conf.set(key, value)
    return session


class _RangeHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with HTTP range requests (what object stores answer and Parquet readers
    send), which the standard library's handler ignores."""

    def send_head(self):  # type: ignore[override]
        path = self.translate_path(self.path)
        asked = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", ""))
        if asked is None or not os.path.isfile(path):
            return super().send_head()
        size = os.path.getsize(path)
        first, last = asked.groups()
        start = int(first) if first else max(size - int(last), 0)
        end = min(int(last) if first and last else size - 1, size - 1)
        with open(path, "rb") as file:
            file.seek(start)
            body = file.read(end - start + 1)
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        return io.BytesIO(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def http_server(directory: Path) -> Iterator[str]:
    """An HTTP server for the files under ``directory`` on 127.0.0.1 (no network); its base URL."""
    handler = functools.partial(_RangeHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
