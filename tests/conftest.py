import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass

import hypothesis
import pytest

sys.path.insert(0, os.path.dirname(__file__))

from servers import (  # noqa: E402
    connect_session,
    java_missing,
    postgres_server,
    spark_connect_missing,
    spark_connect_server,
    spark_session,
)

import polars_rankmetrics as rm  # noqa: E402
from polars_rankmetrics.engines.duckdb import DuckDBSession  # noqa: E402
from polars_rankmetrics.engines.memory import ENGINE_SHARE  # noqa: E402
from polars_rankmetrics.engines.polars import PolarsSession  # noqa: E402
from polars_rankmetrics.inputs.sizes import parse_size  # noqa: E402

BUDGET = "256MB"


@contextmanager
def rows_per_bucket(rows: int):
    """Every engine's row estimate raised so that a bucket under ``BUDGET`` holds ``rows`` rows
    (at the engine's share in the run: a DuckDB session knows its own): tiny tables then split
    into several buckets too."""

    def per_row(session) -> float:
        return getattr(session, "share", ENGINE_SHARE) * parse_size(BUDGET) / rows

    with pytest.MonkeyPatch.context() as patch:
        for session in (PolarsSession, DuckDBSession):
            patch.setattr(session, "bytes_per_row", per_row)
        yield


@dataclass(frozen=True)
class Engine:
    """One way of running evaluate(): an engine, and buckets of ``bucket_rows`` rows or none."""

    name: str
    bucket_rows: int | None = None

    def evaluate(self, data, metrics=None, **options):
        return self._call(rm.evaluate, data, metrics, **options)

    def report(self, data, **options):
        return self._call(rm.label_report, data, **options)

    def _call(self, function, *args, **options):
        if self.bucket_rows is None:
            return function(*args, engine=self.name, **options)
        with rows_per_bucket(self.bucket_rows):
            return function(*args, engine=self.name, memory_limit=BUDGET, **options)

    def __str__(self) -> str:
        return self.name + ("-buckets" if self.bucket_rows else "")


# Buckets of 40 rows: up to 8 labels a sample (2 groups of up to 12 samples), so most tables split.
ENGINES = [Engine("polars"), Engine("polars", 40), Engine("duckdb"), Engine("duckdb", 40)]


@pytest.fixture(params=ENGINES, ids=str)
def engine(request) -> Engine:
    """Every engine-level test body runs on each engine and code path."""
    return request.param


@pytest.fixture(scope="session")
def spark():
    """The local Spark session, started once per test process (each pytest-xdist worker
    that runs a test on Spark starts its own)."""
    reason = java_missing()
    if reason:
        pytest.skip(f"Spark: {reason}")
    return spark_session()


@dataclass(frozen=True)
class SparkCluster:
    """The Spark Connect server over two executor JVMs, and a Connect session of it."""

    server: object  # servers.ConnectServer
    session: object  # pyspark.sql.connect.session.SparkSession


@pytest.fixture(scope="module")
def spark_cluster():
    """A Spark Connect server on ``local-cluster[2,1,1024]`` (tests/servers.py), and a session
    of it, for the cluster's module (its tests run one after another on one worker): stopped
    as the module ends, so that no later test of the process finds the Connect session (the
    engine takes the session it finds, and the server reads paths from its own directory)."""
    reason = spark_connect_missing()
    if reason:
        pytest.skip(f"Spark Connect: {reason}")
    with spark_connect_server() as server:
        session = connect_session(server.url)
        try:
            yield SparkCluster(server, session)
        finally:
            session.stop()


@pytest.fixture(scope="session")
def postgres():
    """The connection string of a throwaway PostgreSQL cluster, started once per test process
    (each pytest-xdist worker has its own, on a port and in a directory of its own)."""
    try:
        with postgres_server() as dsn:
            yield dsn
    except RuntimeError as error:
        pytest.skip(f"PostgreSQL: {error}")


