"""Drop-ins for scikit-learn's multilabel metrics: the same names and arguments, matrices in,
scikit-learn's numbers and warnings out, computed by this library.

>>> from polars_rankmetrics.sklearn import f1_score  # was: from sklearn.metrics import ...
>>> f1_score([[1, 0, 1], [0, 1, 1]], [[1, 1, 0], [0, 1, 1]], average="micro")
0.75

``y_true`` and ``y_pred`` (or ``y_score``) are (samples x labels) numpy arrays, nested lists or
scipy sparse matrices: the truth as 0 and 1 (graded gains for dcg/ndcg), the predictions as 0 and
1 or the scores. The values and the degenerate cases are scikit-learn 1.9.1's
(:mod:`polars_rankmetrics.metrics.ranking`, :mod:`polars_rankmetrics.metrics.classification`,
:mod:`polars_rankmetrics.metrics.label_averages`); so are the warnings where a metric is
ill-defined, with scikit-learn's class and wording when scikit-learn is installed
(:mod:`polars_rankmetrics.sklearn.undefined`). Each takes one keyword more than scikit-learn's,
``engine=`` (``"polars"``, ``"duckdb"`` or ``"spark"``).

The classification drop-ins take multilabel indicator input only: binary and multiclass targets
are refused with a ``ValueError`` (scikit-learn's own functions compute those). Other bad input
raises ``ValueError`` too, as in scikit-learn, with this library's messages. The long table is
built from the matrices first (:func:`~polars_rankmetrics.from_dense`); for tables that are long
already, call :func:`~polars_rankmetrics.evaluate` or :func:`~polars_rankmetrics.label_report`
on them directly.

=================================  ==========================================================
module                             drop-ins
=================================  ==========================================================
:mod:`.ranking`                    ``coverage_error``, ``label_ranking_average_precision_score``,
                                   ``label_ranking_loss``, ``dcg_score``, ``ndcg_score``,
                                   ``average_precision_score``, ``roc_auc_score``
:mod:`.classification`             ``precision_score``, ``recall_score``, ``f1_score``,
                                   ``fbeta_score``, ``precision_recall_fscore_support``,
                                   ``jaccard_score``, ``hamming_loss``, ``accuracy_score``,
                                   ``zero_one_loss``
:mod:`.report`                     ``multilabel_confusion_matrix``, ``classification_report``
:mod:`.probabilities`              ``log_loss``, ``brier_score_loss`` (scikit-learn's numbers on
                                   a multilabel matrix, not the per-label losses)
=================================  ==========================================================

Beside them: :mod:`.inputs` (the matrices, checked, as a long table), :mod:`.arguments` (the
arguments shared with scikit-learn, checked as it checks them) and :mod:`.undefined`
(scikit-learn's warnings in place of the library's).
"""

from polars_rankmetrics.sklearn.classification import (
    accuracy_score,
    f1_score,
    fbeta_score,
    hamming_loss,
    jaccard_score,
    precision_recall_fscore_support,
    precision_score,
    recall_score,
    zero_one_loss,
)
from polars_rankmetrics.sklearn.probabilities import brier_score_loss, log_loss
from polars_rankmetrics.sklearn.ranking import (
    average_precision_score,
    coverage_error,
    dcg_score,
    label_ranking_average_precision_score,
    label_ranking_loss,
    ndcg_score,
    roc_auc_score,
)
from polars_rankmetrics.sklearn.report import classification_report, multilabel_confusion_matrix

__all__ = [
    "accuracy_score", "average_precision_score", "brier_score_loss", "classification_report",
    "coverage_error", "dcg_score", "f1_score", "fbeta_score", "hamming_loss", "jaccard_score",
    "label_ranking_average_precision_score", "label_ranking_loss", "log_loss",
    "multilabel_confusion_matrix", "ndcg_score", "precision_recall_fscore_support",
    "precision_score", "recall_score", "roc_auc_score", "zero_one_loss",
]  # fmt: skip
