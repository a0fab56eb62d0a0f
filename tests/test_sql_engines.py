"""The exported SQL on real engines: DuckDB, Spark SQL (local), PostgreSQL (a throwaway cluster
on 127.0.0.1), DataFusion and SQLite give the Polars engine's numbers and errors.

Every engine runs through the library's driver (Spark and DuckDB as the library's engines, the
others through tests/sql_engines.py), on the same table: many groups, each a random case with
heavy ties, empty and full rows, weights, and one group without any positive.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from sql_engines import SQLTestEngine

import polars_rankmetrics as rm
from polars_rankmetrics import cli
from polars_rankmetrics.engines import driver
from polars_rankmetrics.engines.base import Settings, get_engine
from polars_rankmetrics.engines.sql import results as sql_results
from polars_rankmetrics.engines.sql.export import DIALECTS, VERIFIED, view_statements
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.parameters import parameters
from polars_rankmetrics.metrics.registry import CLASSIFICATION_METRICS, parse_keys
from polars_rankmetrics.options import Run
from polars_rankmetrics.report import labels

KEYS = [
    "coverage_error", "lrap", "ranking_loss", "lwlrap", "dcg", "ndcg", "dcg@3", "ndcg@2",
    *CLASSIFICATION_METRICS, "precision@2", "recall@3", "hit_rate@1", "mrr", "mrr@2", "map",
    "map@3", "r_precision",
]  # fmt: skip


def random_cases(n_groups: int = 8, seed: int = 7) -> pl.DataFrame:
    """One table, one ``model`` per random case: 2-9 samples x 2-6 labels, scores from a few
    values (ties), some rows empty or full, weights 0.5-3 with zeros, the last group without any
    positive, string sample ids."""
    rng = np.random.default_rng(seed)
    parts = []
    for g in range(n_groups):
        n_samples, n_labels = rng.integers(2, 10), rng.integers(2, 7)
        score = rng.choice([0.0, 0.25, 0.5, 1.0, -1.0], size=(n_samples, n_labels))
        truth = (rng.random((n_samples, n_labels)) < 0.4).astype(float)
        truth[rng.random(n_samples) < 0.2] = 0
        truth[rng.random(n_samples) < 0.2] = 1
        if g == n_groups - 1:
            truth[:] = 0
        weight = rng.choice([0.0, 0.5, 1.0, 3.0], size=n_samples)
        weight[0] = 1.0
        parts.append(
            pl.DataFrame(
                {
                    "model": f"m{g}",
                    "sample": np.repeat([f"s{i}" for i in range(n_samples)], n_labels),
                    "label": np.tile(np.arange(n_labels), n_samples),
                    "score": score.reshape(-1),
                    "truth": truth.reshape(-1),
                    "weight": np.repeat(weight, n_labels),
                    "decision": rng.random(n_samples * n_labels) < 0.3,
                }
            )  # fmt: skip
        )
    return pl.concat(parts).sample(fraction=1.0, shuffle=True, seed=seed)


# random_cases() holds labels, samples and a group without positives on purpose: a test that
# compares numbers on it, not warnings, leaves its UndefinedMetricWarning aside.
ILL_DEFINED = pytest.mark.filterwarnings("ignore::polars_rankmetrics.UndefinedMetricWarning")


# The session's servers (conftest.py) under the names other modules import from here.
@pytest.fixture
def postgres_dsn(postgres):
    return postgres


@pytest.fixture
def spark_ready(spark):
    return spark


ENGINE_NAMES = ["duckdb", "spark", "postgres", "datafusion", "sqlite"]


@pytest.fixture(params=ENGINE_NAMES)
def sql_engine(request):
    name = request.param
    if name == "spark":
        request.getfixturevalue("spark_ready")
        return get_engine("spark")
    if name == "duckdb":
        return get_engine("duckdb")
    if name == "postgres":
        return SQLTestEngine("postgres", request.getfixturevalue("postgres_dsn"))
    return SQLTestEngine(name)


def run(engine, data, keys, **options):
    """``evaluate`` on a test engine: the same driver, columns and parameters."""
    cols = Columns.of(
        by=options.pop("by", None),
        weight=options.pop("weight", None),
        pred=options.pop("pred", None),
    )
    names = ("log_base", "threshold", "beta", "zero_division")
    context = parameters(**{name: options.pop(name) for name in names if name in options})
    return driver.run(engine, data, cols, parse_keys(keys), parameters=context, **options)


@pytest.mark.parametrize("per_sample", [False, True])
def test_every_engine_gives_the_polars_numbers(sql_engine, per_sample):
    table = random_cases()
    # The averages over labels have no per-sample value.
    keys = [k for k in KEYS if parse_keys(k)[0].metric.reduction == "samples" or not per_sample]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = run(sql_engine, table, keys, by="model", weight="weight", per_sample=per_sample,
                   zero_division="warn")  # fmt: skip
        expected = rm.evaluate(table, keys, by="model", weight="weight", per_sample=per_sample)
    # Every engine warns the same about the same ill-defined keys: one warning per call.
    cases = [w.message.cases for w in caught if w.category is rm.UndefinedMetricWarning]
    assert len(cases) == 2
    assert cases[0] == cases[1]
    assert ours.columns == expected.columns
    assert ours.height == expected.height
    assert_frame_equal(ours, expected, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)
    if not per_sample:  # the group without positives has no lwlrap
        assert np.isnan(ours.filter(model="m7")["lwlrap"][0])


def test_top_k_tables_and_propensities_on_every_engine(sql_engine):
    """The top-k rows (unscored true labels, n_labels) and the propensity-scored metrics: a
    table's first labels predicted, the others true labels only."""
    table = random_cases()
    predictions = table.filter(pl.col("label") < 3).drop("truth")
    truth = table.filter(pl.col("truth") > 0).select("model", "sample", "label")
    propensities = pl.DataFrame({"label": range(6), "propensity": [0.2, 0.5, 1.0] * 2})
    keys = [
        "lrap", "ranking_loss", "ndcg", "ndcg@2", "coverage_error", "precision@2", "mrr", "map@3",
        "psprecision@2", "psprecision_norm@2", "psndcg@3", "psndcg_norm@3", "hits@2",
        "r_precision", "r_precision@2", "psprecision_ratio@2", "psrecall_ratio@3",
        "psndcg_ratio@2",
    ]  # fmt: skip
    inputs = driver.TopK(truth, 8, propensities)
    ours = run(sql_engine, predictions, keys, by="model", per_sample=True, inputs=inputs)
    expected = rm.evaluate(predictions, keys, by="model", per_sample=True, truth_table=truth,
                           n_labels=8, propensities=propensities)  # fmt: skip
    assert_frame_equal(ours, expected, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)


