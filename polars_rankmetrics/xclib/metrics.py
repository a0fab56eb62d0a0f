"""Drop-ins for pyxclib's ``xclib.evaluation.xc_metrics``: its names and arguments, its
numbers, those of :func:`~polars_rankmetrics.evaluate`'s keys on a top-k table of the
predictions (:mod:`polars_rankmetrics.xclib.inputs`). Without run options (``engine=``, ...)
they come from one compiled pass over the rows of the matrices
(:mod:`polars_rankmetrics.engines.sparse_pass`, tested equal to the evaluation); with them,
from the evaluation of the tables by that engine.

=======================  =============================================  ====================
pyxclib                  key (at each K = 1..k)                         propensities
=======================  =============================================  ====================
``precision``            ``precision@K``                                -
``recall``               ``recall@K``                                   -
``ndcg``                 ``ndcg@K``, each sample padded to K rows       -
                         (:mod:`.inputs`): the dcg of the retrieved
                         true labels over the ideal dcg of min(K, |y|)
                         positions
``psprecision``          ``psprecision_ratio@K``                        1 / ``inv_psp``
``psndcg``               ``psndcg_ratio@K``                             1 / ``inv_psp``
``psrecall``             ``psrecall_ratio@K``                           1 / ``inv_psp``
=======================  =============================================  ====================

Only the stored entries of a sparse ``X`` are retrieved, as in pyxclib; a sample with fewer
than K of them has nothing at the positions past them (precision still divides by K). pyxclib
orders tied scores arbitrarily (an unstable argsort); here a tied block takes the expected value
over all its orders, the rule of the retrieval keys, so every value is independent of the order
of the entries; on tie-free scores the two agree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Unpack

import numpy as np
import polars as pl

from polars_rankmetrics.engines import sparse_pass
from polars_rankmetrics.engines.topk import label_propensities
from polars_rankmetrics.evaluate import evaluate
from polars_rankmetrics.xclib.inputs import (
    Truth,
    checked_scores,
    inverse_propensities,
    propensities,
    tables,
)

if TYPE_CHECKING:
    from polars_rankmetrics.options import RunOptions

# Each of pyxclib's metrics: its key, and whether it reads the propensities of inv_psp.
_KEYS = {
    "precision": ("precision@{}", False),
    "recall": ("recall@{}", False),
    "ndcg": ("ndcg@{}", False),
    "psprecision": ("psprecision_ratio@{}", True),
    "psndcg": ("psndcg_ratio@{}", True),
    "psrecall": ("psrecall_ratio@{}", True),
}


def _check_k(k: object, name: str = "k") -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"{name} must be a positive integer, not {k!r}")
    return int(k)


def _values(
    metrics: list[str], X: object, truth: Truth, k: int, inv_psp: object,
    remove_invalid: bool, options: RunOptions,
) -> list[np.ndarray]:  # fmt: skip
    """The values of pyxclib's ``metrics`` at 1..k: without run ``options``, in one compiled
    pass over the rows (:mod:`polars_rankmetrics.engines.sparse_pass`); with them, by one
    evaluation of the top-k tables."""
    scores = checked_scores(X, truth)
    scored = any(_KEYS[name][1] for name in metrics)
    n_samples = truth.n_samples
    if remove_invalid:
        n_samples = int(np.count_nonzero(np.bincount(truth.samples, minlength=truth.n_samples)))
    if not options and n_samples > 0:
        inverse = inverse_propensities(inv_psp, truth) if scored else None
        pairs = (truth.samples, truth.labels, truth.n_labels)
        return sparse_pass.values(metrics, scores, pairs, inverse, k, n_samples)
    predictions, truth_table = tables(scores, truth, k, remove_invalid=remove_invalid)
    keys = [_KEYS[name][0].format(at) for name in metrics for at in range(1, k + 1)]
    result = evaluate(
        predictions, keys, truth_table=truth_table, n_labels=truth.n_labels + k,
        propensities=propensities(inv_psp, truth) if scored else None, **options,
    )  # fmt: skip
    return [
        result.select(_KEYS[name][0].format(at) for at in range(1, k + 1))
        .to_numpy()
        .reshape(-1)
        .astype(np.float64)
        for name in metrics
    ]


def precision(
    X: object, true_labels: object, k: int = 5, sorted: bool = False, use_cython: bool = False,
    **options: Unpack[RunOptions],
) -> np.ndarray:  # fmt: skip
    """pyxclib's ``precision``: P@1..k, the true labels among each sample's top K stored
    entries over K, averaged over the samples (a sample without a true label counts 0).

    Parameters
    ----------
    X
        The predictions: a scipy sparse matrix (its stored entries are the candidates), a
        numpy array of scores (every label a candidate) or of label indices in rank order, or
        pyxclib's dict ``{'indices': ..., 'scores': ...}``.
    true_labels
        The truth, a scipy sparse matrix or a numpy array of 0 and 1, (samples x labels).
    k
        The last K.
    sorted, use_cython
        pyxclib's; accepted, they change nothing.
    **options

    Returns
    -------
    numpy.ndarray
        The k values at K = 1..k.

    Raises
    ------
    ValueError
        For matrices of different shapes, truth other than 0 and 1, a NaN score, a label
        stored twice in a sample or past the labels, or a ``k`` that is not a positive integer.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from polars_rankmetrics.xclib import precision
    >>> X = sp.csr_matrix([[0.9, 0.0, 0.4], [0.0, 0.7, 0.2]])
    >>> precision(X, sp.csr_matrix([[0, 0, 1], [0, 1, 0]]), k=2)
    array([0.5, 0.5])
    """
    truth = Truth.of(true_labels)
    return _values(["precision"], X, truth, _check_k(k), None, False, options)[0]


def recall(
    X: object, true_labels: object, k: int = 5, sorted: bool = False, use_cython: bool = False,
    **options: Unpack[RunOptions],
) -> np.ndarray:  # fmt: skip
    """pyxclib's ``recall``: R@1..k, the true labels among the top K over the sample's true
    labels (0 for a sample without any), averaged over the samples. The arguments are
    :func:`precision`'s."""
    truth = Truth.of(true_labels)
    return _values(["recall"], X, truth, _check_k(k), None, False, options)[0]


