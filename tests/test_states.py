"""Evaluation states: finalize(any merge of states) is evaluate(the union of their data)."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import warnings

import numpy as np
import polars as pl
import pytest
from conftest import ENGINES
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from strategies import long_tables

import polars_rankmetrics as rm
from polars_rankmetrics.outputs import TEMPORARY_MARK
from polars_rankmetrics.states import format as fmt

RANKING = ["coverage_error", "lrap", "ranking_loss", "lwlrap", "ndcg", "dcg@3"]
SAMPLES = ["f1_samples", "precision_samples", "hamming_loss", "subset_accuracy",
           "average_precision_samples", "roc_auc_samples"]  # fmt: skip
LABELS = ["precision_micro", "f1_macro", "recall_weighted", "jaccard_macro"]
CURVES = ["average_precision_macro", "roc_auc_micro", "roc_auc_weighted"]
EVERY_KEY = [*RANKING, *SAMPLES, *LABELS, *CURVES]


@pytest.fixture(scope="module")
def example() -> pl.DataFrame:
    return pl.read_parquet("data/example.parquet")


def _half(r: int) -> pl.Expr:
    return pl.col("sample").hash(3) % 2 == r


def _quiet(function, *args, **kwargs):
    """``function``'s result and the text of the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = function(*args, **kwargs)
    return result, sorted(str(w.message) for w in caught)


def _split(df: pl.DataFrame, parts: int, seed: int) -> list[pl.DataFrame]:
    """``df`` split into ``parts`` partitions of whole samples (some maybe empty)."""
    samples = df["sample"].unique().sort()
    rng = np.random.default_rng(seed)
    part_of = pl.DataFrame({"sample": samples, "__part": rng.integers(0, parts, len(samples))})
    joined = df.join(part_of, on="sample")
    return [joined.filter(pl.col("__part") == p).drop("__part") for p in range(parts)]


@settings(max_examples=40, deadline=None)
@given(long_tables(), st.integers(1, 3), st.integers(0, 1000), st.booleans())
def test_finalize_of_the_states_of_partitions_is_evaluate_of_their_union(
    table, parts, seed, with_model
):
    df, _, _, weights = table
    if with_model:  # two models over the same samples, the second with shifted scores
        df = pl.concat([
            df.with_columns(model=pl.lit("a")),
            df.with_columns(model=pl.lit("b"), score=pl.col("score").reverse()),
        ])  # fmt: skip
    by = "model" if with_model else None
    options = {"weight": "weight" if weights is not None else None, "by": by}
    # A partition is a table: evaluate refuses one whose weights sum to 0, and so does state.
    pieces = [
        p for p in _split(df, parts, seed)
        if p.height and (weights is None or p["weight"].sum() > 0)
    ]  # fmt: skip
    expected, expected_warnings = _quiet(rm.evaluate, pl.concat(pieces), EVERY_KEY, **options)
    states = [rm.state(p, EVERY_KEY, **options) for p in pieces]
    found, found_warnings = _quiet(rm.finalize, states, by=by)
    assert_frame_equal(found, expected, check_exact=False, rel_tol=1e-12, abs_tol=1e-12)
    assert found_warnings == expected_warnings


def _label_set_message(message: str) -> str:
    """A refusal for different label sets without the sample or state it names and the label:
    the counts it gives."""
    found = re.search(r" has (\d+) labels in column .* but the table has (\d+) distinct", message)
    assert message.startswith("samples have different label sets: ") and found, message
    return found.group(0)


@settings(max_examples=25, deadline=None)
@given(long_tables(min_labels=3), st.integers(2, 3), st.integers(0, 1000), st.data())
def test_finalize_refuses_label_sets_exactly_where_evaluate_refuses_the_union(
    table, parts, seed, data
):
    """Partitions some of which lack some labels: finalize of their states refuses exactly
    where evaluate of their union does, with the same counts (a partition's own labels are
    whole: each state accepts its partition)."""
    df, _, _, weights = table
    labels = df["label"].unique().sort().to_list()
    pieces = []
    for piece in _split(df, parts, seed):
        dropped = data.draw(st.lists(st.sampled_from(labels), max_size=len(labels) - 2))
        piece = piece.filter(~pl.col("label").is_in(dropped))
        if piece.height and (weights is None or piece["weight"].sum() > 0):
            pieces.append(piece)
    options = {"weight": "weight" if weights is not None else None}
    states = [rm.state(p, ["lrap"], zero_division=0, **options) for p in pieces]
    try:
        expected = rm.evaluate(pl.concat(pieces), ["lrap"], zero_division=0, **options)
    except ValueError as error:
        refused = str(error)
        found = _refusal(rm.finalize, states)
        assert _label_set_message(found) == _label_set_message(refused)
        assert re.search(r"; label .* is not in it but in ", found)
    else:
        assert_frame_equal(rm.finalize(states), expected, check_exact=False, rel_tol=1e-12)


