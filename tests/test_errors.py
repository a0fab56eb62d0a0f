"""Bad input: a ValueError naming the column, the problem and an offending sample."""

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_rankmetrics as rm
from polars_rankmetrics.checks import validation
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.registry import parse_keys


def table(**overrides) -> pl.DataFrame:
    base = {
        "sample": [1, 1, 2, 2],
        "label": ["a", "b", "a", "b"],
        "score": [0.9, 0.1, 0.4, 0.6],
        "truth": [1, 0, 0, 1],
    }
    return pl.DataFrame(base | overrides, strict=False)


CASES = [
    ("missing column", table().drop("score"), {}, r"column 'score' not found"),
    (
        "non-numeric score",
        table(score=["x", "y", "z", "w"]),
        {},
        r"column 'score' must be numeric, not String: cast it",
    ),
    (
        "null score",
        table(score=[0.9, None, 0.4, 0.6]),
        {},
        r"'score' \(score\) has a null \(at sample=1, label='b'\)",
    ),
    (
        "NaN score",
        table(score=[0.9, 0.1, float("nan"), 0.6]),
        {},
        r"'score' \(score\) has a NaN \(at sample=2, label='a'\)",
    ),
    ("null truth", table(truth=[1, 0, None, 1]), {}, r"'truth' \(truth\) has a null \(at sample=2"),
    (
        "null boolean truth",
        table(truth=[True, False, None, True]),
        {},
        r"'truth' \(truth\) has a null \(at sample=2",
    ),
    (
        "NaN truth",
        table(truth=[1.0, 0.0, float("nan"), 1.0]),
        {},
        r"'truth' \(truth\) has a NaN .*sample=2",
    ),
    (
        "truth outside 0/1",
        table(truth=[1, 0, 2, 1]),
        {},
        r"must be 0 or 1 for .*lrap.* \(at sample=2, label='a'\)",
    ),
    (
        "negative truth for ndcg",
        table(truth=[1.0, 0.0, -1.0, 2.0]),
        {"metrics": ["ndcg"]},
        r"'truth' \(truth\) has a negative value \(at sample=2",
    ),
    (
        "repeated label",
        table(label=["a", "a", "a", "b"]),
        {},
        r"repeats label 'a' within one sample \(sample=1\)",
    ),
    (
        "different label sets",
        table(label=["a", "b", "a", "c"]),
        {},
        r"different label sets: sample=\d has 2 labels .* 3 distinct",
    ),
    ("empty table", table().clear(), {}, r"the table is empty"),
    (
        "weights sum to 0",
        table(w=[0.0] * 4),
        {"weight": "w"},
        r"'w' \(weight\): the sample weights of the table sum to 0",
    ),
    (
        "weight not constant",
        table(w=[1.0, 2.0, 1.0, 1.0]),
        {"weight": "w"},
        r"'w' \(weight\) is not constant within a sample \(sample=1\)",
    ),
    (
        "negative weight",
        table(w=[-1.0, -1.0, 1.0, 1.0]),
        {"weight": "w"},
        r"'w' \(weight\) has a negative",
    ),
    ("null sample id", table(sample=[1, None, 2, 2]), {}, r"column 'sample' has a null"),
    (
        "one label for ndcg",
        table(label=["a"] * 4, sample=[1, 2, 3, 4]),
        {"metrics": ["ndcg"]},
        r"ndcg needs at least 2 labels",
    ),
    ("missing by column", table(), {"by": "model"}, r"column 'model' not found"),
    ("unknown metric", table(), {"metrics": ["auc"]}, r"unknown metric 'auc'"),
    ("bad k", table(), {"metrics": ["ndcg@0"]}, r"k must be a positive integer"),
]


