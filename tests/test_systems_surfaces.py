"""Many systems, as people read them: the leaderboard and the all-pairs comparison rendered
(text, Markdown, LaTeX, JSON, CSV), the command line that gives them (``compare --all-pairs``,
``leaderboard``, ``--trec`` over several run files against one qrels) and the HTML report's
systems section (the sorted means, the pairs' p-values as a heat map)."""

from __future__ import annotations

import doctest
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankmetrics as rm
from polars_rankmetrics.cli import main
from polars_rankmetrics.report.chart_data import Means, p_value_matrix
from polars_rankmetrics.report.comparison import Comparison
from polars_rankmetrics.report.leaderboard import Leaderboard

# A leaderboard written by hand: three models, a metric where higher is better (lrap: c best)
# and one where lower is better (coverage_error: a best), with letters.
HAND = pl.DataFrame(
    {
        "model": ["c", "a", "b", "a", "c", "b"],
        "metric": ["lrap"] * 3 + ["coverage_error"] * 3,
        "value": [0.8, 0.7, 0.5, 2.5, 3.0, 4.25],
        "value_lo": [0.75, 0.65, 0.45, 2.0, 2.5, 4.0],
        "value_hi": [0.85, 0.75, 0.55, 3.0, 3.5, 4.5],
        "rank": [1, 2, 3, 1, 2, 3],
        "group": ["a", "ab", "b", "a", "a", "b"],
    }
)


def test_the_leaderboards_latex_prints_letters_as_superscripts_and_the_best_in_bold():
    assert Leaderboard(HAND, ["model"], alpha=0.05, test="tukey_hsd").to_latex().splitlines() == [
        r"\begin{tabular}{lrr}",
        r"\toprule",
        r"Model & lrap $\uparrow$ & coverage\_error $\downarrow$ \\",
        r"\midrule",
        r"c & \textbf{0.8000}$^{\mathrm{a}}$ & 3.0000$^{\mathrm{a}}$ \\",
        r"a & 0.7000$^{\mathrm{ab}}$ & \textbf{2.5000}$^{\mathrm{a}}$ \\",
        r"b & 0.5000$^{\mathrm{b}}$ & 4.2500$^{\mathrm{b}}$ \\",
        r"\bottomrule",
        r"\end{tabular}",
        "% bold: best per metric; models sharing a letter do not differ significantly "
        "(tukey_hsd): adjusted p >= 0.05",
    ]


