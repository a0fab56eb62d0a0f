"""The examples of the README and of docs/ run as written and give the numbers they promise."""

import ast
import os
import re
import subprocess
from pathlib import Path

import napkinxc.metrics as nx
import numpy as np
import polars as pl
import pytest
import scipy.sparse as sp
from polars.testing import assert_frame_equal
from reference import dense, pytrec_means
from sklearn import metrics as skm

import polars_rankmetrics as rm

ROOT = Path(__file__).parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README = DOCUMENTS[0].read_text()


def blocks(language: str, text: str = README) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def test_every_code_block_is_python_bash_or_text():
    # A block in another language would run nowhere; `text` marks output, trees and commands
    # that need a server (tests/test_sql_engines.py runs those statements on real engines).
    for document in DOCUMENTS:
        for language in re.findall(r"^```(\w*)$", document.read_text(), flags=re.M)[::2]:
            assert language in ("python", "bash", "text"), (document.name, language)


def test_readme_starts_with_the_two_commands():
    first = blocks("bash")[0].strip().splitlines()
    assert first == [
        "pip install . && rankmetrics evaluate data/example.parquet --by model",
        'pip install ".[test]" && pytest',
    ]


def run_blocks(text: str) -> list[tuple[str, object]]:
    """Run every Python block of a document in order, in one namespace; return each top-level
    expression statement's source and value (LazyFrames collected)."""
    namespace: dict = {}
    values = []
    for code in blocks("python", text):
        for statement in ast.parse(code).body:
            source = ast.get_source_segment(code, statement)
            if isinstance(statement, ast.Expr):
                value = eval(
                    compile(ast.Expression(statement.value), "README.md", "eval"), namespace
                )
                if isinstance(value, pl.LazyFrame):
                    value = value.collect()
                values.append((" ".join(source.split()), value))
            else:
                exec(compile(ast.Module([statement], []), "README.md", "exec"), namespace)
    return values


def _sklearn_by_model(metric, df, *, weighted=False, **options):
    """scikit-learn's value per model (sorted), from the dense matrices of the example."""
    values = []
    for model in ("baseline", "candidate"):
        part = df.filter(model=model)
        _, y_true, y_score = dense(part)
        weights = part.group_by("sample").agg(pl.col("weight").first()).sort("sample")["weight"]
        weight = weights.to_numpy() if weighted else None
        values.append(metric(y_true, y_score, sample_weight=weight, **options))
    return values


def _xmc_example():
    """docs/xmc.md's matrices."""
    y_score = sp.csr_matrix([[0.9, 0.0, 0.4, 0.0], [0.0, 0.7, 0.2, 0.1]])
    return y_score, sp.csr_matrix([[0, 0, 1, 0], [0, 1, 0, 1]])


def _finalized_keys(value: pl.DataFrame) -> list[str]:
    return [c for c in value.columns if c != "model"]