@pytest.mark.parametrize("name, df, options, message", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises_value_error(engine, name, df, options, message):
    with pytest.raises(ValueError, match=message):
        engine.evaluate(df, **options)


@pytest.mark.parametrize("kind", ["list", "array", "struct"])
@pytest.mark.parametrize("name", ["sample", "label"])
def test_a_nested_id_column_is_refused(engine, kind, name, tmp_path):
    """A sample or label column of lists, arrays or structs holds no ids: refused naming it on
    every engine, from a frame and from a Parquet file (which stores arrays as lists). A by
    column may hold structs: a group is any value."""
    nested = {
        "list": pl.concat_list(name),
        "array": pl.concat_list(name).list.to_array(1),
        "struct": pl.struct(name),
    }[kind]
    df = table().with_columns(nested.alias(name))
    path = tmp_path / "nested.parquet"
    df.write_parquet(path)
    refused = rf"column '{name}' holds .* values, which are not ids"
    for data in (df, str(path)):
        with pytest.raises(ValueError, match=refused):
            engine.evaluate(data, ["lrap"])


def test_weights_sum_to_zero_within_one_group_names_it(engine):
    df = pl.concat(
        [
            table(w=[1.0] * 4).with_columns(m=pl.lit("x")),
            table(w=[0.0] * 4).with_columns(m=pl.lit("y")),
        ]
    )
    with pytest.raises(ValueError, match=r"sample weights of m='y' sum to 0"):
        engine.evaluate(df, weight="w", by="m")


def test_graded_truth_is_fine_for_dcg_only(engine):
    df = table(truth=[3, 0, 0, 2])
    assert engine.evaluate(df, ["dcg", "ndcg"]).height == 1
    with pytest.raises(ValueError, match=r"must be 0 or 1 for lrap"):
        engine.evaluate(df, ["lrap", "ndcg"])


def test_graded_qrels_on_retrieval_keys_point_to_trec_measures(engine):
    run = pl.DataFrame({"s": [1, 1, 2], "l": ["x", "y", "x"], "p": [0.9, 0.1, 0.5]})
    qrels = pl.DataFrame({"s": [1, 2], "l": ["x", "x"], "t": [2, 1]})
    cols = {"sample": "s", "label": "l", "score": "p", "truth": "t"}
    with pytest.raises(ValueError, match=r"must be 0 or 1 for precision@1.*for graded qrels, "
                       r"trec_eval's measures \(AP, P_5.*at s=1, l='x'"):  # fmt: skip
        engine.evaluate(run, ["precision@1"], truth_table=qrels, **cols)
    with pytest.raises(ValueError, match=r"must be 0 or 1 for lrap, but") as raised:
        engine.evaluate(table(truth=[3, 0, 0, 2]), ["lrap"])
    assert "qrels" not in str(raised.value)


def test_unknown_engine():
    with pytest.raises(ValueError, match=r"unknown engine 'bigquery'; choose one of polars"):
        rm.evaluate(table(), engine="bigquery")


def test_missing_parquet_file(tmp_path):
    with pytest.raises(ValueError, match=r"no data file matches the file or glob"):
        rm.evaluate(tmp_path / "nothing-*.parquet")


def test_frame_functions_validate_too():
    with pytest.raises(ValueError, match=r"has a NaN"):
        table(score=[0.9, 0.1, float("nan"), 0.6]).lazy().pipe(rm.label_ranking_loss)
    with pytest.raises(ValueError, match=r"k must be a positive integer"):
        table().pipe(rm.ndcg_score, k=0)


def test_null_in_a_by_column(engine):
    df = table(m=["x", None, "x", "x"])
    with pytest.raises(
        ValueError, match=r"column 'm' has a null \(at m=None, sample=1, label='b'\)"
    ):
        engine.evaluate(df, by="m")


def two_models() -> pl.DataFrame:
    first = rm.from_dense(
        [[1, 0, 1], [0, 1, 0], [1, 1, 0]], [[0.9, 0.1, 0.5], [0.2, 0.8, 0.3], [0.4, 0.4, 0.1]]
    )
    second = rm.from_dense([[0, 0, 1], [1, 1, 0]], [[0.3, 0.6, 0.6], [0.7, 0.2, 0.9]])
    return pl.concat(
        [first.with_columns(model=pl.lit("m")), second.with_columns(model=pl.lit("n"))]
    )


def each_model(function, df: pl.DataFrame, name: str) -> pl.DataFrame:
    """``function`` on each model's rows alone, the model under ``name``: the oracle for by=."""
    return pl.concat(
        function(part.drop("model")).select(pl.lit(model).alias(name), pl.all())
        for (model,), part in df.sort("model").group_by("model", maintain_order=True)
    )


# Names of columns the library's own frames hold (per-label counts, curves, sums, summaries).
INSIDE_NAMES = ["tp", "__group", "a/b", "weight"]


@pytest.mark.parametrize("name", INSIDE_NAMES)
def test_a_by_column_may_take_a_name_the_library_uses_inside(engine, name):
    df = two_models()
    keys = [
        "lrap",
        "ndcg@2",
        "hamming_loss",
        "f1_macro",
        "roc_auc_micro",
        "average_precision_macro",
        "lwlrap",
    ]
    named = df.rename({"model": name})
    result = engine.evaluate(named, keys, by=name)
    expected = each_model(lambda part: rm.evaluate(part, keys), df, name)
    assert_frame_equal(result, expected, check_dtypes=False)
    per_sample = engine.evaluate(named, ["lrap", "ndcg"], by=name, per_sample=True)
    expected = each_model(lambda p: rm.evaluate(p, ["lrap", "ndcg"], per_sample=True), df, name)
    assert_frame_equal(per_sample, expected, check_dtypes=False)
    report = engine.report(named, by=name)
    assert_frame_equal(report, each_model(rm.label_report, df, name), check_dtypes=False)


@pytest.mark.parametrize("name", ["tp", "__predicted", "propensity"])
def test_a_top_k_by_column_may_take_a_name_the_library_uses_inside(name):
    df = two_models()
    predictions = df.filter(pl.col("score") >= 0.3).drop("truth")
    truth = df.filter(pl.col("truth") == 1).drop("score")
    keys = ["lrap", "precision@2", "mrr"]
    result = rm.evaluate(
        predictions.rename({"model": name}), keys, by=name,
        truth_table=truth.rename({"model": name}), n_labels=3,
    )  # fmt: skip
    expected = rm.evaluate(predictions, keys, by="model", truth_table=truth, n_labels=3)
    assert_frame_equal(result, expected.rename({"model": name}))


def test_an_error_names_a_by_column_as_the_user_does(engine):
    df = table(tp=["x", None, "x", "x"])
    with pytest.raises(
        ValueError, match=r"column 'tp' has a null \(at tp=None, sample=1, label='b'\)"
    ):
        engine.evaluate(df, by="tp")
    with pytest.raises(ValueError, match=r"column 'support' not found"):
        engine.evaluate(table(), by="support")


@pytest.mark.parametrize(
    ("function", "by", "message"),
    [
        (rm.evaluate, "lrap", r"by column 'lrap' has the name of a result column \(lrap, f1"),
        (rm.label_report, "support", r"by column 'support' has the name of a result column"),
        (rm.lwlrap_per_class, "weight", r"by column 'weight' has the name of a result column"),
        (rm.evaluate, "score", r"by column 'score' is also the score column"),
    ],
)  # fmt: skip
def test_a_by_column_named_like_a_result_column_is_refused(function, by, message):
    df = two_models().with_columns(
        pl.col("model").alias("lrap"),
        pl.col("model").alias("support"),
        pl.col("model").alias("weight"),
    )
    options = {"metrics": ["lrap", "f1_macro"]} if function is rm.evaluate else {}
    with pytest.raises(ValueError, match=message):
        function(df, by=by, **options)


def test_a_by_column_named_like_a_metric_not_requested_works():
    df = two_models().rename({"model": "lrap"})
    assert rm.evaluate(df, ["ndcg"], by="lrap")["lrap"].to_list() == ["m", "n"]


def ordered(rows: list[tuple]) -> bool:
    return all(a < b for a, b in zip(rows, rows[1:], strict=False))


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.integers(0, 2), st.integers(0, 2), st.sampled_from(["a", "b", "c"])),
        min_size=1, max_size=8,
    ),
    sort=st.booleans(),
)  # fmt: skip
def test_the_ordered_rows_fact_is_exactly_strict_order(rows, sort):
    # Rows strictly ordered by (by, sample, label) cannot repeat a (sample, label): the row
    # checks then spare the per-sample distinct count. Anything else must say False.
    rows = sorted(rows) if sort else rows
    df = pl.DataFrame(
        {"m": [r[0] for r in rows], "sample": [r[1] for r in rows], "label": [r[2] for r in rows],
         "score": [0.5] * len(rows), "truth": [1] * len(rows)}
    )  # fmt: skip
    cols = Columns.of(by="m")
    facts = validation.check_rows(df.lazy(), cols, parse_keys(["lrap"]), ordered=True)
    assert facts.unique_labels == ordered(rows)


