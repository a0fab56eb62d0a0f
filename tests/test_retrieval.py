"""The retrieval metrics against their definitions: brute force over the orders of tied blocks
(dense and top-k tables, weights, by groups), ranx and pytrec_eval on untied runs, and the
propensity model of Jain et al. written out from the paper."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import polars as pl
import pytest
from conftest import ENGINES
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from reference import expected_over_orders

import polars_rankmetrics as rm

TOP_K_ENGINES = [replace(engine, bucket_rows=engine.bucket_rows and 7) for engine in ENGINES]
KEYS = [
    ("precision", 1), ("precision", 3), ("recall", 2), ("hit_rate", 1), ("hit_rate", 2),
    ("mrr", None), ("mrr", 2), ("map", None), ("map", 2), ("r_precision", None),
    ("r_precision", 2), ("hits", 3), ("psprecision_ratio", 2), ("psrecall_ratio", 3),
    ("psndcg_ratio", 2),
    ("psprecision", 2), ("psprecision_norm", 2), ("psndcg", 2), ("psndcg_norm", 3),
]  # fmt: skip


def _key(name: str, k: int | None) -> str:
    return name if k is None else f"{name}@{k}"


@st.composite
def runs(draw, *, top_k: bool, propensity: dict[int, float] | None = None):
    """(predictions, truth table, propensities, [(sample, scored rows, true gains)]): up to 5
    samples of up to 6 labels with heavily tied scores; on a top-k table some labels are not
    predicted (a true one then stays in the truth table)."""
    n_samples, n_labels = draw(st.integers(1, 5)), draw(st.integers(1, 6))
    if propensity is None:
        propensity = {j: draw(st.sampled_from([0.2, 0.5, 1.0])) for j in range(6)}
    pred_rows, true_rows, samples = [], [], []
    for i in range(n_samples):
        scored, true_gains = [], []
        for j in range(n_labels):
            relevant = draw(st.sampled_from([False, False, True]))
            is_scored = not top_k or draw(st.booleans())
            gain = 1 / propensity[j]
            if relevant:
                true_rows.append((f"s{i}", f"l{j}"))
                true_gains.append(gain)
            if is_scored:
                score = draw(st.sampled_from([0.0, 0.5, 0.5, 1.0]))
                pred_rows.append((f"s{i}", f"l{j}", score, relevant))
                scored.append((score, relevant, gain))
        samples.append((f"s{i}", scored, true_gains))
    predictions = pl.DataFrame(
        pred_rows, orient="row",
        schema={"sample": pl.String, "label": pl.String, "score": pl.Float64, "truth": pl.Int64},
    )  # fmt: skip
    truth = pl.DataFrame(true_rows, schema={"sample": pl.String, "label": pl.String}, orient="row")
    propensities = pl.DataFrame(
        {"label": [f"l{j}" for j in propensity], "propensity": list(propensity.values())}
    )
    predictions = predictions.sample(fraction=1.0, shuffle=True, seed=draw(st.integers(0, 2**16)))
    if draw(st.booleans()):  # in rank order, as top-k predictions are written (scanned)
        predictions = predictions.sort("sample", "score", descending=[False, True])
    return predictions, truth, propensities, samples


def _evaluated_samples(samples, top_k):
    """The samples an evaluation sees: on a top-k table only those in either table."""
    return [s for s in samples if not top_k or s[1] or s[2]]


# psndcg ranks every row (the rank table); without it the keys are ranked on the positive rows
# alone (polars_engine.per_sample): both plans are checked.
PLANS = {
    "every row": KEYS,
    "positive rows": [(name, k) for name, k in KEYS if not name.startswith("psndcg")],
}


@pytest.mark.parametrize("engine", ENGINES[::2], ids=str)  # one piece; buckets: the tests below
@pytest.mark.parametrize("top_k", [False, True], ids=["dense", "top-k"])
@pytest.mark.parametrize("plan", list(PLANS))
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_every_metric_is_its_mean_over_the_orders_of_tied_blocks(engine, top_k, plan, data):
    predictions, truth, propensities, samples = data.draw(runs(top_k=top_k))
    if predictions.height + truth.height * top_k == 0:
        with pytest.raises(ValueError, match="the table is empty"):
            engine.evaluate(predictions, "map", truth_table=truth if top_k else None)
        return
    keys = [_key(name, k) for name, k in PLANS[plan]]
    options = {"propensities": propensities, "per_sample": True}
    if top_k:
        result = engine.evaluate(predictions.drop("truth"), keys, truth_table=truth, **options)
    else:
        result = engine.evaluate(predictions, keys, **options)
    expected_samples = _evaluated_samples(samples, top_k)
    assert result["sample"].to_list() == [s for s, _, _ in expected_samples]
    for name, k in PLANS[plan]:
        expected = [expected_over_orders(name, k, scored, gains)
                    for _, scored, gains in expected_samples]  # fmt: skip
        np.testing.assert_allclose(result[_key(name, k)], expected, rtol=1e-12, atol=1e-12,
                                   err_msg=_key(name, k))  # fmt: skip


@pytest.mark.parametrize("engine", TOP_K_ENGINES, ids=str)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_weighted_means_by_group_on_every_path(engine, data):
    """Two models' runs in one table (by=), sample weights, buckets of whole samples: each
    group's value is the weighted mean of its samples' brute-force values."""
    keys = ["precision@2", "map", "mrr@3", "psndcg@2"]
    parts, expected = [], {}
    propensity = {j: data.draw(st.sampled_from([0.2, 0.5, 1.0])) for j in range(6)}
    for model in ("a", "b"):
        predictions, truth, propensities, samples = data.draw(
            runs(top_k=True, propensity=propensity)
        )
        # A sample's weight is read from its predictions: keep the samples that have some.
        samples = [s for s in samples if s[1]]
        assume(samples)
        truth = truth.filter(pl.col("sample").is_in([s for s, _, _ in samples]))
        weights = {s: float(data.draw(st.sampled_from([0.5, 1.0, 2.0]))) for s, _, _ in samples}
        weight = pl.col("sample").replace_strict(weights, default=None, return_dtype=pl.Float64)
        parts.append((predictions.drop("truth").with_columns(pl.lit(model).alias("model"),
                                                             weight.alias("w")),
                      truth.with_columns(pl.lit(model).alias("model"))))  # fmt: skip
        total = sum(weights.values())
        expected[model] = {
            key: sum(
                weights[s] * expected_over_orders(name, k, scored, gains)
                for s, scored, gains in samples
            )
            / total
            for key, (name, k) in zip(
                keys, [("precision", 2), ("map", None), ("mrr", 3), ("psndcg", 2)], strict=True
            )  # fmt: skip
        }
    predictions = pl.concat([p for p, _ in parts])
    truth = pl.concat([t for _, t in parts])
    result = engine.evaluate(
        predictions, keys, truth_table=truth, propensities=propensities, by="model", weight="w"
    )
    for row in result.iter_rows(named=True):
        for key in keys:
            assert row[key] == pytest.approx(expected[row["model"]][key], rel=1e-12, abs=1e-12)


def _untied_run(seed: int, n_queries: int = 40, n_docs: int = 30, depth: int = 12):
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    for q in range(n_queries):
        docs = rng.choice(n_docs, size=depth, replace=False)
        scores = rng.permutation(depth) + rng.random()  # distinct within a query
        run[f"q{q}"] = {f"d{d}": float(s) for d, s in zip(docs, scores, strict=True)}
        relevant = rng.choice(n_docs, size=int(rng.integers(1, 8)), replace=False)
        qrels[f"q{q}"] = {f"d{d}": int(rng.integers(1, 3)) for d in relevant}
    return run, qrels


def _tables(run, qrels):
    predictions = pl.DataFrame(
        [(q, d, s) for q, docs in run.items() for d, s in docs.items()],
        schema=["sample", "label", "score"], orient="row",
    )  # fmt: skip
    truth = pl.DataFrame(
        [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
        schema=["sample", "label", "truth"], orient="row",
    )  # fmt: skip
    return predictions, truth


@pytest.mark.parametrize("seed", [0, 1])
def test_untied_runs_equal_pytrec_eval(seed):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    run, qrels = _untied_run(seed)
    predictions, truth = _tables(run, qrels)
    measures = {
        "P_5": "precision@5", "recall_10": "recall@10", "recip_rank": "mrr", "map": "map",
        "map_cut_5": "map@5", "Rprec": "r_precision", "success_3": "hit_rate@3",
    }  # fmt: skip
    # trec_eval counts a relevance level >= 1 as relevant for these measures.
    binary = truth.with_columns(pl.lit(1).alias("truth"))
    ours = rm.evaluate(predictions, list(measures.values()), truth_table=binary, per_sample=True)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(measures) | {"ndcg_cut_5"})
    theirs = evaluator.evaluate(run)
    for row in ours.iter_rows(named=True):
        for measure, key in measures.items():
            assert row[key] == pytest.approx(theirs[row["sample"]][measure], abs=1e-4), key
    # nDCG with graded gains: trec_eval's ndcg_cut_5 is this library's ndcg@5 (n_labels only
    # places the unscored block, which no query here reaches within 5).
    graded = rm.evaluate(predictions, ["ndcg@5"], truth_table=truth, n_labels=30, per_sample=True)
    for row in graded.iter_rows(named=True):
        assert row["ndcg@5"] == pytest.approx(theirs[row["sample"]]["ndcg_cut_5"], abs=1e-4)


@pytest.mark.parametrize("seed", [2, 3])
# ranx casts its qrels' integer type through numba, which warns (the peers' code).
@pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaTypeSafetyWarning")
def test_untied_runs_equal_ranx(seed):
    ranx = pytest.importorskip("ranx")
    run, qrels = _untied_run(seed)
    predictions, truth = _tables(run, qrels)
    names = {
        "precision@5": "precision@5", "recall@10": "recall@10", "hit_rate@3": "hit_rate@3",
        "mrr": "mrr", "mrr@4": "mrr@4", "map": "map", "map@5": "map@5",
        "r_precision": "r-precision",
    }  # fmt: skip
    binary = truth.with_columns(pl.lit(1).alias("truth"))
    ours = rm.evaluate(predictions, list(names), truth_table=binary)
    theirs = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), [*names.values(), "ndcg@5"])
    for key, theirs_key in names.items():
        assert ours[key][0] == pytest.approx(theirs[theirs_key], rel=1e-12), key
    graded = rm.evaluate(predictions, "ndcg@5", truth_table=truth, n_labels=30)
    assert graded["ndcg@5"][0] == pytest.approx(theirs["ndcg@5"], rel=1e-12)


def test_label_propensities_follow_jain_et_al():
    train = pl.DataFrame({"sample": [0, 0, 1, 2, 2, 3], "label": ["a", "b", "a", "a", "c", "b"]})
    result = rm.label_propensities(train, labels=["a", "b", "c", "d"])
    n, a, b = 4, 0.55, 1.5
    c = (math.log(n) - 1) * (b + 1) ** a
    counts = {"a": 3, "b": 2, "c": 1, "d": 0}
    expected = [1 / (1 + c * (counts[label] + b) ** -a) for label in "abcd"]
    assert result["label"].to_list() == list("abcd")
    np.testing.assert_allclose(result["propensity"], expected, rtol=1e-15)
