"""scikit-learn as the oracle: pivot a long table to dense matrices and call its metrics."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import polars as pl
from sklearn import metrics as skm

from polars_rankmetrics.metrics.registry import MetricKey


def dense(df: pl.DataFrame, *, sample="sample", label="label", score="score", truth="truth"):
    """(sample ids, y_true, y_score) with samples and labels in sorted order."""
    wide = df.sort(sample, label)
    samples = wide[sample].unique(maintain_order=True)
    n_labels = wide[label].n_unique()
    y_true = wide[truth].cast(pl.Float64).to_numpy().reshape(len(samples), n_labels)
    y_score = wide[score].cast(pl.Float64).to_numpy().reshape(len(samples), n_labels)
    return samples, y_true, y_score


def finite_scores(y_score: np.ndarray) -> np.ndarray:
    """The same order without infinities (scikit-learn rejects them; every metric here only
    depends on the order of the scores within a sample)."""
    finite = y_score[np.isfinite(y_score)]
    top, bottom = (finite.max() + 1, finite.min() - 1) if finite.size else (1.0, -1.0)
    return np.where(y_score == np.inf, top, np.where(y_score == -np.inf, bottom, y_score))


def sklearn_value(key: MetricKey, y_true, y_score, sample_weight=None) -> float:
    """scikit-learn's value of one metric key (lwlrap: lrap weighted by the positive count)."""
    binary = y_true.astype(int)
    y_score = finite_scores(y_score)
    match key.name:
        case "coverage_error":
            return skm.coverage_error(binary, y_score, sample_weight=sample_weight)
        case "lrap":
            return skm.label_ranking_average_precision_score(
                binary, y_score, sample_weight=sample_weight
            )
        case "ranking_loss":
            return skm.label_ranking_loss(binary, y_score, sample_weight=sample_weight)
        case "lwlrap":
            n_pos = binary.sum(axis=1).astype(float)
            w = n_pos if sample_weight is None else n_pos * sample_weight
            if w.sum() == 0:
                return float("nan")
            return skm.label_ranking_average_precision_score(binary, y_score, sample_weight=w)
        case "dcg":
            return skm.dcg_score(y_true, y_score, k=key.k, sample_weight=sample_weight)
        case "ndcg":
            return skm.ndcg_score(y_true, y_score, k=key.k, sample_weight=sample_weight)
    raise AssertionError(key)


def sklearn_per_sample(key: MetricKey, y_true, y_score) -> np.ndarray:
    """scikit-learn's value for each sample alone (lwlrap: null for samples without positives)."""
    values = []
    for i in range(len(y_true)):
        if key.name == "lwlrap" and y_true[i].sum() == 0:
            values.append(np.nan)
            continue
        one = MetricKey("lrap") if key.name == "lwlrap" else key
        values.append(sklearn_value(one, y_true[i : i + 1], y_score[i : i + 1]))
    return np.array(values, dtype=float)


# The retrieval metrics, written from their definitions (trec_eval, ranx; Jain et al. 2016 for
# the propensity-scored ones) on one ordered list, and averaged over every order of the tied
# blocks: the slow, obvious oracle of the tie rule.


def ranked_list_value(name: str, k: int | None, relevant: list[bool], gains: list[float],
                      true_gains: list[float]) -> float:  # fmt: skip
    """One metric of one sample whose retrieved labels, best first, are ``relevant`` (with
    ``gains`` = 1 / propensity where relevant); ``true_gains``: every true label's gain,
    retrieved or not."""
    n_true = len(true_gains)
    cut = relevant if k is None else relevant[:k]
    hits = sum(cut)
    if name == "precision":
        return hits / k
    if name == "recall":
        return hits / n_true if n_true else 0.0
    if name == "hit_rate":
        return float(hits > 0)
    if name == "mrr":
        return next((1.0 / (i + 1) for i, r in enumerate(cut) if r), 0.0)
    if name == "map":
        found, total = 0, 0.0
        for i, r in enumerate(cut):
            if r:
                found += 1
                total += found / (i + 1)
        return total / n_true if n_true else 0.0
    if name == "hits":
        return float(hits)
    if name == "r_precision":
        if k is not None:  # LibMultiLabel's RP@k
            return hits / min(k, n_true) if n_true else 0.0
        return sum(relevant[:n_true]) / n_true if n_true else 0.0
    if name.endswith("_ratio"):  # each sample's value over its best (no value without one)
        if not n_true:
            return math.nan
        kind = name.removesuffix("_ratio")
        best_kind = "psndcg_norm" if kind == "psndcg" else "psprecision_norm"
        return ranked_list_value(best_kind, k, relevant, gains, true_gains)
    if name.startswith("psprecision"):
        value = sum(g for r, g in zip(cut, gains, strict=False) if r) / k
        if name.endswith("_norm"):
            best = sum(sorted(true_gains, reverse=True)[:k]) / k
            return value / best if best else 0.0
        return value
    if name.startswith("psndcg"):
        dcg = sum(g / math.log2(i + 2) for i, (r, g) in enumerate(zip(cut, gains, strict=False))
                  if r)  # fmt: skip
        if name.endswith("_norm"):
            best = sorted(true_gains, reverse=True)[:k]
            ideal = sum(g / math.log2(i + 2) for i, g in enumerate(best))
        else:
            ideal = sum(1 / math.log2(i + 2) for i in range(min(k, n_true)))
        return dcg / ideal if ideal else 0.0
    raise AssertionError(name)


def expected_over_orders(name: str, k: int | None, scored: list[tuple[float, bool, float]],
                         true_gains: list[float]) -> float:  # fmt: skip
    """The mean of :func:`ranked_list_value` over every order of the tied blocks of
    ``scored`` = [(score, relevant, gain)] (the unscored labels are not retrieved)."""
    blocks = [list(group) for _, group in itertools.groupby(
        sorted(scored, key=lambda row: -row[0]), key=lambda row: row[0])]  # fmt: skip
    values = []
    for orders in itertools.product(*(itertools.permutations(b) for b in blocks)):
        ranked = [row for block in orders for row in block]
        values.append(ranked_list_value(
            name, k, [r for _, r, _ in ranked], [g for _, _, g in ranked], true_gains))  # fmt: skip
    return sum(values) / len(values)


SHIPPED = Path(__file__).parent.parent / "data"


def pytrec_means(measures, asked=None, directory=SHIPPED):
    """pytrec_eval's (trec_eval's C code) mean of each measure over the topics of each run of
    the TREC files ``trec_qrels.txt`` and ``trec_runs.txt`` in ``directory`` (the shipped ones
    by default): {tag: [mean of each measure]}, tags in order. ``asked``: the measures as
    pytrec_eval is asked for them (``P.1,2``), when they are not ``measures`` themselves."""
    import pytrec_eval

    qrels, runs = defaultdict(dict), defaultdict(lambda: defaultdict(dict))
    for line in (directory / "trec_qrels.txt").read_text().splitlines():
        topic, _, doc_id, relevance = line.split()
        qrels[topic][doc_id] = int(relevance)
    for line in (directory / "trec_runs.txt").read_text().splitlines():
        topic, _, doc_id, _, score, tag = line.split()
        runs[tag][topic][doc_id] = float(score)
    evaluator = pytrec_eval.RelevanceEvaluator(dict(qrels), set(asked or measures))
    means = {}
    for tag in sorted(runs):
        per_topic = evaluator.evaluate(dict(runs[tag]))
        means[tag] = [sum(v[m] for v in per_topic.values()) / len(per_topic) for m in measures]
    return means
