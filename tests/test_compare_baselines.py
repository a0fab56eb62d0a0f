"""``rm.compare``'s baseline: with several ``by`` columns a tuple or a dict of one value per
column (the columns name a model together), refused naming the columns when its shape does not
match them; a text baseline read as its column's type, as ``rankmetrics compare --baseline``
gives it."""

import json
import re

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankmetrics as rm
from polars_rankmetrics.cli import main

KEYS = ["lrap", "ndcg@3", "precision@2"]
BY = ["model", "slice"]
# 8 samples: the permutation test enumerates its 2^8 sign patterns (n_resamples >= 256), so
# the p-values are exact and do not depend on the draws.
EXACT = {"n_resamples": 1000, "correction": None}
PAIRED = ["value", "baseline_value", "delta", "p_value", "wins", "ties", "losses"]


def sliced() -> pl.DataFrame:
    """Two models in two slices: each (model, slice) pair scores the same 8 samples of 4
    labels."""
    rng = np.random.default_rng(7)
    truth = (rng.random((8, 4)) < 0.4).astype(int)
    truth[:, 0] = 1
    parts = []
    for slice_ in ("s", "t"):
        for model in ("baseline", "candidate"):
            score = np.round(rng.random((8, 4)), 2)
            parts.append(
                rm.from_dense(truth, score).with_columns(model=pl.lit(model), slice=pl.lit(slice_))
            )
    return pl.concat(parts)


def typed_models(dtype, values) -> pl.DataFrame:
    """Slice s's two models, named by ``values`` (the baseline's first) in a column of
    ``dtype``."""
    df = sliced().filter(slice="s").drop("slice")
    baseline = pl.col("model") == "baseline"
    named = pl.when(baseline).then(pl.lit(values[0])).otherwise(pl.lit(values[1]))
    return df.with_columns(model=named.cast(dtype))


def _cli(arguments, capsys):
    """``rankmetrics ARGUMENTS`` in process: its status, stdout and stderr's lines."""
    try:
        status = main(arguments)
    except SystemExit as usage:
        status = usage.code
    out, err = capsys.readouterr()
    return status, out, err.splitlines()


# What a baseline of the wrong shape is told, by the number of by columns.
SHAPES = {
    1: "one value (or a tuple or a dict of one)",
    2: "2 values, one per column (a tuple or a dict; on the command line, --baseline VALUE,VALUE)",
    3: "3 values, one per column (a tuple or a dict; on the command line, --baseline "
    "VALUE,VALUE,VALUE)",
}


def _shape_error(by, baseline) -> str:
    return re.escape(f"by={by!r} needs a baseline of {SHAPES[len(by)]}, not {baseline!r}")


@pytest.mark.parametrize("name", ["polars", "duckdb"])
def test_several_by_columns_name_a_model_together(name):
    df = sliced()
    got = rm.compare(df, KEYS, by=BY, baseline=("baseline", "s"), engine=name, **EXACT)
    assert got.select(BY).unique(maintain_order=True).rows() == [
        ("baseline", "t"), ("candidate", "s"), ("candidate", "t"),
    ]  # fmt: skip
    assert got["metric"].to_list() == KEYS * 3
    # The same comparison as of one column naming each pair.
    named = df.with_columns(name=pl.concat_str("model", "slice", separator="|")).drop(BY)
    one = rm.compare(named, KEYS, by="name", baseline="baseline|s", **EXACT)
    split = pl.col("name").str.split_exact("|", 1).struct.rename_fields(BY)
    expected = one.select(split.struct.unnest(), pl.exclude("name"))
    assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-12)
    # The candidate of the baseline's slice: as comparing that slice's rows alone.
    alone = rm.compare(df.filter(slice="s").drop("slice"), KEYS, by="model", **EXACT)
    candidate = got.filter(model="candidate", slice="s")
    assert_frame_equal(candidate.select(PAIRED), alone.select(PAIRED), rel_tol=1e-12)


def test_a_tuple_a_list_and_a_dict_name_the_same_baseline():
    df = sliced()
    expected = rm.compare(df, KEYS, by=BY, baseline=("candidate", "t"), **EXACT)
    for baseline in (["candidate", "t"], {"slice": "t", "model": "candidate"}):
        assert_frame_equal(rm.compare(df, KEYS, by=BY, baseline=baseline, **EXACT), expected)
    # One by column: the value, or a tuple or dict of one.
    part = df.filter(slice="s")
    expected = rm.compare(part, KEYS, by="model", baseline="baseline", **EXACT)
    for baseline in (("baseline",), ["baseline"], {"model": "baseline"}):
        assert_frame_equal(rm.compare(part, KEYS, by="model", baseline=baseline, **EXACT), expected)