def test_ordered_rows_with_float_ids_take_the_distinct_count():
    # -0.0 and 0.0 order apart but group together: float keys never take the ordered path.
    df = pl.DataFrame({
        "sample": [-0.0, 0.0], "label": ["a", "a"], "score": [0.1, 0.2], "truth": [1, 0],
    })  # fmt: skip
    facts = validation.check_rows(df.lazy(), Columns.of(), parse_keys(["lrap"]), ordered=True)
    assert not facts.unique_labels
    with pytest.raises(ValueError, match=r"repeats label 'a' within one sample"):
        rm.evaluate(df, ["lrap"])


def test_ordered_rows_with_a_missing_label_are_refused(engine):
    df = pl.DataFrame({
        "sample": [1, 1, 2, 3, 3], "label": ["a", "b", "b", "a", "b"],
        "score": [0.1, 0.2, 0.3, 0.4, 0.5], "truth": [1, 0, 0, 1, 0],
    })  # fmt: skip
    assert validation.check_rows(
        df.lazy(), Columns.of(), parse_keys(["lrap"]), ordered=True
    ).unique_labels
    with pytest.raises(ValueError, match=r"different label sets: sample=2 has 1 labels"):
        engine.evaluate(df)


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ([0, 0, 0, 1], r"repeats label 0 within one sample \(sample=1\)"),
        ([5, 5, 5, 2000], r"repeats label 5 within one sample \(sample=1\)"),
        ([0, 1, 0, 2], r"different label sets: sample=\d has 2 labels .* 3 distinct"),
        ([0, 1, 0, 5000], r"different label sets: sample=\d has 2 labels .* 3 distinct"),
    ],
    ids=["repeat-narrow", "repeat-wide", "sets-narrow", "sets-wide"],
)
def test_integer_labels_narrow_or_wide(engine, labels, message):
    # Narrow integer labels are counted by bits on DuckDB, wide ones by a distinct count.
    with pytest.raises(ValueError, match=message):
        engine.evaluate(table(label=labels).sample(fraction=1.0, shuffle=True, seed=1))


@pytest.mark.parametrize(
    "labels", [[0, 10, 5000], [-(2**63), 0, 2**63 - 1]], ids=["sparse", "int64-extremes"]
)
def test_integer_labels_sparser_than_their_range(engine, labels):
    # A table's label count is first bounded by its integer labels' range, which these exceed:
    # the samples' counts fall short of the bound, and the exact count then accepts them.
    df = pl.DataFrame({
        "sample": [1, 1, 1, 2, 2, 2], "label": labels * 2,
        "score": [0.9, 0.1, 0.5, 0.4, 0.6, 0.6], "truth": [1, 0, 0, 0, 1, 1],
    })  # fmt: skip
    named = df.with_columns(pl.col("label").cast(pl.String))
    assert_frame_equal(engine.evaluate(df), engine.evaluate(named))


def test_one_integer_label_for_ndcg(engine):
    df = table(label=[7] * 4, sample=[1, 2, 3, 4])
    with pytest.raises(ValueError, match=r"ndcg needs at least 2 labels"):
        engine.evaluate(df, metrics=["ndcg"])
