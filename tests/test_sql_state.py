"""The evaluation state in SQL on real engines: DuckDB, Spark SQL (the tests' one local session)
and PostgreSQL (a throwaway cluster on 127.0.0.1).

Each engine computes ``rankmetrics_state`` over a table and ``rankmetrics_finalize`` over a table
of states (polars_rankmetrics/engines/sql/state.py). Checked against what the rest of the
library computes in Python: the hashes and Poisson counts of inference/hashing.py, the numbers
of ``rm.evaluate`` (with ``bootstrap="poisson"`` for the intervals) on the union of the data
behind the states, and ``rm.state``'s own rows.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from test_sql_engines import postgres_dsn, random_cases, spark_ready  # noqa: F401 (fixtures)

import polars_rankmetrics as rm
from polars_rankmetrics.engines.sql.state import finalize_statements, state_statements
from polars_rankmetrics.inference import hashing
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.parameters import parameters
from polars_rankmetrics.metrics.registry import REGISTRY, parse_keys


def every_sql_key() -> list[str]:
    """Every key of the registry that the SQL state computes (a cut-off of 2 where one is
    required), but those reading propensities, which the SQL state refuses, the TREC keys,
    which the SQL finalize refuses (trec_eval's rules), and the label-level top-k keys, which
    a state does not record."""
    return [
        f"{name}@2" if metric.requires_k else name
        for name, metric in REGISTRY.items()
        if not metric.needs_propensities
        and metric.family != "trec"
        and metric.reduction != "topk_labels"
    ]


IDENTITY = ["rm_part", "rm_label", "rm_score", "rm_unit", "rm_name"]
_POSTGRES_TYPES = {
    pl.Float64: "DOUBLE PRECISION", pl.Int64: "BIGINT", pl.Int32: "INTEGER", pl.String: "TEXT",
}  # fmt: skip


class Warehouse:
    """One engine's connection: Polars frames loaded as tables, statements run, rows fetched."""

    dialect = "duckdb"

    def load(self, name: str, frame: pl.DataFrame) -> None:
        raise NotImplementedError

    def execute(self, statement: str) -> None:
        raise NotImplementedError

    def fetch(self, sql: str) -> pl.DataFrame:
        raise NotImplementedError

    def run(self, statements: list[str]) -> None:
        for statement in statements:
            self.execute(statement)


class DuckDBWarehouse(Warehouse):
    def __init__(self) -> None:
        import duckdb

        self.con = duckdb.connect()

    def load(self, name: str, frame: pl.DataFrame) -> None:
        self.con.register("incoming", frame.to_arrow())
        self.con.execute(f'CREATE OR REPLACE TABLE "{name}" AS SELECT * FROM incoming')
        self.con.unregister("incoming")

    def execute(self, statement: str) -> None:
        self.con.execute(statement)

    def fetch(self, sql: str) -> pl.DataFrame:
        return pl.DataFrame(self.con.sql(sql))


class SparkWarehouse(Warehouse):
    dialect = "spark"

    def __init__(self, spark: Any) -> None:
        self.spark = spark

    def load(self, name: str, frame: pl.DataFrame) -> None:
        self.spark.createDataFrame(frame.to_arrow()).createOrReplaceTempView(name)

    def execute(self, statement: str) -> None:
        self.spark.sql(statement)

    def fetch(self, sql: str) -> pl.DataFrame:
        return pl.from_arrow(self.spark.sql(sql).toArrow())  # type: ignore[return-value]


class PostgresWarehouse(Warehouse):
    dialect = "postgres"

    def __init__(self, con: Any) -> None:
        self.con = con

    def load(self, name: str, frame: pl.DataFrame) -> None:
        columns = ", ".join(f'"{c}" {_POSTGRES_TYPES[frame.schema[c]]}' for c in frame.columns)
        self.con.execute(f'DROP TABLE IF EXISTS "{name}" CASCADE')
        self.con.execute(f'CREATE TABLE "{name}" ({columns})')
        marks = ", ".join(["%s"] * frame.width)
        self.con.cursor().executemany(f'INSERT INTO "{name}" VALUES ({marks})', frame.rows())

    def execute(self, statement: str) -> None:
        self.con.execute(statement)

    def fetch(self, sql: str) -> pl.DataFrame:
        cursor = self.con.cursor()
        cursor.execute(sql)
        names = [d[0] for d in cursor.description]
        return pl.DataFrame(cursor.fetchall(), schema=names, orient="row", infer_schema_length=None)


# The servers run every check in one cell each (test_every_check_on_the_servers): a Spark
# session or a PostgreSQL cluster starts once per xdist worker that runs one of their cells. Left
# out of the quick subset (pytest -m 'not slow'), as tests/test_sql_engines.py's are.
@pytest.fixture(
    params=[pytest.param(name, marks=pytest.mark.slow) for name in ("spark", "postgres")]
)
def server(request) -> Iterator[Warehouse]:
    if request.param == "spark":
        spark = request.getfixturevalue("spark_ready")

        def temporary_views() -> set[str]:
            # SHOW VIEWS names them; listTables() also describes each, and fails
            # (EXPRESSION_DECODING_FAILED) on some the checks leave, read by views redefined since.
            return {row.viewName for row in spark.sql("SHOW VIEWS").collect() if row.isTemporary}

        before = temporary_views()
        yield SparkWarehouse(spark)
        for name in temporary_views() - before:
            spark.catalog.dropTempView(name)
    else:
        import psycopg

        with psycopg.connect(request.getfixturevalue("postgres_dsn"), autocommit=True) as con:
            con.execute("DROP SCHEMA IF EXISTS rm_state CASCADE")
            con.execute("CREATE SCHEMA rm_state")
            con.execute("SET search_path TO rm_state")
            yield PostgresWarehouse(con)


def define_state(
    warehouse: Warehouse, table: pl.DataFrame, keys: list[str], until: str | None = None,
    **options,
) -> None:  # fmt: skip
    """The state's views over ``table`` loaded as ``predictions`` (those up to the view
    ``until`` and itself, or all)."""
    cols = Columns.of(by=options.pop("by", None), weight=options.pop("weight", None))
    context = parameters(**options.pop("parameters", {}))
    warehouse.load("predictions", table)
    keys_parsed = parse_keys(keys)
    dialect = warehouse.dialect
    statements = state_statements("predictions", cols, dialect, keys_parsed, context=context,
                                  temporary=True, **options)  # fmt: skip
    if until is not None:
        last = next(i for i, s in enumerate(statements) if f"VIEW {until} AS" in s)
        statements = statements[: last + 1]
    warehouse.run(statements)


def sql_state(
    warehouse: Warehouse, table: pl.DataFrame, keys: list[str], **options
) -> pl.DataFrame:
    """``rankmetrics_state`` of ``table`` on the warehouse."""
    define_state(warehouse, table, keys, **options)
    return fetch_state(warehouse, table.schema["label"])


def fetch_state(warehouse: Warehouse, label_type: pl.DataType) -> pl.DataFrame:
    """``rankmetrics_state``'s rows; a driver types a column of NULLs as it likes (PostgreSQL's
    rows say nothing): the types of rm.state's."""
    state = warehouse.fetch("SELECT * FROM rankmetrics_state")
    return state.with_columns(
        pl.col("rm_label").cast(label_type),
        pl.col("rm_score", "rm_value").cast(pl.Float64),
        pl.col("rm_unit").cast(pl.Int64),
        pl.col("rm_format").cast(pl.Int32),
    )


def define_finalize(warehouse: Warehouse, states: pl.DataFrame, keys: list[str], by: list[str],
                    **options) -> None:  # fmt: skip
    """The finalize views over ``states`` loaded as ``rankmetrics_states``."""
    warehouse.load("rankmetrics_states", states)
    warehouse.run(
        finalize_statements(warehouse.dialect, parse_keys(keys), by, temporary=True, **options)
    )


def sql_finalize(warehouse: Warehouse, states: pl.DataFrame, keys: list[str], by: list[str],
                 **options) -> pl.DataFrame:  # fmt: skip
    """``rankmetrics_finalize`` over ``states``, one column per key (and ``key_lo``, ``key_hi``)
    as ``rm.evaluate`` gives them, NULL as NaN."""
    define_finalize(warehouse, states, keys, by, **options)
    long = warehouse.fetch("SELECT * FROM rankmetrics_finalize")
    long = long.with_columns(pl.col("value", "lo", "hi").cast(pl.Float64).fill_null(np.nan))
    wide = long.pivot(on="metric", index=by or None, values=["value", "lo", "hi"])
    names = {f"value_{k}": k for k in keys} | {f"{s}_{k}": f"{k}_{s}" for k in keys
                                               for s in ("lo", "hi")}  # fmt: skip
    return wide.rename(names).sort(by) if by else wide.rename(names)


def _text_ids(n: int) -> list[str]:
    """String ids with quotes, spaces, accents, other scripts and an emoji (UTF-8 of 1-4 bytes)."""
    words = ["s", "é", "日本語", "o'brien", 'q"x', "a b", "🙂", "Ünïcödé", "", "x\\y"]
    return [f"{words[i % len(words)]}{i}" for i in range(n)]


def check_hashes(warehouse: Warehouse) -> None:
    """rankmetrics_sample_hashes and rankmetrics_unit_draws give inference/hashing.py's numbers:
    integer ids (negative and past 2^32 too) and string ids (non-ASCII too); the Poisson counts
    of every (unit, replicate) for seeds past P = 2^31 - 1 and below 0."""
    ints = [0, 1, 7, -3, 4095, 2**31, 2**40 + 17, -(2**62), 123456789]
    for ids in (pl.Series("sample", ints, pl.Int64), pl.Series("sample", _text_ids(30))):
        table = pl.DataFrame({"sample": ids}).with_columns(
            label=pl.lit(0, pl.Int64), score=pl.lit(0.5), truth=pl.lit(1.0)
        )
        define_state(warehouse, table, ["lrap"], until="rankmetrics_sample_hashes")
        found = warehouse.fetch("SELECT sample, h, unit FROM rankmetrics_sample_hashes")
        found = found.sort("sample")
        expected = hashing.sample_hashes(found["sample"], "sample")
        assert found["h"].cast(pl.Int64).to_list() == expected.to_list()
        assert found["unit"].cast(pl.Int64).to_list() == (expected % hashing.UNITS).to_list()
    units = [0, 1, 2, 29, 30, 1000, 4094, 4095]
    states = pl.DataFrame({
        "rm_part": "units", "rm_label": pl.Series([None] * len(units), dtype=pl.Int64),
        "rm_score": pl.Series([None] * len(units), dtype=pl.Float64),
        "rm_unit": pl.Series(units, dtype=pl.Int64), "rm_name": "lrap", "rm_value": 1.0,
        "rm_format": pl.Series([1] * len(units), dtype=pl.Int32), "rm_params": "{}",
    })  # fmt: skip
    for seed, n_boot in ((0, 120), (-5, 40), (2**31 + 3, 40)):
        define_finalize(warehouse, states, ["lrap"], [], ci=0.9, n_boot=n_boot, seed=seed)
        draws = warehouse.fetch("SELECT unit, replicate, draws FROM rankmetrics_unit_draws")
        counts = hashing.poisson_counts(seed, n_boot)
        expected = [
            (u, r, int(counts[r, u])) for u in units for r in range(n_boot) if counts[r, u] > 0
        ]
        found = sorted(tuple(int(v) for v in row) for row in draws.rows())
        assert found == sorted(expected)
        assert max(c for *_, c in found) >= 3  # the thresholds past the first are read


def _split(table: pl.DataFrame) -> list[pl.DataFrame]:
    """Two partitions of whole samples."""
    half = pl.col("sample").hash(5) % 2 == 0
    return [table.filter(half), table.filter(~half)]


def one_key_a_view_and_average() -> list[str]:
    """The first key of every_sql_key for each view the SQL state reads and each average over
    labels (micro, macro, weighted, samples): the SQL of every view and every reduction, for an
    engine whose statements are DuckDB's, exported (each key adds to the one plan Spark builds,
    slowly, for the lot; DuckDB and PostgreSQL run every key)."""
    chosen: dict[tuple[str, str], str] = {}
    for key in every_sql_key():
        metric = REGISTRY[key.split("@")[0]]
        average = metric.name.rsplit("_", 1)[-1] if metric.family == "classification" else ""
        chosen.setdefault((metric.sql_view, average), key)
    return list(chosen.values())


def check_every_key(warehouse: Warehouse, keys: list[str] | None = None) -> None:
    """rankmetrics_finalize of every key the SQL state computes (every_sql_key, or ``keys``, and
    cut-offs of the views with one) over a state by (model, day) finalized by model (on DuckDB
    also over one state, and over the union of two partitions' states): evaluate()'s numbers, to
    1e-12 (NULL where it says NaN). Over rm.state's states too: the propensity-scored keys,
    which the SQL state refuses, the keys averaged over labels with other parameters (read from
    rm_params: beta 2, zero_division NaN, threshold 0.25) and rounded curve scores
    (rm.finalize's numbers). rankmetrics_state_checks: the states of disjoint partitions do not
    overlap, states counted twice do, states of different parameters are counted, and so are the
    labels of a label set that another lacks. The state keeps units, which add up to its sums
    (weights of 0 here), and defining the finalize leaves the state's views alone."""
    # Scores in [0, 1], which the probability keys need, with ties and a weight of 0.
    table = random_cases(4).drop("decision").with_columns(pl.col("score").clip(0.0, 1.0))
    table = table.with_columns(day=(pl.col("sample").hash(5) % 2).cast(pl.Int64))
    every = keys is None
    keys = [*(keys or every_sql_key()), "ndcg@2", "map@3", "mrr@2"]
    options = {"by": "model", "weight": "weight", "parameters": {"zero_division": "warn"}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.UndefinedMetricWarning)
        expected = rm.evaluate(table.drop("day"), keys, by="model", weight="weight")
    by_day = sql_state(warehouse, table, keys, **{**options, "by": ["model", "day"]},
                       intervals=True)  # fmt: skip
    ours = sql_finalize(warehouse, by_day.drop("day"), keys, ["model"])
    assert_frame_equal(ours.select(expected.columns), expected, check_exact=False, rel_tol=1e-12,
                       abs_tol=1e-12)  # fmt: skip
    # Its units add up to its sums, a null value counted where its sample weighs more than 0.
    resampled = [n for n in by_day.filter(rm_part="units")["rm_name"].unique() if "/i" not in n]
    totals = [
        by_day.filter(pl.col("rm_part") == part, pl.col("rm_name").is_in(resampled))
        .group_by("model", "day", "rm_name").agg(pl.col("rm_value").sum())
        .sort("model", "day", "rm_name")
        for part in ("units", "sums")
    ]  # fmt: skip
    assert totals[0].height == by_day.select("model", "day").n_unique() * len(resampled) > 0
    assert_frame_equal(totals[0], totals[1], check_exact=False, rel_tol=1e-12, abs_tol=1e-12)
    # The finalize's views leave the state's alone: a warehouse defines both once.
    again = fetch_state(warehouse, table.schema["label"])
    assert_frame_equal(
        _sorted_rows(again, ["model", "day"]), _sorted_rows(by_day, ["model", "day"])
    )
    if warehouse.dialect == "duckdb":  # the merge is the same SQL on every engine
        whole = sql_state(warehouse, table.drop("day"), keys, **options)
        parts = pl.concat([sql_state(warehouse, part.drop("day"), keys, **options)
                           for part in _split(table)])  # fmt: skip
        for states in (whole, parts):
            ours = sql_finalize(warehouse, states, keys, ["model"]).select(expected.columns)
            assert_frame_equal(ours, expected, check_exact=False, rel_tol=1e-12, abs_tol=1e-12)
    if every:  # the table has cases of every key that each engine must give as NaN (NULL)
        assert expected.select(pl.all().exclude("model").is_nan().any()).row(0).count(True) >= 3
    propensities = pl.DataFrame({"label": range(6), "propensity": [0.2, 0.5, 1.0] * 2})
    python_keys = ["psprecision@2", "psndcg_norm@3", "fbeta_macro", "f1_micro", "recall_weighted",
                   "roc_auc_weighted", "precision_samples"]  # fmt: skip
    given = {"beta": 2.0, "zero_division": float("nan"), "threshold": 0.25,
             "propensities": propensities}  # fmt: skip
    # rm.state refuses a partition whose weights sum to 0, as evaluate does.
    table = table.with_columns(pl.col("weight").replace(0.0, 0.5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.UndefinedMetricWarning)
        expected = rm.evaluate(table, python_keys, by="model", weight="weight", **given)
        states = pl.concat([rm.state(part, python_keys, by="model", weight="weight", **given)
                            for part in _split(table)])  # fmt: skip
        rounded = rm.state(table, ["roc_auc_weighted"], by="model", weight="weight",
                           score_decimals=1)  # fmt: skip
        expected_rounded = rm.finalize(rounded, by="model")
    ours = sql_finalize(warehouse, states, python_keys, ["model"]).select(expected.columns)
    assert_frame_equal(ours, expected, check_exact=False, rel_tol=1e-12, abs_tol=1e-12)
    ours = sql_finalize(warehouse, rounded, ["roc_auc_weighted"], ["model"])
    assert_frame_equal(ours.select(expected_rounded.columns), expected_rounded,
                       check_exact=False, rel_tol=1e-12, abs_tol=1e-12)  # fmt: skip
    # The curves of the rounded scores, not of the scores.
    assert not ours["roc_auc_weighted"].equals(expected["roc_auc_weighted"])
    # The checks are per group: four merges in one table, each model renamed after its merge,
    # so that one definition and one query answer for all four (each a JVM round trip on Spark).
    days = by_day.drop("day")
    # A state whose label set lacks label 0: its labelset rows without it, another fingerprint.
    labelset = pl.col("rm_part") == "labelset"
    lacking = days.filter(~(labelset & (pl.col("rm_label") == 0))).with_columns(
        rm_unit=pl.when(labelset).then(pl.col("rm_unit") + 1).otherwise(pl.col("rm_unit"))
    )
    merges = {
        "disjoint": (days, (1, 0.0, 0, None)),
        "twice": (pl.concat([days, days]), (1, 1.0, 0, None)),
        "mixed": (pl.concat([days, days.with_columns(rm_params=pl.lit('{"beta":2.0}'))]),
                  (2, 1.0, 0, None)),
        "labels": (pl.concat([days, lacking]), (1, 1.0, 1, 0)),
    }  # fmt: skip
    renamed = [
        states.with_columns(model=pl.lit(f"{merge}/") + pl.col("model"))
        for merge, (states, _) in merges.items()
    ]
    define_finalize(warehouse, pl.concat(renamed), ["lrap"], ["model"])
    found = warehouse.fetch(
        "SELECT grp, parameters, overlap, differing_labels, differing_label "
        "FROM rankmetrics_state_checks"
    )
    expected_checks = {
        f"{merge}/{model}": checks
        for merge, (_, checks) in merges.items()
        for model in days["model"].unique()
    }
    assert len(expected_checks) == 16
    assert {
        grp: (int(p), o, int(n), None if label is None else int(label))
        for grp, p, o, n, label in found.rows()
    } == expected_checks


def _interval_table(n_samples: int = 150, seed: int = 3) -> pl.DataFrame:
    """Three models over the same samples (integer ids), 5 labels, tied scores and weights."""
    rng = np.random.default_rng(seed)
    n_labels = 5
    truth = (rng.random((n_samples, n_labels)) < 0.35).astype(float)
    weight = rng.choice([0.5, 1.0, 2.0], size=n_samples)
    models = []
    for m in range(3):
        score = np.round(truth * (m + 1) * 0.2 + rng.random((n_samples, n_labels)), 1)
        models.append(
            pl.DataFrame(
                {
                    "model": f"m{m}",
                    "sample": np.repeat(np.arange(n_samples) * 7919, n_labels),
                    "label": np.tile(np.arange(n_labels), n_samples),
                    "score": score.reshape(-1),
                    "truth": truth.reshape(-1),
                    "weight": np.repeat(weight, n_labels),
                }
            )  # fmt: skip
        )
    return pl.concat(models)


def _sorted_rows(state: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    return state.with_columns(
        pl.col("rm_label").cast(pl.Int64), pl.col("rm_unit").cast(pl.Int64),
        pl.col("rm_format").cast(pl.Int32), pl.col("rm_value").cast(pl.Float64),
    ).sort([*by, *IDENTITY], nulls_last=True)  # fmt: skip


def check_intervals_and_rows(warehouse: Warehouse) -> None:
    """Two partitions' states, in one run: each model of each partition a group of its own
    (``m0/0``, ``m0/1``, ...). The state's rows, sorted, are rm.state's: every part (sums,
    units, labels, curves, sketch; with a _micro average, the sums and units of the per-sample
    counts), the values to 1e-12, the parameters' text exactly. rankmetrics_finalize's
    percentile intervals from their union, each group named after its model again: those of
    evaluate(ci=..., bootstrap="poisson") on the whole table, to 1e-12, the threshold _micro
    averages' (ratios of the replicates' pooled counts) too. (The weights are positive here:
    rm.state's units count a one-class sample of weight 0 in roc_auc_samples/x, which its sums
    do not.)"""
    table = _interval_table()
    interval_keys = ["lrap", "ndcg@3", "f1_samples", "mrr", "lwlrap", "f1_micro",
                     "precision_micro"]  # fmt: skip
    keys = [*interval_keys, "roc_auc_samples", "f1_macro", "average_precision_macro"]
    parts = pl.concat(
        part.with_columns(model=pl.col("model") + f"/{i}") for i, part in enumerate(_split(table))
    )
    ours = sql_state(warehouse, parts, keys, by="model", weight="weight", intervals=True)
    ours = _sorted_rows(ours, ["model"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.UndefinedMetricWarning)
        expected = rm.state(parts, keys, by="model", weight="weight", intervals=True)
    expected = _sorted_rows(expected, ["model"])
    assert expected["model"].n_unique() == 6
    assert set(expected["rm_part"]) == {"sums", "units", "labels", "curves", "sketch", "labelset"}
    assert ours.columns == expected.columns
    assert_frame_equal(ours.drop("rm_value"), expected.drop("rm_value"))
    assert_frame_equal(ours, expected, check_exact=False, rel_tol=1e-12, abs_tol=1e-12)
    states = ours.with_columns(pl.col("model").str.replace(r"/\d$", ""))
    ci = {"ci": 0.9, "n_boot": 200, "seed": 11}
    ours = sql_finalize(warehouse, states, interval_keys, ["model"], **ci)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.UndefinedMetricWarning)
        expected = rm.evaluate(table, interval_keys, by="model", weight="weight",
                               bootstrap="poisson", **ci)  # fmt: skip
    ours = ours.select(expected.columns)
    assert ours.select(pl.col("lrap_lo", "f1_micro_lo").is_nan().any()).row(0) == (False, False)
    assert_frame_equal(ours, expected, check_exact=False, rel_tol=1e-12, abs_tol=1e-12)


def test_the_sql_hashes_and_poisson_counts_are_hashings():
    check_hashes(DuckDBWarehouse())


def test_the_sql_state_finalizes_every_key_to_evaluate_however_split():
    check_every_key(DuckDBWarehouse())


def test_the_sql_state_is_the_python_state_and_its_intervals_the_poisson_bootstraps():
    check_intervals_and_rows(DuckDBWarehouse())


def test_every_check_on_the_servers(server):
    """Spark SQL and PostgreSQL: each check of the DuckDB tests above, in one cell; on Spark
    every view by one key of it."""
    check_hashes(server)
    check_every_key(server, one_key_a_view_and_average() if server.dialect == "spark" else None)
    check_intervals_and_rows(server)


def test_sql_states_of_different_label_sets_are_refused_by_finalize():
    """The SQL state records rm.state's label set, fingerprints included (string labels of
    every UTF-8 width, quotes, a backslash), and rm.finalize refuses SQL states whose label
    sets differ with evaluate's message; rankmetrics_state_checks counts the labels that
    differ."""
    warehouse = DuckDBWarehouse()
    labels = _text_ids(6)
    rng = np.random.default_rng(2)
    table = pl.DataFrame({
        "sample": np.repeat(np.arange(8), len(labels)), "label": labels * 8,
        "score": rng.random(8 * len(labels)), "truth": rng.integers(0, 2, 8 * len(labels)),
    }).with_columns(pl.col("truth").cast(pl.Float64))  # fmt: skip
    ours = sql_state(warehouse, table, ["lrap", "f1_micro"])
    expected = rm.state(table, ["lrap", "f1_micro"])
    labelset = pl.col("rm_part") == "labelset"
    assert ours.filter(labelset).height == len(labels)
    assert_frame_equal(ours.filter(labelset).sort("rm_label"),
                       expected.filter(labelset).sort("rm_label"))  # fmt: skip
    first, second = (table.filter(pl.col("sample") < 4),
                     table.filter(pl.col("sample") >= 4, pl.col("label") != labels[2]))  # fmt: skip
    refused = _refusal_of(rm.evaluate, pl.concat([first, second]), ["lrap"])
    states = [sql_state(warehouse, part, ["lrap"]) for part in (first, second)]
    found = _refusal_of(rm.finalize, states)
    assert found == refused.replace("sample=4", "state='states[1]'") + (
        f"; label {labels[2]!r} is not in it but in state='states[0]'"
    )
    define_finalize(warehouse, pl.concat(states), ["lrap"], [])
    checks = warehouse.fetch(
        "SELECT differing_labels, differing_label FROM rankmetrics_state_checks"
    )
    assert checks.rows() == [(1, labels[2])]


def _refusal_of(function, *args, **kwargs) -> str:
    with pytest.raises(ValueError) as error:
        function(*args, **kwargs)
    return str(error.value)


def test_the_exporter_refuses_what_it_cannot_write():
    keys = parse_keys(["lrap"])
    with pytest.raises(ValueError, match="exported for duckdb, spark, postgres, not 'sqlite'"):
        state_statements("t", Columns(), "sqlite", keys, context=parameters())
    with pytest.raises(ValueError, match="label_coverage@2 is averaged over labels from"):
        state_statements("t", Columns(), "duckdb", parse_keys(["label_coverage@2"]),
                         context=parameters())  # fmt: skip
    with pytest.raises(ValueError, match="psprecision@2 reads label propensities"):
        state_statements("t", Columns(), "duckdb", parse_keys(["psprecision@2"]),
                         context=parameters())  # fmt: skip
    with pytest.raises(ValueError, match="by column 'rm_day': names starting with 'rm_'"):
        state_statements("t", Columns(by=("rm_day",)), "duckdb", keys, context=parameters())
    with pytest.raises(ValueError, match=r"n_boot must be an integer in 1 \.\. 100,000"):
        finalize_statements("duckdb", keys, ci=0.95, n_boot=100_001)
    for key, reason in (
        ("ece_micro@10", "rankmetrics_label_summary .* has no column 'ece_micro@10'"),
        ("trec_map", "the TREC keys follow trec_eval's rules"),
    ):
        with pytest.raises(ValueError, match=f"{key} is not finalized in SQL: {reason}"):
            finalize_statements("duckdb", parse_keys(["lrap", key]))
    with pytest.raises(
        ValueError,
        match="f1_macro is computed over labels, not as a mean over samples: it has no interval",
    ):
        finalize_statements("duckdb", parse_keys(["f1_micro", "f1_macro"]), ci=0.9)


def test_the_documented_daily_roll_up_runs():
    """docs/engines.md's DuckDB example: three days' states in a table, a window of two days
    finalized per model with intervals, equal to evaluate() over those two days' rows."""
    root = Path(__file__).parent.parent
    text = (root / "docs" / "engines.md").read_text()
    section = text[text.index("## States in SQL") :]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    namespace: dict[str, Any] = {}
    exec(code[1], namespace)
    window = namespace["window"]
    example = pl.read_parquet(root / "data" / "example.parquet")
    days = example.filter(pl.col("sample").hash(1) % 3 >= 1)
    keys = ["lrap", "ndcg@10"]
    expected = rm.evaluate(days, keys, by="model", weight="weight", ci=0.95, seed=0,
                           bootstrap="poisson")  # fmt: skip
    assert window.height == 4
    for row in window.iter_rows(named=True):
        at = expected.filter(model=row["model"])
        for column, name in (("value", ""), ("lo", "_lo"), ("hi", "_hi")):
            assert row[column] == pytest.approx(at[f"{row['metric']}{name}"].item(), abs=1e-12)


def test_the_command_prints_the_state_and_the_finalize(capsys):
    """``rankmetrics sql --state`` and ``--finalize``: the documented daily roll-up run from
    the printed statements alone, equal to evaluate() over the window's rows; an option of the
    other kind of statements is one line on stderr and exit 1."""
    import duckdb

    from polars_rankmetrics import cli

    def printed(*args: str) -> str:
        assert cli.main(["sql", *args]) == 0
        return capsys.readouterr().out

    keys = "lrap,ndcg@10,f1_micro"
    state = printed("--state", "--input", "todays", "--by", "model,day", "--weight", "weight",
                    "--bool-truth", "--metrics", keys, "--intervals")  # fmt: skip
    finalize = printed("--finalize", "--by", "model", "--metrics", keys, "--ci", "0.9",
                       "--seed", "3")  # fmt: skip
    example = pl.read_parquet(Path(__file__).parent.parent / "data" / "example.parquet")
    days = example.with_columns(day=pl.col("sample").hash(1) % 3)
    con = duckdb.connect()
    for day, todays in sorted(days.partition_by("day", as_dict=True).items()):
        con.register("todays", todays)
        con.execute(state)
        kept = "CREATE TABLE daily AS" if day == (0,) else "INSERT INTO daily"
        con.execute(f"{kept} SELECT * FROM rankmetrics_state")
    con.execute("CREATE VIEW rankmetrics_states AS SELECT * FROM daily WHERE day >= 1")
    con.execute(finalize)
    window = pl.DataFrame(con.sql("SELECT * FROM rankmetrics_finalize ORDER BY model, metric"))
    expected = rm.evaluate(days.filter(pl.col("day") >= 1), keys.split(","), by="model",
                           weight="weight", ci=0.9, seed=3, bootstrap="poisson")  # fmt: skip
    assert window.height == 6
    for row in window.iter_rows(named=True):
        at = expected.filter(model=row["model"])
        for column, name in (("value", ""), ("lo", "_lo"), ("hi", "_hi")):
            assert row[column] == pytest.approx(at[f"{row['metric']}{name}"].item(), abs=1e-12)
    for args, message in [
        (["--state", "--metrics", "lrap"], "--state defines rankmetrics_state over --input"),
        (["--finalize", "--input", "todays"], "--input does not apply to --finalize"),
        (["--state", "--input", "todays", "--ci", "0.9"], "--ci does not apply to --state"),
        (["--metrics", "lrap"], "--metrics applies to --state or --finalize"),
        (["--state", "--finalize"], "give --state or --finalize, not both"),
    ]:
        assert cli.main(["sql", *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"rankmetrics: error: {message}") and err.count("\n") == 1