def ndcg(
    X: object, true_labels: object, k: int = 5, sorted: bool = False, use_cython: bool = False,
    **options: Unpack[RunOptions],
) -> np.ndarray:  # fmt: skip
    """pyxclib's ``ndcg``: nDCG@1..k, the dcg of the true labels among the top K (gain 1,
    discount 1 / log2(r + 1)) over the ideal dcg of min(K, |y|) positions (0 for a sample
    without a true label), averaged over the samples. The arguments are :func:`precision`'s.

    pyxclib returns float32 values; these are float64 (pyxclib's, rounded to float32, are
    these rounded to float32)."""
    truth = Truth.of(true_labels)
    return _values(["ndcg"], X, truth, _check_k(k), None, False, options)[0]


_PS_DOC = """

    The ratio of dataset sums (pyxclib's and the papers'): the sum over samples of the
    propensity-scored value over the same sum for the best ranking of each sample's true
    labels (by inverse propensity). ``inv_psp`` holds one inverse propensity per label (at
    least 1), as :func:`compute_inv_propesity` computes them; the other arguments are
    :func:`precision`'s. NaN where no sample has a true label (0 / 0), as in pyxclib."""


def psprecision(
    X: object, true_labels: object, inv_psp: object, k: int = 5, sorted: bool = False,
    use_cython: bool = False, **options: Unpack[RunOptions],
) -> np.ndarray:  # fmt: skip
    truth = Truth.of(true_labels)
    return _values(["psprecision"], X, truth, _check_k(k), inv_psp, False, options)[0]


def psndcg(
    X: object, true_labels: object, inv_psp: object, k: int = 5, sorted: bool = False,
    use_cython: bool = False, **options: Unpack[RunOptions],
) -> np.ndarray:  # fmt: skip
    truth = Truth.of(true_labels)
    return _values(["psndcg"], X, truth, _check_k(k), inv_psp, False, options)[0]


