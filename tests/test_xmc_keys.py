"""The extreme-classification keys of a top-k table against napkinXC's metrics module (the
oracle where it has the metric: its propensity-scored values are pyxclib's ratios of dataset
sums) and slow references written here from the definitions."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from reference import expected_over_orders
from test_retrieval import TOP_K_ENGINES, runs

import polars_rankmetrics as rm

PRESETS = {"wikipedia": (0.5, 0.4), "amazon": (0.6, 2.6), "other": (0.55, 1.5)}


def _inverse_propensity(count: int, n: int, a: float, b: float) -> float:
    """Jain et al.'s inverse propensity, written from the formula."""
    c = (math.log(n) - 1) * (b + 1) ** a
    return 1 + c * (count + b) ** -a


@pytest.mark.parametrize("dataset", [*PRESETS, None])
def test_label_propensities_presets_follow_the_formula(dataset):
    rng = np.random.default_rng(7)
    n_samples, n_labels = 60, 12
    rows = [(i, j) for i in range(n_samples) for j in range(n_labels) if rng.random() < 0.2]
    train = pl.DataFrame(rows, schema=["sample", "label"], orient="row")
    seen = train["sample"].n_unique()
    result = rm.label_propensities(train, dataset=dataset, labels=range(n_labels + 2))
    a, b = PRESETS[dataset or "other"]
    counts = train.group_by("label").len()
    count = dict(zip(counts["label"], counts["len"], strict=True))
    expected = [_inverse_propensity(count.get(j, 0), seen, a, b) for j in range(n_labels + 2)]
    np.testing.assert_allclose(1 / result["propensity"].to_numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("dataset", list(PRESETS))
def test_label_propensities_equal_napkinxc_with_the_training_size(dataset):
    """N counts the training rows without a label too (n_samples), as the matrix's rows."""
    napkinxc = pytest.importorskip("napkinxc.metrics")
    from scipy.sparse import csr_matrix

    rng = np.random.default_rng(3)
    dense = (rng.random((40, 9)) < 0.15).astype(np.float64)
    dense[5] = 0  # a training sample without a label
    dense[:, 4] = 0  # a label never seen in training
    rows, columns = np.nonzero(dense)
    train = pl.DataFrame({"sample": rows, "label": columns})
    a, b = PRESETS[dataset]
    theirs = napkinxc.Jain_et_al_inverse_propensity(csr_matrix(dense), A=a, B=b)
    ours = rm.label_propensities(train, dataset=dataset, labels=range(9), n_samples=40)
    np.testing.assert_allclose(1 / ours["propensity"].to_numpy(), theirs, rtol=1e-12)


def test_label_propensities_refuse_bad_models():
    train = pl.DataFrame({"sample": [0, 1], "label": ["a", "b"]})
    with pytest.raises(ValueError, match="unknown dataset 'imdb'; the presets are wikipedia"):
        rm.label_propensities(train, dataset="imdb")
    with pytest.raises(ValueError, match="give dataset='amazon' or a= and b=, not both"):
        rm.label_propensities(train, dataset="amazon", a=0.5)
    with pytest.raises(ValueError, match="n_samples=1 is below the 2 distinct samples"):
        rm.label_propensities(train, n_samples=1)


def _xmc_case(seed: int, n_samples: int = 40, n_labels: int = 30, k: int = 5):
    """A random tie-free sparse case as napkinXC's lists and as the library's tables: each
    sample 1-7 stored scores (some fewer than k), 0-6 true labels (some none), and the
    training counts of a training set that never sees some labels."""
    rng = np.random.default_rng(seed)
    ranked, true, pred_rows, true_rows = [], [], [], []
    for i in range(n_samples):
        labels = rng.choice(n_labels, size=rng.integers(1, 8), replace=False)
        scores = rng.permutation(len(labels)) + rng.random()
        order = np.argsort(-scores)
        ranked.append([int(j) for j in labels[order]])
        pred_rows += [(i, int(j), float(s)) for j, s in zip(labels, scores, strict=True)]
        positives = rng.choice(n_labels, size=rng.integers(0, 7), replace=False)
        # skew the truth towards the predictions, so that there are hits
        positives = np.union1d(positives, labels[rng.random(len(labels)) < 0.4])
        true.append([int(j) for j in positives])
        true_rows += [(i, int(j)) for j in positives]
    predictions = pl.DataFrame(pred_rows, schema=["sample", "label", "score"], orient="row")
    truth = pl.DataFrame(true_rows, schema=["sample", "label"], orient="row")
    n_train = 80
    train_dense = (rng.random((n_train, n_labels)) < rng.random(n_labels) * 0.3).astype(float)
    train_dense[:, rng.choice(n_labels, size=4, replace=False)] = 0  # never seen in training
    return predictions, truth, ranked, true, train_dense, k


ORACLE_KEYS = {
    "precision": "precision_at_k", "recall": "recall_at_k",
    "psprecision_ratio": "psprecision_at_k", "psrecall_ratio": "psrecall_at_k",
    "psndcg_ratio": "psndcg_at_k",
}  # fmt: skip


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_xmc_keys_equal_napkinxc(engine, seed):
    napkinxc = pytest.importorskip("napkinxc.metrics")
    from scipy.sparse import csr_matrix

    predictions, truth, ranked, true, train_dense, k = _xmc_case(seed)
    n_train, n_labels = train_dense.shape
    inv_ps = napkinxc.Jain_et_al_inverse_propensity(csr_matrix(train_dense), A=0.6, B=2.6)
    rows, columns = np.nonzero(train_dense)
    train = pl.DataFrame({"sample": rows, "label": columns})
    propensities = rm.label_propensities(
        train, dataset="amazon", labels=range(n_labels), n_samples=n_train
    )
    keys = [f"{name}@{j}" for name in ORACLE_KEYS for j in range(1, k + 1)]
    ours = rm.evaluate(predictions, keys, truth_table=truth, n_labels=n_labels,
                       propensities=propensities, engine=engine)  # fmt: skip
    coverage = [f"label_coverage@{j}" for j in range(1, k + 1)]
    got = rm.evaluate(predictions, coverage, truth_table=truth, engine=engine).row(0)
    np.testing.assert_allclose(got, napkinxc.coverage_at_k(true, ranked, k=k), rtol=1e-12)
    for name, function in ORACLE_KEYS.items():
        oracle = getattr(napkinxc, function)
        theirs = (
            oracle(true, ranked, inv_ps, k=k)
            if name.startswith("ps")
            else oracle(true, ranked, k=k)
        )
        got = [ours[f"{name}@{j}"][0] for j in range(1, k + 1)]
        np.testing.assert_allclose(got, theirs, rtol=1e-12, err_msg=name)


def test_ndcg_equals_napkinxc_where_every_sample_has_k_scores():
    """ndcg@K ranks a sample's unscored true labels in its unscored block (the library's rule
    for top-k tables), where pyxclib and napkinXC count only stored scores: the two agree where
    every sample has at least K scores."""
    napkinxc = pytest.importorskip("napkinxc.metrics")
    predictions, truth, ranked, true, _, k = _xmc_case(4, n_samples=120)
    full = [i for i, labels in enumerate(ranked) if len(labels) >= k]
    keys = [f"ndcg@{j}" for j in range(1, k + 1)]
    kept = pl.col("sample").is_in(full)
    ours = rm.evaluate(predictions.filter(kept), keys, truth_table=truth.filter(kept),
                       n_labels=30)  # fmt: skip
    theirs = napkinxc.ndcg_at_k([true[i] for i in full], [ranked[i] for i in full], k=k)
    np.testing.assert_allclose([ours[key][0] for key in keys], theirs, rtol=1e-12)


def _sums(name: str, k: int, scored, true_gains) -> tuple[float, float]:
    """One sample's term of a _ratio key's two sums: its expected propensity-scored value
    (over the orders of its tied blocks) and the best one, written from pyxclib's code."""
    n_true = len(true_gains)
    if not n_true:
        return 0.0, 0.0
    best = sorted(true_gains, reverse=True)[:k]
    if name == "psndcg_ratio":
        value = expected_over_orders("psndcg", k, scored, true_gains)
        ideal = sum(1 / math.log2(i + 2) for i in range(min(k, n_true)))
        return value, sum(g / math.log2(i + 2) for i, g in enumerate(best)) / ideal
    hits = expected_over_orders("psprecision", k, scored, true_gains) * k
    over = k if name == "psprecision_ratio" else n_true
    return hits / over, sum(best) / over


@pytest.mark.parametrize("engine", TOP_K_ENGINES, ids=str)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_ratio_keys_are_ratios_of_weighted_sums_by_group(engine, data):
    """Two models in one table (by=), sample weights, buckets of whole samples: each _ratio key
    is the weighted sum of the samples' values over the weighted sum of their best values."""
    keys = {"psprecision_ratio@2": 2, "psrecall_ratio@3": 3, "psndcg_ratio@2": 2}
    propensity = {j: data.draw(st.sampled_from([0.2, 0.5, 1.0])) for j in range(6)}
    parts, expected = [], {}
    for model in ("a", "b"):
        predictions, truth, propensities, samples = data.draw(
            runs(top_k=True, propensity=propensity)
        )
        samples = [s for s in samples if s[1]]  # a sample's weight is read from its predictions
        assume(samples)
        truth = truth.filter(pl.col("sample").is_in([s for s, _, _ in samples]))
        weights = {s: float(data.draw(st.sampled_from([0.5, 1.0, 2.0]))) for s, _, _ in samples}
        weight = pl.col("sample").replace_strict(weights, default=None, return_dtype=pl.Float64)
        parts.append((predictions.drop("truth").with_columns(pl.lit(model).alias("model"),
                                                             weight.alias("w")),
                      truth.with_columns(pl.lit(model).alias("model"))))  # fmt: skip
        expected[model] = {}
        for key, k in keys.items():
            terms = [_sums(key.split("@")[0], k, scored, gains) for _, scored, gains in samples]
            numerator = sum(weights[s[0]] * v for s, (v, _) in zip(samples, terms, strict=True))
            denominator = sum(weights[s[0]] * b for s, (_, b) in zip(samples, terms, strict=True))
            expected[model][key] = numerator / denominator if denominator else math.nan
    predictions = pl.concat([p for p, _ in parts])
    truth = pl.concat([t for _, t in parts])
    result = engine.evaluate(predictions, list(keys), truth_table=truth,
                             propensities=propensities, by="model", weight="w")  # fmt: skip
    for row in result.iter_rows(named=True):
        for key in keys:
            np.testing.assert_allclose(row[key], expected[row["model"]][key], rtol=1e-12,
                                       atol=1e-12, err_msg=key)  # fmt: skip


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_by_label_frequency_bins_and_contributions(engine):
    """Against a slow reference: labels binned by descending training count, each bin's
    precision@K and psprecision@K the share of its labels' hits (the bins add up to the whole),
    its psprecision_ratio@K the bin's own PSP@K."""
    predictions, truth, ranked, true, train_dense, k = _xmc_case(5)
    n_samples, n_labels = len(ranked), train_dense.shape[1]
    rows, columns = np.nonzero(train_dense)
    train = pl.DataFrame({"sample": rows, "label": columns})
    propensities = rm.label_propensities(train, labels=range(n_labels), n_samples=80)
    gain = dict(zip(propensities["label"], 1 / propensities["propensity"], strict=True))
    keys = ["precision@3", "psprecision@3", "psprecision_ratio@3"]
    result = rm.by_label_frequency(predictions, keys, truth_table=truth, train=train, bins=4,
                                   propensities=propensities, engine=engine)  # fmt: skip
    count = train_dense.sum(axis=0)
    seen = set(columns.tolist()) | set(truth["label"].to_list())  # every label binned
    order = sorted(seen, key=lambda j: (-count[j], j))
    parts = np.array_split(np.array(order), 4)
    assert result["bin"].to_list() == [0, 1, 2, 3]
    assert result["labels"].to_list() == [len(p) for p in parts]
    for b, part in enumerate(parts):
        members = set(part.tolist())
        hits = [sum(1 for j in ranked[i][:3] if j in true[i] and j in members)
                for i in range(n_samples)]  # fmt: skip
        ps_hits = [sum(gain[j] for j in ranked[i][:3] if j in true[i] and j in members)
                   for i in range(n_samples)]  # fmt: skip
        best = [sum(sorted((gain[j] for j in true[i] if j in members), reverse=True)[:3])
                for i in range(n_samples)]  # fmt: skip
        row = result.row(b, named=True)
        assert row["min_count"] == min(count[j] for j in members)
        assert row["max_count"] == max(count[j] for j in members)
        assert row["precision@3"] == pytest.approx(sum(hits) / 3 / n_samples, rel=1e-12)
        assert row["psprecision@3"] == pytest.approx(sum(ps_hits) / 3 / n_samples, rel=1e-12)
        ratio = sum(ps_hits) / sum(best) if sum(best) else math.nan
        np.testing.assert_allclose(row["psprecision_ratio@3"], ratio, rtol=1e-12)
    whole = rm.evaluate(predictions, keys[:2], truth_table=truth, propensities=propensities)
    for key in keys[:2]:
        assert result[key].sum() == pytest.approx(whole[key][0], rel=1e-12)


def test_by_label_frequency_refuses_bad_bins():
    predictions = pl.DataFrame({"sample": [0], "label": ["a"], "score": [1.0]})
    truth = pl.DataFrame({"sample": [0], "label": ["a"]})
    train = pl.DataFrame({"sample": [0, 1], "label": ["a", "b"]})
    with pytest.raises(ValueError, match="bins must be an integer from 1 to the 2 labels, not 3"):
        rm.by_label_frequency(predictions, "precision@1", truth_table=truth, train=train, bins=3)


def _label_reference(samples, weights, k: int) -> dict[str, float]:
    """label_coverage@k, macro_precision@k and macro_recall@k from their definitions, each
    (label, sample) predicted within the top k with its expected share over the orders of the
    sample's tied blocks: [(sample, scored [(score, label, relevant)], true labels)]."""
    tp, fp, support = {}, {}, {}
    for sample, scored, true_labels in samples:
        w = weights[sample]
        for label in true_labels:
            support[label] = support.get(label, 0.0) + w
        for score, label, relevant in scored:
            above = sum(1 for s, _, _ in scored if s > score)
            tied = sum(1 for s, _, _ in scored if s == score)
            share = max(min(above + tied, k) - above, 0) / tied
            counts = tp if relevant else fp
            counts[label] = counts.get(label, 0.0) + w * share
    labels = set(tp) | set(fp) | set(support)
    true = [j for j in labels if support.get(j, 0) > 0]
    predicted = [j for j in labels if tp.get(j, 0) + fp.get(j, 0) > 0]
    covered = [j for j in true if tp.get(j, 0) > 0]
    return {
        "label_coverage": len(covered) / len(true) if true else math.nan,
        "macro_precision": float(np.mean([tp.get(j, 0) / (tp.get(j, 0) + fp.get(j, 0))
                                          for j in predicted])) if predicted else math.nan,
        "macro_recall": float(np.mean([tp.get(j, 0) / support[j] for j in true]))
        if true else math.nan,
    }  # fmt: skip


# The keys over labels the property tests draw runs for, each with its cut-off.
DRAWN_LABEL_KEYS = {"label_coverage@1": 1, "macro_precision@2": 2, "macro_recall@2": 2,
                    "label_coverage@3": 3}  # fmt: skip


def _label_model(data, model: str) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, float], list]:
    """One model's drawn top-k run (tied scores, true labels without a prediction, sample
    weights): its predictions (``model``, weights ``w``), its truth table (``model``), the
    reference values of :data:`DRAWN_LABEL_KEYS` and its sample ids."""
    predictions, truth, _, _ = data.draw(runs(top_k=True))
    assume(predictions.height)
    samples = []
    for sample, rows in predictions.group_by("sample"):
        trues = truth.filter(pl.col("sample") == sample[0])["label"].to_list()
        scored = [(s, j, j in trues) for j, s in zip(rows["label"], rows["score"], strict=True)]
        samples.append((sample[0], scored, trues))
    truth = truth.filter(pl.col("sample").is_in(predictions["sample"].implode()))
    weights = {s: float(data.draw(st.sampled_from([0.5, 1.0, 2.0]))) for s, _, _ in samples}
    weight = pl.col("sample").replace_strict(weights, default=None, return_dtype=pl.Float64)
    named = pl.lit(model).alias("model")
    expected = {
        key: _label_reference(samples, weights, k)[key.split("@")[0]]
        for key, k in DRAWN_LABEL_KEYS.items()
    }
    return (
        predictions.drop("truth").with_columns(named, weight.alias("w")),
        truth.with_columns(named), expected, [s for s, _, _ in samples],
    )  # fmt: skip