def test_pairs_of_other_samples_are_refused_or_dropped():
    # Slice t holds samples 4 to 11, slice s 0 to 7: the pairs of different slices share 4.
    df = sliced()
    other = df.with_columns(
        sample=pl.when(slice="t").then(pl.col("sample") + 4).otherwise("sample")
    )
    with pytest.raises(
        ValueError,
        match=r"model='baseline', slice='t' and the baseline model='baseline', slice='s' do not "
        r"hold the same samples",
    ):
        rm.compare(other, ["lrap"], by=BY, baseline=("baseline", "s"))
    dropped = rm.compare(other, ["lrap"], by=BY, baseline=("baseline", "s"), on_missing="drop")
    counts = dropped.select("slice", total=pl.col("wins") + pl.col("ties") + pl.col("losses"))
    assert counts.rows() == [("t", 4), ("s", 8), ("t", 4)]


@pytest.mark.parametrize(
    "by, baseline",
    [
        (BY, "baseline"),
        (BY, ("baseline",)),
        (BY, ("baseline", "s", "x")),
        (BY, {"model": "baseline"}),
        (BY, {"model": "baseline", "run": "s"}),
        (BY, {"model": "baseline", "slice": "s", "run": "x"}),
        (["model", "slice", "run"], ("baseline", "s")),
        (["model"], ("baseline", "s")),
        (["model"], {"slice": "s"}),
    ],
    ids=str,
)
def test_a_baseline_of_another_shape_is_refused(by, baseline):
    with pytest.raises(ValueError, match=_shape_error(by, baseline)):
        rm.compare(sliced(), KEYS, by=by, baseline=baseline)
    # Before any work: the data is never read.
    with pytest.raises(ValueError, match=_shape_error(by, baseline)):
        rm.compare("no/such/file.parquet", KEYS, by=by, baseline=baseline)


@pytest.mark.parametrize(
    "dtype, values, text",
    [
        (pl.Int64, (0, 1), "0"),
        (pl.UInt8, (7, 0), "7"),
        (pl.Int32, (-3, 3), "-3"),
        (pl.Boolean, (False, True), "false"),
        (pl.Boolean, (True, False), "true"),
        (pl.Float64, (0.5, 1.5), "0.5"),
        (pl.Float64, (0.1, 0.2), "0.1"),
        (pl.Float64, (1e-3, 1.0), "1e-3"),
        (pl.Float32, (0.1, 0.2), "0.1"),
    ],
    ids=str,
)
def test_a_text_baseline_reads_as_its_column_type(dtype, values, text):
    df = typed_models(dtype, values)
    value = pl.Series([values[0]], dtype=dtype)[0]
    expected = rm.compare(df, KEYS, by="model", baseline=value, **EXACT)
    assert expected["model"].unique().to_list() == [pl.Series([values[1]], dtype=dtype)[0]]
    assert_frame_equal(rm.compare(df, KEYS, by="model", baseline=text, **EXACT), expected)
    with_slice = df.with_columns(slice=pl.lit("s"))
    by_both = rm.compare(with_slice, KEYS, by=["slice", "model"], baseline=("s", text), **EXACT)
    assert_frame_equal(by_both.drop("slice"), expected)


