"""Multiple-testing corrections of a family of p-values (all the (model, metric) rows of one
comparison)."""

from __future__ import annotations

import numpy as np

CORRECTIONS = ("holm", "bonferroni", "fdr_bh")


def adjusted(p_values: np.ndarray, method: str | None) -> np.ndarray:
    """The adjusted p-values (NaN stays NaN and takes no part):

    - ``"bonferroni"``: ``min(1, m p)``;
    - ``"holm"``: Holm's step-down: sorted ascending, ``max over j <= i of min(1, (m - j) p_j)``
      (ranks j from 0);
    - ``"fdr_bh"``: Benjamini-Hochberg's step-up: sorted ascending, ``min over j >= i of
      min(1, m p_j / (j + 1))``, as ``scipy.stats.false_discovery_control`` gives;
    - ``None``: the p-values as they are.
    """
    if method is not None and method not in CORRECTIONS:
        raise ValueError(
            f"correction must be one of {', '.join(CORRECTIONS)} or None, not {method!r}"
        )
    p = np.asarray(p_values, dtype=np.float64)
    out = p.copy()
    valid = ~np.isnan(p)
    m = int(valid.sum())
    if method is None or m == 0:
        return out
    q = p[valid]
    if method == "bonferroni":
        out[valid] = np.minimum(1.0, m * q)
        return out
    order = np.argsort(q, kind="stable")
    ranked = q[order]
    if method == "holm":
        steps = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * ranked))
    else:
        steps = np.minimum.accumulate((m * ranked / np.arange(1, m + 1))[::-1])[::-1]
        steps = np.minimum(1.0, steps)
    result = np.empty(m)
    result[order] = steps
    out[valid] = result
    return out
