"""Bad input: a ValueError naming the column, the problem and an offending sample."""

import polars as pl
import pytest

import polars_rankmetrics as rm


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
        r"'score' \(score\) must be numeric",
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


@pytest.mark.parametrize("name", ["support", "tp", "lrap", "__group"])
def test_a_by_column_named_like_a_result_or_internal_column_is_refused(engine, name):
    df = rm.from_dense([[1, 0], [0, 1]], [[0.9, 0.1], [0.2, 0.8]]).with_columns(
        pl.lit("m").alias(name)
    )
    with pytest.raises(ValueError, match=f"by column '{name}' has"):
        engine.evaluate(df, ["lrap", "f1_macro"], by=name)


@pytest.mark.parametrize("name", ["weight", "rows", "labels", "grp", "k", "min_labels"])
def test_other_by_column_names_work(name):
    df = rm.from_dense([[1, 0], [0, 1]], [[0.9, 0.1], [0.2, 0.8]]).with_columns(
        pl.lit("m").alias(name)
    )
    for engine in ("polars", "duckdb"):
        result = rm.evaluate(df, ["lrap", "f1_macro", "roc_auc_micro"], by=name, engine=engine)
        assert result.columns == [name, "lrap", "f1_macro", "roc_auc_micro"]
        assert result["lrap"][0] == 1.0