def _check(source: str, value, df: pl.DataFrame) -> None:
    close = pytest.approx
    if source.startswith('rm.evaluate(df, ["lrap", "ranking_loss", "ndcg@5"]'):
        assert value["lrap"].to_list() == close(
            _sklearn_by_model(skm.label_ranking_average_precision_score, df, weighted=True)
        )
        assert value["ranking_loss"].to_list() == close(
            _sklearn_by_model(skm.label_ranking_loss, df, weighted=True)
        )
        assert value["ndcg@5"].to_list() == close(
            _sklearn_by_model(skm.ndcg_score, df, weighted=True, k=5)
        )
    elif source.startswith('rm.evaluate(df, ["f1_samples", "f1_macro", "hamming_loss", "lrap"]'):
        for i, model in enumerate(("baseline", "candidate")):
            _, y_true, y_score = dense(df.filter(model=model))
            y_true, y_pred = y_true.astype(int), (y_score >= 0.6).astype(int)
            f1 = skm.f1_score(y_true, y_pred, average="samples", zero_division=0)
            macro = skm.f1_score(y_true, y_pred, average="macro", zero_division=0)
            assert value["f1_samples"][i] == close(f1)
            assert value["f1_macro"][i] == close(macro)
            assert value["hamming_loss"][i] == close(skm.hamming_loss(y_true, y_pred))
    elif source.startswith('df.filter(model="candidate").pipe(rm.label_ranking_loss)'):
        assert value["ranking_loss"][0] == close(_sklearn_by_model(skm.label_ranking_loss, df)[1])
    elif source.startswith("pl.scan_parquet"):
        assert value["ndcg@5"].to_list() == close(_sklearn_by_model(skm.ndcg_score, df, k=5))
    elif source.startswith('rm.evaluate(df, ["lrap"], by="model", per_sample=True)'):
        assert value.height == 5 and value["lrap"].is_sorted()
        _, y_true, y_score = dense(df.filter(model=value["model"][0]))
        worst = min(
            skm.label_ranking_average_precision_score(y_true[i : i + 1], y_score[i : i + 1])
            for i in range(len(y_true))
        )
        assert value["lrap"][0] == close(worst)
    elif source.startswith('report.summary.select("model", "lrap"'):
        expected = _sklearn_by_model(skm.label_ranking_average_precision_score, df, weighted=True)
        assert value["lrap"].to_list() == close(expected)
        assert (value["lrap_lo"] < value["lrap"]).all() and (value["lrap"] < value["lrap_hi"]).all()
    elif source.startswith("rm.label_report"):
        assert value.height == 80
        for model in ("baseline", "candidate"):
            part = df.filter(model=model).sort("sample", "label")
            y_true = part["truth"].to_numpy().reshape(-1, 40).astype(int)
            y_score = part["score"].to_numpy().reshape(-1, 40)
            w = part["weight"].to_numpy().reshape(-1, 40)[:, 0]
            rows = value.filter(model=model)
            y_pred = y_score >= 0.6
            f1 = skm.f1_score(y_true, y_pred, average=None, sample_weight=w, zero_division=0)
            auc = skm.roc_auc_score(y_true, y_score, average=None, sample_weight=w)
            assert rows["f1"].to_list() == close(list(f1))
            assert rows["roc_auc"].to_list() == close(list(auc), nan_ok=True)
    elif source.startswith("rm.lwlrap_per_class"):
        assert value.height == 80
        overall = (
            value.group_by("model").agg((pl.col("lwlrap") * pl.col("weight")).sum()).sort("model")
        )
        assert overall["lwlrap"].to_list() == close(
            rm.evaluate(df, ["lwlrap"], by="model")["lwlrap"].to_list()
        )
    elif source.startswith('rm.evaluate("data/*.parquet"'):
        expected = _sklearn_by_model(skm.coverage_error, df)
        assert value["coverage_error"].to_list() == close(expected)
        assert value.columns == ["model", *rm.DEFAULT_METRICS]
    elif source.startswith("(rm.rank_table"):
        assert value.sort("model")["lrap"].to_list() == close(
            _sklearn_by_model(skm.label_ranking_average_precision_score, df)
        )
    elif source.startswith("label_ranking_average_precision_score("):
        expected = skm.label_ranking_average_precision_score(
            [[1, 0, 0], [0, 0, 1]], [[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]]
        )
        assert isinstance(value, float) and value == close(expected)
    elif source.startswith("rm.from_dense"):
        assert value.sort("sample", "label")["truth"].to_list() == [1, 0, 0, 0, 0, 1]
    elif source.startswith("rm.from_lists"):
        positives = value.filter(pl.col("truth") > 0).sort("sample", "label")
        assert positives.select("sample", "label").rows() == [("q1", "a"), ("q2", "b"), ("q2", "c")]
    elif source.startswith('rm.evaluate(predictions, ["lrap", "ndcg@10"]'):
        assert value["lrap"].to_list() == close(
            _sklearn_by_model(skm.label_ranking_average_precision_score, df)
        )
        assert value["ndcg@10"].to_list() == close(_sklearn_by_model(skm.ndcg_score, df, k=10))
    elif source.startswith('rm.evaluate(run, ["precision@1"'):
        # By hand: q1's true c shares positions 2-3 with b, q2's and q3's true labels are
        # unscored; ndcg and lrap from scikit-learn on the 1000-label matrix, unscored cells low.
        y_true, y_score = np.zeros((3, 1000)), np.full((3, 1000), -1.0)
        y_true[0, 2] = y_true[1, 4] = y_true[2, 1] = 1  # labels a, b, c, d, e are columns 0-4
        y_score[0, :3] = [0.9, 0.7, 0.7]
        y_score[1, [3, 0]] = [0.8, 0.1]
        assert value.row(0, named=True) == close({
            "precision@1": 0.0, "recall@2": 0.5 / 3, "mrr": (1 / 2 + 1 / 3) / 2 / 3,
            "map@2": 0.5 * 0.5 / 3, "ndcg@2": skm.ndcg_score(y_true, y_score, k=2),
            "lrap": skm.label_ranking_average_precision_score(y_true, y_score),
        })  # fmt: skip
    elif source.startswith('rm.evaluate("data/*.parquet", by="model", engine="duckdb"'):
        expected = rm.evaluate("data/*.parquet", by="model")
        assert value.select(rm.DEFAULT_METRICS).to_dicts() == [
            pytest.approx(row) for row in expected.select(rm.DEFAULT_METRICS).to_dicts()
        ]
    elif source.startswith('rm.compare(df, ["lrap", "ndcg@5"], by="model"'):
        assert value["metric"].to_list() == ["lrap", "ndcg@5"]
        assert (value["p_adjusted"] < 0.01).all() and (value["delta"] > 0).all()
    elif source.startswith('rm.leaderboard(df, ["lrap", "ndcg@5"], by="model"'):
        # The candidate is far better on both keys: rank 1, a letter of its own.
        assert value.select("model", "metric", "rank").rows() == [
            ("candidate", "lrap", 1), ("baseline", "lrap", 2),
            ("candidate", "ndcg@5", 1), ("baseline", "ndcg@5", 2),
        ]  # fmt: skip
        assert value["group"].to_list() == ["a", "b", "a", "b"]
    elif source.startswith('rm.evaluate(df, ["lrap", "ndcg@10"], by="model", ci=0.95'):
        means = rm.evaluate(df, ["lrap", "ndcg@10"], by="model")
        for key in ("lrap", "ndcg@10"):
            assert value[key].to_list() == pytest.approx(means[key].to_list(), rel=1e-12)
            assert (value[f"{key}_lo"] < value[key]).all() and (
                value[key] < value[f"{key}_hi"]
            ).all()
    elif source.startswith('rm.compare(df, ["lrap", "ndcg@10", "coverage_error"]'):
        means = rm.evaluate(df, ["lrap", "ndcg@10", "coverage_error"], by="model")
        for row in value.iter_rows(named=True):
            key = row["metric"]
            assert row["delta"] == pytest.approx(means[key][1] - means[key][0])
            assert row["delta_lo"] < row["delta"] < row["delta_hi"] and row["p_adjusted"] < 0.01
    elif source.startswith('rm.finalize(states, by="model")'):
        expected = rm.evaluate(df, _finalized_keys(value), by="model")
        assert_frame_equal(value, expected, check_exact=False, rel_tol=1e-12)
    elif source.startswith('rm.finalize(folder / "*.parquet", by="model", ci=0.95)'):
        keys = [c for c in value.columns if c != "model" and not c.endswith(("_lo", "_hi"))]
        expected = rm.evaluate(df, keys, by="model", ci=0.95, bootstrap="poisson")
        assert_frame_equal(value, expected, check_exact=False, rel_tol=1e-12)
    elif source.startswith('rm.finalize(folder / "*.parquet", by="model")'):
        expected = rm.evaluate(df, _finalized_keys(value), by="model")
        assert_frame_equal(value, expected, check_exact=False, rel_tol=1e-12)
    elif source.startswith('rm.finalize(by_day.filter(pl.col("day") >= 4)'):
        last_days = df.filter(pl.col("sample").str.tail(1).cast(pl.Int32) % 7 >= 4)
        expected = rm.evaluate(last_days, _finalized_keys(value), by="model")
        assert_frame_equal(value, expected, check_exact=False, rel_tol=1e-12)
    elif source.startswith('rm.compare(folder / "*.parquet"'):
        expected = rm.compare(df, ["lrap", "ndcg@10"], baseline="baseline", bootstrap="poisson")
        counts = ["effect_size", "wins", "ties", "losses"]  # per-sample: null from states
        assert_frame_equal(value.drop(counts), expected.drop(counts), check_exact=False,
                           rel_tol=1e-12)  # fmt: skip
    elif source.startswith('report.summary.select("run", "AP"'):
        # trec_eval's measures of the shipped runs, as pytrec_eval (trec_eval's C code) gives them.
        asked = ["map", "recip_rank", "ndcg_cut.5", "P.5", "recall.5"]
        oracle = pytrec_means(["map", "recip_rank", "ndcg_cut_5", "P_5", "recall_5"], asked)
        assert value["run"].to_list() == list(oracle)
        for row, means in zip(value.drop("run").rows(), oracle.values(), strict=True):
            assert list(row) == close(means)
    elif source.startswith('report.summary.select("run", "map", "ndcg_cut_10"'):
        # docs/report.md, metrics=: trec_eval's names as pytrec_eval gives them, the library's
        # keys as evaluate gives them in the same call (tests/test_mixed_names.py checks it).
        oracle = pytrec_means(["map", "ndcg_cut_10"], ["map", "ndcg_cut.10"])
        assert value["run"].to_list() == list(oracle)
        for row, means in zip(value.select("map", "ndcg_cut_10").rows(), oracle.values(),
                              strict=True):  # fmt: skip
            assert list(row) == close(means)
        run = rm.read_trec_run("data/trec_runs.txt")
        qrels = rm.read_trec_qrels("data/trec_qrels.txt")
        keys = ["map", "ndcg_cut_10", "precision@5", "mrr"]
        evaluated = rm.evaluate(run, keys, truth_table=qrels, by="run").sort("run")
        assert_frame_equal(value, evaluated, check_exact=False, rel_tol=1e-12)
    elif source.startswith("stats.tukey_hsd(*ap)"):
        assert value > 0.2  # docs/many_systems.md: one-way Tukey misses run0 vs run5
    elif source.startswith('pairs.filter(run="run0")'):
        # The two-way test finds it; each later run is further from run0.
        assert value["run_other"].to_list() == ["run1", "run2", "run3", "run4", "run5"]
        assert value["p_value"][-1] < 1e-6 and (value["delta"] < 0).all()
        assert value["p_value"].to_list() == sorted(value["p_value"].to_list(), reverse=True)
    elif source.startswith('board.filter(metric="AP")'):
        assert value["rank"].to_list() == list(range(1, 7))
        assert value["value"].to_list() == sorted(value["value"].to_list(), reverse=True)
        assert value["group"][0].startswith("a") and not set(value["group"][0]) & set(
            value["group"][-1]
        )
    elif source.startswith('rm.evaluate(predictions, ["precision@1", "recall@2"]'):
        y_score, y_true = _xmc_example()
        assert value.row(0) == close((
            nx.precision_at_k(y_true, y_score, k=1)[0], nx.recall_at_k(y_true, y_score, k=2)[1]
        ))  # fmt: skip
    elif source.startswith("Metrics(y_true, inv_psp).eval(y_score, K=2)"):
        y_score, y_true = _xmc_example()
        train = sp.csr_matrix([[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [1, 0, 0, 0]])
        inv_ps = nx.Jain_et_al_inverse_propensity(train, A=0.55, B=1.5)
        expected = [
            nx.precision_at_k(y_true, y_score, k=2), nx.ndcg_at_k(y_true, y_score, k=2),
            nx.psprecision_at_k(y_true, y_score, inv_ps=inv_ps, k=2),
            nx.psndcg_at_k(y_true, y_score, inv_ps=inv_ps, k=2),
        ]  # fmt: skip
        for got, oracle in zip(value, expected, strict=True):
            assert list(got) == close(list(oracle))
    elif source.startswith("con.execute("):
        # A statement of the SQL state's example, whose window test_sql_state.py checks against
        # evaluate's Poisson intervals.
        assert value is not None
    elif source == "with_provider, without":
        # docs/ir_measures.md: ir_measures' values with the provider first in its pipeline and
        # without it (pytrec_eval's, judged's, msmarco's)
        with_provider, without = value
        assert with_provider.keys() == without.keys() and len(without) == 6
        assert with_provider == close(without, abs=1e-12)
    elif source in ("rm_ir.register()", "rm_ir.unregister()"):
        assert value is None  # changes ir_measures' pipeline (tests/test_ir_measures.py)
    elif source.startswith(("register_views(", "con.sql(")):
        assert value is None  # defines views; .show() prints (tests/test_duckdb.py checks both)
    else:
        raise AssertionError(f"example without a check in this test: {source}")


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_python_examples_give_the_documented_numbers(document, monkeypatch):
    monkeypatch.chdir(ROOT)
    df = pl.read_parquet(ROOT / "data" / "example.parquet")
    text = document.read_text()
    values = run_blocks(text)
    assert len(values) >= min(1, len(blocks("python", text)))
    for source, value in values:
        _check(source, value, df)


COMMAND_BLOCKS = [
    (document.name, block)
    for document in DOCUMENTS
    for block in blocks("bash", document.read_text())
    # The README's two commands run in CI itself; the psql example needs a server
    # (tests/test_sql_engines.py runs it against one).
    if not block.startswith("pip install") and "psql" not in block
]


@pytest.mark.parametrize(
    "block", COMMAND_BLOCKS, ids=[f"{d}-{i}" for i, (d, _) in enumerate(COMMAND_BLOCKS)]
)
def test_command_examples_run(block, tmp_path):
    os.symlink(ROOT / "data", tmp_path / "data")
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block[1]], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    pages = re.findall(r"--html (\S+)", block[1])
    shown = done.stdout + "".join((tmp_path / page).read_text(encoding="utf-8") for page in pages)
    assert "baseline" in shown and "candidate" in shown


def test_sql_alone_example_runs_in_the_duckdb_command_line(tmp_path):
    script = next(b for b in blocks("bash") if "rankmetrics sql" in b)
    os.symlink(ROOT / "data", tmp_path / "data")
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "candidate" in done.stdout and "baseline" in done.stdout and "ndcg" in done.stdout
    assert "roc_auc_micro" in done.stdout