@pytest.mark.parametrize(
    "dtype, text, expected",
    [
        (pl.Int64, "zero", "an integer such as '0'"),
        (pl.Int64, "1.0", "an integer such as '0'"),
        (pl.Int64, " 0", "an integer such as '0'"),
        (pl.UInt8, "-1", "an integer such as '0'"),
        (pl.Boolean, "False", "true or false"),
        (pl.Boolean, "0", "true or false"),
        (pl.Float64, "half", "a number such as '0.5'"),
    ],
    ids=str,
)
def test_a_text_that_does_not_read_as_the_column_type_is_refused(dtype, text, expected):
    df = typed_models(dtype, (0, 1))
    message = (
        f"the baseline's model is the text {text!r}, which does not read as the type of by "
        f"column 'model', {dtype}: give {expected}"
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        rm.compare(df, KEYS, by="model", baseline=text)


def test_no_other_value_is_converted():
    df = typed_models(pl.String, ("0", "1"))
    assert rm.compare(df, KEYS, by="model", baseline="0")["model"].unique().to_list() == ["1"]
    with pytest.raises(
        ValueError,
        match=re.escape(
            "the baseline model=0 is not a value of the by column(s) (found: model='0', model='1')"
        ),
    ):
        rm.compare(df, KEYS, by="model", baseline=0)


def test_states_take_the_same_baselines():
    df = sliced()
    states = rm.state(df, KEYS, by=BY, intervals=True)
    options = {"bootstrap": "poisson", "n_resamples": 999, "correction": None}
    got = rm.compare(states, KEYS, by=BY, baseline={"model": "baseline", "slice": "s"}, **options)
    expected = rm.compare(df, KEYS, by=BY, baseline=("baseline", "s"), **options)
    # States hold no per-sample values: no wins, ties, losses or effect size.
    per_sample = ("effect_size", "wins", "ties", "losses")
    assert_frame_equal(got.drop(per_sample), expected.drop(per_sample), rel_tol=1e-9)
    assert got["effect_size"].null_count() == got.height
    with pytest.raises(ValueError, match=_shape_error(BY, "baseline")):
        rm.compare(states, KEYS, by=BY, baseline="baseline", **options)
    numbered = typed_models(pl.Int64, (0, 1))
    states = rm.state(numbered, KEYS, by="model", intervals=True)
    assert_frame_equal(
        rm.compare(states, KEYS, by="model", baseline="0", **options),
        rm.compare(states, KEYS, by="model", baseline=0, **options),
    )


def _compared(out: str) -> pl.DataFrame:
    return pl.DataFrame(json.loads(out))


@pytest.mark.parametrize("by", [["--by", "model,slice"], ["--by", "model", "--by", "slice"]])
def test_the_command_line_gives_one_baseline_value_per_by_column(tmp_path, capsys, by):
    df = sliced()
    path = str(tmp_path / "sliced.parquet")
    df.write_parquet(path)
    options = ["--metrics", ",".join(KEYS), "--n-resamples", "1000", "--correction", "none"]
    status, out, err = _cli(
        ["compare", path, *by, "--baseline", "baseline,s", *options, "--format", "json"], capsys
    )
    assert status == 0, err
    expected = rm.compare(df, KEYS, by=BY, baseline=("baseline", "s"), **EXACT)
    assert_frame_equal(_compared(out), expected, rel_tol=1e-12)
    # The paper's table names the baseline's row as it names the others: "model, slice".
    status, out, err = _cli(["compare", path, *by, "--baseline", "baseline,s", *options,
                             "--format", "latex"], capsys)  # fmt: skip
    assert status == 0, err
    names = [line.split(" & ")[0] for line in out.splitlines() if " & " in line][1:]
    assert names[0] == "baseline, s" and "candidate, s" in names and "baseline,s" not in out
    for baseline in ("baseline", "baseline,s,x"):
        status, out, err = _cli(["compare", path, *by, "--baseline", baseline, *options], capsys)
        given = baseline if "," not in baseline else tuple(baseline.split(","))
        assert status == 1 and out == ""
        assert re.fullmatch("rankmetrics: error: " + _shape_error(BY, given), err[-1])


def test_the_command_line_compares_an_integer_model_column(tmp_path, capsys):
    df = typed_models(pl.Int64, (0, 1))
    path = str(tmp_path / "models_int.parquet")
    df.write_parquet(path)
    options = ["--metrics", ",".join(KEYS), "--n-resamples", "1000", "--correction", "none"]
    status, out, err = _cli(["compare", path, "--baseline", "0", *options, "--format", "json"],
                            capsys)  # fmt: skip
    assert status == 0, err
    expected = rm.compare(df, KEYS, by="model", baseline=0, **EXACT)
    assert_frame_equal(_compared(out), expected, rel_tol=1e-12)
    status, out, err = _cli(["compare", path, "--baseline", "zero", *options], capsys)
    assert status == 1
    assert err[-1] == (
        "rankmetrics: error: the baseline's model is the text 'zero', which does not read as "
        "the type of by column 'model', Int64: give an integer such as '0'"
    )


# The sliced table's label 0 has one class in some slices: its ROC AUC warns.
@pytest.mark.filterwarnings("ignore::polars_rankmetrics.UndefinedMetricWarning")
def test_the_html_report_takes_the_same_baselines():
    """html_report's comparison reads its baseline as compare does: a dict of several columns
    and a text for an integer column give compare's rows; a wrong shape is refused."""
    pytest.importorskip("matplotlib")
    df = sliced()
    options = {"by": BY, "ci": 0.9, "n_boot": 50, "seed": 3}
    page = rm.html_report(df, baseline={"slice": "s", "model": "baseline"}, **options)
    expected = rm.compare(df, ["lrap", "ndcg", "coverage_error"], baseline=("baseline", "s"),
                          n_resamples=10_000, n_boot=50, ci=0.9, seed=3, by=BY)  # fmt: skip
    assert page.comparison is not None
    shown = page.comparison.filter(pl.col("metric") == "lrap").sort(BY)
    assert shown["delta"].to_list() == pytest.approx(
        expected.filter(pl.col("metric") == "lrap").sort(BY)["delta"].to_list()
    )
    with pytest.raises(ValueError, match=_shape_error(BY, "baseline")):
        rm.html_report(df, baseline="baseline", **options)
    numbered = typed_models(pl.Int64, [0, 1])
    page = rm.html_report(numbered, baseline="0", by="model", n_boot=50, seed=3)
    assert page.comparison is not None and page.comparison["model"].to_list()[0] == 1