@pytest.mark.parametrize("engine", TOP_K_ENGINES, ids=str)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_label_keys_follow_their_definitions(engine, data):
    """Tied scores, true labels without a prediction, sample weights, two models (by=) and
    buckets of whole samples."""
    keys = DRAWN_LABEL_KEYS
    parts, expected = [], {}
    for model in ("a", "b"):
        predictions, truth, expected[model], _ = _label_model(data, model)
        parts.append((predictions, truth))
    predictions = pl.concat([p for p, _ in parts])
    truth = pl.concat([t for _, t in parts])
    result = engine.evaluate(predictions, list(keys), truth_table=truth, by="model", weight="w")
    for row in result.iter_rows(named=True):
        for key in keys:
            np.testing.assert_allclose(row[key], expected[row["model"]][key], rtol=1e-12,
                                       atol=1e-12, err_msg=key)  # fmt: skip


def test_label_keys_have_no_per_sample_value():
    predictions = pl.DataFrame({"sample": [0, 1], "label": ["a", "b"], "score": [1.0, 0.5]})
    truth = pl.DataFrame({"sample": [0, 1], "label": ["a", "a"]})
    with pytest.raises(ValueError, match="macro_recall@1 is averaged over labels: it has no"):
        rm.evaluate(predictions, "macro_recall@1", truth_table=truth, per_sample=True)
    with pytest.raises(ValueError, match="label_coverage@2 is computed over labels"):
        rm.compare(predictions.with_columns(m=pl.lit("x")), "label_coverage@2",
                   truth_table=truth, by="m", baseline="x")  # fmt: skip


