"""The Examples in the docstrings print what the code really prints."""

import doctest
import importlib

import pytest

from polars_rankmetrics import decisions, frames, per_class, report, report_page, sklearn
from polars_rankmetrics.engines import duckdb as duckdb_engine
from polars_rankmetrics.engines import spark as spark_engine
from polars_rankmetrics.engines import topk
from polars_rankmetrics.inputs import convert
from polars_rankmetrics.metrics import ranking as expressions
from polars_rankmetrics.metrics import ranks
from polars_rankmetrics.sklearn import classification as sklearn_classification
from polars_rankmetrics.sklearn import ranking as sklearn_ranking
from polars_rankmetrics.sklearn import report as sklearn_report

# The package's evaluate attribute is the function: the module is found by its name.
evaluate = importlib.import_module("polars_rankmetrics.evaluate")


@pytest.mark.parametrize(
    "module",
    [
        convert,
        decisions,
        duckdb_engine,
        evaluate,
        expressions,
        frames,
        per_class,
        ranks,
        report,
        report_page,
        sklearn,
        sklearn_classification,
        sklearn_ranking,
        sklearn_report,
        spark_engine,
        topk,
    ],
    ids=lambda m: m.__name__,
)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