def test_the_leaderboards_docstring_example_prints_what_the_code_prints():
    from polars_rankmetrics.report import leaderboard

    result = doctest.testmod(leaderboard, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_the_leaderboards_text_and_markdown_hold_every_value_interval_and_letter():
    board = Leaderboard(HAND, ["model"], alpha=0.01)
    markdown = board.to_markdown().splitlines()
    assert markdown[0] == "| model | lrap \u2191 | coverage_error \u2193 |"
    assert markdown[2] == (
        "| c | **0.8000**<sup>a</sup> [0.7500, 0.8500] | 3.0000<sup>a</sup> [2.5000, 3.5000] |"
    )
    assert markdown[3] == (
        "| a | 0.7000<sup>ab</sup> [0.6500, 0.7500] | **2.5000**<sup>a</sup> [2.0000, 3.0000] |"
    )
    assert markdown[-1].endswith("adjusted p >= 0.01")
    text = board.to_table().splitlines()
    assert [line.split()[0] for line in text[1:4]] == ["c", "a", "b"]
    assert text[1].split()[1:] == ["0.8000*", "[0.7500,", "0.8500]", "a", "3.0000", "[2.5000,",
                                   "3.5000]", "a"]  # fmt: skip
    assert json.loads(board.to_json()) == HAND.to_dicts()
    assert pl.read_csv(board.to_csv().encode()).equals(HAND)


def test_an_all_pairs_comparison_names_both_models_and_daggers_its_significant_pairs():
    pairs = pl.DataFrame(
        {
            "model": ["a", "a", "b"], "model_other": ["b", "c", "c"], "metric": ["lrap"] * 3,
            "value": [0.7, 0.7, 0.5], "other_value": [0.5, 0.8, 0.8],
            "delta": [0.2, -0.1, -0.3], "delta_lo": [0.1, -0.2, -0.4],
            "delta_hi": [0.3, 0.0, -0.2], "p_value": [0.01, 0.2, 0.0001],
            "p_adjusted": [0.02, 0.2, 0.0003], "effect_size": [0.9, -0.2, -1.5],
            "wins": [7, 3, 0], "ties": [1, 1, 2], "losses": [2, 6, 8],
        }
    )  # fmt: skip
    compared = Comparison(pairs, ["model"], alpha=0.05)
    assert compared.to_latex().splitlines()[4:7] == [
        r"a -- b & +0.2000$^\dagger$ \\",
        r"a -- c & -0.1000 \\",
        r"b -- c & -0.3000$^\dagger$ \\",
    ]
    head, *rows, note = compared.to_table().splitlines()
    assert head.split()[:3] == ["model", "other", "metric"] and "effect size" in head
    assert [row.split()[:2] for row in rows] == [["a", "b"], ["a", "c"], ["b", "c"]]
    assert [row.endswith("*") for row in rows] == [True, False, True]
    assert rows[2].split()[10] == "-1.500" and "delta = model minus other" in note


def test_the_sorted_means_and_the_heat_map_hold_the_leaderboards_and_pairs_numbers():
    means = Means.of(HAND, "coverage_error", ["model"])
    assert means.names == ["a", "c", "b"] and means.group == ["a", "a", "b"]
    np.testing.assert_array_equal(means.value, [2.5, 3.0, 4.25])
    np.testing.assert_array_equal(means.hi, [3.0, 3.5, 4.5])
    pairs = pl.DataFrame(
        {"model": ["a", "a", "b"], "model_other": ["b", "c", "c"], "metric": ["lrap"] * 3,
         "p_adjusted": [0.5, 0.01, 0.03]}
    )  # fmt: skip
    matrix = p_value_matrix(pairs, "lrap", ["model"], ["c", "a", "b"])
    expected = np.array([[np.nan, 0.01, 0.03], [0.01, np.nan, 0.5], [0.03, 0.5, np.nan]])
    np.testing.assert_array_equal(matrix, expected)


KEYS = ["lrap", "ndcg"]
FORMATS = ("table", "json", "csv", "markdown", "latex")
# The test of the command line's checks: family-wise over the pairs, and quick at few
# permutations (the tests' own numbers are checked in tests/test_many_systems.py).
TEST = ["--test", "randomized_tukey", "--n-resamples", "300", "--n-boot", "200"]
OPTIONS = {"test": "randomized_tukey", "n_resamples": 300, "n_boot": 200}


@pytest.fixture(scope="module")
def four(tmp_path_factory) -> Path:
    """Four models of growing skill on the same 40 samples of 5 labels, as a Parquet file."""
    rng = np.random.default_rng(0)
    truth = (rng.random((40, 5)) < 0.4).astype(int)
    truth[:, 0] = 1
    parts = [
        rm.from_dense(truth, np.round(truth * 0.2 * i + rng.random((40, 5)), 3)).with_columns(
            model=pl.lit(f"m{i}")
        )
        for i in range(4)
    ]
    path = tmp_path_factory.mktemp("four") / "four.parquet"
    pl.concat(parts).write_parquet(path)
    return path


@pytest.fixture(scope="module")
def pairs(four) -> pl.DataFrame:
    return rm.compare(four, KEYS, baseline=None, **OPTIONS)


@pytest.fixture(scope="module")
def board(four) -> pl.DataFrame:
    return rm.leaderboard(four, KEYS, **OPTIONS)


def _printed(capsys, *args: str) -> str:
    assert main([*args, "--quiet"]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("fmt", FORMATS)
def test_compare_all_pairs_prints_rm_compares_pairs_in_every_format(four, pairs, fmt, capsys):
    out = _printed(capsys, "compare", str(four), "--all-pairs", *TEST, "--metrics",
                   ",".join(KEYS), "--format", fmt)  # fmt: skip
    expected = pairs
    assert expected.height == 6 * len(KEYS)
    if fmt == "json":
        assert json.loads(out) == [pytest.approx(row) for row in expected.to_dicts()]
    elif fmt == "csv":
        assert_frame_equal(pl.read_csv(out.encode()), expected, rel_tol=1e-9)
    elif fmt == "latex":
        for metric in KEYS:
            column = 1 + KEYS.index(metric)
            for row in expected.filter(metric=metric).iter_rows(named=True):
                line = next(
                    x
                    for x in out.splitlines()
                    if x.startswith(f"{row['model']} -- {row['model_other']} &")
                )
                cell = line.removesuffix(r" \\").split(" & ")[column]
                dagger = r"$^\dagger$" if row["p_adjusted"] < 0.05 else ""
                assert cell == f"{row['delta']:+.4f}{dagger}"
    else:
        lines = [x for x in out.splitlines() if re.match(r"\|? ?m\d", x)]
        assert len(lines) == expected.height
        for line, row in zip(lines, expected.iter_rows(named=True), strict=True):
            cells = [c for c in re.split(r"\s*\|\s*|\s{2,}", line) if c]
            assert cells[:2] == [row["model"], row["model_other"]]
            assert f"{row['other_value']:.4f}" in cells and f"{row['effect_size']:.3f}" in cells
            assert (row["p_adjusted"] < 0.05) == ("*" in line)


def _cell(row: dict, *, best: bool, fmt: str) -> str:
    """A leaderboard's cell as IR papers print it, from rm.leaderboard's row."""
    value, group = f"{row['value']:.4f}", row["group"]
    if fmt == "latex":
        return (rf"\textbf{{{value}}}" if best else value) + rf"$^{{\mathrm{{{group}}}}}$"
    interval = f" [{row['value_lo']:.4f}, {row['value_hi']:.4f}]"
    return (f"**{value}**" if best else value) + f"<sup>{group}</sup>" + interval


@pytest.mark.parametrize("fmt", FORMATS)
def test_leaderboard_prints_rm_leaderboard_in_every_format(four, board, fmt, capsys):
    out = _printed(capsys, "leaderboard", str(four), *TEST, "--metrics", ",".join(KEYS),
                   "--format", fmt)  # fmt: skip
    expected = board
    assert expected["group"].n_unique() > 1  # the letters tell some models apart
    if fmt == "json":
        assert json.loads(out) == [pytest.approx(row) for row in expected.to_dicts()]
    elif fmt == "csv":
        assert_frame_equal(pl.read_csv(out.encode()), expected, rel_tol=1e-9)
    else:
        lines = out.splitlines()
        for row in expected.iter_rows(named=True):
            line = next(x for x in lines if re.match(rf"\|? ?{row['model']}\b", x))
            if fmt == "table":
                star = "*" if row["rank"] == 1 else ""
                assert f"{row['value']:.4f}{star} [{row['value_lo']:.4f}, " in line
                continue
            cells = [c.strip() for c in re.split(r" & | \| ", line.strip("| \\"))]
            assert cells[1 + KEYS.index(row["metric"])] == _cell(row, best=row["rank"] == 1,
                                                                 fmt=fmt)  # fmt: skip


def test_the_output_files_extension_picks_latex_and_markdown(four, tmp_path, capsys):
    for suffix, start in ((".tex", r"\begin{tabular}"), (".md", "| model |")):
        path = tmp_path / f"board{suffix}"
        _printed(capsys, "leaderboard", str(four), *TEST, "--metrics", "lrap",
                 "-o", str(path))  # fmt: skip
        assert path.read_text().startswith(start)


def _trec_files(folder: Path, runs: int, topics: int) -> tuple[Path, list[Path]]:
    """One qrels file (graded) and ``runs`` run files, one tag each, of growing skill."""
    rng = np.random.default_rng(3)
    docs = [f"d{j}" for j in range(12)]
    qrels = folder / "qrels.txt"
    relevance = rng.integers(0, 3, (topics, len(docs)))
    qrels.write_text("".join(
        f"q{t} 0 {d} {relevance[t, j]}\n" for t in range(topics) for j, d in enumerate(docs)
    ))  # fmt: skip
    paths = []
    for r in range(runs):
        lines = []
        for t in range(topics):
            score = np.round(relevance[t] * 0.3 * r + rng.random(len(docs)), 2)
            order = np.argsort(-score, kind="stable")
            lines += [f"q{t} Q0 {docs[j]} {k + 1} {score[j]} run{r}\n"
                      for k, j in enumerate(order)]  # fmt: skip
        paths.append(folder / f"run{r}.txt")
        paths[-1].write_text("".join(lines))
    return qrels, paths


def test_trec_run_files_against_one_qrels_as_a_new_user_runs_them(tmp_path, capsys):
    qrels, paths = _trec_files(tmp_path, runs=5, topics=15)
    common = ["--trec", "--truth-table", str(qrels), *map(str, paths), "--format", "json"]
    done = subprocess.run(
        [sys.executable, "-m", "polars_rankmetrics", "leaderboard", *TEST, *common],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "as trec_eval" in done.stderr  # the tie rule, stated
    run, truth = rm.read_trec_run(paths), rm.read_trec_qrels(qrels)
    metrics = ["AP", "ndcg_cut_10", "P_10"]  # --trec's default
    expected = rm.leaderboard(
        run, metrics, by="run", truth_table=truth, ties="trec_eval", **OPTIONS
    )
    assert expected.height == 5 * 3 and expected["group"].n_unique() > 1
    assert json.loads(done.stdout) == [pytest.approx(row) for row in expected.to_dicts()]
    out = _printed(capsys, "compare", "--all-pairs", "--test", "tukey_hsd", "--metrics", "AP",
                   *common)  # fmt: skip
    expected = rm.compare(run, ["AP"], by="run", truth_table=truth, baseline=None,
                          test="tukey_hsd")  # fmt: skip
    assert expected.height == 10
    assert json.loads(out) == [pytest.approx(row) for row in expected.to_dicts()]


def test_state_files_give_the_leaderboard_and_the_pairs_of_the_data_behind_them(
    four, tmp_path, capsys
):
    path = tmp_path / "state.parquet"
    rm.state(four, KEYS, by="model", intervals=True, path=path)
    options = {"by": "model", "bootstrap": "poisson", **OPTIONS}
    out = _printed(capsys, "leaderboard", str(path), *TEST, "--bootstrap", "poisson",
                   "--format", "json")  # fmt: skip
    expected = rm.leaderboard(path, **options)
    assert json.loads(out) == [pytest.approx(row) for row in expected.to_dicts()]
    out = _printed(capsys, "compare", str(path), "--all-pairs", *TEST, "--bootstrap", "poisson",
                   "--format", "csv")  # fmt: skip
    expected = rm.compare(path, baseline=None, **options)
    assert_frame_equal(pl.read_csv(out.encode()), expected, rel_tol=1e-9, check_dtypes=False)


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (["compare"], 2, "one of the arguments --baseline --all-pairs is required"),
        (["compare", "--baseline", "m0", "--all-pairs"], 2, "not allowed with argument"),
        (["leaderboard", "--trec"], 2, "--trec reads TREC run files against qrels"),
        (["compare", "--baseline", "m0", "--test", "tukey_hsd"], 1, "pass baseline=None"),
        (["leaderboard", "--by", "nope"], 1, "nope"),
        (["leaderboard", "--test", "tukey_hsd", "--weight", "weight"], 1, "with weight= use"),
    ],
)
def test_refusals_are_one_line(four, args, status, message, capsys):
    try:
        code = main([*args[:1], str(four), *args[1:], "--quiet"])
    except SystemExit as usage:  # argparse's own refusals
        code = usage.code
    assert code == status
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1, err


def test_the_html_report_of_many_models_has_a_systems_section_whose_heat_map_is_the_pairs(four):
    # A top-k page (its summary: mrr, map, precision@2, recall@2): few charts to draw.
    dense = pl.read_parquet(four)
    truth = dense.filter(truth=1).select("sample", "label").unique()
    top = pl.col("score").rank("ordinal", descending=True).over("model", "sample") <= 3
    predictions = dense.filter(top).drop("truth")
    options = {"truth_table": truth, "by": "model", "ci": 0.9, "n_boot": 200}
    report = rm.html_report(predictions, k=2, **options)
    keys = ["map", "recall@2"]
    # Tukey's HSD, uncorrected over the metrics (its default): a metric's rows are those of
    # compare and leaderboard of that metric alone.
    expected = rm.compare(predictions, keys, baseline=None, test="tukey_hsd", **options)
    assert_frame_equal(report.pairs.filter(pl.col("metric").is_in(keys)), expected,
                       rel_tol=1e-12)  # fmt: skip
    board = rm.leaderboard(predictions, keys, test="tukey_hsd", **options)
    assert_frame_equal(report.leaderboard.filter(pl.col("metric").is_in(keys)), board,
                       rel_tol=1e-12)  # fmt: skip
    assert board["group"].n_unique() > 1
    page = report.html
    assert "Many systems: which differ" in page and "Tukey&#x27;s HSD" in page
    # The heat maps: per metric, the models in rank order, each pair's adjusted p in its two
    # cells, printed there.
    for key in keys:
        order = board.filter(metric=key)["model"].to_list()
        matrix = p_value_matrix(report.pairs, key, ["model"], order)
        for row in expected.filter(metric=key).iter_rows(named=True):
            i, j = order.index(row["model"]), order.index(row["model_other"])
            assert matrix[i, j] == matrix[j, i] == row["p_adjusted"]
        assert np.isnan(np.diag(matrix)).all()
    printed = set(re.findall(r">([0-9.e+-]+)</text>", page))
    for p in expected["p_adjusted"]:
        assert (f"{p:.0e}" if p < 1e-3 else f"{p:.3f}") in printed
    # Two charts per metric in the section: the sorted means and the heat map.
    section = page[page.index("Many systems") :].split("<section>")[0]
    assert section.count("<svg") == 2 * report.pairs["metric"].n_unique() == 2 * 4
    two = rm.html_report(predictions.filter(pl.col("model").is_in(["m0", "m1"])), k=1,
                         truth_table=truth, by="model")  # fmt: skip
    assert two.leaderboard is None and two.pairs is None and "Many systems" not in two.html