_SKIPPED: list[str] = []


def pytest_runtest_logreport(report):
    # An expected failure (xfail, strict: it fails the run once it passes) ran: not a skip.
    if report.skipped and not hasattr(report, "wasxfail"):
        _SKIPPED.append(report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    """Under CI (``CI`` set, as .ci/run runs), a skipped test fails the run: every test here
    must run there, including those that need a command line tool or a server. Under
    pytest-xdist the controller, which receives every worker's reports, decides."""
    if hasattr(session.config, "workerinput"):
        return
    if os.environ.get("CI") and _SKIPPED and exitstatus == 0:
        session.exitstatus = 1
        sys.stderr.write("\nCI: these tests were skipped but must run:\n")
        sys.stderr.write("".join(f"  {nodeid}\n" for nodeid in _SKIPPED))


# The quick subset (`pytest -m "not slow"`): every test on the Polars engine's one-piece path,
# without the DuckDB, bucketed and SQL engine paths, Spark (and its cluster), the PostgreSQL
# server and the subprocess-heavy modules (all of which the full suite, CI's command, runs).
_SLOW_MODULES = {
    "test_sql_engines", "test_readme", "test_resources", "test_progress", "test_duckdb",
    "test_spark_cluster",
}  # fmt: skip


def _other_path(item) -> bool:
    """Whether ``item`` runs on an engine path other than the Polars engine's one piece."""
    engine = getattr(item, "callspec", None) and item.callspec.params.get("engine")
    return isinstance(engine, Engine) and (engine.name != "polars" or bool(engine.bucket_rows))


_CLUSTER_MODULE = "tests/test_spark_cluster.py::"


def _on_spark(nodeid: str) -> bool:
    """Whether a test runs on Spark (its session, or a command that starts one): each such test
    names Spark in its id, by its name or by an engine parameter."""
    return "spark" in nodeid.lower()


def _long(item) -> bool:
    """Whether ``item`` is among the longest tests: on Spark, or scikit-learn's own tests in a
    subprocess."""
    return _on_spark(item.nodeid) or item.module.__name__ == "test_sklearn_suite"


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.module.__name__ in _SLOW_MODULES or _other_path(item):
            item.add_marker(pytest.mark.slow)
    # The longest first: the workers start on them together and end on short tests at about
    # the same time.
    items.sort(key=lambda item: not _long(item))


def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's scheduler, but for two units of work: every test of the local Spark
    session, on one worker, so that one JVM starts and warms up where each worker would start
    its own; and the cluster's tests, which talk to their own server and not to that JVM. xdist
    hands out the units with the most tests first, so the two start together on two workers.
    Each other test is a unit of its own, handed to the next free worker in the order above.
    (xdist's ``--dist loadgroup`` cannot do it: under pytest 9.2 it ignores its groups,
    pytest-xdist issue 1386.)"""
    from xdist.scheduler import LoadScopeScheduling

    class SparkOnOneWorker(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.startswith(_CLUSTER_MODULE):
                return "spark cluster"
            return "spark" if _on_spark(nodeid) else nodeid

    return SparkOnOneWorker(config, log)


# A property test draws its full number of examples on the Polars engine's one piece, and a
# third of them (at least 5) on each other path: three more paths, each checked against the
# same oracle, at the cost of about one more full run.
OTHER_PATH_SHARE = 3


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    test = getattr(item.obj, "hypothesis", None) and item.obj.hypothesis.inner_test
    own = getattr(item.obj, "_hypothesis_internal_use_settings", None)
    if test is None or own is None or not _other_path(item):
        return (yield)
    fewer = max(5, own.max_examples // OTHER_PATH_SHARE)
    item.obj._hypothesis_internal_use_settings = hypothesis.settings(own, max_examples=fewer)
    try:
        return (yield)
    finally:
        item.obj._hypothesis_internal_use_settings = own