def test_top_k_label_keys_on_every_engine(sql_engine):
    """label_coverage@K, macro_precision@K and macro_recall@K (rankmetrics_topk_label_counts):
    tied scores, weights, unscored true labels and a group without any positive."""
    table = random_cases()
    predictions = table.filter(pl.col("label") < 4).drop("truth")
    truth = table.filter(pl.col("truth") > 0).select("model", "sample", "label")
    keys = ["label_coverage@1", "label_coverage@3", "macro_precision@2", "macro_recall@2"]
    inputs = driver.TopK(truth, 8, None)
    ours = run(sql_engine, predictions, keys, by="model", weight="weight", inputs=inputs)
    expected = rm.evaluate(predictions, keys, by="model", weight="weight", truth_table=truth,
                           n_labels=8)  # fmt: skip
    assert_frame_equal(ours, expected, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)


@ILL_DEFINED
@pytest.mark.parametrize("zero_division", [0.0, float("nan")])
def test_the_label_summary_views_give_the_averages_over_labels(sql_engine, zero_division):
    """rankmetrics_label_summary and rankmetrics_label_scores, for SQL alone: the Python side
    reduces the label tables itself (they add up over buckets), so these views are checked
    here, on every engine, against evaluate() and label_report()."""
    table = random_cases()
    cols = Columns.of(by="model", weight="weight")
    context = parameters(threshold=0.25, beta=2.0, zero_division=zero_division)
    keys = [k for k in CLASSIFICATION_METRICS if parse_keys(k)[0].metric.reduction != "samples"]
    views = ("rankmetrics_label_summary", "rankmetrics_label_scores")
    settings = Settings(keys=tuple(parse_keys(keys)), context=context, views=views)
    with sql_engine.open(table, cols, settings) as session:
        summary = session._frame("SELECT * FROM rankmetrics_label_summary")
        scores = session._frame("SELECT * FROM rankmetrics_label_scores")
    summary, scores = sql_results.ungroup(summary, cols), sql_results.ungroup(scores, cols)
    options = {"threshold": 0.25, "zero_division": zero_division}
    expected = rm.evaluate(table, keys, by="model", weight="weight", beta=2.0, **options)
    ours = summary.select(expected.columns).sort("model").fill_null(float("nan"))
    assert_frame_equal(ours, expected, check_exact=False, rel_tol=1e-9, abs_tol=1e-12,
                       check_dtypes=False)  # fmt: skip
    report = rm.label_report(table, by="model", weight="weight", **options)
    columns = [c for c in report.columns if c != "lwlrap_weight"]
    ours = (
        scores.select(columns)
        .sort("model", "label")
        .with_columns(pl.col("roc_auc", "precision", "recall", "f1").fill_null(float("nan")))
    )
    assert_frame_equal(ours, report.select(columns), check_exact=False, rel_tol=1e-9,
                       abs_tol=1e-12, check_dtypes=False)  # fmt: skip


