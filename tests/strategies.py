"""Hypothesis strategies for long tables with the shapes that break ranking code."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import strategies as st

# A handful of score values makes ties the rule, not the exception; +-inf are valid scores, and
# -0.0 ties with 0.0.
TIED_SCORES = st.sampled_from([0.0, -0.0, 0.25, 0.5, 0.5, 1.0, -1.0, float("inf"), float("-inf")])
ANY_SCORES = st.floats(-1e6, 1e6, allow_nan=False, width=32)
# Whole numbers, for the integer and decimal score types (exact in a double, as the checks ask).
WHOLE_SCORES = st.sampled_from([0.0, 1.0, 2.0, -3.0, 2.0**52, 2.0**52 + 1])

# The column type the scores are stored as: the engines rank them as they are (Polars) or as
# DOUBLE (the SQL engines), which must agree.
SCORE_TYPES = ["Float64", "Float32", "Int64", "Decimal"]


@st.composite
def matrices(draw, *, graded: bool = False, min_labels: int = 2, whole: bool = False):
    """(y_true, y_score): 1-12 samples x min_labels-8 labels, with empty and full rows common.
    Graded truth has fractional gains too; ``whole`` draws whole-number scores."""
    n_samples = draw(st.integers(1, 12))
    n_labels = draw(st.integers(min_labels, 8))
    scores = WHOLE_SCORES if whole else draw(st.sampled_from([TIED_SCORES, ANY_SCORES]))
    y_score = np.array(
        draw(st.lists(scores, min_size=n_samples * n_labels, max_size=n_samples * n_labels)),
        dtype=float,
    ).reshape(n_samples, n_labels)
    truths = st.sampled_from([0, 0, 1, 2, 3, 0.5, 2.25]) if graded else st.sampled_from([0, 0, 1])
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


def _score_series(y_score: np.ndarray, score_type: str) -> tuple[pl.Series, np.ndarray]:
    """The scores stored as ``score_type``, and the values the oracle must see."""
    flat = y_score.reshape(-1)
    if score_type == "Float32":
        flat = flat.astype(np.float32).astype(float)  # rounding to float32 may add ties
        return pl.Series("score", flat, dtype=pl.Float32), flat.reshape(y_score.shape)
    series = pl.Series("score", flat)
    if score_type == "Int64":
        return series.cast(pl.Int64), y_score
    if score_type == "Decimal":
        return series.cast(pl.Decimal(20, 2)), y_score
    return series, y_score


@st.composite
def long_tables(draw, *, graded: bool = False, min_labels: int = 2):
    """(long DataFrame, y_true, y_score, weights or None); rows shuffled or in (sample, label)
    order (an engine may take another plan for ordered rows), ids maybe strings, scores of any
    of ``SCORE_TYPES``."""
    score_type = draw(st.sampled_from(SCORE_TYPES))
    whole = score_type in ("Int64", "Decimal")
    y_true, y_score = draw(matrices(graded=graded, min_labels=min_labels, whole=whole))
    score, y_score = _score_series(y_score, score_type)
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
            "score": score,
            "truth": truth if graded else truth.astype(np.int64),
        }
    )
    if not graded and draw(st.booleans()):
        df = df.with_columns(pl.col("truth").cast(pl.Boolean))
    if weights is not None:
        df = df.with_columns(pl.Series("weight", np.repeat(weights, n_labels)))
    if draw(st.booleans()):
        return df, y_true, y_score, weights  # in (sample, label) order, as built
    seed = draw(st.integers(0, 2**16))
    return df.sample(fraction=1.0, shuffle=True, seed=seed), y_true, y_score, weights
