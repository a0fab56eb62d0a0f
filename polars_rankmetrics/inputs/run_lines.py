"""A TREC run file's text split into its fields in compiled code (numba), where every line is
of the simplest form (:func:`polars_rankmetrics.inputs.trec.TrecRun.texts`): six non-empty
fields separated by single spaces, a newline after each line (the last may lack it).

Each line gives the places in the text of its qid, docno and tag, and its score. A score
written as a decimal of at most 15 significant digits (an exponent allowed) whose power of
ten is at most 22 is parsed here, exactly: the digits and the power of ten are both exact
doubles, so one product or quotient rounds once, as a correctly rounded parser does. Other
scores (more digits, ``inf``, ...) are marked for Polars' parser.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# The exact powers of ten of a double (10^22 is the largest).
_POWERS = np.array([10.0**i for i in range(23)])
_DIGITS = 15
_SPACE, _NEWLINE, _DOT, _PLUS, _MINUS = 32, 10, 46, 43, 45


@njit(nogil=True, cache=True)
def _score(text: np.ndarray, a: int, b: int, powers: np.ndarray) -> tuple[float, bool]:
    """The number ``text[a:b]`` and True, where it has the form parsed here."""
    i = a
    negative = False
    if i < b and (text[i] == _PLUS or text[i] == _MINUS):
        negative = text[i] == _MINUS
        i += 1
    mantissa, digits, seen, shift = 0, 0, 0, 0
    dot = False
    while i < b:
        ch = text[i]
        if ch == _DOT and not dot:
            dot = True
        elif 48 <= ch <= 57:
            seen += 1
            if mantissa > 0 or ch != 48:
                digits += 1
                mantissa = mantissa * 10 + (ch - 48)
            if dot:
                shift -= 1
        else:
            break
        i += 1
    if seen == 0 or digits > _DIGITS:
        return 0.0, False
    if i < b:
        if text[i] != 69 and text[i] != 101:  # E, e
            return 0.0, False
        i += 1
        sign = 1
        if i < b and (text[i] == _PLUS or text[i] == _MINUS):
            sign = -1 if text[i] == _MINUS else 1
            i += 1
        if i == b or b - i > 4:
            return 0.0, False
        exponent = 0
        while i < b:
            ch = text[i]
            if not 48 <= ch <= 57:
                return 0.0, False
            exponent = exponent * 10 + (ch - 48)
            i += 1
        shift += sign * exponent
    if mantissa == 0:
        value = 0.0
    elif -22 <= shift <= 0:
        value = mantissa / powers[-shift]
    elif 0 < shift <= 22:
        value = mantissa * powers[shift]
    else:
        return 0.0, False
    return (-value if negative else value), True


@njit(nogil=True, cache=True)
def _integer(text: np.ndarray, a: int, b: int) -> bool:
    """Whether ``text[a:b]`` is an integer of at most 18 digits, a sign allowed."""
    if a < b and (text[a] == _PLUS or text[a] == _MINUS):
        a += 1
    if a == b or b - a > 18:
        return False
    for i in range(a, b):
        if not 48 <= text[i] <= 57:
            return False
    return True


@njit(nogil=True, cache=True)
def split_run(text: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """The fields of each line of ``text``: ``places`` (rows of qid, docno and tag begin and
    end, six columns), ``scores`` and ``parsed`` (whether the score was parsed here), and
    False where a line is not of the simplest form (the arrays then stand for nothing)."""
    lines = 0
    for ch in text:
        if ch == _NEWLINE:
            lines += 1
    if len(text) and text[len(text) - 1] != _NEWLINE:
        lines += 1
    places = np.empty((lines, 6), dtype=np.int64)
    scores = np.empty(lines, dtype=np.float64)
    parsed = np.empty(lines, dtype=np.bool_)
    fields = np.empty(7, dtype=np.int64)
    row, i, n = 0, 0, len(text)
    while i < n:
        fields[0] = i
        count = 0
        while i < n and text[i] != _NEWLINE:
            if text[i] == _SPACE:
                count += 1
                if count > 5:
                    return places, scores, parsed, False
                fields[count] = i + 1
            i += 1
        if count != 5:
            return places, scores, parsed, False
        fields[6] = i + 1
        for f in range(6):
            if fields[f + 1] - 1 <= fields[f]:  # an empty field
                return places, scores, parsed, False
        if not _integer(text, fields[3], fields[4] - 1):
            return places, scores, parsed, False
        places[row, 0], places[row, 1] = fields[0], fields[1] - 1
        places[row, 2], places[row, 3] = fields[2], fields[3] - 1
        places[row, 4], places[row, 5] = fields[5], fields[6] - 1
        scores[row], parsed[row] = _score(text, fields[4], fields[5] - 1, _POWERS)
        row += 1
        i += 1
    return places, scores, parsed, row == lines
