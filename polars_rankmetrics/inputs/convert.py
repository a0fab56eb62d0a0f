"""Converters from the shapes predictions come in today to the long table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:  # numpy is imported where a matrix is converted: not by every evaluation
    import numpy as np


def dense_array(matrix: object, name: str) -> np.ndarray:
    """``matrix`` (array-like or scipy sparse) as a 2-d numpy array; ``ValueError`` naming it
    (``name``) for any other shape."""
    import numpy as np

    array = matrix.toarray() if hasattr(matrix, "toarray") else np.asarray(matrix)
    if array.ndim != 2:
        raise ValueError(f"{name} must be a 2-d matrix (samples x labels), got shape {array.shape}")
    return array


def from_dense(
    y_true: object,
    y_score: object,
    *,
    sample_ids: Sequence[object] | None = None,
    label_ids: Sequence[object] | None = None,
    sample: str = "sample",
    label: str = "label",
    score: str = "score",
    truth: str = "truth",
) -> pl.DataFrame:
    """Long table from scikit-learn style matrices (numpy arrays or scipy sparse matrices).

    Row i, column j of ``y_true`` and ``y_score`` become the row (sample i, label j).

    Parameters
    ----------
    y_true, y_score
        Samples x labels matrices of the same shape: the truth (0/1, or graded gains) and the
        scores.
    sample_ids, label_ids
        The ids of the rows and the columns; default: their positions.
    sample, label, score, truth
        The names of the long table's columns.

    Returns
    -------
    polars.DataFrame
        One row per (sample, label), in row-major order.

    Raises
    ------
    ValueError
        For a matrix that is not 2-d, shapes that differ, or ids of the wrong length.

    Examples
    --------
    >>> from polars_rankmetrics import from_dense
    >>> from_dense([[1, 0]], [[0.9, 0.2]], label_ids=["cat", "dog"])
    shape: (2, 4)
    ┌────────┬───────┬───────┬───────┐
    │ sample ┆ label ┆ score ┆ truth │
    │ ---    ┆ ---   ┆ ---   ┆ ---   │
    │ i64    ┆ str   ┆ f64   ┆ i64   │
    ╞════════╪═══════╪═══════╪═══════╡
    │ 0      ┆ cat   ┆ 0.9   ┆ 1     │
    │ 0      ┆ dog   ┆ 0.2   ┆ 0     │
    └────────┴───────┴───────┴───────┘
    """
    import numpy as np

    t, s = dense_array(y_true, "y_true"), dense_array(y_score, "y_score")
    if t.shape != s.shape:
        raise ValueError(f"y_true has shape {t.shape} but y_score has shape {s.shape}")
    n_samples, n_labels = t.shape
    samples = np.arange(n_samples) if sample_ids is None else np.asarray(sample_ids)
    labels = np.arange(n_labels) if label_ids is None else np.asarray(label_ids)
    if len(samples) != n_samples or len(labels) != n_labels:
        raise ValueError(
            f"expected {n_samples} sample ids and {n_labels} label ids, "
            f"got {len(samples)} and {len(labels)}"
        )
    return pl.DataFrame(
        {
            sample: np.repeat(samples, n_labels),
            label: np.tile(labels, n_samples),
            score: s.reshape(-1),
            truth: t.reshape(-1),
        }
    )


def from_lists(
    data: pl.DataFrame | pl.LazyFrame,
    *,
    labels: str = "labels",
    scores: str = "scores",
    truths: str | None = None,
    positives: str | None = None,
    sample: str = "sample",
    label: str = "label",
    score: str = "score",
    truth: str = "truth",
) -> pl.DataFrame | pl.LazyFrame:
    """Long table from one row per sample holding lists.

    Parameters
    ----------
    data
        One row per sample: its id and parallel lists of labels and scores (the labels scored
        for the sample).
    labels, scores
        The list columns of the labels and their scores.
    truths, positives
        Exactly one: ``truths``, a list of 0/1 or gains parallel to the labels, or
        ``positives``, a list of the sample's positive labels (each among its ``labels``).
    sample, label, score, truth
        The names of the long table's columns (``sample`` is also the id column of ``data``).

    Returns
    -------
    polars.DataFrame or polars.LazyFrame
        One row per (sample, label); the same kind of frame as ``data``.

    Raises
    ------
    ValueError
        For both or neither of ``truths`` and ``positives``, lists of different lengths within
        a sample, or a positive label that is not among the sample's labels.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics import from_lists
    >>> lists = pl.DataFrame({
    ...     "sample": ["q1", "q2"], "labels": [["a", "b"], ["a", "b"]],
    ...     "scores": [[0.9, 0.5], [0.2, 0.3]], "positive_labels": [["a"], ["b"]],
    ... })
    >>> from_lists(lists, positives="positive_labels").sort("sample", "label")
    shape: (4, 4)
    ┌────────┬───────┬───────┬───────┐
    │ sample ┆ label ┆ score ┆ truth │
    │ ---    ┆ ---   ┆ ---   ┆ ---   │
    │ str    ┆ str   ┆ f64   ┆ i8    │
    ╞════════╪═══════╪═══════╪═══════╡
    │ q1     ┆ a     ┆ 0.9   ┆ 1     │
    │ q1     ┆ b     ┆ 0.5   ┆ 0     │
    │ q2     ┆ a     ┆ 0.2   ┆ 0     │
    │ q2     ┆ b     ┆ 0.3   ┆ 1     │
    └────────┴───────┴───────┴───────┘
    """
    if (truths is None) == (positives is None):
        raise ValueError("give exactly one of truths= (a list per sample) or positives=")
    lf = data.lazy()
    lists = [labels, scores] if truths is None else [labels, scores, truths]
    _check_lengths(lf, sample, lists)
    long = (
        lf.select(sample, *lists)
        .explode(lists)
        .rename({labels: label, scores: score} | ({} if truths is None else {truths: truth}))
    )
    if positives is not None:
        marked = lf.select(sample, pl.col(positives).alias(label)).explode(label)
        marked = marked.drop_nulls(label).unique().with_columns(pl.lit(1, pl.Int8).alias(truth))
        _check_positives_listed(marked, long, sample, label, positives)
        long = long.join(marked, on=[sample, label], how="left", nulls_equal=True).with_columns(
            pl.col(truth).fill_null(0)
        )
    return long.collect() if isinstance(data, pl.DataFrame) else long


def _check_lengths(lf: pl.LazyFrame, sample: str, lists: list[str]) -> None:
    lengths = [pl.col(c).list.len() for c in lists]
    uneven = lf.filter(pl.any_horizontal(n != lengths[0] for n in lengths[1:])).select(sample)
    bad = uneven.head(1).collect()
    if bad.height:
        raise ValueError(
            f"columns {', '.join(map(repr, lists))} hold lists of different lengths "
            f"for sample {bad[sample][0]!r}"
        )


def _check_positives_listed(
    marked: pl.LazyFrame, long: pl.LazyFrame, sample: str, label: str, positives: str
) -> None:
    unlisted = marked.join(long, on=[sample, label], how="anti", nulls_equal=True).head(1).collect()
    if unlisted.height:
        raise ValueError(
            f"column {positives!r} names label {unlisted[label][0]!r} for sample "
            f"{unlisted[sample][0]!r}, which is not among that sample's labels"
        )
