"""A truth table without some or all of the ``by`` columns is shared by the groups (one qrels
for several runs): each group's numbers are those of the truth table repeated for that group,
built here by an explicit cross join."""

from __future__ import annotations

import random

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankmetrics as rm
from polars_rankmetrics.engines.driver import pieces

KEYS = ["precision@1", "precision@3", "recall@2", "mrr", "map", "ndcg@3", "lrap"]


def _tables() -> tuple[pl.DataFrame, pl.DataFrame]:
    """Predictions of three runs in two splits, with tied scores; run "c" predicts for one
    sample alone, and sample 9 is true but predicted by no run. The truth table has the split
    column, not the run column."""
    rng = random.Random(7)
    rows = []
    for run in ("a", "b"):
        for split in ("dev", "test"):
            for sample in range(8):
                for label in rng.sample(range(10), 5):
                    rows.append((run, split, sample, label, rng.choice([0.1, 0.5, 0.5, 0.9])))
    rows += [("c", "dev", 3, label, 1.0 - label / 10) for label in range(4)]
    pred = pl.DataFrame(rows, schema=["run", "split", "sample", "label", "score"], orient="row")
    truth = pl.DataFrame(
        [
            (split, sample, label)
            for split in ("dev", "test")
            for sample in [*range(8), 9]
            for label in rng.sample(range(10), rng.randint(1, 3))
        ],
        schema=["split", "sample", "label"],
        orient="row",
    )
    return pred, truth


def _repeated(pred: pl.DataFrame, truth: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """The truth table repeated for every group of the predictions, by a cross join (filtered
    on the ``by`` columns the truth table has)."""
    groups = pred.select(by).unique()
    crossed = groups.join(
        truth.rename({c: f"{c}_t" for c in by if c in truth.columns}), how="cross"
    )
    for c in by:
        if c in truth.columns:
            crossed = crossed.filter(pl.col(c) == pl.col(f"{c}_t")).drop(f"{c}_t")
    return crossed


@pytest.fixture
def four_buckets(monkeypatch):
    """Any memory limit splits the tables into 4 buckets."""
    monkeypatch.setattr(pieces, "bucket_count", lambda *args, **kwargs: 4)


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("out_of_core", [False, True], ids=["in_memory", "buckets"])
@pytest.mark.parametrize(
    ("by", "drop"), [(["run"], ["split"]), (["run", "split"], []), (["split", "run"], [])]
)
@pytest.mark.parametrize("per_sample", [False, True])
def test_each_group_scores_as_with_the_truth_table_repeated_for_it(
    request, engine, out_of_core, by, drop, per_sample
):
    pred, truth = _tables()
    if drop:  # one split, whose column neither table has
        pred = pred.filter(split="dev").drop(drop)
        truth = truth.filter(split="dev").drop(drop)
    limit = None
    if out_of_core:
        request.getfixturevalue("four_buckets")
        limit = "1GB"
    options = {
        "by": by,
        "engine": engine,
        "memory_limit": limit,
        "per_sample": per_sample,
        "n_labels": 10,
    }
    shared = rm.evaluate(pred, KEYS, truth_table=truth, **options)
    expected = rm.evaluate(pred, KEYS, truth_table=_repeated(pred, truth, by), **options)
    order = [*by, "sample"] if per_sample else by
    assert_frame_equal(shared.sort(order), expected.sort(order), check_exact=False)
    if per_sample:
        # Run "c" predicts one sample of the dev split, and is scored on every true one too.
        dev = truth.filter(split="dev") if "split" in truth.columns else truth
        assert set(shared.filter(run="c")["sample"]) == {3, *dev["sample"]}


def test_the_trec_keys_share_the_qrels_in_the_same_way():
    pred, truth = _tables()
    pred = pred.with_columns(pl.col("sample").cast(pl.String), pl.col("label").cast(pl.String))
    truth = truth.with_columns(
        pl.col("sample").cast(pl.String), pl.col("label").cast(pl.String), truth=pl.lit(1)
    )
    keys = ["P_1", "recip_rank", "AP", "ndcg_cut_3", "num_q"]
    by = ["run", "split"]
    shared = rm.evaluate(pred, keys, truth_table=truth, by=by).sort(by)
    expected = rm.evaluate(pred, keys, truth_table=_repeated(pred, truth, by), by=by).sort(by)
    assert_frame_equal(shared, expected)


def test_a_repeated_label_of_a_shared_truth_table_is_refused_naming_it():
    pred, truth = (t.filter(split="dev").drop("split") for t in _tables())
    first = truth.row(0, named=True)
    truth = pl.concat([truth, truth.head(1)])
    with pytest.raises(
        ValueError,
        match=rf"truth table repeats label {first['label']} .*sample={first['sample']}\)",
    ):
        rm.evaluate(pred, ["mrr"], truth_table=truth, by="run")


def test_a_truth_table_without_the_sample_column_is_still_refused():
    pred, truth = _tables()
    with pytest.raises(ValueError, match="column 'sample' not found in the truth table"):
        rm.evaluate(pred, ["mrr"], truth_table=truth.drop("sample"), by="run")