def test_the_exported_sql_gives_the_label_summary_and_hits(tmp_path):
    """`rankmetrics sql --input PRED --truth-table TRUTH --k 2`, run on DuckDB:
    rankmetrics_topk_label_summary and the retrieval view give evaluate's numbers."""
    import subprocess
    import sys

    import duckdb

    predictions, truth, *_ = _xmc_case(6, n_samples=25)
    done = subprocess.run(
        [sys.executable, "-m", "polars_rankmetrics", "sql", "--input", "run", "--truth-table",
         "qrels", "--n-labels", "30", "--k", "2"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    con = duckdb.connect()
    con.register("run", predictions.to_arrow())
    con.register("qrels", truth.to_arrow())
    con.execute(done.stdout)
    summary = con.sql(
        "SELECT label_coverage, macro_precision, macro_recall FROM rankmetrics_topk_label_summary"
    ).fetchall()
    keys = ["label_coverage@2", "macro_precision@2", "macro_recall@2"]
    expected = rm.evaluate(predictions, keys, truth_table=truth)
    np.testing.assert_allclose(summary[0], expected.row(0), rtol=1e-12)
    per_sample = con.sql(
        "SELECT sample, hits, r_precision FROM rankmetrics_retrieval_per_sample WHERE k = 2 "
        "ORDER BY sample"
    ).pl()
    ours = rm.evaluate(predictions, ["hits@2", "r_precision@2"], truth_table=truth,
                       per_sample=True)  # fmt: skip
    assert per_sample["sample"].to_list() == ours["sample"].to_list()
    np.testing.assert_allclose(per_sample["hits"], ours["hits@2"], rtol=1e-12)
    np.testing.assert_allclose(per_sample["r_precision"], ours["r_precision@2"], rtol=1e-12)