def psrecall(
    X: object, true_labels: object, inv_psp: object, k: int = 5, sorted: bool = False,
    use_cython: bool = False, **options: Unpack[RunOptions],
) -> np.ndarray:  # fmt: skip
    truth = Truth.of(true_labels)
    return _values(["psrecall"], X, truth, _check_k(k), inv_psp, False, options)[0]


psprecision.__doc__ = "pyxclib's ``psprecision``: propensity-scored P@1..k." + _PS_DOC
psndcg.__doc__ = "pyxclib's ``psndcg``: propensity-scored nDCG@1..k." + _PS_DOC
psrecall.__doc__ = "pyxclib's ``psrecall``: propensity-scored R@1..k." + _PS_DOC


def compute_inv_propesity(train_labels: object, A: float = 0.55, B: float = 1.5) -> np.ndarray:
    """pyxclib's ``compute_inv_propesity`` (its spelling): the inverse propensity of each label,
    ``1 + C (N_l + B)^-A`` with ``C = (ln N - 1) (B + 1)^A``, N the training samples and N_l
    those with label l (Jain, Prabhu and Varma, KDD 2016), by
    :func:`~polars_rankmetrics.label_propensities`.

    Parameters
    ----------
    train_labels
        The training set's truth, (samples x labels) of 0 and 1, a scipy sparse matrix or a
        numpy array.
    A, B
        The model's parameters: 0.55 and 1.5 for most data sets of the Extreme Classification
        Repository, 0.5 and 0.4 for Wikipedia's, 0.6 and 2.6 for Amazon's.

    Returns
    -------
    numpy.ndarray
        One inverse propensity per label (column); a label never seen in training has
        ``1 + C B^-A``.
    """
    truth = Truth.of(train_labels, "train_labels")
    every = pl.Series("label", np.arange(truth.n_labels, dtype=np.int64))
    found = label_propensities(
        truth.table(), a=A, b=B, labels=every, n_samples=truth.n_samples
    ).sort("label")
    return 1.0 / found["propensity"].to_numpy()


class Metrics:
    """pyxclib's ``Metrics``: precision, nDCG and, given ``inv_psp``, their propensity-scored
    versions at 1..K, in one call.

    Parameters
    ----------
    true_labels
        The truth, (samples x labels) of 0 and 1, a scipy sparse matrix or a numpy array.
    inv_psp
        One inverse propensity per label (None: no propensity-scored metrics).
    remove_invalid
        Leave out the samples without a true label (pyxclib's option): the means are over the
        others.
    **options
        The run options (``engine=``, ``memory_limit=``, ...) of every :meth:`eval`.
    """

    def __init__(
        self, true_labels: object, inv_psp: object = None, remove_invalid: bool = False,
        **options: Unpack[RunOptions],
    ) -> None:  # fmt: skip
        self.truth = Truth.of(true_labels)
        self.num_instances, self.num_labels = self.truth.n_samples, self.truth.n_labels
        self.remove_invalid = remove_invalid
        self.inv_psp = None if inv_psp is None else np.ravel(np.asarray(inv_psp))
        if self.inv_psp is not None:
            inverse_propensities(self.inv_psp, self.truth)  # checked before any evaluation
        self.options = options

    def eval(
        self, pred_labels: object, K: int = 5, sorted: bool = False, use_cython: bool = False,
        **options: Unpack[RunOptions],
    ) -> list[np.ndarray]:  # fmt: skip
        """``[P, nDCG, PSP, PSnDCG]`` at 1..K (``[P, nDCG]`` without ``inv_psp``), each as
        :func:`precision`, :func:`ndcg`, :func:`psprecision` and :func:`psndcg` compute it;
        ``options`` override the constructor's."""
        metrics = ["precision", "ndcg"]
        if self.inv_psp is not None:
            metrics += ["psprecision", "psndcg"]
        run: RunOptions = {**self.options, **options}
        return _values(
            metrics, pred_labels, self.truth, _check_k(K, "K"), self.inv_psp,
            self.remove_invalid, run,
        )  # fmt: skip
