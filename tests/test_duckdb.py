"""The DuckDB engine and the SQL views: parity with Polars, quoting, SQL alone, spilling."""

import itertools
import re
from contextlib import contextmanager
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest
from conftest import BUDGET, rows_per_bucket
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from strategies import long_tables

import polars_rankmetrics as rm
from polars_rankmetrics.engines.driver import pieces
from polars_rankmetrics.engines.duckdb import register_views
from polars_rankmetrics.engines.memory import engine_limit
from polars_rankmetrics.engines.sql.export import sql_directory, sql_files, view_statements
from polars_rankmetrics.metrics.registry import REGISTRY

ALL_KEYS = [
    "coverage_error",
    "lrap",
    "ranking_loss",
    "lwlrap",
    "dcg",
    "ndcg",
    "dcg@3",
    "ndcg@3",
    "ndcg@1",
]
EXAMPLE = Path(__file__).parent.parent / "data" / "example.parquet"
REPO_SQL = Path(__file__).parent.parent / "sql"


def assert_engines_agree(source, keys, **options):
    polars = rm.evaluate(source, keys, engine="polars", **options)
    duck = rm.evaluate(source, keys, engine="duckdb", **options)
    assert_frame_equal(duck, polars, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.parametrize("per_sample", [False, True])
def test_engines_agree_on_the_example_file(per_sample):
    assert_engines_agree(EXAMPLE, ALL_KEYS, by="model", weight="weight", per_sample=per_sample)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(table=long_tables(), per_sample=st.booleans())
def test_engines_agree_on_the_same_parquet_file(tmp_path_factory, table, per_sample):
    df, _, _, weights = table
    path = tmp_path_factory.mktemp("parity") / "table.parquet"
    df.write_parquet(path)
    weight = "weight" if weights is not None else None
    assert_engines_agree(path, ALL_KEYS, weight=weight, per_sample=per_sample)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(table=long_tables(graded=True))
def test_engines_agree_on_graded_truth(tmp_path_factory, table):
    df, *_ = table
    path = tmp_path_factory.mktemp("graded") / "table.parquet"
    df.write_parquet(path)
    assert_engines_agree(path, ["dcg", "ndcg", "dcg@2", "ndcg@2"], per_sample=True)


def test_hostile_file_and_column_names(tmp_path):
    path = tmp_path / "it's; DROP TABLE x; --.parquet"
    df = pl.read_parquet(EXAMPLE).rename(
        {"sample": 'clip "id"', "label": "tag; DROP TABLE t", "score": "sc'ore", "model": "mo del"}
    )
    df.write_parquet(path)
    names = {"sample": 'clip "id"', "label": "tag; DROP TABLE t", "score": "sc'ore", "by": "mo del"}
    duck = rm.evaluate(path, ["lrap", "ndcg@3"], engine="duckdb", per_sample=True, **names)
    assert duck.columns == ["mo del", 'clip "id"', "lrap", "ndcg@3"]
    assert_frame_equal(
        duck, rm.evaluate(path, ["lrap", "ndcg@3"], per_sample=True, **names), rel_tol=1e-9
    )
    # a glob character in a real file name is taken literally
    odd = tmp_path / "odd[1].parquet"
    df.write_parquet(odd)
    assert rm.evaluate(odd, ["lrap"], engine="duckdb", **names).height == 2


def test_register_views_on_a_users_table_then_query_the_views():
    con = duckdb.connect()
    con.sql(f"CREATE TABLE preds AS SELECT * FROM read_parquet('{EXAMPLE}')")
    register_views(con, "preds", by="model", weight="weight", cutoffs=[None, 5])
    summary = con.sql(
        "SELECT grp AS model, k, lrap, ndcg FROM rankmetrics_summary ORDER BY model, k NULLS FIRST"
    ).pl()
    expected = rm.evaluate(EXAMPLE, ["lrap", "ndcg", "ndcg@5"], by="model", weight="weight")
    assert summary["model"].to_list() == ["baseline", "baseline", "candidate", "candidate"]
    np.testing.assert_allclose(
        summary.filter(pl.col("k").is_null())["ndcg"], expected["ndcg"], rtol=1e-9
    )
    np.testing.assert_allclose(summary.filter(k=5)["ndcg"], expected["ndcg@5"], rtol=1e-9)
    np.testing.assert_allclose(summary.filter(k=5)["lrap"], expected["lrap"], rtol=1e-9)


def test_sql_alone_as_the_readme_shows():
    """Only the statements of sql/ that `rankmetrics sql` prints (every view that reads only
    the three relations a user defines), on a connection where the user defines them by hand."""
    con = duckdb.connect()
    con.sql(
        "CREATE VIEW rankmetrics_input AS SELECT model AS grp, sample, label, "
        "CAST(score AS DOUBLE) AS score, CAST(truth AS DOUBLE) AS truth, weight, "
        f"CAST(score >= 0.5 AS DOUBLE) AS pred, 1 AS predicted, NULL::DOUBLE AS propensity "
        f"FROM read_parquet('{EXAMPLE}')"
    )
    con.sql(
        "CREATE TABLE rankmetrics_cutoffs AS SELECT k, NULL::DOUBLE AS unscored "
        "FROM (VALUES (NULL), (10)) AS t(k)"
    )
    con.sql(
        "CREATE TABLE rankmetrics_parameters AS "
        "SELECT 1.0 AS beta, 0.0 AS zero_division, NULL::BIGINT AS n_labels"
    )
    for statement in view_statements():
        con.sql(statement)
    got = con.sql(
        "SELECT grp AS model, coverage_error, lwlrap, ndcg FROM rankmetrics_summary "
        "WHERE k = 10 ORDER BY grp"
    ).pl()
    expected = rm.evaluate(
        EXAMPLE, ["coverage_error", "lwlrap", "ndcg@10"], by="model", weight="weight"
    )
    np.testing.assert_allclose(got["coverage_error"], expected["coverage_error"], rtol=1e-9)
    np.testing.assert_allclose(got["lwlrap"], expected["lwlrap"], rtol=1e-9)
    np.testing.assert_allclose(got["ndcg"], expected["ndcg@10"], rtol=1e-9)


def test_the_package_carries_the_sql_files():
    packaged = Path(rm.__file__).parent / "sql"
    files = sql_files()
    assert [f.name for f in files] == sorted(p.name for p in REPO_SQL.glob("*.sql"))
    for path in files:
        assert path.read_text() == (REPO_SQL / path.name).read_text()
    # An editable install reads the checkout's sql/; an installed package its own copy.
    assert sql_directory() == (packaged if packaged.is_dir() else REPO_SQL)


def big_table(n_samples: int, n_labels: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    n = n_samples * n_labels
    return pl.DataFrame(
        {
            "sample": np.repeat(np.arange(n_samples), n_labels),
            "label": np.tile(np.arange(n_labels), n_samples),
            "score": rng.random(n),
            "truth": (rng.random(n) < 0.05).astype(np.int8),
        }
    )


def test_spills_to_disk_under_a_tight_memory_limit(tmp_path):
    path = tmp_path / "big.parquet"
    big_table(60_000, 50).write_parquet(path)  # 3M rows: tens of MB of window state
    keys = ["coverage_error", "lrap", "ranking_loss", "ndcg@5"]
    budget = "150MB"
    # Without a place to spill, DuckDB's share of the budget is too small for the query ...
    with pytest.raises(duckdb.OutOfMemoryException):
        con = duckdb.connect(config={"memory_limit": engine_limit(budget), "temp_directory": ""})
        register_views(con, str(path), cutoffs=[5])
        con.sql("SELECT * FROM rankmetrics_summary").pl()
    # ... and with one, the same budget gives the same numbers as the in-memory Polars engine.
    spilled = rm.evaluate(path, keys, engine="duckdb", memory_limit=budget)
    assert_frame_equal(spilled, rm.evaluate(path, keys), check_exact=False, rel_tol=1e-9)


def test_cli_duckdb_engine_and_memory_limit():
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "polars_rankmetrics.cli", "evaluate", str(EXAMPLE), "--by", "model",
         "--engine", "duckdb", "--memory-limit", "200MB", "--format", "csv"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    csv = pl.read_csv(done.stdout.encode())
    assert_frame_equal(csv, rm.evaluate(EXAMPLE, by="model"), check_exact=False, rel_tol=1e-9)
    bad = subprocess.run(
        [sys.executable, "-m", "polars_rankmetrics.cli", "evaluate", str(EXAMPLE),
         "--engine", "duckdb", "--by", "model", "--memory-limit", "lots"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert bad.returncode == 1 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr


def test_cli_prints_the_sql_views_in_order():
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "polars_rankmetrics.cli", "sql"], capture_output=True, text=True
    )
    assert done.returncode == 0
    con = duckdb.connect()
    con.sql(
        "CREATE VIEW rankmetrics_input AS SELECT 0 AS grp, sample, label, score, "
        "CAST(truth AS DOUBLE) AS truth, 1.0 AS weight, CAST(score >= 0.5 AS DOUBLE) AS pred, "
        f"1 AS predicted, NULL::DOUBLE AS propensity FROM read_parquet('{EXAMPLE}') "
        "WHERE model = 'candidate'"
    )
    con.sql(
        "CREATE TABLE rankmetrics_cutoffs AS SELECT NULL::BIGINT AS k, NULL::DOUBLE AS unscored"
    )
    con.sql(
        "CREATE TABLE rankmetrics_parameters AS "
        "SELECT 1.0 AS beta, 0.0 AS zero_division, NULL::BIGINT AS n_labels"
    )
    con.sql(done.stdout)
    lrap = con.sql("SELECT lrap FROM rankmetrics_summary").fetchall()[0][0]
    expected = rm.evaluate(pl.read_parquet(EXAMPLE).filter(model="candidate"), ["lrap"])["lrap"][0]
    assert lrap == pytest.approx(expected, rel=1e-12)


@contextmanager
def counted_buckets(rows: int):
    """Buckets of ``rows`` rows under conftest's BUDGET; yields the list of bucket counts used."""
    used = []
    real = pieces.bucket_count

    def counting(*args, **options):
        used.append(real(*args, **options))
        return used[-1]

    with rows_per_bucket(rows), pytest.MonkeyPatch.context() as patch:
        patch.setattr(pieces, "bucket_count", counting)
        yield used


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("per_sample", [False, True])
def test_buckets_give_the_one_piece_result(engine, per_sample):
    options = {"by": "model", "engine": engine, "per_sample": per_sample}
    whole = rm.evaluate(EXAMPLE, ALL_KEYS, **options)
    with counted_buckets(20_000) as used:
        parts = rm.evaluate(EXAMPLE, ALL_KEYS, memory_limit=BUDGET, **options)
    assert used[-1] == 8  # 160,000 rows
    assert_frame_equal(parts, whole, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_buckets_check_label_sets_against_the_whole_table(engine):
    # Alone in its bucket, a sample looks complete; against the whole table it is not.
    rows = [(s, label, 0.5, 1) for s in range(30) for label in ("a", "b")]
    rows += [(99, "a", 0.5, 1), (99, "c", 0.5, 0)]
    df = pl.DataFrame(rows, schema=["sample", "label", "score", "truth"], orient="row")
    with counted_buckets(3) as used, pytest.raises(ValueError, match="different label sets"):
        rm.evaluate(df, engine=engine, memory_limit=BUDGET)
    assert used[-1] == 21


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_a_budget_too_small_for_one_sample_is_refused(engine):
    with pytest.raises(ValueError, match=r"memory limit '2KB' is too small.*give at least 64MB"):
        rm.evaluate(EXAMPLE, engine=engine, memory_limit="2KB")
    # 20 rows a bucket cannot hold a sample of 40 labels
    few = pl.read_parquet(EXAMPLE).filter(model="baseline").sort("sample").head(200)
    with rows_per_bucket(20), pytest.raises(ValueError, match=r"up to 40 a sample.*at least"):
        rm.evaluate(few, engine=engine, memory_limit=BUDGET)
    # ... nor does a budget that would take more than 1,024 passes over the buckets
    with rows_per_bucket(100), pytest.raises(ValueError, match=r"160,000 rows\): give at least"):
        rm.evaluate(EXAMPLE, engine=engine, memory_limit=BUDGET)


def test_a_session_computes_its_shared_views_only_when_it_evaluates():
    """The whole-table session of a bucketed run only checks and splits: the views that the
    metric views share (sample counts, discounts) become temporary tables in piece(), not in
    open() (computed over a whole 1B-row table, they took the process past its 2GB budget)."""
    from polars_rankmetrics.engines.base import Settings
    from polars_rankmetrics.engines.duckdb import ENGINE
    from polars_rankmetrics.inputs.columns import Columns
    from polars_rankmetrics.metrics.parameters import parameters
    from polars_rankmetrics.metrics.registry import parse_keys

    table = pl.DataFrame(
        {"sample": [1, 1, 2, 2], "label": [1, 2, 1, 2], "score": [0.5, 0.2, 0.1, 0.9],
         "truth": [1, 0, 0, 1]}
    )  # fmt: skip
    keys = tuple(parse_keys(["lrap", "ndcg@2"]))
    context = parameters()
    with ENGINE.open(table, Columns(), Settings(keys=keys, context=context)) as session:

        def temporary_tables() -> set[str]:
            query = "SELECT table_name FROM duckdb_tables() WHERE temporary"
            return set(session._frame(query)["table_name"])

        assert temporary_tables() == set()
        _, frames = session.piece(["sums"], keys, context, check=lambda summary: None)
        assert temporary_tables() == {
            "rankmetrics_discounts_once", "rankmetrics_sample_counts_once",
            "rankmetrics_positive_ranks_once",
        }  # fmt: skip
    assert frames["sums"].height == 1


@pytest.mark.parametrize(
    ("metrics", "held", "left_out"),
    [
        (["hamming_loss"], {"n_predicted", "true_predicted"}, {"lowest_positive", "n_scored"}),
        (
            ["coverage_error"],
            {"lowest_positive"},
            {"n_predicted", "true_predicted", "n_scored", "n_positives"},
        ),
        (["lrap", "f1_samples"], {"lowest_positive", "n_scored", "true_predicted"}, set()),
    ],
)
def test_the_sample_counts_are_held_once_with_the_columns_the_run_reads(metrics, held, left_out):
    """The sample checks and the metrics read one aggregation per sample, held once: with the
    checks' columns and those of the run's metrics (each count costs DuckDB 0.025 s at 10M rows),
    and the values of the Polars engine."""
    from polars_rankmetrics.engines.base import Settings
    from polars_rankmetrics.engines.duckdb import ENGINE
    from polars_rankmetrics.inputs.columns import Columns
    from polars_rankmetrics.metrics.parameters import parameters
    from polars_rankmetrics.metrics.registry import parse_keys

    table = pl.read_parquet(EXAMPLE).filter(model="baseline")
    keys = tuple(parse_keys(metrics))
    context = parameters()
    with ENGINE.open(table, Columns(), Settings(keys=keys, context=context)) as session:
        session.piece(["sums"], keys, context, check=lambda summary: None)
        query = "DESCRIBE rankmetrics_sample_counts_once"
        columns = set(session._frame(query)["column_name"])
    checks = {"n_rows", "distinct_labels", "varying_weight", "weight"}
    assert checks | held <= columns
    assert not columns & left_out
    expected = rm.evaluate(table, metrics, engine="polars")
    assert_frame_equal(rm.evaluate(table, metrics, engine="duckdb"), expected)


@pytest.mark.parametrize("row_bytes", [80, 10**9], ids=["fit", "too-large"])
def test_under_a_budget_the_positive_ranks_are_held_where_they_fit(monkeypatch, row_bytes):
    """Under a memory budget the positive ranks that several views read are held once where
    they take at most half of DuckDB's share (computed per view beyond: a held table spills),
    with the same values either way."""
    from polars_rankmetrics.engines import duckdb as duckdb_engine
    from polars_rankmetrics.engines.base import Settings
    from polars_rankmetrics.engines.duckdb import tuning
    from polars_rankmetrics.inputs.columns import Columns
    from polars_rankmetrics.metrics.parameters import parameters
    from polars_rankmetrics.metrics.registry import parse_keys

    monkeypatch.setattr(tuning, "_POSITIVE_RANK_BYTES", row_bytes)
    table = pl.read_parquet(EXAMPLE).filter(model="baseline")
    keys = tuple(parse_keys(["lrap", "ndcg"]))
    context = parameters()
    settings = Settings(memory_limit="1GB", keys=keys, context=context)
    with duckdb_engine.ENGINE.open(table, Columns(), settings) as session:
        session.piece(["sums"], keys, context, check=lambda summary: None)
        query = "SELECT table_name FROM duckdb_tables() WHERE temporary"
        held = "rankmetrics_positive_ranks_once" in set(session._frame(query)["table_name"])
    assert held == (row_bytes == 80)
    expected = rm.evaluate(table, ["lrap", "ndcg"], engine="polars")
    assert_frame_equal(rm.evaluate(table, ["lrap", "ndcg"], engine="duckdb", memory_limit="1GB"),
                       expected)  # fmt: skip


def test_a_session_defines_only_the_views_its_queries_read():
    """DuckDB binds every view it creates (about 3 ms each, 36 views): a session defines the
    checks' views and its metrics' views with what they read, nothing else."""
    from polars_rankmetrics.engines.base import Settings
    from polars_rankmetrics.engines.duckdb import ENGINE
    from polars_rankmetrics.inputs.columns import Columns
    from polars_rankmetrics.metrics.registry import parse_keys

    def views(keys: list[str]) -> set[str]:
        settings = Settings(keys=tuple(parse_keys(keys)), tables=("sums",))
        with ENGINE.open(EXAMPLE, Columns(), settings) as session:
            query = "SELECT view_name FROM duckdb_views() WHERE temporary"
            return set(session._frame(query)["view_name"])

    hamming, ndcg = views(["hamming_loss"]), views(["ndcg@3"])
    assert "rankmetrics_set_per_sample" in hamming and "rankmetrics_sample_checks" in hamming
    assert not {"rankmetrics_positive_ranks", "rankmetrics_gain_per_sample"} & hamming
    assert {"rankmetrics_gain_per_sample", "rankmetrics_discounts"} <= ndcg
    assert "rankmetrics_set_per_sample" not in ndcg


def test_coverage_reads_the_positives_ranks_where_another_metric_ranks_them():
    """coverage_error's own view passes over every row; beside a metric whose view ranks the
    positives anyway it reads their largest rank from the ranking view instead: the same
    values as the Polars engine's, on a dense table, a top-k table with unscored true labels
    and two models."""
    from polars_rankmetrics.engines.sql.results import sql_views
    from polars_rankmetrics.metrics.registry import COVERAGE_VIEW, RANKING_VIEW, parse_keys

    def coverage_view(keys: list[str]) -> str:
        return sql_views(parse_keys(keys))[parse_keys(["coverage_error"])[0]]

    assert coverage_view(["coverage_error"]) == COVERAGE_VIEW
    assert coverage_view(["coverage_error", "hamming_loss"]) == COVERAGE_VIEW
    assert coverage_view(["coverage_error", "lrap"]) == RANKING_VIEW
    assert coverage_view(["coverage_error", "ndcg@3", "hamming_loss"]) == RANKING_VIEW
    rng = np.random.default_rng(5)
    table = rm.from_dense(rng.random((40, 6)) < 0.4, rng.random((40, 6)).round(1))
    topk = dict(
        data=table.filter(pl.col("label") < 4).drop("truth"), n_labels=6,
        truth_table=table.filter(pl.col("truth") > 0).select("sample", "label"),
    )  # fmt: skip
    two_models = pl.concat([table.with_columns(m=pl.lit(m)) for m in ("x", "y")])
    for options in (dict(data=table), topk, dict(data=two_models, by="m")):
        alone = rm.evaluate(metrics=["coverage_error"], per_sample=True, **options)
        beside = rm.evaluate(
            metrics=["coverage_error", "lrap"], per_sample=True, engine="duckdb", **options
        )
        assert_frame_equal(beside.select(alone.columns), alone)
        # its own view on DuckDB (grouped by the sample alone without by)
        own = rm.evaluate(metrics=["coverage_error"], per_sample=True, engine="duckdb", **options)
        assert_frame_equal(own.sort(alone.columns[:-1]), alone.sort(alone.columns[:-1]))


def test_views_read_follows_every_read_and_refuses_an_unknown_name():
    from polars_rankmetrics.engines.sql.export import view_names, view_statements, views_read

    gain = views_read(["rankmetrics_gain_per_sample"])
    assert {"rankmetrics_positive_ranks", "rankmetrics_discounts"} <= gain < set(view_names())
    # what a view reads through another is read too
    assert views_read(gain) == gain
    assert len(view_statements(views=gain)) == len(gain) < len(view_statements())
    with pytest.raises(ValueError, match="'rankmetrics_nothing' is not a view"):
        views_read(["rankmetrics_nothing"])


# The TREC keys read a run joined with qrels by trec_eval's rules: tests/test_trec_measures.py.
@pytest.mark.parametrize("name", sorted(n for n in REGISTRY if REGISTRY[n].family != "trec"))
def test_each_metric_alone_reads_every_view_it_needs(name):
    """Each registered metric evaluated alone on DuckDB, whose session then defines only that
    metric's views, gives the Polars numbers: on top-k rows with unscored true labels and
    propensities, or for a classification metric on the whole table."""
    rng = np.random.default_rng(3)
    table = rm.from_dense(rng.random((30, 6)) < 0.4, rng.random((30, 6)).round(1))
    predictions = table.filter(pl.col("label") < 4).drop("truth")
    truth = table.filter(pl.col("truth") > 0).select("sample", "label")
    propensities = pl.DataFrame({"label": range(6), "propensity": [0.2, 0.5, 1.0] * 2})
    options = dict(truth_table=truth, n_labels=6, propensities=propensities)
    if REGISTRY[name].family == "classification":  # not defined on top-k tables
        predictions, options = table, {}
    key = f"{name}@2" if REGISTRY[name].takes_k else name
    per_samples = (False, True) if REGISTRY[name].reduction == "samples" else (False,)
    for per_sample in per_samples:
        duck = rm.evaluate(predictions, [key], engine="duckdb", per_sample=per_sample, **options)
        polars = rm.evaluate(predictions, [key], engine="polars", per_sample=per_sample, **options)
        assert_frame_equal(duck, polars, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)


def test_the_duckdb_engine_runs_without_sqlglot():
    """DuckDB runs the SQL as written: a fresh process evaluating on DuckDB never imports
    sqlglot (0.15 s of a fresh process's first evaluation), which only transpiles."""
    import subprocess
    import sys

    code = (
        "import sys, polars_rankmetrics as rm; "
        f"rm.evaluate({str(EXAMPLE)!r}, ['lrap', 'hamming_loss'], by='model', engine='duckdb'); "
        "print('sqlglot' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize(
    ("labels", "weighted", "by"),
    [(range(100), False, None), (range(500), True, None), (range(2000), False, "m")],
)
def test_duckdb_sample_counts_are_the_views_counts(labels, weighted, by):
    """DuckDB's sample counts (distinct labels by bits, within 127 or 1024 values, else by
    count; the weight a constant without a weight column; grouped by the sample alone without
    by) against the view of sql/: the same rows, repeated and missing labels and varying
    weights included."""
    from polars_rankmetrics.engines.duckdb import connect, register_views
    from polars_rankmetrics.engines.duckdb.variants import sample_counts

    rng = np.random.default_rng(3)
    n = 3000
    table = pl.DataFrame({
        "sample": rng.integers(0, 40, n), "label": rng.choice(list(labels), n),
        "score": rng.random(n), "truth": rng.integers(0, 2, n), "w": rng.integers(1, 3, n) * 1.0,
        "m": rng.choice(["a", "b"], n),
    })  # fmt: skip
    span = (min(labels), max(labels))
    con = connect()
    register_views(con, table, weight="w" if weighted else None, by=by)
    query = "SELECT * FROM rankmetrics_sample_counts ORDER BY grp, sample"
    expected = pl.DataFrame(con.sql(query))
    view = sample_counts(con, span, weighted, grouped=by is not None)
    written = " ".join(view.replace('"', "").split())  # DuckDB quotes the keyword sample
    assert ("max(weight)" in written) == weighted
    assert ("GROUP BY grp, sample" in written) == (by is not None)
    con.execute(view)
    assert_frame_equal(pl.DataFrame(con.sql(query)), expected, check_dtypes=False)
    assert expected["varying_weight"].sum() == (0 if not weighted else expected.height)
    con.close()


def _layouts(query: str) -> list[str]:
    """``query`` laid out anew by sqlglot: indented with its comments kept, on one line, with
    leading commas and keywords in lower case."""
    import sqlglot

    tree = sqlglot.parse_one(query, read="duckdb")
    layouts = [
        tree.sql(dialect="duckdb", pretty=True),
        tree.sql(dialect="duckdb", comments=False),
        tree.sql(dialect="duckdb", pretty=True, leading_comma=True, normalize_functions="lower",
                 comments=False).replace("SELECT", "select").replace("GROUP BY", "group by"),
    ]  # fmt: skip
    assert all(layout != query for layout in layouts)
    return layouts


@pytest.mark.parametrize("by", [None, "m"])
def test_duckdb_binary_ideal_table_is_the_views_table(by):
    """The ideal table of a 0/1 truth read off the sample counts (BINARY_IDEAL) against the
    view of sql/ (a window over the sorted truths): the same rows, samples without a positive,
    with one positive, with every label positive and with unscored (null) positives included."""
    from polars_rankmetrics.engines.duckdb import connect, register_views
    from polars_rankmetrics.engines.duckdb.variants import BINARY_IDEAL

    rng = np.random.default_rng(5)
    n = 2000
    sample = rng.integers(0, 60, n)
    truth = np.where(sample < 5, 0, np.where(sample < 10, 1, rng.integers(0, 2, n)))
    score = np.where(rng.random(n) < 0.1, np.nan, rng.random(n))
    table = pl.DataFrame({
        "sample": sample, "label": np.arange(n), "truth": truth * 1.0,
        "score": pl.Series(score).fill_nan(None), "m": rng.choice(["a", "b"], n),
    }).with_columns(  # samples 10 to 14: their first row alone is positive
        truth=pl.when(pl.col("sample").is_between(10, 14))
        .then((pl.int_range(pl.len()).over("sample") == 0).cast(pl.Float64))
        .otherwise("truth")
    )  # fmt: skip
    con = connect()
    register_views(con, table, by=by)
    query = "SELECT * FROM rankmetrics_ideal_table ORDER BY ALL"
    expected = pl.DataFrame(con.sql(query))
    assert expected["truth"].unique().to_list() == [1.0]  # a block of positives per sample
    con.execute(BINARY_IDEAL)
    assert_frame_equal(pl.DataFrame(con.sql(query)), expected, check_dtypes=False)
    con.close()


def test_duckdb_unweighted_score_counts_are_the_views_counts():
    """The score counts of a table without weights or by, counted (count_if, grouped by label
    and score alone), against the view of sql/ (sums of weights of 1 per (grp, label, score)):
    the same rows, with tied scores, a graded truth, a truth of 0 only and null (unscored)
    scores."""
    from polars_rankmetrics.engines.duckdb import connect, register_views
    from polars_rankmetrics.engines.duckdb.variants import SCORE_COUNTS, view_variant

    rng = np.random.default_rng(11)
    n = 3000
    score = np.round(rng.random(n), 1)
    table = pl.DataFrame({
        "sample": rng.integers(0, 100, n), "label": rng.integers(0, 8, n),
        "score": score, "unscored": rng.random(n) < 0.05,
        "truth": rng.choice([0.0, 0.0, 1.0, 2.0], n),
    }).select(
        "sample", "label", pl.when(~pl.col("unscored")).then(pl.col("score")).alias("score"),
        truth=pl.when(pl.col("label") == 7).then(0.0).otherwise("truth"),
    )  # fmt: skip
    con = connect()
    register_views(con, table)
    query = f"SELECT * FROM {SCORE_COUNTS} ORDER BY ALL"
    expected = pl.DataFrame(con.sql(query))
    assert expected["score"].null_count() > 0 and expected["pos"].max() > 1
    assert expected.filter(pl.col("label") == 7)["pos"].sum() == 0
    variant = view_variant(con, SCORE_COUNTS, grouped=False, weighted=False)
    assert "count_if(" in variant
    con.execute(variant)
    assert_frame_equal(pl.DataFrame(con.sql(query)), expected)
    con.close()


@pytest.mark.parametrize(
    ("span", "weighted", "grouped"),
    [((0, 99), False, False), ((0, 500), True, False), ((0, 5000), False, True),
     (None, False, True)],
)  # fmt: skip
def test_duckdb_variants_come_from_any_layout_of_the_views(span, weighted, grouped):
    """DuckDB's variants are made from the views' syntax trees, not their text: the views of
    sql/ laid out anew (whitespace, comments, case) give the same variants."""
    from polars_rankmetrics.engines.duckdb import connect
    from polars_rankmetrics.engines.duckdb.variants import (
        ONE_GROUP_VIEWS,
        SAMPLE_COUNTS,
        sample_counts,
        view_variant,
    )
    from polars_rankmetrics.engines.sql.export import view_query

    con = connect()
    made = sample_counts(con, span, weighted, grouped)
    for layout in _layouts(view_query(SAMPLE_COUNTS)):
        assert sample_counts(con, span, weighted, grouped, query=layout) == made
    for view in ONE_GROUP_VIEWS:
        made = view_variant(con, view, grouped=False)
        assert not re.search(r"\w+\.grp = \w+\.grp", made)  # every join on the sample alone
        if "GROUP BY" in view_query(view):
            assert "0 AS grp" in made and not re.search(r"GROUP BY [^)]*grp", made)
            by_sample = view != "rankmetrics_score_counts"  # grouped by (label, score)
            assert not by_sample or re.search(r'GROUP BY (\w+\.)?"sample"[,)]', made)
        for layout in _layouts(view_query(view)):
            assert view_variant(con, view, grouped=False, query=layout) == made
    for view, weighted in (("rankmetrics_coverage_per_sample", True),
                           ("rankmetrics_score_counts", False)):  # fmt: skip
        counted = view_variant(con, view, grouped=True, weighted=weighted)
        assert counted.count("count_if(") == 2 and "GROUP BY" in counted
        for layout in _layouts(view_query(view)):
            assert view_variant(con, view, grouped=True, weighted=weighted,
                                query=layout) == counted  # fmt: skip
    con.close()


def test_a_view_without_what_a_variant_replaces_is_refused_by_name():
    from polars_rankmetrics.engines.duckdb import connect
    from polars_rankmetrics.engines.duckdb.variants import SAMPLE_COUNTS, sample_counts
    from polars_rankmetrics.engines.sql.export import view_query

    query = view_query(SAMPLE_COUNTS).replace("AS varying_weight", "AS constant_weight")
    with pytest.raises(ValueError, match="rankmetrics_sample_counts .* no column 'varying_weight'"):
        sample_counts(connect(), None, False, True, query=query)


def _ranks_view(table: pl.DataFrame, memory_limit: str | None = None) -> str:
    """The definition of rankmetrics_positive_ranks after DuckDB's choice, for lrap alone (read
    by one view, so not held), under ``memory_limit``."""
    from polars_rankmetrics.engines.base import Settings
    from polars_rankmetrics.engines.duckdb import ENGINE
    from polars_rankmetrics.inputs.columns import Columns
    from polars_rankmetrics.metrics.parameters import parameters
    from polars_rankmetrics.metrics.registry import parse_keys

    keys, context = tuple(parse_keys(["lrap"])), parameters()
    settings = Settings(memory_limit, keys=keys, context=context)
    with ENGINE.open(table, Columns(), settings) as session:
        session.piece(["sums"], keys, context, check=lambda summary: None)
        query = "SELECT sql FROM duckdb_views() WHERE view_name = 'rankmetrics_positive_ranks'"
        return str(session._frame(query)["sql"][0])


def test_duckdb_ranks_the_positives_by_pairs_where_they_rank_high():
    """The positive ranks by pairs where a sample's positives rank high (few pairs per row the
    windows would rank), by the windows where many positives rank low."""
    score = np.tile(np.arange(20, 0, -1) / 20, 50)
    position = np.tile(np.arange(20), 50)
    table = pl.DataFrame({"sample": np.repeat(np.arange(50), 20), "label": position,
                          "score": score})  # fmt: skip
    high = table.with_columns(truth=pl.Series(position < 2).cast(pl.Int8))
    # 15 positives a sample: more pairs among them alone than 5 per row (no count needed)
    many_low = table.with_columns(truth=pl.Series(position >= 5).cast(pl.Int8))
    # 6 positives ranking last: 105 pairs a sample against 20 rows ranked
    few_low = table.with_columns(truth=pl.Series(position >= 14).cast(pl.Int8))
    assert "rankmetrics_positive_ranks_by_pairs" in _ranks_view(high)
    for low in (many_low, few_low):
        assert "rankmetrics_positive_ranks_by_pairs" not in _ranks_view(low)
        assert "OVER" in _ranks_view(low)


@pytest.mark.parametrize(
    ("pairs_per_row", "budget"),
    [(0, None), (10**9, None), (10**9, "1GB")],
    ids=["windows", "pairs", "pairs-under-a-budget"],
)
@pytest.mark.filterwarnings("ignore::polars_rankmetrics.UndefinedMetricWarning")  # one class
def test_both_plans_of_the_positive_ranks_give_the_polars_numbers(
    monkeypatch, pairs_per_row, budget
):
    """Ranked by the windows or by pairs, with or without a budget, DuckDB gives the Polars
    engine's numbers: a dense table with two models and a top-k table with unscored true labels,
    per sample; ranking loss and roc_auc alone too, whose sums by pairs count no pair per
    positive."""
    from polars_rankmetrics.engines.duckdb import tuning

    monkeypatch.setattr(tuning, "_PAIRS_PER_RANKED_ROW", pairs_per_row)
    rng = np.random.default_rng(11)
    dense = rm.from_dense(rng.random((60, 7)) < 0.4, rng.random((60, 7)).round(1))
    models = pl.concat([dense.with_columns(m=pl.lit(m)) for m in ("x", "y")])
    keys = ["coverage_error", "lrap", "ranking_loss", "lwlrap", "ndcg", "ndcg@3", "mrr"]
    cases = [
        dict(data=models, by="m"),
        dict(data=dense.filter(pl.col("label") < 4).drop("truth"), n_labels=7,
             truth_table=dense.filter(pl.col("truth") > 0).select("sample", "label")),
    ]  # fmt: skip
    for options, metrics in itertools.product(cases, (keys, ["ranking_loss", "roc_auc_samples"])):
        expected = rm.evaluate(metrics=metrics, per_sample=True, **options)
        ours = rm.evaluate(
            metrics=metrics, per_sample=True, engine="duckdb", memory_limit=budget, **options
        )
        assert_frame_equal(ours, expected, check_exact=False, rel_tol=1e-12)


def test_the_positive_ranks_are_held_with_the_columns_the_run_reads():
    """Read by two views, the positive ranks are held with the columns those views name through
    an alias of the view (lrap and ndcg: no weight, propensity or label, whose aggregates the
    plan by pairs would compute), all of them where a view names it without one (mrr), and the
    values are the Polars engine's either way."""
    from polars_rankmetrics.engines.base import Settings
    from polars_rankmetrics.engines.duckdb import ENGINE
    from polars_rankmetrics.inputs.columns import Columns
    from polars_rankmetrics.metrics.parameters import parameters
    from polars_rankmetrics.metrics.registry import parse_keys

    table = pl.read_parquet(EXAMPLE).filter(model="baseline")
    context = parameters()
    narrow = {"grp", "sample", "score", "truth", "rank", "block_start", "positive_rank"}
    every = narrow | {"label", "weight", "propensity"}
    for metrics, held in ((["lrap", "ndcg"], narrow), (["lrap", "mrr"], every)):
        keys = tuple(parse_keys(metrics))
        with ENGINE.open(table, Columns(), Settings(keys=keys, context=context)) as session:
            session.piece(["sums"], keys, context, check=lambda summary: None)
            query = "DESCRIBE rankmetrics_positive_ranks_once"
            assert set(session._frame(query)["column_name"]) == held
        expected = rm.evaluate(table, metrics, engine="polars")
        assert_frame_equal(rm.evaluate(table, metrics, engine="duckdb"), expected)


def test_every_view_reading_the_positive_ranks_binds_over_the_columns_found():
    """Each view of sql/ that reads the positive ranks binds over the columns
    tuning.positive_rank_columns finds in its statements (and those of the views it reads),
    and POSITIVE_RANK_COLUMNS are the columns of both plans of the positive ranks."""
    from polars_rankmetrics.engines.base import Settings
    from polars_rankmetrics.engines.duckdb import ENGINE, tuning
    from polars_rankmetrics.engines.sql.export import views_read
    from polars_rankmetrics.inputs.columns import Columns
    from polars_rankmetrics.metrics.parameters import parameters

    plans = ("rankmetrics_positive_ranks", "rankmetrics_positive_ranks_by_pairs")
    views = re.findall(r"CREATE OR REPLACE VIEW (\w+)", "".join(f.read_text() for f in sql_files()))
    readers = [
        view for view in views
        if "rankmetrics_positive_ranks" in views_read([view]) and view not in plans
    ]  # fmt: skip
    assert len(readers) >= 7
    table = pl.read_parquet(EXAMPLE).filter(model="baseline")
    settings = Settings(context=parameters(), views=(*readers, *plans))
    with ENGINE.open(table, Columns(), settings) as session:
        for plan in plans:
            found = session._frame(f"SELECT column_name FROM (DESCRIBE {plan})")["column_name"]
            assert tuple(found) == tuning.POSITIVE_RANK_COLUMNS
        for view in readers:
            columns = tuning.positive_rank_columns(view_statements(views=[view]))
            session._execute(
                "CREATE OR REPLACE TEMP VIEW rankmetrics_positive_ranks AS "
                f"SELECT {columns} FROM rankmetrics_positive_ranks_by_pairs"
            )
            session._frame(f"SELECT * FROM {view} LIMIT 0")  # binds, or fails naming a column
            if columns != "*":  # a column left out does not bind
                with pytest.raises(duckdb.BinderException, match="label"):
                    session._frame("SELECT label FROM rankmetrics_positive_ranks")


def test_a_frame_is_registered_as_its_columns_own_chunks():
    """A frame's columns reach DuckDB as their own chunks where these are large, whether or not
    they line up with the other columns' (no copy into aligned batches); a column of small
    chunks in one chunk. DuckDB reads the same rows either way."""
    from polars_rankmetrics.engines.duckdb.source import _CHUNK_ROWS, _arrow

    half = _CHUNK_ROWS
    large = pl.concat([pl.Series("a", np.arange(half)), pl.Series("a", np.arange(half))],
                      rechunk=False)  # fmt: skip
    small = pl.concat([pl.Series("c", [i]) for i in range(2 * half // 1000)] * 1000,
                      rechunk=False)  # fmt: skip
    frame = pl.DataFrame([large, pl.Series("b", np.arange(2 * half)), small])
    assert [column.n_chunks() for column in frame.get_columns()] == [2, 1, 2 * half]
    table = _arrow(frame)
    assert [table.column(name).num_chunks for name in "abc"] == [2, 1, 1]
    con = duckdb.connect()
    con.register("frame", table)
    found = pl.DataFrame(con.sql("SELECT * FROM frame"))
    assert_frame_equal(found, frame)
