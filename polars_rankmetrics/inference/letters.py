"""The compact letter display of a set of pairwise decisions (Piepho 2004, as R's
``multcompView``): each model gets letters so that two models share a letter exactly when their
pair is not significant.

The insert-and-absorb algorithm: start with one letter held by every model; for each
significant pair (i, j), every letter held by both is split in two, one without i and one
without j; a letter whose models are all held by another letter is absorbed (dropped). Then
the sweep: a model is taken off a letter when it shares another letter with each of that
letter's other models (and holds another letter), and letters held by others are absorbed
again. The letters are named in the models' order: ``a`` is the letter of the first model (the
best, in a leaderboard), ``b`` the next letter to appear, and so on (``a``-``z``, ``A``-``Z``,
then ``a1``, ``b1``, ...). Decisions need not be transitive: with A ~ B, B ~ C and A, C
significant, A is ``a``, B ``ab`` and C ``b``.

References
----------
Piepho, H.-P. (2004). An algorithm for a letter-based representation of all-pairwise
comparisons. Journal of Computational and Graphical Statistics 13(2), 456-466.
"""

from __future__ import annotations

import string
from collections.abc import Iterable

_ALPHABET = string.ascii_lowercase + string.ascii_uppercase


def _absorbed(columns: list[set[int]]) -> list[set[int]]:
    """``columns`` without the empty ones and those whose models another column holds (of
    equal columns, the first is kept)."""
    kept: list[set[int]] = []
    for c, column in enumerate(columns):
        if not column:
            continue
        covered = any(
            column < other or (column == other and o < c)
            for o, other in enumerate(columns)
            if o != c
        )
        if not covered:
            kept.append(column)
    return kept


def _swept(columns: list[set[int]]) -> list[set[int]]:
    """Piepho's sweep: each model taken off a column where every pair it makes there is
    shared by another column too, then the columns absorbed."""
    for c, column in enumerate(columns):
        for i in sorted(column):
            others = [col for o, col in enumerate(columns) if o != c and i in col]
            if others and all(any(j in col for col in others) for j in column if j != i):
                column.discard(i)
    return _absorbed(columns)


def letter_name(index: int) -> str:
    """The name of the ``index``-th letter: ``a``-``z``, ``A``-``Z``, then ``a1``, ..."""
    cycle, at = divmod(index, len(_ALPHABET))
    return _ALPHABET[at] + (str(cycle) if cycle else "")


def compact_letters(n_models: int, significant: Iterable[tuple[int, int]]) -> list[str]:
    """Each of ``n_models`` models' letters (a string), models by their index (in the order
    the letters are named in: best first), from the ``significant`` pairs of indices. Two
    models share a letter exactly when their pair is not among ``significant``; with no
    significant pair every model is ``a``; with no model, an empty list.

    Examples
    --------
    >>> compact_letters(3, [(0, 2)])
    ['a', 'ab', 'b']
    >>> compact_letters(4, [(0, 1), (0, 2), (0, 3), (1, 3)])
    ['a', 'b', 'bc', 'c']
    """
    if n_models == 0:
        return []
    columns: list[set[int]] = [set(range(n_models))]
    for i, j in significant:
        if i == j:
            raise ValueError(f"a model is not significantly different from itself: {(i, j)}")
        split: list[set[int]] = []
        for column in columns:
            if i in column and j in column:
                split += [column - {i}, column - {j}]
            else:
                split.append(column)
        columns = _absorbed(split)
    columns = _swept(columns)
    columns.sort(key=lambda column: sorted(column))
    return [
        "".join(letter_name(c) for c, column in enumerate(columns) if i in column)
        for i in range(n_models)
    ]