@pytest.mark.parametrize("engine", ENGINES, ids=str)
def test_every_engine_gives_the_same_state(engine, example):
    keys = [*RANKING, "f1_micro", "roc_auc_macro"]
    small = example.filter(
        pl.col("sample").is_in(example["sample"].unique().sort().head(30).implode())
    )
    expected = rm.state(small, keys, by="model", zero_division=0, intervals=True)
    found = engine._call(rm.state, small, keys, by="model", zero_division=0, intervals=True)
    assert_frame_equal(found, expected, check_exact=False, rel_tol=1e-12)


@pytest.fixture
def daily(example):
    """The example's samples spread over 4 days, as a pipeline writes them."""
    return example.with_columns(day=(pl.col("sample").hash(7) % 4).cast(pl.Int32))


# Labels of one class in a day, on purpose: the warning is the union's, tested elsewhere.
@pytest.mark.filterwarnings("ignore::polars_rankmetrics.UndefinedMetricWarning")
def test_a_by_column_left_out_is_merged_over_and_a_filter_is_a_window(daily):
    keys = ["lrap", "ndcg@5", "f1_micro", "average_precision_macro"]
    states = rm.state(daily, keys, by=["model", "day"], zero_division=0)
    assert_frame_equal(
        rm.finalize(states, by="model"), rm.evaluate(daily, keys, by="model", zero_division=0),
        check_exact=False, rel_tol=1e-12,
    )  # fmt: skip
    window = rm.finalize(states.filter(pl.col("day") >= 2), by="model")
    expected = rm.evaluate(daily.filter(pl.col("day") >= 2), keys, by="model", zero_division=0)
    assert_frame_equal(window, expected, check_exact=False, rel_tol=1e-12)
    per_day = rm.finalize(states, by=["model", "day"])
    assert_frame_equal(
        per_day, rm.evaluate(daily, keys, by=["model", "day"], zero_division=0),
        check_exact=False, rel_tol=1e-12,
    )  # fmt: skip
    everything = rm.finalize(states.filter(pl.col("model") == "baseline"))
    assert everything.columns == keys


def test_states_read_from_files_and_globs_and_lazy_frames(daily, tmp_path):
    keys = ["lrap", "f1_micro"]
    for day, part in daily.partition_by("day", as_dict=True).items():
        rm.state(part, keys, by="model", zero_division=0, path=tmp_path / f"day-{day[0]}.parquet")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left
    expected = rm.evaluate(daily, keys, by="model", zero_division=0)
    for states in (
        str(tmp_path / "day-*.parquet"),
        sorted(tmp_path.glob("*.parquet")),
        pl.scan_parquet(tmp_path / "*.parquet"),
    ):
        assert_frame_equal(rm.finalize(states, by="model"), expected, check_exact=False,
                           rel_tol=1e-12)  # fmt: skip


