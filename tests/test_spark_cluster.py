"""The Spark engine on a cluster of several processes, through Spark Connect: a server started
by pyspark's ``sbin/start-connect-server.sh`` on ``local-cluster[2,1,1024]`` (two executor JVMs,
one core each, two shuffle partitions, so that every stage's tasks and every shuffle cross
processes), one per test session (conftest.py's ``spark_cluster``).

Each test gives the Polars engine's numbers (itself checked against scikit-learn, trec_eval and
the formulas elsewhere) on every metric family: ranking, threshold, probabilities, retrieval
top-k with a truth table, the TREC keys, intervals and compare(); the last one with an executor
killed while its task runs.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from sklearn.metrics import label_ranking_average_precision_score
from test_trec_measures import WORKED_QRELS, WORKED_RUN

import polars_rankmetrics as rm
from polars_rankmetrics.spark_engine import local_session

# A key a family (the local Spark tests run every key): each family's views, run by the
# cluster's executors; roc_auc_macro warns of its labels of one class.
KEYS = ["lrap", "roc_auc_macro", "log_loss_samples", "precision@2"]
# The few keys a test needs where the first test runs them all.
FEW_KEYS = ["lrap", "precision_samples", "precision@2"]
TREC_KEYS = ["num_rel_ret", "AP", "gm_map", "bpref", "RR", "P_3", "nDCG", "set_F"]
OPTIONS = {"by": "model", "weight": "weight", "threshold": 0.5, "zero_division": 0.0}
CLOSE = {"check_exact": False, "rel_tol": 1e-9, "abs_tol": 1e-12}
# Beyond the first test, which checks that both engines warn of the same cases, the warnings
# are the Polars engine's own.
QUIET = pytest.mark.filterwarnings("ignore::polars_rankmetrics.UndefinedMetricWarning")


def probabilities(n_models: int = 3, seed: int = 11) -> pl.DataFrame:
    """One table, one ``model`` per random case: 6-14 samples x 3-7 labels, scores in [0, 1]
    from a few values (ties), some rows empty or full, weights with zeros."""
    rng = np.random.default_rng(seed)
    parts = []
    for m in range(n_models):
        n_samples, n_labels = int(rng.integers(6, 15)), int(rng.integers(3, 8))
        score = rng.choice([0.0, 0.1, 0.25, 0.5, 0.75, 1.0], size=(n_samples, n_labels))
        truth = (rng.random((n_samples, n_labels)) < 0.4).astype(float)
        truth[rng.random(n_samples) < 0.2] = 0
        truth[rng.random(n_samples) < 0.2] = 1
        weight = rng.choice([0.0, 0.5, 1.0, 3.0], size=n_samples)
        weight[0] = 1.0
        parts.append(
            pl.DataFrame({
                "model": f"m{m}",
                "sample": np.repeat(np.arange(n_samples), n_labels),
                "label": np.tile(np.arange(n_labels), n_samples),
                "score": score.reshape(-1),
                "truth": truth.reshape(-1),
                "weight": np.repeat(weight, n_labels),
            })
        )  # fmt: skip
    return pl.concat(parts)


def on_cluster(spark_cluster, table: pl.DataFrame):
    """``table`` as a DataFrame of the Connect session, in two partitions (one per executor)."""
    return spark_cluster.session.createDataFrame(table.to_arrow()).repartition(2)


@pytest.fixture
def connect_active(monkeypatch):
    """The Connect session is the process's active session, as in a user's process that built
    it (tests/servers.py's ``connect_session`` leaves the tests' processes out of it)."""
    monkeypatch.setenv("SPARK_CONNECT_MODE_ENABLED", "1")


def test_every_family_on_two_executors_through_connect(spark_cluster):
    table = probabilities()
    with pytest.warns(rm.UndefinedMetricWarning) as expected_warning:
        expected = rm.evaluate(table, KEYS, **OPTIONS)
    start = spark_cluster.server.log_size()
    with pytest.warns(rm.UndefinedMetricWarning) as warning:
        ours = rm.evaluate(on_cluster(spark_cluster, table), KEYS, engine="spark", **OPTIONS)
    # The same ill-defined cases (roc_auc of a label of one class).
    assert warning[0].message.cases == expected_warning[0].message.cases
    assert_frame_equal(ours.sort("model"), expected.sort("model"), **CLOSE)
    # The Polars engine's lrap is scikit-learn's where every weight is 1 (one model, a matrix).
    one = table.filter(model="m0").sort("sample", "label")
    n_labels = one["label"].n_unique()
    truth, score = (one[c].to_numpy().reshape(-1, n_labels) for c in ("truth", "score"))
    weight = one["weight"].to_numpy()[::n_labels]
    assert ours.filter(model="m0")["lrap"][0] == pytest.approx(
        label_ranking_average_precision_score(truth, score, sample_weight=weight), rel=1e-12
    )
    # Both executor JVMs ran tasks of this evaluation.
    ran = re.findall(r"Finished task .* on 127\.0\.0\.1 \(executor (\d+)\)",
                     spark_cluster.server.log_text(start))  # fmt: skip
    assert set(ran) == {"0", "1"}


def test_the_engine_takes_a_connect_session_built_by_connects_own_builder(
    spark_cluster, monkeypatch
):
    """That builder leaves the process unmarked, so pyspark's ``getActiveSession()`` answers
    None (as in a process without a local session, which this one has): the engine takes the
    Connect session for frames and paths, and starts no local JVM of its own."""
    from pyspark.sql import SparkSession

    monkeypatch.delenv("SPARK_CONNECT_MODE_ENABLED", raising=False)
    monkeypatch.setattr(SparkSession, "getActiveSession", classmethod(lambda cls: None))
    assert local_session() is spark_cluster.session


@QUIET
def test_top_k_tables_trec_keys_and_compare_through_connect(spark_cluster, connect_active):
    """Polars frames, handed to the Connect session: a top-k table with its truth table and
    propensities, the TREC keys of a run and its qrels, and compare()'s paired tests."""
    table = probabilities(seed=13)
    predictions = table.filter(pl.col("score") >= 0.5).drop("truth")
    truth = table.filter(pl.col("truth") > 0).select("model", "sample", "label")
    propensities = pl.DataFrame({"label": range(7), "propensity": [0.2, 0.5, 1, 0.7, 0.4, 0.9, 1]})
    keys = ["lrap", "ndcg@3", "precision@2", "map@3", "psprecision@2", "psndcg_norm@3"]
    topk = {"by": "model", "truth_table": truth, "n_labels": 7, "propensities": propensities,
            "per_sample": True}  # fmt: skip
    expected = rm.evaluate(predictions, keys, **topk)
    ours = rm.evaluate(predictions, keys, engine="spark", **topk)
    sort = ["model", "sample"]
    assert_frame_equal(ours.sort(sort), expected.sort(sort), **CLOSE)

    trec = {"truth_table": WORKED_QRELS, "by": "run", "per_sample": True, "complete": True}
    assert_frame_equal(
        rm.evaluate(WORKED_RUN, TREC_KEYS, engine="spark", **trec),
        rm.evaluate(WORKED_RUN, TREC_KEYS, **trec), **CLOSE,
    )  # fmt: skip

    paired = {"by": "model", "baseline": "m0", "n_resamples": 200, "n_boot": 200, "seed": 5}
    paired_table = table.filter(pl.col("label") < 3, pl.col("sample") < 6)  # in every model
    assert_frame_equal(
        rm.compare(paired_table, ["lrap", "precision@2"], engine="spark", **paired),
        rm.compare(paired_table, ["lrap", "precision@2"], **paired), **CLOSE,
    )  # fmt: skip


