"""States of the keys over labels of a top-k table (label_coverage@K, macro_precision@K,
macro_recall@K): finalize over the states of partitions of the samples equals the keys over
their union, against napkinXC's coverage_at_k and the slow reference of test_xmc_keys."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_xmc_keys import DRAWN_LABEL_KEYS, _label_model, _label_reference, _xmc_case

import polars_rankmetrics as rm

LABEL_KEYS = ("label_coverage", "macro_precision", "macro_recall")


def _partitions(predictions, truth, n: int):
    """The samples split into ``n`` partitions by id (sample i in partition i % n)."""
    return [
        (predictions.filter(pl.col("sample") % n == p), truth.filter(pl.col("sample") % n == p))
        for p in range(n)
    ]


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("seed", [0, 1])
def test_states_of_partitions_give_napkinxc_coverage_and_the_macro_averages(engine, seed):
    napkinxc = pytest.importorskip("napkinxc.metrics")
    predictions, truth, ranked, true, _, k = _xmc_case(seed)
    # A last sample with a label no other sample has, predicted and true.
    single, extra = int(predictions["label"].max()) + 1, len(true)
    predictions = pl.concat([predictions, pl.DataFrame(
        {"sample": [extra], "label": [single], "score": [9.0]}, schema=predictions.schema,
    )])  # fmt: skip
    truth = pl.concat([truth, pl.DataFrame({"sample": [extra], "label": [single]},
                                           schema=truth.schema)])  # fmt: skip
    ranked.append([single])
    true.append([single])
    parts = _partitions(predictions, truth, 3)
    held = [set(t["label"]) for _, t in parts]
    assert held[0] & held[1] & held[2], "some true label is shared by every partition"
    alone = extra % 3
    assert single in held[alone] and not any(single in h for p, h in enumerate(held) if p != alone)
    keys = [f"{name}@{j}" for name in LABEL_KEYS for j in range(1, k + 1)]
    states = [rm.state(p, keys, truth_table=t, engine=engine) for p, t in parts]
    result = rm.finalize(states).row(0, named=True)
    coverage = [result[f"label_coverage@{j}"] for j in range(1, k + 1)]
    np.testing.assert_allclose(coverage, napkinxc.coverage_at_k(true, ranked, k=k), rtol=1e-12)
    samples = [
        (i, [(float(s), int(j), int(j) in true[i]) for j, s in zip(rows["label"], rows["score"],
                                                                strict=True)], true[i])
        for i, rows in ((i[0], rows) for i, rows in predictions.group_by("sample"))
    ]  # fmt: skip
    weights = dict.fromkeys(range(len(true)), 1.0)
    for j in range(1, k + 1):
        expected = _label_reference(samples, weights, j)
        for name in LABEL_KEYS:
            np.testing.assert_allclose(result[f"{name}@{j}"], expected[name], rtol=1e-12,
                                       err_msg=f"{name}@{j}")  # fmt: skip


@settings(max_examples=10, deadline=None)
@given(data=st.data(), n=st.integers(1, 3))
def test_finalize_of_partitions_is_the_reference_of_the_union(data, n):
    """Tied scores, true labels without a prediction, sample weights, two models (by=), and
    samples assigned to partitions at random (a label may be in one partition or several)."""
    keys = DRAWN_LABEL_KEYS
    parts, expected = [], {}
    for model in ("a", "b"):
        predictions, truth, expected[model], samples = _label_model(data, model)
        where = {s: data.draw(st.integers(0, n - 1)) for s in samples}
        part = pl.col("sample").replace_strict(where, default=None, return_dtype=pl.Int64)
        parts.append((predictions.with_columns(part.alias("p")),
                      truth.with_columns(part.alias("p"))))  # fmt: skip
    predictions = pl.concat([p for p, _ in parts])
    truth = pl.concat([t for _, t in parts])
    engine = data.draw(st.sampled_from(["polars", "duckdb"]))
    states = [
        rm.state(
            predictions.filter(pl.col("p") == p).drop("p"),
            list(keys),
            truth_table=truth.filter(pl.col("p") == p).drop("p"),
            by="model",
            weight="w",
            engine=engine,
        )  # fmt: skip
        for p in range(n)
        if predictions["p"].eq(p).any()
    ]
    result = rm.finalize(states, by="model")
    assert sorted(result["model"]) == ["a", "b"]
    for row in result.iter_rows(named=True):
        for key in keys:
            np.testing.assert_allclose(row[key], expected[row["model"]][key], rtol=1e-12,
                                       atol=1e-12, err_msg=key)  # fmt: skip


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_a_state_records_the_label_counts_at_each_cut(engine):
    """The topk_labels part: per label, support and each cut-off's tp@K and fp@K, counted here
    by hand."""
    predictions = pl.DataFrame({"sample": [0, 0, 1], "label": ["a", "b", "a"],
                                "score": [1.0, 0.5, 1.0]})  # fmt: skip
    truth = pl.DataFrame({"sample": [0, 1, 1], "label": ["b", "a", "c"]})
    state = rm.state(predictions, ["label_coverage@1", "macro_recall@2"], truth_table=truth,
                     engine=engine)  # fmt: skip
    rows = state.filter(pl.col("rm_part") == "topk_labels").pivot(
        "rm_name", index="rm_label", values="rm_value"
    ).sort("rm_label")  # fmt: skip
    # a: sample 0's false first, sample 1's true first; b: sample 0's true second; c: unscored.
    expected = pl.DataFrame({
        "rm_label": ["a", "b", "c"], "support": [1.0, 1.0, 1.0],
        "tp@1": [1.0, 0.0, 0.0], "fp@1": [1.0, 0.0, 0.0],
        "tp@2": [1.0, 1.0, 0.0], "fp@2": [1.0, 0.0, 0.0],
    })  # fmt: skip
    assert rows.select(expected.columns).equals(expected)