def test_a_folder_of_states_is_read_without_a_leftover_temporary_file(daily, tmp_path):
    """A writer killed mid-write leaves ``.NAME.tmp-XXXXXXXX`` (part of a Parquet file): a
    folder of states is its ``*.parquet`` files, that one excluded, from Python and the command."""
    keys = ["lrap", "f1_micro"]
    for day, part in daily.partition_by("day", as_dict=True).items():
        rm.state(part, keys, by="model", zero_division=0, path=tmp_path / f"day-{day[0]}.parquet")
    whole = (tmp_path / "day-0.parquet").read_bytes()
    (tmp_path / f".day-9.parquet{TEMPORARY_MARK}0badc0de").write_bytes(whole[: len(whole) // 2])
    expected = rm.evaluate(daily, keys, by="model", zero_division=0)
    for folder in (tmp_path, str(tmp_path)):
        assert_frame_equal(rm.finalize(folder, by="model"), expected, check_exact=False,
                           rel_tol=1e-12)  # fmt: skip
    done = _command("evaluate", ".", "--by", "model", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert_frame_equal(pl.DataFrame(json.loads(done.stdout)), expected, check_exact=False,
                       rel_tol=1e-12)  # fmt: skip


def test_the_size_of_a_state_does_not_grow_with_the_samples():
    rng = np.random.default_rng(0)

    def table(n):
        return rm.from_dense(rng.integers(0, 2, (n, 5)), rng.random((n, 5)).round(2))

    small, large = (rm.state(table(n), ["lrap", "f1_macro", "roc_auc_macro"]) for n in (300, 3000))
    # The curves hold (label, distinct score): at most 5 x 101 rows in both.
    assert large.height <= small.height + 2 * 5 * 101
    assert large.filter(pl.col("rm_part") == "sketch").height == fmt.SKETCH


def test_states_of_different_parameters_do_not_merge(example):
    first = rm.state(example, ["f1_micro"], by="model", threshold=0.5, zero_division=0)
    second = rm.state(example, ["f1_micro"], by="model", threshold=0.4, zero_division=0)
    with pytest.raises(ValueError, match="different threshold do not merge: 0.5 and 0.4"):
        rm.finalize([first, second.with_columns(model=pl.lit("other"))], by="model")
    other_keys = rm.state(example, ["lrap"], by="model")
    with pytest.raises(ValueError, match=r"different metrics do not merge: \['f1_micro'\]"):
        rm.finalize([first, other_keys], by="model")


def test_a_sample_in_two_merged_states_is_refused_or_warned(example):
    state = rm.state(example, ["lrap"], by="model")
    with pytest.raises(ValueError, match="share samples .*model='baseline'.*128 of the 128"):
        rm.finalize([state, state], by="model")
    with pytest.warns(UserWarning, match="share samples"):
        rm.finalize([state, state], by="model", overlap="warn")
    # Two models over the same samples merge freely while by keeps them apart ...
    rm.finalize(state, by="model")
    # ... and not when merged over.
    with pytest.raises(ValueError, match="share samples \\(the one group\\)"):
        rm.finalize(state)


def test_a_small_overlap_is_seen_with_its_estimated_share():
    rng = np.random.default_rng(1)
    n = 4000
    df = rm.from_dense(rng.integers(0, 2, (n, 3)), rng.random((n, 3)))
    first = rm.state(df.filter(pl.col("sample") < 2400), ["lrap"])
    second = rm.state(df.filter(pl.col("sample") >= 1600), ["lrap"])  # 800 shared: 20% of 4000
    with pytest.raises(ValueError, match=r"an estimated (1\d|2\d)% of its samples") as error:
        rm.finalize([first, second])
    assert "held by more than one state" in str(error.value)


def test_a_state_of_a_newer_format_or_not_a_state_is_refused(example):
    state = rm.state(example, ["lrap"], by="model")
    with pytest.raises(ValueError, match=f"format {fmt.FORMAT + 1}, newer than this version"):
        rm.finalize(state.with_columns(rm_format=pl.lit(fmt.FORMAT + 1, pl.Int32)), by="model")
    with pytest.raises(ValueError, match="not an evaluation state: no column 'rm_part'"):
        rm.finalize(example, by="model")
    with pytest.raises(ValueError, match="by column 'day' is not a by column of the states"):
        rm.finalize(state, by="day")
    with pytest.raises(ValueError, match="the states hold no ndcg"):
        rm.finalize(state, ["ndcg"], by="model")
    with pytest.raises(ValueError, match="no state file at"):
        rm.finalize("/nonexistent/*.parquet")
    with pytest.raises(ValueError, match="a state has format 1, which records no label sets"):
        rm.finalize([state, state.with_columns(rm_format=pl.lit(1, pl.Int32))], by="model")


def _refusal(function, *args, **kwargs) -> str:
    with pytest.raises(ValueError) as error:
        function(*args, **kwargs)
    return str(error.value)


def _evaluates_message(refused: str, sample: str, state: str, label: str, holder: str) -> str:
    """evaluate's message on the union, the sample it names replaced by the state, with the
    label and a state holding it."""
    assert f"sample={sample!r}" in refused
    named = refused.replace(f"sample={sample!r}", state)
    return f"{named}; label {label!r} is not in it but in {holder}"


def test_states_whose_label_sets_differ_are_refused_with_evaluates_message(daily, tmp_path):
    """A day without label tag_07 for the candidate model: evaluate of the union refuses the
    candidate's samples of that day; finalize of the days' states refuses with the same
    message, a state of that day in place of its sample, naming the label and a state that
    holds it: states as files, a by column merged over, the command."""
    keys = ["lrap", "f1_micro"]
    lacking = pl.col("label") == "tag_07", pl.col("day") == 2, pl.col("model") == "candidate"
    data = daily.filter(~pl.all_horizontal(lacking))
    refused = _refusal(rm.evaluate, data, keys, by="model")
    first = data.filter(pl.col("day") == 2, pl.col("model") == "candidate")["sample"].min()
    assert refused == (
        f"samples have different label sets: model='candidate', sample={first!r} has 39 labels "
        "in column 'label' but the table has 40 distinct labels; every sample must carry the "
        "same labels"
    )
    for (day,), part in data.partition_by("day", as_dict=True).items():
        rm.state(part, keys, by="model", path=tmp_path / f"day-{day}.parquet")
    path = str(tmp_path / "day-{}.parquet")
    expected = _evaluates_message(
        refused, first, f"state={path.format(2)!r}", "tag_07",
        f"model='candidate', state={path.format(0)!r}",
    )  # fmt: skip
    assert _refusal(rm.finalize, str(tmp_path / "day-*.parquet"), by="model") == expected
    # The baseline's days carry every label: its states merge, to evaluate's numbers.
    baseline = pl.col("model") == "baseline"
    assert_frame_equal(
        rm.finalize(pl.scan_parquet(tmp_path / "*.parquet").filter(baseline), by="model"),
        rm.evaluate(data.filter(baseline), keys, by="model"), check_exact=False, rel_tol=1e-12,
    )  # fmt: skip
    by_day = rm.state(data, keys, by=["model", "day"])
    expected = _evaluates_message(refused, first, "day=2", "tag_07", "model='candidate', day=0")
    assert _refusal(rm.finalize, by_day, by="model") == expected
    # Without the column that tells the days apart, the label sets still are.
    assert _refusal(rm.finalize, by_day.drop("day"), by="model") == (
        "samples have different label sets: model='candidate' has 39 labels in column 'label' "
        "but the table has 40 distinct labels; every sample must carry the same labels; label "
        "'tag_07' is not in it but in another of the merged states"
    )
    # Each day apart is what evaluate gives each day.
    assert_frame_equal(
        rm.finalize(by_day, by=["model", "day"]), rm.evaluate(data, keys, by=["model", "day"]),
        check_exact=False, rel_tol=1e-12,
    )  # fmt: skip
    done = _command("evaluate", "day-*.parquet", "--by", "model", cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "rankmetrics: error: " + _evaluates_message(
            refused, first, "state='day-2.parquet'", "tag_07",
            "model='candidate', state='day-0.parquet'",
        )
    ]  # fmt: skip


def test_label_sets_of_one_size_that_differ_are_refused():
    """Two partitions of three labels each, {a, b, c} and {a, b, d}: each state is sound, the
    union is not; the first label held by one set and not the other is named."""
    first = pl.DataFrame({"sample": [1, 1, 1], "label": ["a", "b", "c"],
                          "score": [0.9, 0.5, 0.1], "truth": [1, 0, 0]})  # fmt: skip
    second = pl.DataFrame({"sample": [2, 2, 2], "label": ["a", "b", "d"],
                           "score": [0.2, 0.5, 0.7], "truth": [0, 1, 1]})  # fmt: skip
    refused = _refusal(rm.evaluate, pl.concat([first, second]), ["lrap"])
    assert refused.startswith("samples have different label sets: sample=1 has 3 labels in ")
    states = [rm.state(part, ["lrap"]) for part in (first, second)]
    assert _refusal(rm.finalize, states) == _evaluates_message(
        refused, 1, "state='states[1]'", "c", "state='states[0]'"
    )


def _fingerprint(texts: list[str]) -> int:
    """The documented fingerprint of a label set, written out: per label the md5 of its text,
    its first two groups of 8 hex digits a and b, summed as a div 2 and b div 2 modulo
    2^31 - 1."""
    p = 2**31 - 1
    digests = [hashlib.md5(t.encode()).hexdigest() for t in texts]
    high = sum(int(d[:8], 16) // 2 for d in digests) % p
    low = sum(int(d[8:16], 16) // 2 for d in digests) % p
    return high * 2**31 + low


@pytest.mark.parametrize("labels", [["a", "é", "日本語", "o'brien", 'q"x', "🙂"], [0, -3, 2**40]])
def test_the_label_set_is_recorded_with_its_documented_fingerprint(labels):
    rng = np.random.default_rng(4)
    n = len(labels)
    table = pl.DataFrame({
        "model": ["m"] * 3 * n + ["k"] * 3 * (n - 1),
        "sample": [s for s in range(3) for _ in labels] + [s for s in range(3) for _ in labels[1:]],
        "label": [*(labels * 3), *(labels[1:] * 3)],
        "score": rng.random(3 * (2 * n - 1)), "truth": rng.integers(0, 2, 3 * (2 * n - 1)),
    })  # fmt: skip
    state = rm.state(table.sample(fraction=1.0, shuffle=True, seed=1), ["lrap"], by="model")
    rows = state.filter(pl.col("rm_part") == "labelset")
    texts = [str(label) for label in labels]
    expected = {("m", label, _fingerprint(texts)) for label in labels} | {
        ("k", label, _fingerprint(texts[1:])) for label in labels[1:]
    }
    assert set(rows.select("model", "rm_label", "rm_unit").rows()) == expected
    assert rows["rm_name"].unique().to_list() == [fmt.STATES] and (rows["rm_value"] == 1).all()
    assert _fingerprint(texts) != _fingerprint(texts[1:]) < 2**62


def test_bad_input_is_refused_as_evaluate_refuses_it(example):
    bad = example.with_columns(score=pl.when(pl.col("sample") == "clip_00003").then(None)
                               .otherwise(pl.col("score")))  # fmt: skip
    with pytest.raises(ValueError) as expected:
        rm.evaluate(bad, ["lrap"], by="model")
    with pytest.raises(ValueError) as found:
        rm.state(bad, ["lrap"], by="model")
    assert str(found.value) == str(expected.value)
    with pytest.raises(ValueError, match="names starting with 'rm_'"):
        rm.state(example.rename({"model": "rm_model"}), ["lrap"], by="rm_model")


def test_the_state_records_its_parameters_and_roles(example):
    state = rm.state(example, ["lrap", "f1_micro"], by="model", threshold=0.3, beta=2.0)
    params = json.loads(state["rm_params"][0])
    assert state["rm_params"].n_unique() == 1
    assert state["rm_format"].unique().to_list() == [2]
    assert params["metrics"] == ["lrap", "f1_micro"]
    assert params["threshold"] == 0.3 and params["beta"] == 2.0
    assert params["zero_division"] == "warn"
    assert params["by"] == ["model"]
    assert params["columns"]["sample"] == "sample" and params["columns"]["weight"] is None
    assert list(state.columns) == ["model", *fmt.COLUMNS]


def test_a_top_k_state_with_propensities(example):
    truth = example.filter(pl.col("truth") == 1).select("model", "sample", "label")
    predictions = example.filter(pl.col("score") >= 0.5).select("model", "sample", "label", "score")
    propensities = rm.label_propensities(truth, label="label")
    keys = ["precision@3", "recall@5", "mrr", "psprecision@3", "ndcg@3"]
    options = {"truth_table": truth, "n_labels": 40, "propensities": propensities, "by": "model"}
    # The halves' label sets differ (no prediction of tag_07 in the first): a top-k table's
    # label space is n_labels, and its states record no label set.
    halves = [predictions.filter(_half(0), pl.col("label") != "tag_07"),
              predictions.filter(_half(1))]  # fmt: skip
    assert "tag_07" in set(halves[1]["label"])
    expected = rm.evaluate(pl.concat(halves), keys, **options)
    truths = [truth.filter(_half(r)) for r in (0, 1)]
    states = [
        rm.state(p, keys, **(options | {"truth_table": t}))
        for p, t in zip(halves, truths, strict=True)
    ]
    assert_frame_equal(rm.finalize(states, by="model"), expected, check_exact=False,
                       rel_tol=1e-12)  # fmt: skip
    assert not any((s["rm_part"] == "labelset").any() for s in states)
    other = rm.state(halves[0], keys, **(options | {"truth_table": truths[0], "n_labels": 41}))
    with pytest.raises(ValueError, match="different n_labels do not merge: 40 and 41"):
        rm.finalize([states[1], other], by="model")


# Labels of one class in a day, on purpose: the warning is the union's, tested elsewhere.
@pytest.mark.filterwarnings("ignore::polars_rankmetrics.UndefinedMetricWarning")
@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_intervals_of_merged_states_are_the_poisson_intervals_of_the_union(daily, method):
    keys = ["lrap", "ndcg@5", "f1_micro", "roc_auc_samples"]
    options = {"ci": 0.9, "n_boot": 200, "seed": 7, "ci_method": method}
    expected = rm.evaluate(daily, keys, by="model", bootstrap="poisson", zero_division=0,
                           **options)  # fmt: skip
    states = [
        rm.state(part, keys, by="model", intervals=True, zero_division=0)
        for part in daily.partition_by("day")
    ]
    found = rm.finalize(states, by="model", **options)
    assert_frame_equal(found, expected, check_exact=False, rel_tol=1e-12, abs_tol=1e-12)
    assert (found["lrap_lo"] < found["lrap"]).all() and (found["lrap"] < found["lrap_hi"]).all()


def test_intervals_need_states_kept_with_units(example):
    with pytest.raises(ValueError, match=r"intervals=True"):
        rm.finalize(rm.state(example, ["lrap"], by="model"), by="model", ci=0.95)


def test_the_per_label_report_and_per_class_lwlrap_of_states(daily):
    states = [
        rm.state(part, ["lrap"], by="model", per_label=True, threshold=0.3)
        for part in daily.partition_by("day")
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.UndefinedMetricWarning)
        expected = rm.label_report(daily, by="model", threshold=0.3)
        found = rm.label_report(states, by="model", threshold=0.3)
    assert_frame_equal(found, expected, check_exact=False, rel_tol=1e-12)
    assert_frame_equal(
        rm.lwlrap_per_class(states, by="model"), rm.lwlrap_per_class(daily, by="model"),
        check_exact=False, rel_tol=1e-12,
    )  # fmt: skip
    with pytest.raises(ValueError, match="computed with threshold=0.3: .* pass threshold=0.3"):
        rm.label_report(states, by="model")
    with pytest.raises(ValueError, match=r"per_label=True"):
        rm.lwlrap_per_class(rm.state(daily, ["lrap"], by="model"), by="model")
    with pytest.raises(ValueError, match="engine= does not apply to states"):
        rm.lwlrap_per_class(states, by="model", engine="duckdb")


def _command(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "polars_rankmetrics", *args], capture_output=True, text=True,
        cwd=cwd,
    )  # fmt: skip


def test_the_command_writes_states_and_finalizes_them(daily, tmp_path):
    for (day,), part in daily.partition_by("day", as_dict=True).items():
        part.write_parquet(tmp_path / f"data-{day}.parquet")
        done = _command(
            "state", f"data-{day}.parquet", "--by", "model", "--intervals", "--metrics",
            "lrap,f1_micro", "-o", f"s-{day}.parquet", cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stderr.strip() == f"rankmetrics: wrote s-{day}.parquet"
    done = _command("evaluate", "s-*.parquet", "--by", "model", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    expected = rm.evaluate(daily, ["lrap", "f1_micro"], by="model")
    assert_frame_equal(pl.DataFrame(json.loads(done.stdout)), expected, check_exact=False,
                       rel_tol=1e-12)  # fmt: skip
    interval = _command(
        "evaluate", "s-*.parquet", "--by", "model", "--ci", "0.9", "--bootstrap", "poisson",
        "--metrics", "lrap", "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    expected = rm.evaluate(daily, ["lrap"], by="model", ci=0.9, bootstrap="poisson")
    assert_frame_equal(pl.DataFrame(json.loads(interval.stdout)), expected, check_exact=False,
                       rel_tol=1e-12)  # fmt: skip
    for args, status, message in (
        (["s-0.parquet", "s-0.parquet", "--by", "model"], 1, "share samples"),
        (["s-0.parquet", "--engine", "duckdb"], 2, "--engine does not apply to state files"),
        (["s-*.parquet", "--by", "model", "--ci", "0.9"], 2, "give --bootstrap poisson"),
    ):
        done = _command("evaluate", *args, cwd=tmp_path)
        assert done.returncode == status
        assert done.stderr.startswith("rankmetrics: error: ") and message in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    done = _command("state", "data-0.parquet", "--by", "model", cwd=tmp_path)
    assert done.returncode == 2 and "give -o STATE.parquet" in done.stderr
    # A state is a Parquet file, whatever -o names: another extension is refused.
    done = _command("state", "data-0.parquet", "--by", "model", "-o", "s.csv", cwd=tmp_path)
    assert done.returncode == 2 and "give -o STATE.parquet, not 's.csv'" in done.stderr
    assert not (tmp_path / "s.csv").exists()


def test_compare_of_states_is_the_poisson_compare_of_their_union(daily):
    keys = ["lrap", "ndcg@5", "precision_samples"]
    options = {"baseline": "baseline", "bootstrap": "poisson", "n_boot": 300, "n_resamples": 999,
               "seed": 3, "zero_division": 0}  # fmt: skip
    expected = rm.compare(daily, keys, **options)
    states = [
        rm.state(part, keys, by="model", intervals=True, zero_division=0)
        for part in daily.partition_by("day")
    ]
    found = rm.compare(states, **options)
    counts = ["effect_size", "wins", "ties", "losses"]
    assert found.select(counts).null_count().row(0) == (found.height,) * 4
    assert_frame_equal(found.drop(counts), expected.drop(counts), check_exact=False,
                       rel_tol=1e-12, abs_tol=1e-12)  # fmt: skip
    with pytest.raises(ValueError, match="pass bootstrap='poisson'"):
        rm.compare(states, baseline="baseline")
    plain = rm.state(daily, keys, by="model", zero_division=0)
    with pytest.raises(ValueError, match="intervals=True"):
        rm.compare(plain, **options)
    one_model = daily.filter((pl.col("model") == "baseline") | (pl.col("day") > 0))
    with pytest.raises(ValueError, match="do not hold the same samples"):
        rm.compare(rm.state(one_model, keys, by="model", intervals=True, zero_division=0),
                   **options)  # fmt: skip


def test_the_command_compares_state_files(daily, tmp_path):
    for (day,), part in daily.partition_by("day", as_dict=True).items():
        rm.state(part, ["lrap"], by="model", intervals=True, path=tmp_path / f"s-{day}.parquet")
    done = _command("compare", "s-*.parquet", "--baseline", "baseline", "--bootstrap", "poisson",
                    "--format", "json", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    expected = rm.compare(daily, ["lrap"], baseline="baseline", bootstrap="poisson")
    found = pl.DataFrame(json.loads(done.stdout))
    assert found["p_value"].to_list() == expected["p_value"].to_list()
    table = _command("compare", "s-*.parquet", "--baseline", "baseline", "--bootstrap", "poisson",
                     cwd=tmp_path)  # fmt: skip
    assert table.returncode == 0 and " - " in table.stdout.splitlines()[1] + " "


def test_float_sample_ids_are_refused_by_name():
    df = rm.from_dense([[1, 0], [0, 1]], [[0.9, 0.2], [0.3, 0.7]])
    with pytest.raises(ValueError, match=r"'sample' \(Float64\).*give integer or string ids"):
        rm.state(df.with_columns(pl.col("sample").cast(pl.Float64)), ["lrap"])


@pytest.mark.parametrize("key", ["map", "P_5", "AP", "gm_map"])
def test_trec_eval_measures_are_refused_by_name(key):
    """A state keeps no TREC key: its topics' values need trec_eval's ordering of the run, and
    gm_map is a geometric mean over topics. The library's own retrieval keys are kept."""
    run = pl.DataFrame({"sample": ["q1", "q1", "q2"], "label": ["d1", "d2", "d1"],
                        "score": [2.0, 1.0, 1.0]})  # fmt: skip
    qrels = pl.DataFrame({"sample": ["q1", "q2"], "label": ["d2", "d1"], "truth": [1, 1]})
    if key == "map":
        state = rm.state(run, [key], truth_table=qrels)
        assert_frame_equal(rm.finalize(state), rm.evaluate(run, [key], truth_table=qrels))
        return
    with pytest.raises(ValueError, match=r"a state cannot keep trec_eval's measures \(.*\)"):
        rm.state(run, [key], truth_table=qrels)
