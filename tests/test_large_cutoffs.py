"""Cut-offs and label spaces of any size up to 2**63 - 1: a K past every sample's labels (or past
a top-k table's label space) gives the values of K = that size, at no cost that grows with K;
a larger K or label space is refused naming it, on every engine; the discount sums past the
terms added one by one are exact to double precision."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import polars as pl
import pytest
from scipy import special

import polars_rankmetrics as rm
from polars_rankmetrics import cli
from polars_rankmetrics.metrics import ranks
from polars_rankmetrics.metrics.registry import MAX_INT64, MetricKey, parse_key

ENGINES = ["polars", "duckdb"]
HUGE = (10**10, MAX_INT64)
LABELS = 4  # every sample's labels: the largest sample size
# The run's scores tie within and across the samples' labels; the truth is graded for dcg.
DENSE = pl.DataFrame({
    "sample": [0] * 4 + [1] * 4 + [2] * 4,
    "label": ["a", "b", "c", "d"] * 3,
    "score": [0.9, 0.5, 0.5, 0.1, 0.3, 0.3, 0.3, 0.8, 0.2, 0.7, 0.6, 0.7],
    "truth": [0, 2, 1, 3, 1, 0, 0, 0, 0, 0, 3, 1],
})  # fmt: skip
BINARY = DENSE.with_columns((pl.col("truth") > 0).cast(pl.Int64))
PROPENSITIES = pl.DataFrame({"label": ["a", "b", "c", "d"], "propensity": [0.9, 0.5, 0.3, 0.6]})
RUN = pl.DataFrame({
    "sample": ["q1", "q1", "q1", "q2", "q2"],
    "label": ["a", "b", "c", "d", "a"],
    "score": [0.9, 0.7, 0.7, 0.8, 0.1],
})  # fmt: skip
QRELS = pl.DataFrame({"sample": ["q1", "q1", "q2", "q3"], "label": ["c", "e", "a", "b"]})
JUDGED = QRELS.with_columns(truth=pl.Series([1, 2, 1, 1]))  # graded: the TREC keys and dcg
N_LABELS = 6
# The keys whose value does not read K once K is past every position (precision divides by K).
GRADED_KEYS = ("dcg", "ndcg")
BINARY_KEYS = ("recall", "hit_rate", "mrr", "map", "psndcg", "psprecision_norm", "psndcg_norm")


def _values(data: pl.DataFrame, keys: list[str], engine: str, **options: object) -> dict:
    return rm.evaluate(data, keys, engine=engine, **options).to_dicts()[0]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("k", HUGE)
def test_a_cut_off_past_every_sample_equals_the_largest_sample(engine, k):
    scored = {"propensities": PROPENSITIES}
    for data, names, options in ((DENSE, GRADED_KEYS, {}), (BINARY, BINARY_KEYS, scored)):
        huge = _values(data, [f"{name}@{k}" for name in names], engine, **options)
        largest = _values(data, [f"{name}@{LABELS}" for name in names], engine, **options)
        assert list(huge.values()) == list(largest.values())
    # precision@K divides the hits by K.
    huge = _values(BINARY, [f"precision@{k}", f"psprecision@{k}"], engine, **scored)
    largest = _values(BINARY, [f"precision@{LABELS}", f"psprecision@{LABELS}"], engine, **scored)
    for at_k, at_largest in zip(huge.values(), largest.values(), strict=True):
        assert at_k * k == pytest.approx(at_largest * LABELS, rel=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("k", HUGE)
def test_a_cut_off_past_the_label_space_of_a_top_k_table_cuts_nothing(engine, k):
    binary = {"truth_table": QRELS, "n_labels": N_LABELS}
    graded = {"truth_table": JUDGED, "n_labels": N_LABELS}
    for names, options in ((["dcg", "ndcg"], graded), (["mrr", "map"], binary)):
        huge = _values(RUN, [f"{name}@{k}" for name in names], engine, **options)
        at_space = _values(RUN, [f"{name}@{N_LABELS}" for name in names], engine, **options)
        uncut = _values(RUN, names, engine, **options)
        assert list(huge.values()) == list(at_space.values()) == list(uncut.values())
    for names, options in (
        (["recall", "hit_rate"], binary),
        (["recall_", "success_", "map_cut_", "ndcg_cut_"], graded),
    ):
        huge = _values(RUN, [_key(name, k) for name in names], engine, **options)
        at_space = _values(RUN, [_key(name, N_LABELS) for name in names], engine, **options)
        assert list(huge.values()) == list(at_space.values())
    # trec_eval's P_K divides by K.
    huge = _values(RUN, [f"P_{k}"], engine, **graded)[f"P_{k}"]
    at_space = _values(RUN, [f"P_{N_LABELS}"], engine, **graded)[f"P_{N_LABELS}"]
    assert huge * k == pytest.approx(at_space * N_LABELS, rel=1e-12)


def _key(name: str, k: int) -> str:
    """The library's keys as name@K, trec_eval's (ending in _) as name_K."""
    return f"{name}{k}" if name.endswith("_") else f"{name}@{k}"


def test_a_huge_cut_off_or_label_space_completes_from_the_command_line(tmp_path):
    """The command of the report, as users run it: each run completes (the timeout only guards
    against a pass over K terms) with the values of K = the largest sample."""
    dense, predictions, truth = (
        tmp_path / name for name in ("d.parquet", "p.parquet", "t.parquet")
    )
    DENSE.write_parquet(dense)
    RUN.write_parquet(predictions)
    QRELS.write_parquet(truth)
    for engine in ENGINES:
        done = _command("evaluate", str(dense), "--metrics", "ndcg@10000000000,dcg@100000000",
                        "--engine", engine, "--format", "json")  # fmt: skip
        assert done.returncode == 0, done.stderr
        got = json.loads(done.stdout)
        expected = _values(DENSE, [f"ndcg@{LABELS}", f"dcg@{LABELS}"], engine)
        assert list(got.values()) == pytest.approx(list(expected.values()), rel=1e-15)
        done = _command("evaluate", str(predictions), "--truth-table", str(truth),
                        "--n-labels", "10000000000", "--metrics", "ndcg,dcg@100000000,lrap",
                        "--engine", engine, "--format", "json")  # fmt: skip
        assert done.returncode == 0, done.stderr
        expected = _values(RUN, ["ndcg", "dcg@100000000", "lrap"], engine,
                           truth_table=QRELS, n_labels=10**10)  # fmt: skip
        assert list(json.loads(done.stdout).values()) == pytest.approx(
            list(expected.values()), rel=1e-15
        )


def _command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "polars_rankmetrics.cli", *args],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@pytest.mark.parametrize("text", [
    "ndcg@9223372036854775808", "precision@9223372036854775808", "P_9223372036854775808",
    "nDCG@9223372036854775808", "ndcg@100000000000000000000",
])  # fmt: skip
def test_a_cut_off_past_64_bits_is_refused_naming_the_key(text):
    message = rf"{text}: K must be at most 2\*\*63 - 1 \(9223372036854775807\)"
    with pytest.raises(ValueError, match=message):
        parse_key(text)
    for engine in ENGINES:
        with pytest.raises(ValueError, match=message):
            rm.evaluate(DENSE, [text], engine=engine)


def test_a_cut_off_of_64_bits_is_a_key():
    for text in ("ndcg@9223372036854775807", "P_9223372036854775807", "nDCG@9223372036854775807"):
        assert parse_key(text).k == MAX_INT64


def test_a_cut_off_past_64_bits_is_refused_by_the_key_and_the_sql_command(capsys):
    with pytest.raises(ValueError, match=r"ndcg@9223372036854775808: K must be at most"):
        MetricKey("ndcg", 2**63)
    assert MetricKey("ndcg", MAX_INT64).k == MAX_INT64
    assert cli.main(["sql", "--input", "t", "--k", str(2**63)]) == 1
    assert "k must be at most 2**63 - 1" in capsys.readouterr().err
    assert cli.main(["sql", "--input", "t", "--k", str(MAX_INT64)]) == 0


@pytest.mark.parametrize("engine", ENGINES)
def test_a_label_space_past_64_bits_is_refused(engine, capsys):
    message = r"n_labels must be at most 2\*\*63 - 1 \(9223372036854775807\)"
    for n_labels in (2**63, 10**30):
        with pytest.raises(ValueError, match=message):
            rm.evaluate(RUN, ["ndcg"], truth_table=QRELS, n_labels=n_labels, engine=engine)
        with pytest.raises(ValueError, match=message):
            rm.evaluate(RUN, ["mrr"], truth_table=QRELS, n_labels=n_labels, engine=engine)
    assert cli.main(["sql", "--input", "p", "--truth-table", "t", "--n-labels", str(2**63)]) == 1
    assert "n_labels must be at most 2**63 - 1" in capsys.readouterr().err
    values = _values(RUN, ["ndcg", "lrap"], engine, truth_table=QRELS, n_labels=MAX_INT64)
    assert all(math.isfinite(value) for value in values.values())


LONELY_RUN = pl.DataFrame({"sample": ["q3"], "label": ["x"], "score": [0.5]})
LONELY_TRUTH = QRELS.filter(pl.col("sample") == "q3")


def _unscored_positive_ndcg(n_labels: int, discount: float) -> float:
    """ndcg of q3 (:data:`LONELY_RUN`): one scored label, not true, and one true label, not
    scored, whose block spans positions 2..n_labels: ``(D(n_labels) - D(1)) / (n_labels - 1)``
    over the ideal ``D(1) = 1 / ln 2``."""
    return (discount - 1 / math.log(2)) / (n_labels - 1) * math.log(2)


def _direct_discount(m: int) -> float:
    """``D(m)``, the exactly rounded sum of its m terms."""
    return math.fsum((1.0 / np.log(np.arange(2, m + 2, dtype=np.float64))).tolist())


@pytest.mark.parametrize("engine", ENGINES)
def test_a_large_label_space_reads_the_exact_discount_sum(engine):
    """ndcg over a label space past the terms added one by one reads D(n_labels) exact: against
    the direct sum where that is feasible, and, for 10**10 labels, against the Euler-Maclaurin
    formula from scipy's exponential integral."""
    n_labels = ranks.ORDERED_TERMS + 1000
    options = {"truth_table": LONELY_TRUTH, "n_labels": n_labels}
    got = _values(LONELY_RUN, ["ndcg"], engine, **options)["ndcg"]
    expected = _unscored_positive_ndcg(n_labels, _direct_discount(n_labels))
    assert got == pytest.approx(expected, rel=1e-14)
    n_labels = 10**10
    options = {"truth_table": LONELY_TRUTH, "n_labels": n_labels}
    got = _values(LONELY_RUN, ["ndcg"], engine, **options)["ndcg"]
    expected = _unscored_positive_ndcg(n_labels, _scipy_discount(n_labels))
    assert got == pytest.approx(expected, rel=1e-12)


