"""DuckDB's variants of views of ``sql/``: the same rows, computed the way DuckDB computes them
at its best.

- The sample counts' distinct labels from the bits of the labels rather than with
  ``count(DISTINCT label)``, which keeps a hash set per sample: the set bits of a bitstring over
  the label range (``bit_count(bitstring_agg(...))``) for integer labels spanning at most
  :data:`_BITSTRING_MAX_LABELS` values, which caps each sample's bitstring; of an OR of one bit
  per label in a 128-bit integer (HUGEINT), cheaper still, for at most :data:`_HUGEINT_BITS`.
- Without a weight column every row's weight is 1: the sample counts' weight columns are
  constants rather than two aggregates DuckDB does not fold.
- Without ``by`` every ``grp`` is 0: the two aggregations over every row, the sample counts and
  the rows coverage error joins back to them, group (and join) by the sample alone, which DuckDB
  aggregates in a perfect hash table where the ids span at most 2^PERFECT_HASH_BITS values
  (:data:`~.tuning.PERFECT_HASH_BITS`), instead of hashing (0, sample). The threshold stays
  below the span at which (0, sample), two keys, would get a perfect table too, whose size
  outgrows what it spares.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from polars_rankmetrics.engines.sql.export import view_statements

_BITSTRING_MAX_LABELS = 1024  # a bitstring of at most 128 bytes a sample
_HUGEINT_BITS = 127  # 1 << 127 overflows the signed 128 bits
_DISTINCT_LABELS = "count(DISTINCT label) AS distinct_labels"
_UNWEIGHTED = {
    "max(weight) AS weight": "CAST(1 AS DOUBLE) AS weight",
    "CASE WHEN min(weight) < max(weight) THEN 1 ELSE 0 END AS varying_weight":
        "0 AS varying_weight",
}  # fmt: skip
_ONE_GROUP = {
    "rankmetrics_sample_counts": {
        "        grp, sample,\n": "        0 AS grp, sample,\n",
        "GROUP BY grp, sample": "GROUP BY sample",
    },
    "rankmetrics_coverage_per_sample": {
        "        i.grp, i.sample,\n": "        0 AS grp, i.sample,\n",
        "ON i.grp = s.grp AND i.sample = s.sample": "ON i.sample = s.sample",
        "GROUP BY i.grp, i.sample": "GROUP BY i.sample",
    },
}  # fmt: skip


def sample_counts(span: tuple[int, int] | None, weighted: bool, grouped: bool) -> str:
    """``rankmetrics_sample_counts`` of ``sql/`` as DuckDB computes it, the same counts: the
    distinct labels as set bits where the labels are integers spanning at most 1024 values
    (``span``: the lowest and highest), the weight the constant 1 without a weight column (not
    ``weighted``), grouped by the sample alone without ``by`` (not ``grouped``)."""
    [view] = [s for s in view_statements("duckdb", temporary=True) if _DISTINCT_LABELS in s]
    if span is not None and span[1] - span[0] < _BITSTRING_MAX_LABELS:
        lowest, highest = int(span[0]), int(span[1])
        if highest - lowest < _HUGEINT_BITS:
            bit = f"CAST(1 AS HUGEINT) << CAST(label - {lowest} AS HUGEINT)"
            bits = f"bit_count(bit_or({bit})) AS distinct_labels"
        else:
            bits = f"bit_count(bitstring_agg(label, {lowest}, {highest})) AS distinct_labels"
        view = view.replace(_DISTINCT_LABELS, bits)
    view = _rewritten(view, {} if weighted else _UNWEIGHTED)
    return view if grouped else one_group(view)


def one_group(statement: str) -> str:
    """``statement``, where it creates a view of :data:`_ONE_GROUP`, for a table without ``by``:
    grouped by the sample alone."""
    view = re.search(r"VIEW (\w+) AS", statement)
    return _rewritten(statement, _ONE_GROUP.get(view[1], {}) if view else {})


def _rewritten(statement: str, rewrites: Mapping[str, str]) -> str:
    for text, replacement in rewrites.items():
        assert statement.count(text) == 1, text  # the view of sql/ says it so, once
        statement = statement.replace(text, replacement)
    return statement
