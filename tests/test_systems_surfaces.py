"""Many systems, as people read them: the leaderboard and the all-pairs comparison rendered
(text, Markdown, LaTeX, JSON, CSV), the command line that gives them (``compare --all-pairs``,
``leaderboard``, ``--trec`` over several run files against one qrels) and the HTML report's
systems section (the sorted means, the pairs' p-values as a heat map)."""

from __future__ import annotations

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