def _scipy_discount(m: int) -> float:
    """``D(m)`` from its first million terms and the Euler-Maclaurin formula over the rest, the
    integral from scipy's ``expi``: about 1e-15 off."""
    a = 10**6
    head = _direct_discount(a)
    f = 1 / math.log(m + 1)
    tail = (
        special.expi(math.log(m + 1))
        - special.expi(math.log(a + 1))
        + (f - 1 / math.log(a + 1)) / 2
    )
    return head + tail


@pytest.mark.parametrize("m", [4097, 10**6, 10**7])
def test_the_expanded_sums_equal_the_direct_sums(m):
    r = np.arange(1, m + 1, dtype=np.float64)
    for series, terms in (("discount", 1.0 / np.log(r + 1.0)), ("harmonic", 1.0 / r)):
        direct = math.fsum(terms.tolist())
        assert ranks.expanded_sum(m, series) == pytest.approx(direct, rel=1e-15, abs=0)


def test_the_sums_run_on_past_the_terms_added_one_by_one():
    last = ranks.ORDERED_TERMS
    for sum_at, term in ((ranks.cumulative_discount, 1 / math.log(last + 2)),
                         (ranks.harmonic, 1 / (last + 1))):  # fmt: skip
        step = sum_at(last + 1) - sum_at(last)
        assert step == pytest.approx(term, rel=1e-6)
    # H(n) = ln n + Euler's gamma + 1 / (2n) - ...: to double precision at 2**63 - 1.
    assert ranks.harmonic(MAX_INT64) == pytest.approx(math.log(MAX_INT64) + np.euler_gamma,
                                                      rel=1e-15)  # fmt: skip
    # D(n) - D(m) is the integral of 1 / ln(x + 1) from m to n plus (f(n) - f(m)) / 2.
    low, high = 2**62, MAX_INT64
    expected = (special.expi(math.log(high + 1)) - special.expi(math.log(low + 1))
                + (1 / math.log(high + 1) - 1 / math.log(low + 1)) / 2)  # fmt: skip
    got = ranks.cumulative_discount(high) - ranks.cumulative_discount(low)
    assert got == pytest.approx(expected, rel=1e-13)
    sums = [ranks.cumulative_discount(m) for m in (10**8, 10**8 + 1, 10**12, MAX_INT64)]
    assert sums == sorted(sums) and math.isfinite(sums[-1])
