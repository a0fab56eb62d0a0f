"""Drop-ins for pyxclib's evaluation (``xclib.evaluation.xc_metrics``), the extreme
classification metrics as the field's papers report them: the same names and arguments, sparse
matrices in, pyxclib's numbers out, computed by this library.

>>> import scipy.sparse as sp
>>> from polars_rankmetrics.xclib import Metrics  # was: from xclib.evaluation.xc_metrics ...
>>> X = sp.csr_matrix([[0.9, 0.0, 0.4], [0.0, 0.7, 0.2]])
>>> y = sp.csr_matrix([[0, 0, 1], [0, 1, 0]])
>>> [values.round(4) for values in Metrics(y).eval(X, K=2)]
[array([0.5, 0.5]), array([0.5   , 0.8155])]

=============================  ==============================================================
drop-in                        what it computes
=============================  ==============================================================
``precision``, ``recall``,     P@k, R@k and nDCG@k at k = 1..K (:mod:`.metrics`)
``ndcg``
``psprecision``, ``psndcg``,   their propensity-scored versions, normalised as the ratio of
``psrecall``                   dataset sums (pyxclib's and the papers')
``compute_inv_propesity``      the inverse propensities of a training set's labels
``Metrics``                    ``Metrics(true_labels, inv_psp).eval(X, K)``: [P, nDCG, PSP,
                               PSnDCG]
=============================  ==============================================================

Each takes pyxclib's arguments (``sorted`` and ``use_cython`` are accepted and change nothing)
and the run options (``engine=``, ``memory_limit=``, ...). The predictions ``X`` are a scipy
sparse matrix (only its stored entries are candidates), a numpy array of scores or of label
indices in rank order, or pyxclib's dict ``{'indices', 'scores'}``. Without run options, each
call reads each sample's best K entries in one compiled pass over the rows
(:mod:`polars_rankmetrics.engines.sparse_pass`); with them, it evaluates a table of each
sample's best K entries (:mod:`.inputs`) on that engine.
"""

from polars_rankmetrics.xclib.metrics import (
    Metrics,
    compute_inv_propesity,
    ndcg,
    precision,
    psndcg,
    psprecision,
    psrecall,
    recall,
)

__all__ = [
    "Metrics", "compute_inv_propesity", "ndcg", "precision", "psndcg", "psprecision",
    "psrecall", "recall",
]  # fmt: skip
