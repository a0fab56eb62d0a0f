"""How DuckDB runs the views of ``sql/`` at its best, for the same values: the connection's
settings, which views a session holds in temporary tables (computed once rather than at every
reference), and the plan of the positive ranks, chosen per table.

None of these choices changes a value, only the time and the memory a run takes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from polars_rankmetrics.engines.sql import results as sql_results
from polars_rankmetrics.engines.sql.export import views_read, words
from polars_rankmetrics.metrics.registry import RANKING_VIEW, MetricKey

# Group keys whose values span at most 2^PERFECT_HASH_BITS are aggregated in a perfect hash
# table (an array indexed by the key; each thread's holds every value of the span), others by
# hashing; see the one-group variants of :mod:`.variants`, which group by the sample alone.
PERFECT_HASH_BITS = 18

# The positive ranks by pairs (rankmetrics_positive_ranks_by_pairs) where a table has at most
# this many pairs per row that the windows would rank; counted on _ESTIMATE_SAMPLES samples.
# 100,000 samples x 100 labels, lrap in fresh processes, CPU seconds by pairs / by the windows:
# 2.2 / 2.6 at 3.4 pairs per ranked row, 2.6 / 3.2 at 4.1, 2.9 / 3.2 at 5.6, 3.4 / 2.9 at 6.4.
_PAIRS_PER_RANKED_ROW = 5
_ESTIMATE_SAMPLES = 500
# The fewest pairs (each positive paired with the positives scoring at least as high) and the
# most rows ranked (every row), from the held sample counts: beyond the ratio, the windows
# without counting the pairs (which, with many positives ranking low, cost the count itself).
_BOUNDS = """
SELECT
    sum(n_positives * (n_positives + 1) / 2) AS least_pairs, sum(n_rows) AS most_ranked
FROM rankmetrics_sample_counts
"""
# The pairs the positive ranks by pairs would count and the rows the windows would rank, over
# the first _ESTIMATE_SAMPLES samples in (grp, sample) order (the same choice for the same table):
# a block of consecutive samples, whose bounds filter the scan of the input, so that a Parquet
# file written in sample order is read in the row groups holding them alone (a reservoir spread
# over the whole table reads all of it). The bounds are a filter of their own: the join hands
# them to the scan too, but only to skip row groups, and would probe each row of a row group
# read.
_ESTIMATE = f"""
WITH chosen AS (
    SELECT grp, sample, lowest_positive
    FROM rankmetrics_sample_counts ORDER BY grp, sample LIMIT {_ESTIMATE_SAMPLES}
), chosen_rows AS MATERIALIZED (
    SELECT i.grp, i.sample, i.score, i.truth, c.lowest_positive
    FROM rankmetrics_input AS i JOIN chosen AS c ON i.grp = c.grp AND i.sample = c.sample
    WHERE i.sample BETWEEN (SELECT min(sample) FROM chosen) AND (SELECT max(sample) FROM chosen)
)
SELECT
    (SELECT count(*) FROM chosen_rows AS p JOIN chosen_rows AS c
        ON c.grp = p.grp AND c.sample = p.sample AND c.score >= p.score WHERE p.truth > 0)
        AS pairs,
    (SELECT count(*) FROM chosen_rows WHERE score >= lowest_positive) AS ranked
