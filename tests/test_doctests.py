"""The Examples in the docstrings print what the code really prints."""

import doctest
import importlib

import pytest

from polars_rankmetrics import frames, sklearn, xclib
from polars_rankmetrics import ir_measures as ir_measures_provider
from polars_rankmetrics.engines import duckdb as duckdb_engine
from polars_rankmetrics.engines import spark as spark_engine
from polars_rankmetrics.engines import topk
from polars_rankmetrics.inference import letters, units
from polars_rankmetrics.inputs import convert, sparse
from polars_rankmetrics.metrics import ranking as expressions
from polars_rankmetrics.metrics import ranks
from polars_rankmetrics.report import labels, page, per_class
from polars_rankmetrics.sklearn import classification as sklearn_classification
from polars_rankmetrics.sklearn import ranking as sklearn_ranking
from polars_rankmetrics.sklearn import report as sklearn_report
from polars_rankmetrics.states import build as state_build
from polars_rankmetrics.xclib import metrics as xclib_metrics

# The package's evaluate, compare and leaderboard attributes are the functions: the modules
# are found by name.
evaluate = importlib.import_module("polars_rankmetrics.evaluate")
compare = importlib.import_module("polars_rankmetrics.compare")
leaderboard = importlib.import_module("polars_rankmetrics.leaderboard")


@pytest.mark.parametrize(
    "module",
    [
        compare,
        convert,
        duckdb_engine,
        evaluate,
        expressions,
        frames,
        ir_measures_provider,
        labels,
        leaderboard,
        letters,
        page,
        per_class,
        ranks,
        sklearn,
        sklearn_classification,
        sklearn_ranking,
        sklearn_report,
        spark_engine,
        sparse,
        state_build,
        topk,
        units,
        xclib,
        xclib_metrics,
    ],
    ids=lambda m: m.__name__,
)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