def test_the_summary_views_count_what_would_have_warned(sql_engine):
    """The exported SQL cannot warn: its summary views count the labels and samples whose
    scores are ill-defined, equal on every engine to the cases of evaluate()'s warning."""
    table = random_cases()
    cols = Columns.of(by="model", weight="weight")
    scores = ("precision", "recall", "fbeta", "jaccard")
    keys = [f"{s}_{a}" for s in scores for a in ("samples", "macro")]
    keys += ["average_precision_macro", "roc_auc_macro"]
    context = parameters(threshold=0.25, zero_division="warn")
    views = ("rankmetrics_label_summary", "rankmetrics_set_summary")
    settings = Settings(keys=tuple(parse_keys(keys)), context=context, views=views)
    with sql_engine.open(table, cols, settings) as session:
        labels = session._frame("SELECT * FROM rankmetrics_label_summary")
        samples = session._frame("SELECT * FROM rankmetrics_set_summary")
    with pytest.warns(rm.UndefinedMetricWarning) as caught:
        rm.evaluate(table, keys, by="model", weight="weight", threshold=0.25)
    cases = {case.key: case.count for case in caught[0].message.cases}
    assert cases  # the random cases have ill-defined labels and samples
    for name in (*scores, "average_precision", "roc_auc"):
        column = f"ill_defined_{name}"
        assert labels[column].sum() == cases.get(f"{name}_macro", 0), column
        if name in scores:
            assert samples[column].sum() == cases.get(f"{name}_samples", 0), column


@ILL_DEFINED
def test_every_engine_gives_the_polars_report(sql_engine):
    table = random_cases()
    cols = Columns.of(by="model", weight="weight")
    ours = labels.build(Run(sql_engine), table, cols, parameters(threshold=0.25))
    expected = rm.label_report(table, by="model", weight="weight", threshold=0.25)
    assert_frame_equal(ours, expected, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)
    assert ours.filter(model="m7")["roc_auc"].is_nan().all()  # no positives: undefined


@ILL_DEFINED
@pytest.mark.parametrize(
    "options",
    [
        {"pred": "decision", "zero_division": float("nan"), "beta": 2.0},
        {"threshold": 0.25, "zero_division": 1.0, "beta": 0.5},
    ],
    ids=["pred-column", "threshold"],
)
def test_threshold_parameters(sql_engine, options):
    table = random_cases(4)
    keys = list(CLASSIFICATION_METRICS)
    ours = run(sql_engine, table, keys, by="model", weight="weight", **options)
    expected = rm.evaluate(table, keys, by="model", weight="weight", **options)
    assert_frame_equal(ours, expected, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)


def test_dcg_log_base(sql_engine):
    table = random_cases(3)
    ours = run(sql_engine, table, ["dcg", "dcg@2"], by="model", log_base=10)
    expected = rm.evaluate(table, ["dcg", "dcg@2"], by="model", log_base=10)
    assert_frame_equal(ours, expected, check_exact=False, rel_tol=1e-9)


