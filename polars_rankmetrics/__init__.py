"""Multilabel ranking and classification metrics straight from long tables, on Polars, DuckDB,
Spark or SQL.

The long table has one row per (sample, label): the model's score and the truth. Start with
:func:`evaluate`, or the scikit-learn-named frame functions, which chain with ``.pipe()``; in
a pipeline, :func:`state` per partition and :func:`finalize` over any merge of them.
"""

from polars_rankmetrics import expressions
from polars_rankmetrics.compare import compare
from polars_rankmetrics.engines.topk import label_propensities
from polars_rankmetrics.evaluate import evaluate, tie_report
from polars_rankmetrics.frames import (
    coverage_error,
    dcg_score,
    label_ranking_average_precision_score,
    label_ranking_loss,
    lwlrap,
    ndcg_score,
)
from polars_rankmetrics.inputs.convert import from_dense, from_lists
from polars_rankmetrics.inputs.sparse import from_sparse
from polars_rankmetrics.inputs.trec import read_trec_qrels, read_trec_run
from polars_rankmetrics.leaderboard import leaderboard
from polars_rankmetrics.metrics.ranks import rank_table
from polars_rankmetrics.metrics.registry import DEFAULT_METRICS
from polars_rankmetrics.metrics.undefined import UndefinedMetricWarning
from polars_rankmetrics.report import Report, html_report, label_report, lwlrap_per_class
from polars_rankmetrics.report.calibration import calibration_table
from polars_rankmetrics.report.frequency import by_label_frequency
from polars_rankmetrics.states import finalize, state
from polars_rankmetrics.trec import trec_eval


def __getattr__(name: str) -> str:
    """``__version__``, read from the installed package's metadata when first asked for:
    :mod:`importlib.metadata` is imported only by those who ask."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("polars-rankmetrics")
    except PackageNotFoundError:  # imported from a checkout that is not installed
        return "0+unknown"


__all__ = [
    "DEFAULT_METRICS",
    "Report",
    "UndefinedMetricWarning",
    "by_label_frequency",
    "calibration_table",
    "compare",
    "coverage_error",
    "dcg_score",
    "evaluate",
    "expressions",
    "finalize",
    "from_dense",
    "from_lists",
    "from_sparse",
    "html_report",
    "label_ranking_average_precision_score",
    "label_ranking_loss",
    "label_propensities",
    "label_report",
    "leaderboard",
    "lwlrap",
    "lwlrap_per_class",
    "ndcg_score",
    "rank_table",
    "read_trec_qrels",
    "read_trec_run",
    "tie_report",
    "trec_eval",
    "state",
]
