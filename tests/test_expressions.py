"""The per-sample expressions compose in users' own group_by/over queries."""

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import sklearn_per_sample
from strategies import long_tables

import polars_rankmetrics as rm
from polars_rankmetrics.metrics import ranking as rx
from polars_rankmetrics.metrics.ranks import ordered_by
from polars_rankmetrics.metrics.registry import parse_key


@settings(max_examples=60, deadline=None)
@given(table=long_tables())
def test_expressions_in_a_users_group_by(table):
    df, y_true, y_score, _ = table
    per_sample = (
        rm.rank_table(df)
        .group_by("sample")
        .agg(rx.coverage_error(), rx.lrap(), rx.ranking_loss(), rx.ndcg(k=2), rx.dcg())
        .sort("sample")
        .collect()
    )
    for key in ["coverage_error", "lrap", "ranking_loss", "ndcg@2", "dcg"]:
        np.testing.assert_allclose(
            per_sample[key], sklearn_per_sample(parse_key(key), y_true, y_score), rtol=1e-9
        )


def test_expressions_with_other_column_names_and_extra_keys():
    df = rm.from_dense(
        [[1, 0, 0], [0, 0, 1]], [[0.75, 0.5, 1], [1, 0.2, 0.1]], sample="q", score="p", truth="y"
    )
    two_models = pl.concat(
        [df.with_columns(model=pl.lit("m1")), df.with_columns(model=pl.lit("m2"), p=-pl.col("p"))]
    )
    means = (
        rm.rank_table(two_models, sample=["model", "q"], score="p", truth="y")
        .group_by("model", "q")
        .agg(rx.coverage_error("y", score="p"))
        .group_by("model")
        .agg(pl.col("coverage_error").mean())
        .sort("model")
        .collect()
    )
    # m2 reverses every ranking: the positives now rank 2 and 1.
    assert means.rows() == [("m1", 2.5), ("m2", 1.5)]


def test_rank_table_columns_by_hand():
    df = pl.DataFrame({"s": [1, 1, 1, 1, 2], "x": [0.5, 0.9, 0.5, 0.1, 0.3], "y": [1, 0, 0, 1, 1]})
    ranked = rm.rank_table(df, sample="s", score="x", truth="y").collect()
    assert ranked["x"].to_list() == [0.9, 0.5, 0.5, 0.1, 0.3]
    assert ranked["rm_rank"].to_list() == [1, 3, 3, 4, 1]
    assert ranked["rm_block_start"].to_list() == [1, 2, 2, 4, 1]
    assert ranked["rm_positive_rank"].to_list() == [0, 1, 1, 2, 1]
    assert ranked["rm_position"].to_list() == [1, 2, 3, 4, 1]


def test_rank_table_refuses_to_overwrite_a_column():
    import pytest

    df = pl.DataFrame({"sample": [1], "score": [0.5], "truth": [1], "rm_rank": [3]})
    with pytest.raises(ValueError, match="'rm_rank' is reserved"):
        rm.rank_table(df)


@settings(max_examples=60, deadline=None)
@given(table=long_tables(graded=True))
def test_ndcg_binary_shortcut_equals_general_path(table):
    df, *_ = table
    binary = df.with_columns((pl.col("truth") > 0).cast(pl.Float64))
    ranked = rm.rank_table(binary)
    fast = ranked.group_by("sample").agg(
        rx.ndcg(binary_truth=True), rx.ndcg(k=2, binary_truth=True).alias("at2")
    )
    slow = ranked.group_by("sample").agg(rx.ndcg(), rx.ndcg(k=2).alias("at2"))
    both = fast.join(slow, on="sample", suffix="_slow").collect()
    np.testing.assert_allclose(both["ndcg"], both["ndcg_slow"], rtol=1e-12)
    np.testing.assert_allclose(both["at2"], both["at2_slow"], rtol=1e-12)


def test_label_precision_is_row_wise_and_averages_to_lrap():
    df = rm.from_dense([[1, 0, 1], [0, 0, 1]], [[0.75, 0.5, 1], [1, 0.2, 0.1]])
    ranked = rm.rank_table(df).with_columns(rx.label_precision()).sort("sample", "label").collect()
    # sample 0: label 0 at rank 2 with 2 positives at or above, label 2 at rank 1; sample 1: 1/3
    assert ranked["label_precision"].to_list() == [1.0, None, 1.0, None, None, 1 / 3]
    per_sample = ranked.group_by("sample").agg(pl.col("label_precision").mean()).sort("sample")
    assert per_sample["label_precision"].to_list() == [1.0, 1 / 3]


def test_prefix_sums_of_any_length_add_in_the_order_of_one_cumulative_sum():
    """D(m) and H(m) are summed a chunk at a time (a label space of any size in little memory),
    yet equal, bit for bit, one cumulative sum over all the terms: across chunk boundaries too."""
    from polars_rankmetrics.metrics import ranks

    m = 2 * ranks._CHUNK + 3
    r = np.arange(1, m + 1, dtype=np.float64)
    discounts, harmonics = np.cumsum(1.0 / np.log(r + 1.0)), np.cumsum(1.0 / r)
    for at in (1, 2, ranks._CHUNK, ranks._CHUNK + 1, m):
        assert ranks.cumulative_discount(at) == discounts[at - 1]
        assert ranks.harmonic(at) == harmonics[at - 1]
    assert ranks.cumulative_discount(0) == ranks.harmonic(0) == 0.0


def _kleene_or(x: bool | None, y: bool | None) -> bool | None:
    return True if True in (x, y) else None if None in (x, y) else False


def _kleene_and(x: bool | None, y: bool | None) -> bool | None:
    return False if False in (x, y) else None if None in (x, y) else True


def _compare(op, a, b) -> bool | None:
    return None if a is None or b is None else op(a, b)


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(
        st.tuples(*[st.none() | st.integers(0, 2)] * 3), max_size=7
    ),
    descending=st.booleans(),
)  # fmt: skip
def test_ordered_by_compares_each_row_with_the_one_before(rows, descending):
    # Keys (a, b) compared left to right; with ``descending``, equal keys pass where c does not
    # increase. Nulls compare as unknown, and an unknown comparison is not in order.
    import operator

    def after(this, previous) -> bool | None:
        tail = _compare(operator.le, this[2], previous[2]) if descending else False
        for i in (1, 0):
            tail = _kleene_or(
                _compare(operator.gt, this[i], previous[i]),
                _kleene_and(_compare(operator.eq, this[i], previous[i]), tail),
            )
        return tail

    expected = all(after(t, p) is True for p, t in zip(rows, rows[1:], strict=False))
    df = pl.DataFrame(rows, schema={"a": pl.Int64, "b": pl.Int64, "c": pl.Int64}, orient="row")
    in_order = ordered_by(df.schema, ["a", "b"], descending="c" if descending else None)
    for engine in ("streaming", "in-memory"):
        assert df.lazy().select(in_order).collect(engine=engine).item() is expected
