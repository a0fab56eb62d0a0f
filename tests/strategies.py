"""Hypothesis strategies for long tables with the shapes that break ranking code."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import strategies as st

# A handful of score values makes ties the rule, not the exception; +-inf are valid scores.
TIED_SCORES = st.sampled_from([0.0, 0.25, 0.5, 0.5, 1.0, -1.0, float("inf"), float("-inf")])
ANY_SCORES = st.floats(-1e6, 1e6, allow_nan=False, width=32)


@st.composite
def matrices(draw, *, graded: bool = False, min_labels: int = 2):
    """(y_true, y_score): 1-12 samples x min_labels-8 labels, with empty and full rows common."""
    n_samples = draw(st.integers(1, 12))
    n_labels = draw(st.integers(min_labels, 8))
    scores = draw(st.sampled_from([TIED_SCORES, ANY_SCORES]))
    y_score = np.array(
        draw(st.lists(scores, min_size=n_samples * n_labels, max_size=n_samples * n_labels)),
        dtype=float,
    ).reshape(n_samples, n_labels)
    truths = st.sampled_from([0, 0, 1, 2, 3]) if graded else st.sampled_from([0, 0, 1])
    y_true = np.array(
        draw(st.lists(truths, min_size=n_samples * n_labels, max_size=n_samples * n_labels)),
        dtype=float,
    ).reshape(n_samples, n_labels)
    for i in range(n_samples):
        row_kind = draw(st.sampled_from(["as drawn", "as drawn", "empty", "full"]))
        if row_kind == "empty":
            y_true[i] = 0
        elif row_kind == "full":
            y_true[i] = np.maximum(y_true[i], 1)
    return y_true, y_score


@st.composite
def long_tables(draw, *, graded: bool = False, min_labels: int = 2):
    """(long DataFrame, y_true, y_score, weights or None); rows shuffled, ids maybe strings."""
    y_true, y_score = draw(matrices(graded=graded, min_labels=min_labels))
    n_samples, n_labels = y_true.shape
    string_ids = draw(st.booleans())
    # String ids sort like the matrix rows and columns (zero-padded), so the oracle lines up.
    sample_ids = [f"s{i:03d}" for i in range(n_samples)] if string_ids else list(range(n_samples))
    label_ids = [f"l{j:03d}" for j in range(n_labels)] if string_ids else list(range(n_labels))
    weights = None
    if draw(st.booleans()):
        weights = np.array(
            draw(
                st.lists(
                    st.sampled_from([0.0, 0.5, 1.0, 3.0]), min_size=n_samples, max_size=n_samples
                )
            )
        )
        if weights.sum() == 0:
            weights[0] = 1.0
    truth = y_true.reshape(-1)
    df = pl.DataFrame(
        {
            "sample": np.repeat(np.array(sample_ids, dtype=object), n_labels).tolist(),
            "label": np.tile(np.array(label_ids, dtype=object), n_samples).tolist(),
            "score": y_score.reshape(-1),
            "truth": truth if graded else truth.astype(np.int64),
        }
    )
    if not graded and draw(st.booleans()):
        df = df.with_columns(pl.col("truth").cast(pl.Boolean))
    if weights is not None:
        df = df.with_columns(pl.Series("weight", np.repeat(weights, n_labels)))
    seed = draw(st.integers(0, 2**16))
    return df.sample(fraction=1.0, shuffle=True, seed=seed), y_true, y_score, weights