@QUIET
def test_an_executor_killed_mid_job_changes_no_number(spark_cluster, connect_active, tmp_path):
    """One executor JVM is killed (SIGKILL) as soon as it starts a task after the evaluation's
    fifth: Spark re-runs the lost tasks (and the shuffle outputs it held) on the other one and
    on the executor the cluster starts in its place. The evaluation reads a Parquet path (read
    by the server: the session the engine finds is the Connect one) and gives intervals."""
    server = spark_cluster.server
    table = probabilities(seed=12)
    path = tmp_path / "predictions.parquet"
    table.write_parquet(path)
    options = {**OPTIONS, "ci": 0.9, "n_boot": 200, "seed": 3}
    expected = rm.evaluate(path, FEW_KEYS, **options)
    start = server.log_size()
    killed: dict[str, int] = {}
    done = threading.Event()

    def kill_one() -> None:
        deadline, read, started = time.monotonic() + 120, start, []
        while not done.is_set() and time.monotonic() < deadline:
            text = server.log_text(read)
            read += len(text.encode())
            started += re.findall(r"Starting task .*\(127\.0\.0\.1, ?executor (\d+),", text)
            pid = server.executors().get(started[-1]) if len(started) > 5 else None
            if pid is not None:
                os.kill(pid, signal.SIGKILL)
                killed[started[-1]] = pid
                return
            time.sleep(0.02)

    killer = threading.Thread(target=kill_one)
    killer.start()
    try:
        ours = rm.evaluate(str(path), FEW_KEYS, engine="spark", **options)
    finally:
        done.set()
        killer.join()
    assert killed, "no executor was killed while the evaluation ran"
    [(executor, pid)] = killed.items()
    assert pid not in server.executors().values()
    assert f"Lost executor {executor}" in server.log_text(start)
    assert_frame_equal(ours.sort("model"), expected.sort("model"), **CLOSE)
    assert (ours["lrap_lo"] < ours["lrap_hi"]).all()  # intervals of some width
