"""Throwaway servers for the tests: a PostgreSQL cluster on 127.0.0.1, a local Spark session
for the SQL tests and a Spark Connect server over a cluster of executor JVMs, each started once
per test session and removed afterwards, and an HTTP file server on 127.0.0.1 for remote sources.

Each says why when it cannot start (no PostgreSQL server binaries, no Java, no Spark Connect
client); the tests that need it then skip with that reason, which fails a CI run (see
conftest.py): .ci/run installs them all.
"""

from __future__ import annotations

import functools
import glob
import http.server
import io
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
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


# The cluster of the Spark Connect server: two workers in the server's JVM, each running one
# executor JVM of one core and 1024 MB, so that every query's tasks and shuffles cross processes.
SPARK_CLUSTER = "local-cluster[2,1,1024]"
# Two shuffle partitions (one task for each executor) where the local session has one.
SPARK_CLUSTER_CONF = {**SPARK_TEST_CONF, "spark.sql.shuffle.partitions": "2"}
# How long the server may take to listen and to register both executors, and to stop.
SPARK_CONNECT_START_SECONDS = 180
SPARK_CONNECT_STOP_SECONDS = 30


def spark_connect_missing() -> str | None:
    """Why a Spark Connect server and its client cannot run here, or None."""
    reason = java_missing()
    if reason:
        return reason
    try:
        import pyspark.sql.connect.session  # noqa: F401  (checks grpcio, zstandard, ...)
    except ImportError as error:
        return f"no Spark Connect client ({error}): pip install 'pyspark[connect]'"
    return None


@dataclass(frozen=True)
class ConnectServer:
    """A running Spark Connect server: its URL, its process group (the server's JVM and the
    executor JVMs it launched) and its log."""

    url: str
    group: int
    log: Path

    def executors(self) -> dict[str, int]:
        """The running executor JVMs: each one's executor id (as Spark's log names it) and
        process id."""
        found = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if os.getpgid(int(entry.name)) != self.group:
                    continue
                arguments = (entry / "cmdline").read_bytes().decode().split("\0")
            except OSError:  # the process ended meanwhile
                continue
            if "--executor-id" in arguments:
                found[arguments[arguments.index("--executor-id") + 1]] = int(entry.name)
        return found

    def log_size(self) -> int:
        return self.log.stat().st_size

    def log_text(self, start: int = 0) -> str:
        """The server's log from byte ``start`` on."""
        with open(self.log, "rb") as file:
            file.seek(start)
            return file.read().decode(errors="replace")


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def spark_connect_server(master: str = SPARK_CLUSTER) -> Iterator[ConnectServer]:
    """A Spark Connect server started by pyspark's own ``sbin/start-connect-server.sh`` (in
    the foreground, ``--wait``), its jobs run by ``master``, listening on 127.0.0.1 with
    :data:`SPARK_CLUSTER_CONF`; yields it once it listens and both executors run.

    Everything it writes (its log, the executors' work directories) goes to a temporary
    directory, removed afterwards; the server and its executors are stopped however the
    ``with`` block ends (SIGTERM to their process group, then SIGKILL after
    :data:`SPARK_CONNECT_STOP_SECONDS`).

    Raises
    ------
    RuntimeError
        When the server exits or does not listen within :data:`SPARK_CONNECT_START_SECONDS`,
        with the end of its log.
    """
    import pyspark

    root = Path(tempfile.mkdtemp(prefix="rankmetrics-spark-connect-"))
    # The workers in the server's JVM keep their executors' directories under SPARK_HOME/work
    # (SPARK_WORKER_DIR is for standalone workers): SPARK_HOME is a directory of links to
    # pyspark's, in the temporary directory, so that nothing is written into pyspark.
    home = root / "spark"
    home.mkdir()
    for entry in Path(pyspark.__file__).parent.iterdir():
        if entry.name != "work":
            (home / entry.name).symlink_to(entry)
    log, port = root / "server.log", _free_port()
    confs = {
        **SPARK_CLUSTER_CONF,
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.executor.extraJavaOptions": SPARK_TEST_JVM,
    }
    command = [str(home / "sbin" / "start-connect-server.sh"), "--wait", "--master", master]
    command += ["--driver-java-options", SPARK_TEST_JVM]
    for key, value in confs.items():
        command += ["--conf", f"{key}={value}"]
    environment = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(root),
        "SPARK_PID_DIR": str(root),
    }
    environment.pop("PYSPARK_SUBMIT_ARGS", None)  # the local session's, not the server's
    with open(log, "wb") as output:
        process = subprocess.Popen(
            command, cwd=root, env=environment, stdin=subprocess.DEVNULL, stdout=output,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    server = ConnectServer(f"sc://127.0.0.1:{port}", process.pid, log)
    watchdog = _watchdog(process.pid, root)
    try:
        deadline = time.monotonic() + SPARK_CONNECT_START_SECONDS
        while not (_listening(port) and len(server.executors()) == 2):
            if process.poll() is not None or time.monotonic() > deadline:
                tail = "\n".join(server.log_text().splitlines()[-30:])
                raise RuntimeError(f"the Spark Connect server did not start:\n{tail}")
            time.sleep(0.5)
        yield server
    finally:
        _stop_group(process)
        watchdog.kill()
        watchdog.wait()
        shutil.rmtree(root, ignore_errors=True)


def _watchdog(group: int, root: Path) -> subprocess.Popen[bytes]:
    """A shell in a session of its own that stops ``group`` and removes ``root`` once this
    process has ended without doing so itself (killed, as a CI timeout kills it); otherwise
    it is killed first."""
    script = (
        f"while kill -0 {os.getpid()} 2>/dev/null; do sleep 1; done; "
        f"kill -TERM -{group} 2>/dev/null; sleep {SPARK_CONNECT_STOP_SECONDS}; "
        f"kill -KILL -{group} 2>/dev/null; rm -rf {shlex.quote(str(root))}"
    )
    return subprocess.Popen(
        ["sh", "-c", script], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip


def connect_session(url: str):
    """A Spark Connect session of the server at ``url``, built by Connect's own builder: it
    leaves this process out of Connect mode (pyspark's ``builder.remote`` marks the whole
    process, ``SPARK_CONNECT_MODE_ENABLED``, and refuses to while a local session runs), so the
    tests' local session shares this process. A test that wants the Connect session active (as
    it is in a user's process) sets that variable for itself."""
    from pyspark.sql.connect.session import SparkSession

    return SparkSession.builder.remote(url).getOrCreate()


def _stop_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to ``process``'s group (the server lets its executors go), SIGKILL to what is
    left after :data:`SPARK_CONNECT_STOP_SECONDS`."""
    for sent in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sent)
        except ProcessLookupError:  # the whole group has ended
            return
        try:
            process.wait(timeout=SPARK_CONNECT_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            continue
        deadline = time.monotonic() + SPARK_CONNECT_STOP_SECONDS
        while time.monotonic() < deadline:
            try:
                os.killpg(process.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.2)


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