"""
# Bytes a row of the positive ranks takes in DuckDB's buffers: its ten 8-byte columns, at most.
_POSITIVE_RANK_BYTES = 80
# The columns of the positive ranks, both plans (sql/01_rank_table.sql).
POSITIVE_RANK_COLUMNS = (
    "grp", "sample", "label", "score", "truth", "weight", "propensity", "rank", "block_start",
    "positive_rank",
)  # fmt: skip
# A reference to the positive ranks in a statement, and the alias it names them by (None
# without "AS alias": then any column may be read unqualified).
_READS_POSITIVE_RANKS = re.compile(
    r"\b(?:FROM|JOIN)\s+rankmetrics_positive_ranks\b(?:\s+AS\s+(\w+))?", re.IGNORECASE
)

Query = Callable[[str], Mapping[str, Any]]  # a query's one row, by column name

# The columns of the ranking view (sql/04) that its positives' sums by pairs give: the wrong
# pairs (ranking loss) and the ranks' spans (roc_auc), not those needing a count per positive.
_SUMS_BY_PAIRS = ("ranking_loss", "roc_auc")


def ranks_by_pairs(query: Query) -> bool:
    """Whether to rank the positives by pairs (see ``rankmetrics_positive_ranks_by_pairs`` in
    ``sql/``): where a block of samples (:data:`_ESTIMATE`) has at most
    :data:`_PAIRS_PER_RANKED_ROW` pairs per row the windows would rank, and never where the
    sample counts' bounds (:data:`_BOUNDS`) exceed the ratio (many positives: their pairs alone
    outnumber the rows). ``query`` runs a query on the session, whose sample counts are held."""
    bounds = query(_BOUNDS)
    if (bounds["least_pairs"] or 0) > _PAIRS_PER_RANKED_ROW * (bounds["most_ranked"] or 0):
        return False
    found = query(_ESTIMATE)
    return bool((found["pairs"] or 0) <= _PAIRS_PER_RANKED_ROW * (found["ranked"] or 0))


def sums_by_pairs(keys: Sequence[MetricKey]) -> bool:
    """Whether the ranking view's reads of ``keys`` all come from the positives' sums that
    ``rankmetrics_positive_sums_by_pairs`` gives (ranking loss, roc_auc: pairs counted per
    sample, one key to group by rather than a group per positive), with at least one read."""
    read = [key for key, view in sql_results.sql_views(keys).items() if view == RANKING_VIEW]
    return bool(read) and all(key.metric.sql_value in _SUMS_BY_PAIRS for key in read)


def positives_fit(query: Query, limit: int | None) -> bool:
    """Whether the positive ranks are held: without a memory budget (``limit``: DuckDB's share
    of it, in bytes), and under one where their rows (the held sample counts' positives,
    :data:`_POSITIVE_RANK_BYTES` each) take at most half of it, the rest left to the windows
    that rank them. Beyond, a held table would spill, which costs more than computing the ranks
    once per view."""
    if limit is None:
        return True
    found = query("SELECT sum(n_positives) AS n FROM rankmetrics_sample_counts_once")
    return int(found["n"] or 0) * _POSITIVE_RANK_BYTES <= limit / 2


def shared_views(
    views: set[str], statements: Sequence[str], sample_counts: Sequence[str]
) -> dict[str, str]:
    """The views that the views a run reads (``views``; ``statements``: the statements of the
    session but the sample counts' own) would each recompute, DuckDB inlining a view at every
    reference, and the columns to hold of each (``sample_counts``: the columns of the sample
    counts' view), in the order they are held: the sample counts (a row per sample, read by
    the sample checks, twice by the positive ranks, by the views that read them and by DuckDB's
    discounts; only their columns that some statement names: hamming loss needs none of the
    ranking counts), the discounts (a row per position, read by many joins of the gain and
    retrieval views), and, when two or more of the views read them, the positive ranks (the
    positive rows alone, with the columns the statements read, :func:`positive_rank_columns`;
    under a memory budget only where they fit, :func:`positives_fit`)."""
    read = views_read(views)
    shared: dict[str, str] = {}
    ranked = len([view for view in views if sql_results.ranks_positives(view)]) > 1
    if "rankmetrics_sample_counts" in read:
        named = words(statements)
        named |= {"n_positives"} if ranked else set()  # what positives_fit reads
        columns = [c for c in sample_counts if c in named and c not in ("grp", "sample")]
        shared["rankmetrics_sample_counts"] = ", ".join(["grp", "sample", *columns])
    shared |= {view: "*" for view in ("rankmetrics_discounts",) if view in read}
    if "rankmetrics_sample_counts" in read and ranked:  # the positive ranks read them
        shared["rankmetrics_positive_ranks"] = positive_rank_columns(statements)
    return shared


def positive_rank_columns(statements: Sequence[str]) -> str:
    """The columns of the positive ranks (:data:`POSITIVE_RANK_COLUMNS`) that ``statements``
    read, as a select list: those named qualified by the alias of each reference to the view
    (``FROM rankmetrics_positive_ranks AS p``: ``p.rank``), with ``grp`` and ``sample``; every
    column (``*``) where a reference has no alias, whose columns may be named unqualified.
    Computing the columns no statement reads costs DuckDB their aggregates in the plan by pairs
    (the weight and propensity of a run without them)."""
    named = {"grp", "sample"}
    for statement in statements:
        text = re.sub(r"--[^\n]*", "", statement)
        for reference in _READS_POSITIVE_RANKS.finditer(text):
            alias = reference.group(1)
            if alias is None:
                return "*"
            named |= set(re.findall(rf'\b{alias}\."?(\w+)', text))
    return ", ".join(column for column in POSITIVE_RANK_COLUMNS if column in named)
