"""The ranking metrics as Polars expressions, at the path the documentation shows (they live in
:mod:`polars_rankmetrics.metrics.ranking`, whose docstring shows their use)."""

from polars_rankmetrics.metrics.ranking import (
    average_precision,
    coverage_error,
    dcg,
    ideal_dcg,
    label_count,
    label_precision,
    lrap,
    lwlrap,
    n_positives,
    ndcg,
    ranking_loss,
    roc_auc,
    tie_averaged_dcg,
)

__all__ = [
    "average_precision", "coverage_error", "dcg", "ideal_dcg", "label_count", "label_precision",
    "lrap", "lwlrap", "n_positives", "ndcg", "ranking_loss", "roc_auc", "tie_averaged_dcg",
]  # fmt: skip
