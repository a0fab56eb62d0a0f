"""Converters from the shapes predictions come in today to the long table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

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
    """Long table from scikit-learn style matrices (numpy arrays, scipy sparse matrices, pandas
    or Polars DataFrames).

    Row i, column j of ``y_true`` and ``y_score`` become the row (sample i, label j).

    DataFrames are matched by name, never by position. A DataFrame's column names are the
    labels; two DataFrames must name the same labels (in any order: ``y_score``'s columns are
    taken in ``y_true``'s order), and a name only one of them has is refused. Two pandas
    DataFrames are matched by their index, as pandas matches them: both must hold the same index
    values (in any order), and ``y_score``'s rows are taken in ``y_true``'s order. A pandas
    index other than the default ``RangeIndex`` (0, 1, ... n - 1) gives the sample ids. A
    DataFrame next to a matrix (or a pandas DataFrame next to a Polars one, which has no index)
    is matched by position, its names (and index) naming the matrix's columns (and rows) too.

    Parameters
    ----------
    y_true, y_score
        Samples x labels matrices of the same shape: the truth (0/1, or graded gains) and the
        scores.
    sample_ids, label_ids
        The ids of ``y_true``'s rows and columns, in its order; default: a pandas index
        (other than the default one) and DataFrame column names, else the positions.
    sample, label, score, truth
        The names of the long table's columns.

    Returns
    -------
    polars.DataFrame
        One row per (sample, label), in row-major order of ``y_true``.

    Raises
    ------
    ValueError
        For a matrix that is not 2-d, shapes that differ, ids of the wrong length, DataFrames
        whose column names (or pandas indexes) differ, a name or index value that repeats, or a
        DataFrame column that is not numeric.

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

    DataFrames are matched by their column names:

    >>> import polars as pl
    >>> y_true = pl.DataFrame({"cat": [1], "dog": [0]})
    >>> y_score = pl.DataFrame({"dog": [0.2], "cat": [0.9]})
    >>> from_dense(y_true, y_score).rows()
    [(0, 'cat', 0.9, 1), (0, 'dog', 0.2, 0)]
    """
    import numpy as np

    y_true, y_score, names, index = _matched(y_true, y_score)
    t, s = dense_array(y_true, "y_true"), dense_array(y_score, "y_score")
    if t.shape != s.shape:
        raise ValueError(f"y_true has shape {t.shape} but y_score has shape {s.shape}")
    n_samples, n_labels = t.shape
    sample_ids = index if sample_ids is None else sample_ids
    label_ids = names if label_ids is None else label_ids
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


def _is_pandas(matrix: object) -> bool:
    return type(matrix).__module__.startswith("pandas") and hasattr(matrix, "columns")


def _names(matrix: Any, name: str) -> list[object] | None:
    """A DataFrame's column names (each numeric), None for a matrix."""
    if isinstance(matrix, pl.DataFrame):
        schema = matrix.schema.items()
        bad = [c for c, dtype in schema if not (dtype.is_numeric() or dtype == pl.Boolean)]
        names: list[object] = list(matrix.columns)
    elif _is_pandas(matrix):
        from pandas.api.types import is_bool_dtype, is_numeric_dtype  # type: ignore[import-untyped]

        names = list(matrix.columns)
        _refuse_repeats(names, f"{name} has two columns named")
        bad = [
            c
            for c, dtype in matrix.dtypes.items()
            if not (is_numeric_dtype(dtype) or is_bool_dtype(dtype))
        ]
    else:
        return None
    if bad:
        raise ValueError(
            f"{name}'s column {bad[0]!r} is not numeric: each column of {name} holds one "
            "label's values; pass sample ids as sample_ids= (or as a pandas DataFrame's index)"
        )
    return names


def _index(matrix: Any) -> list[object] | None:
    """A pandas DataFrame's index values; None for the default index (0, 1, ... n - 1) and for
    anything else."""
    if not _is_pandas(matrix):
        return None
    from pandas import RangeIndex  # type: ignore[import-untyped]

    index = matrix.index
    if isinstance(index, RangeIndex) and index.start == 0 and index.step == 1:
        return None
    return list(index)


def _refuse_repeats(values: Sequence[object], message: str) -> None:
    seen: set[object] = set()
    for value in values:
        if value in seen:
            raise ValueError(f"{message} {value!r}")
        seen.add(value)


def _differ(mine: Sequence[object], theirs: Sequence[object], what: str) -> str | None:
    """What differs between two sets of ``what`` (names or index values) of y_true and
    y_score, or None when they are the same."""
    mine_set, theirs_set = set(mine), set(theirs)
    only_true = [v for v in mine if v not in theirs_set]
    only_score = [v for v in theirs if v not in mine_set]
    if not only_true and not only_score:
        return None
    shown = [
        f"{len(found)} only in {where} (e.g. {found[0]!r})"
        for found, where in ((only_true, "y_true"), (only_score, "y_score"))
        if found
    ]
    return f"y_true and y_score have different {what}: " + ", ".join(shown)


def _matched(y_true: Any, y_score: Any) -> tuple[Any, Any, Any, Any]:
    """``y_true`` and ``y_score`` with ``y_score``'s columns (and pandas rows) in ``y_true``'s
    order, with the label names and sample ids they give (None where they give none)."""
    true_names, score_names = _names(y_true, "y_true"), _names(y_score, "y_score")
    if true_names is not None and score_names is not None:
        differ = _differ(true_names, score_names, "column names (labels)")
        if differ is not None:
            raise ValueError(f"{differ}; DataFrames are matched by their column names")
        if true_names != score_names:
            y_score = (
                y_score.select(true_names)
                if isinstance(y_score, pl.DataFrame)
                else y_score[true_names]
            )
    index = _index(y_true)
    if _is_pandas(y_true) and _is_pandas(y_score):
        mine, theirs = list(y_true.index), list(y_score.index)
        _refuse_repeats(mine, "y_true's index repeats")
        _refuse_repeats(theirs, "y_score's index repeats")
        differ = _differ(mine, theirs, "index values (samples)")
        if differ is not None:
            raise ValueError(
                f"{differ}; two pandas DataFrames are matched by their index: give them the "
                "same one (y_score.index = y_true.index, if the rows are in the same order)"
            )
        if mine != theirs:
            y_score = y_score.loc[y_true.index]
    else:
        index = index if index is not None else _index(y_score)
    if index is not None:
        _refuse_repeats(index, "the index repeats")
    names = true_names if true_names is not None else score_names
    return y_true, y_score, names, index


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
