"""trec_eval's printed form of :func:`~polars_rankmetrics.trec_eval`'s table.

trec_eval 10.0 prints one line a value, ``printf("%-22s\\t%s\\t%s\\n", measure, topic, value)``
(``meas_print_single.c``, ``meas_print_final.c``): the measure's name left-aligned in 22
characters (a longer name is not cut), a tab, the topic id or ``all``, a tab, the value as text.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

# The topic of trec_eval's summary lines.
SUMMARY = "all"
# What trec_eval_lines reads from the table.
_COLUMNS = ("measure", "topic", "text")


def trec_eval_lines(result: pl.DataFrame, *, summary: bool = True) -> Iterator[str]:
    """The lines trec_eval prints for ``result``, in its row order, without line ends.

    Parameters
    ----------
    result
        :func:`~polars_rankmetrics.trec_eval`'s table: its columns ``measure``, ``topic`` and
        ``text`` are read, its row order kept (trec_eval's: one block per run, each topic's
        rows with ``per_topic``, then the summary).
    summary
        ``False`` leaves out the summary rows (topic ``all``): trec_eval's ``-n``. A topic whose
        id is ``all`` is left out too, as trec_eval's own output cannot tell it apart.

    Raises
    ------
    ValueError
        When a column is missing, naming it.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics.trec.output import trec_eval_lines
    >>> table = pl.DataFrame({"run": "bm25", "measure": ["P_5", "ndcg_cut_1000", "P_5"],
    ...                       "topic": ["301", "301", "all"],
    ...                       "text": ["0.4000", "0.6125", "0.4000"]})
    >>> for line in trec_eval_lines(table):
    ...     print(line.replace("\\t", " | "))
    P_5                    | 301 | 0.4000
    ndcg_cut_1000          | 301 | 0.6125
    P_5                    | all | 0.4000
    >>> list(trec_eval_lines(table.head(0)))
    []
    """
    missing = [c for c in _COLUMNS if c not in result.columns]
    if missing:
        raise ValueError(
            f"column {missing[0]!r} is missing: trec_eval's lines read the columns "
            f"{', '.join(_COLUMNS)} of rm.trec_eval's table"
        )
    rows = result if summary else result.filter(pl.col("topic") != SUMMARY)
    for measure, topic, text in rows.select(_COLUMNS).iter_rows():
        yield f"{measure:<22}\t{topic}\t{text}"