BAD = [
    ("NaN score", {"score": float("nan")}, r"'score' \(score\) has a NaN \(at model='m0', sample="),
    ("null score", {"score": None}, r"'score' \(score\) has a null \(at model='m0', sample="),
    ("null truth", {"truth": None}, r"'truth' \(truth\) has a null \(at model='m0', sample="),
    ("null sample", {"sample": None}, r"column 'sample' has a null"),
    ("truth 2", {"truth": 2.0}, r"'truth' \(truth\) must be 0 or 1 for lrap"),
    ("negative weight", {"weight": -1.0}, r"'weight' \(weight\) has a negative"),
    ("infinite truth", {"truth": float("inf")}, r"'truth' \(truth\) has a NaN or infinite value"),
    ("NaN truth", {"truth": float("nan")}, r"'truth' \(truth\) has a NaN or infinite value"),
    ("NaN weight", {"weight": float("nan")}, r"'weight' \(weight\) has a negative, NaN or"),
]


@pytest.mark.parametrize("change, message", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_rows_give_the_same_errors(sql_engine, change, message):
    table = random_cases(2)
    first = (pl.col("model") == "m0") & (pl.col("sample") == "s1") & (pl.col("label") == 0)
    table = table.with_columns(
        pl.when(first).then(pl.lit(v)).otherwise(pl.col(c)).alias(c) for c, v in change.items()
    )
    with pytest.raises(ValueError, match=message):
        rm.evaluate(table, ["lrap"], by="model", weight="weight")
    nan = [c for c, v in change.items() if isinstance(v, float) and np.isnan(v)]
    if sql_engine.name == "sqlite" and nan:
        # SQLite stores NaN as NULL: its null check answers
        message = rf"'{nan[0]}' \({nan[0]}\) has a null \(at model='m0', sample="
    with pytest.raises(ValueError, match=message):
        run(sql_engine, table, ["lrap"], by="model", weight="weight")


def test_bad_samples_give_the_same_errors(sql_engine):
    table = random_cases(2)
    repeated = table.with_columns(
        label=pl.when((pl.col("sample") == "s1") & (pl.col("label") == 1))
        .then(0)
        .otherwise("label")
    )
    with pytest.raises(
        ValueError, match=r"repeats label 0 within one sample \(model='m0', sample='s1'\)"
    ):
        run(sql_engine, repeated, ["lrap"], by="model")
    short = table.filter(~((pl.col("sample") == "s1") & (pl.col("label") == 1)))
    with pytest.raises(ValueError, match=r"different label sets: model='m\d', sample='s1' has"):
        run(sql_engine, short, ["lrap"], by="model")
    varying = table.with_columns(weight=pl.col("weight") + pl.col("label"))
    with pytest.raises(ValueError, match=r"'weight' \(weight\) is not constant within a sample"):
        run(sql_engine, varying, ["lrap"], by="model", weight="weight")
    with pytest.raises(ValueError, match=r"sample weights of model='m0' sum to 0"):
        run(
            sql_engine,
            table.with_columns(weight=pl.lit(0.0)),
            ["lrap"],
            by="model",
            weight="weight",
        )


def test_several_by_columns_on_the_struct_engines(sql_engine):
    if sql_engine.name in ("sqlite", "datafusion"):
        with pytest.raises(ValueError, match="several by columns need a struct"):
            run(
                sql_engine,
                random_cases(2).with_columns(day=pl.lit(1)),
                ["lrap"],
                by=["model", "day"],
            )
        return
    table = random_cases(3).with_columns(day=(pl.col("sample") == "s0").cast(pl.Int64))
    table = table.with_columns(day=pl.col("day").max().over("model", "sample"))
    ours = run(sql_engine, table, ["lrap", "ndcg@2"], by=["model", "day"])
    expected = rm.evaluate(table, ["lrap", "ndcg@2"], by=["model", "day"])
    assert_frame_equal(ours, expected, check_exact=False, rel_tol=1e-9)


@ILL_DEFINED
def test_by_columns_named_like_the_librarys_own_columns(sql_engine):
    names = {"model": "tp", "day": "grp"}
    table = random_cases(3).with_columns(day=pl.lit(1, pl.Int64))
    if sql_engine.name in ("sqlite", "datafusion"):
        names, table = {"model": "tp"}, table.drop("day")
    keys = ["lrap", "ndcg@2", "f1_macro", "roc_auc_micro"]
    ours = run(sql_engine, table.rename(names), keys, by=list(names.values()))
    expected = rm.evaluate(table, keys, by=list(names)).rename(names)
    assert_frame_equal(ours, expected, check_exact=False, rel_tol=1e-9)


def test_the_cli_prints_every_dialect():
    for dialect in DIALECTS:
        done = subprocess.run(
            [sys.executable, "-m", "polars_rankmetrics.cli", "sql", "--dialect", dialect,
             "--input", "analytics.predictions", "--by", "model", "--k", "5"],
            capture_output=True, text=True,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "rankmetrics_summary" in done.stdout and "rankmetrics_input" in done.stdout
    assert set(VERIFIED) == set(ENGINE_NAMES)


def test_spark_views_are_temporary_and_sqlite_replaces_by_dropping():
    spark = view_statements("spark")
    assert all("TEMPORARY VIEW" in s for s in spark if "VIEW" in s)
    sqlite = view_statements("sqlite")
    assert not any("OR REPLACE" in s for s in sqlite)
    dropped = [s.removeprefix("DROP VIEW IF EXISTS ") for s in sqlite
               if s.startswith("DROP VIEW IF EXISTS")]  # fmt: skip
    # Every view of sql/ but the TREC keys', which read parameters a user does not define.
    trec = [v for v in rm_views() if v.startswith("rankmetrics_trec_")]
    assert trec and dropped == [v for v in rm_views() if v not in trec]


def rm_views():
    from polars_rankmetrics.engines.sql.export import view_names

    return view_names()


def test_the_documented_postgres_example_runs(postgres_dsn, tmp_path):
    import os
    import re
    from pathlib import Path

    import psycopg

    root = Path(__file__).parent.parent
    engines = (root / "docs" / "engines.md").read_text()
    script = next(b for b in re.findall(r"```bash\n(.*?)```", engines, re.S) if "psql" in b)
    example = pl.read_parquet(root / "data" / "example.parquet")
    with psycopg.connect(postgres_dsn, autocommit=True) as con:
        con.execute("DROP SCHEMA IF EXISTS analytics CASCADE")
        con.execute("CREATE SCHEMA analytics")
        con.execute(
            "CREATE TABLE analytics.predictions (model TEXT, sample TEXT, label TEXT, "
            "score DOUBLE PRECISION, truth BOOLEAN, weight DOUBLE PRECISION)"
        )
        with con.cursor().copy("COPY analytics.predictions FROM STDIN") as copy:
            for row in example.rows():
                copy.write_row(row)
    settings = dict(part.split("=") for part in postgres_dsn.split())
    path = f"{Path(sys.executable).parent}:{os.environ['PATH']}"  # the rankmetrics command
    env = os.environ | {
        "PGHOST": settings["host"], "PGPORT": settings["port"], "PGUSER": settings["user"],
        "PGDATABASE": settings["dbname"], "PATH": path,
    }  # fmt: skip
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env,
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    expected = rm.evaluate(example, ["lrap", "ndcg@10"], by="model")
    for model, lrap, ndcg in expected.rows():
        row = next(line for line in done.stdout.splitlines() if model in line and "| 10" in line)
        assert f"{lrap:.12f}"[:12] in row and f"{ndcg:.12f}"[:12] in row, row


def test_the_cli_refuses_a_memory_limit_on_spark(spark_ready, tmp_path, capsys):
    """In this process, its Spark session already running (tests/test_newcomer.py runs the
    command on Spark in a process of its own)."""
    path = tmp_path / "cases.parquet"
    random_cases(3).write_parquet(path)
    argv = ["evaluate", str(path), "--engine", "spark", "--by", "model", "--memory-limit", "1GB"]
    assert cli.main(argv) == 1
    assert capsys.readouterr().err == (
        "rankmetrics: error: memory_limit does not apply to the spark engine, which manages its "
        "own memory\n"
    )


def test_the_positive_ranks_by_pairs_are_the_windows_ranks(sql_engine):
    """rankmetrics_positive_ranks_by_pairs (a join and counts, no window) gives the rows of
    rankmetrics_positive_ranks on every engine, and rankmetrics_positive_sums_by_pairs (pairs
    counted per sample) the sums of rankmetrics_positive_sums that ranking loss and roc_auc read:
    ties, groups, a group without positives, and the unscored true labels of a top-k table."""
    from dataclasses import replace

    from polars_rankmetrics.engines.topk import joined

    keys = tuple(parse_keys(["lrap"]))
    views = ("rankmetrics_positive_ranks", "rankmetrics_positive_ranks_by_pairs")
    sums = ("rankmetrics_positive_sums", "rankmetrics_positive_sums_by_pairs")
    columns = "grp, sample, label, rank, block_start, positive_rank"
    dense = Columns.of(by="model", weight="weight")
    top_k = replace(dense, top_k=True)
    predictions = random_cases().filter(pl.col("label") < 3).drop("truth", "decision")
    truth = random_cases().filter(pl.col("truth") > 0).select("model", "sample", "label")
    tables = [
        (random_cases(), dense, None),
        (joined(predictions, truth, top_k).collect(), top_k, 8),
    ]  # fmt: skip
    for table, cols, n_labels in tables:
        context = replace(parameters(), n_labels=n_labels, top_k=cols.top_k)
        settings = Settings(keys=keys, context=context, views=(*views, *sums))
        with sql_engine.open(table, cols, settings) as session:
            ranks = [
                session._frame(f"SELECT {columns} FROM {view}").sort("grp", "sample", "label")
                for view in views
            ]
            summed = [
                session._frame(f"SELECT grp, sample, wrong_pairs, rank_span_sum FROM {view}").sort(
                    "grp", "sample"
                )
                for view in sums
            ]
        assert ranks[0].height > 0
        assert_frame_equal(ranks[1], ranks[0], check_dtypes=False)
        assert summed[0].height > 0
        assert_frame_equal(summed[1], summed[0], check_dtypes=False)


def paired_reference(per_sample: pl.DataFrame, metrics: list[str]) -> pl.DataFrame:
    """rankmetrics_paired by hand: every ordered pair of models on their shared samples."""
    lower = {"coverage_error", "ranking_loss"}
    rows = []
    models = sorted(per_sample["model"].unique().to_list())
    for a in models:
        for b in models:
            if a == b:
                continue
            pair = per_sample.filter(model=a).join(
                per_sample.filter(model=b), on="sample", suffix="_b"
            )
            for metric in metrics:
                d = (pair[metric] - pair[f"{metric}_b"]).drop_nulls().drop_nans().to_numpy()
                if len(d) == 0:
                    continue
                better = -d if metric in lower else d
                rows.append({
                    "grp": a, "baseline_grp": b, "metric": metric, "n_shared": len(d),
                    "mean_diff": d.mean(), "var_diff": d.var(ddof=1) if len(d) > 1 else None,
                    "wins": int((better > 1e-12).sum()), "ties": int((abs(better) <= 1e-12).sum()),
                    "losses": int((better < -1e-12).sum()),
                })  # fmt: skip
    return pl.DataFrame(rows).sort("grp", "baseline_grp", "metric")


def test_the_paired_view_gives_the_paired_ingredients(sql_engine):
    """rankmetrics_paired (sql/17_paired.sql) on every engine: per ordered pair of models and
    metric, the shared samples, the mean and variance of the differences, wins/ties/losses."""
    from dataclasses import replace

    table = random_cases(4, seed=3)
    # Three models over the same samples and labels, one with a sample the others lack.
    base = table.filter(model="m0")
    table = pl.concat([
        base,
        base.with_columns(model=pl.lit("m1"), score=(pl.col("score") * 0.5).round(2)),
        base.with_columns(model=pl.lit("m2"), score=-pl.col("score")),
        base.filter(sample="s0").with_columns(model=pl.lit("m2"), sample=pl.lit("extra")),
    ])  # fmt: skip
    metrics = ["coverage_error", "lrap", "ranking_loss", "lwlrap", "dcg", "ndcg"]
    per_sample = rm.evaluate(table, metrics, by="model", per_sample=True)
    expected = paired_reference(per_sample, metrics)
    cols = Columns.of(by="model", weight="weight")
    settings = Settings(keys=tuple(parse_keys(["lrap"])), context=replace(parameters()),
                        views=("rankmetrics_paired",))  # fmt: skip
    with sql_engine.open(table, cols, settings) as session:
        got = session._frame(
            "SELECT grp, baseline_grp, metric, n_shared, mean_diff, var_diff, wins, ties, losses "
            "FROM rankmetrics_paired WHERE k IS NULL"
        )
    got = got.sort("grp", "baseline_grp", "metric")
    assert got.height == expected.height == 36
    assert_frame_equal(got, expected, check_dtypes=False, check_exact=False, rel_tol=1e-9)
