"""DuckDB's variants of views of ``sql/``: the same rows, computed the way DuckDB computes them
at its best.

- The sample counts' distinct labels from the bits of the labels rather than with
  ``count(DISTINCT label)``, which keeps a hash set per sample: the set bits of a bitstring over
  the label range (``bit_count(bitstring_agg(...))``) for integer labels spanning at most
  :data:`_BITSTRING_MAX_LABELS` values, which caps each sample's bitstring; of an OR of one bit
  per label in a 128-bit integer (HUGEINT), cheaper still, for at most :data:`_HUGEINT_BITS`.
- Without a weight column every row's weight is 1: the sample counts' weight columns are
  constants rather than two aggregates DuckDB does not fold.
- Coverage error's counts and the sample counts' positives as ``count_if`` of their conditions
  rather than sums or counts of a CASE; without a weight column, the score counts' weights of
  positives and negatives too (:data:`_UNWEIGHTED`).
- Without ``by`` every ``grp`` is 0: the aggregations over every row (:data:`ONE_GROUP_VIEWS`)
  group without it: the sample counts and the rows coverage error joins back to them by the
  sample alone, which DuckDB aggregates in a perfect hash table where the ids span at most
  2^PERFECT_HASH_BITS values (:data:`~.tuning.PERFECT_HASH_BITS`), instead of hashing
  (0, sample), and the score counts by (label, score). The threshold stays below the span at
  which (0, sample), two keys, would get a perfect table too, whose size outgrows what it
  spares. Every join of those views, a subquery's too, is on the sample alone: the positive
  ranks by pairs join their candidates to the sample counts and each positive to its sample's
  candidates with one key fewer to hash and compare per row and per pair.

- A top-k piece whose rows carry their ranks (``Rows.carries_ranks``: read off by scans of the
  predictions in rank order, :func:`~polars_rankmetrics.metrics.ranks.scanned_ranks`) has the
  positive ranks without the windows over the rows above each sample's lowest positive
  (:func:`carried_ranks`): each scored positive's rank and block start are the ones it carries,
  and only the positive ranks are counted by a window over the positives.

- The discounts' positions counted up to the largest sample's rows as the held sample counts
  give them, rather than by grouping every row again to find that sample.

- Where every truth is 0 or 1 (the row checks' ``binary_truth``), the ideal table as the held
  sample counts give it (:data:`BINARY_IDEAL`): one block of truth 1 per sample with a positive,
  its positives, rather than every row grouped by (sample, truth) again and a window over the
  blocks.

Each variant is made from the view as ``sql/`` writes it, by DuckDB's own parser: the view's
query is parsed to its syntax tree (``json_serialize_sql``), the nodes the variant changes are
found by what they are (a column of the aggregation by its alias, a ``grp`` key, a join on
``grp``) and replaced, and the tree is written back as SQL (``json_deserialize_sql``). The
layout of ``sql/`` (whitespace, comments, the case of keywords) does not matter, and the parser
is in the process already: a variant costs no import. The variants a session defines are parsed
in one call and written in one more (:func:`_made`), and each is made once a process. A view
that no longer has a node a variant replaces is refused by name, when the variant is made.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

import duckdb

from polars_rankmetrics.engines.sql.export import quote_identifier, view_query
from polars_rankmetrics.metrics.ranks import BLOCK_START, RANK

SAMPLE_COUNTS = "rankmetrics_sample_counts"
SCORE_COUNTS = "rankmetrics_score_counts"
ONE_GROUP_VIEWS = (
    SAMPLE_COUNTS, "rankmetrics_coverage_per_sample", "rankmetrics_positive_ranks_by_pairs",
    "rankmetrics_positive_sums_by_pairs", "rankmetrics_pair_candidates", SCORE_COUNTS,
)  # fmt: skip
_BITSTRING_MAX_LABELS = 1024  # a bitstring of at most 128 bytes a sample
_HUGEINT_BITS = 127  # 1 << 127 overflows the signed 128 bits
_GROUP = "grp"

Node = dict[str, Any]
# The variants made in this process, by view, query and change: each is parsed once.
_MADE: dict[tuple[object, ...], str] = {}


@dataclass(frozen=True)
class _Plan:
    """A variant to make: its key in :data:`_MADE`, the queries it parses (a SELECT each, the
    view's first) and the edit that makes its syntax tree from theirs, written after ``head``."""

    key: tuple[object, ...]
    queries: tuple[str, ...]
    edit: Callable[[list[Node]], Node]
    head: str


def _made(con: duckdb.DuckDBPyConnection, plans: Sequence[_Plan]) -> list[str]:
    """Each plan's statement; those not made in this process yet are parsed in one call to
    DuckDB's parser and written in one more, whatever their number."""
    todo = list({plan.key: plan for plan in plans if plan.key not in _MADE}.values())
    if todo:
        trees = iter(_parsed(con, *(query for plan in todo for query in plan.queries)))
        edited = [plan.edit([next(trees) for _ in plan.queries]) for plan in todo]
        for plan, written in zip(todo, _written(con, *edited), strict=True):
            _MADE[plan.key] = plan.head + written
    return [_MADE[plan.key] for plan in plans]


def sample_counts(
    con: duckdb.DuckDBPyConnection, span: tuple[int, int] | None, weighted: bool,
    grouped: bool, *, query: str | None = None, unique_labels: bool = False,
    flags: Mapping[str, Sequence[str]] | None = None,
) -> str:  # fmt: skip
    """The statement defining ``rankmetrics_sample_counts`` as DuckDB computes it, the same
    counts: the distinct labels as set bits where the labels are integers spanning at most
    :data:`_BITSTRING_MAX_LABELS` values (``span``: the lowest and highest), or as the rows
    where no sample repeats a label (``unique_labels``: a top-k piece whose join found none, as
    ``Rows.unique_labels`` says), the weight the constant 1 without a weight column (not
    ``weighted``), grouped by the sample alone without ``by`` (not ``grouped``). ``query``: the
    view's query (default: as ``sql/`` writes it); ``con`` parses it.

    ``flags``: per column name, problems of ``rankmetrics_row_flags`` (``sql/08_checks.sql``)
    counted per sample beside the counts, in that column: their flags, as that view computes
    them, summed over the sample's rows. The column's sum over the samples is the sum of those
    problems' counts in ``rankmetrics_row_checks`` (a row without a sample is counted in the
    sample NULL): the row checks read in the sample counts' pass whether any row shows them."""
    columns = {"n_positives": "count_if(truth > 0)"}  # a count of a CASE costs DuckDB more
    if unique_labels:
        columns["distinct_labels"] = "count(*)"
    elif span is not None and span[1] - span[0] < _BITSTRING_MAX_LABELS:
        lowest, highest = int(span[0]), int(span[1])
        if highest - lowest < _HUGEINT_BITS:
            # Each label's bit looked up in a constant list of the span's powers of two (folded
            # once): a HUGEINT shift per row costs more than the lookup.
            powers = (
                f"list_transform(range({highest - lowest + 1}), "
                "lambda i: CAST(1 AS HUGEINT) << CAST(i AS HUGEINT))"
            )
            bit = f"({powers})[label - {lowest} + 1]"
            columns["distinct_labels"] = f"bit_count(bit_or({bit}))"
        else:
            columns["distinct_labels"] = f"bit_count(bitstring_agg(label, {lowest}, {highest}))"
    if not weighted:
        columns |= {"weight": "CAST(1 AS DOUBLE)", "varying_weight": "0"}
    flagged = tuple((column, tuple(problems)) for column, problems in (flags or {}).items())
    plan = _variant(SAMPLE_COUNTS, query, columns, one_group=not grouped, flags=flagged)
    return plan if isinstance(plan, str) else _made(con, [plan])[0]


_FLAGS = "rankmetrics_row_flags"
_COUNTS_ALIAS = "c"  # the sample counts' aggregation, as their view's outer query reads it


def _flag_queries(flags: tuple[tuple[str, tuple[str, ...]], ...]) -> tuple[str, ...]:
    """The queries :func:`_add_flags` reads besides the sample counts': the row flags' view,
    and a SELECT of ``sum(0 + ...) AS column`` per column of ``flags`` (a 0 per problem, each
    replaced by its flag) and of each column as the outer query passes it on."""
    terms = [" + ".join(["0"] * len(problems)) for _, problems in flags]
    passed = [f"{_COUNTS_ALIAS}.{column}" for column, _ in flags]
    template = f"SELECT {', '.join(f'sum({term})' for term in terms)}, {', '.join(passed)}"
    return view_query(_FLAGS), template


def _add_flags(
    counts: Node, row_flags: Node, template: Node, flags: tuple[tuple[str, tuple[str, ...]], ...]
) -> None:
    """The sample counts' tree ``counts`` with, for each ``(column, problems)`` of ``flags``,
    ``sum(<flag> + ...) AS column`` in its aggregation (each problem's flag, 0 or 1, as
    ``rankmetrics_row_flags`` computes it over the same input columns: ``row_flags``) and the
    column passed on by its outer query (``template``: :func:`_flag_queries`)."""
    items = {item["alias"]: item for item in row_flags["node"]["select_list"]}
    unknown = [p for _, problems in flags for p in problems if p not in items]
    if unknown:
        raise ValueError(f"{_FLAGS} of the SQL files flags no problem {unknown[0]!r}")
    outer = counts["node"]
    aggregations = [node for node in _nodes(outer) if _is_aggregation(node)]
    if len(aggregations) != 1 or outer["from_table"]["left"].get("alias") != _COUNTS_ALIAS:
        raise ValueError(f"{SAMPLE_COUNTS} of the SQL files is not one aggregation named c")
    made = template["node"]["select_list"]
    for (column, problems), total, reference in zip(
        flags, made[: len(flags)], made[len(flags) :], strict=True
    ):
        zeros = [node for node in _nodes(total) if node.get("class") == "CONSTANT"]
        for zero, problem in zip(zeros, problems, strict=True):
            zero.clear()
            zero.update(items[problem] | {"alias": ""})
        aggregations[0]["select_list"].append(total | {"alias": column})
        outer["select_list"].append(reference)


POSITIVE_RANKS = "rankmetrics_positive_ranks"
_RANKED_INPUT = "rankmetrics_ranked_input"
# The positive ranks of rows that carry their rank and block start (rankmetrics_ranked_input),
# the values sql/'s rankmetrics_positive_ranks gives them: an unscored positive ranks at
# n_labels, its block starting after the sample's scored labels.
_CARRIED_RANKS = f"""
CREATE OR REPLACE TEMP VIEW {POSITIVE_RANKS} AS
SELECT
    grp, sample, label, score, truth, weight, propensity, rank, block_start,
    count(*) OVER (PARTITION BY grp, sample ORDER BY score DESC NULLS LAST) AS positive_rank
FROM (
    SELECT
        i.grp, i.sample, i.label, i.score, i.truth, i.weight, i.propensity,
        CASE WHEN i.score IS NULL THEN p.n_labels ELSE i.carried_rank END AS rank,
        CASE WHEN i.score IS NULL THEN s.n_scored + 1 ELSE i.carried_block_start END
            AS block_start
    FROM {_RANKED_INPUT} AS i
    JOIN rankmetrics_sample_counts AS s ON i.grp = s.grp AND i.sample = s.sample
    CROSS JOIN rankmetrics_parameters AS p
    WHERE i.truth > 0
) AS positives
"""


def carried_ranks(con: duckdb.DuckDBPyConnection, input_query: str) -> list[str]:
    """The statements defining ``rankmetrics_positive_ranks`` from the ranks the rows carry
    (their columns ``rm_rank`` and ``rm_block_start``, null on unscored rows), the same rows
    as ``sql/`` writes the view: a view of the rows of ``rankmetrics_input`` (``input_query``:
    its query, one SELECT over the source) with the two columns beside, then the positives'
    ranks over it. The scored rows' ranks are only read, never computed: the positives alone
    are sorted, for their positive ranks."""
    carried = (
        f"SELECT CAST({quote_identifier(RANK)} AS BIGINT) AS carried_rank, "
        f"CAST({quote_identifier(BLOCK_START)} AS BIGINT) AS carried_block_start"
    )

    def edit(trees: list[Node]) -> Node:
        tree, extra = trees
        node = tree["node"]
        if node.get("type") != "SELECT_NODE" or _is_aggregation(node):
            raise ValueError("rankmetrics_input is not one SELECT of the source's rows")
        node["select_list"] += extra["node"]["select_list"]
        return tree

    plan = _Plan((_RANKED_INPUT, input_query), (input_query, carried), edit, _head(_RANKED_INPUT))
    return [*_made(con, [plan]), _CARRIED_RANKS]


# The other plan of the positive ranks (sql/), where tuning.ranks_by_pairs chooses it, and of
# their sums per sample, where tuning.sums_by_pairs allows it too.
BY_PAIRS = "rankmetrics_positive_ranks_by_pairs"
POSITIVE_SUMS = "rankmetrics_positive_sums"
SUMS_BY_PAIRS = "rankmetrics_positive_sums_by_pairs"

IDEAL_TABLE = "rankmetrics_ideal_table"
# rankmetrics_ideal_table of a table whose truth is 0 or 1: the rows sql/ gives it, the positives
# of a sample being one block of truth 1 (the input's DOUBLE) ending at their count.
BINARY_IDEAL = f"""
CREATE OR REPLACE TEMP VIEW {IDEAL_TABLE} AS
SELECT grp, sample, CAST(1 AS DOUBLE) AS truth, n_positives AS n, n_positives AS truth_rank
FROM rankmetrics_sample_counts
WHERE n_positives > 0
"""

DISCOUNTS = "rankmetrics_discounts"
# The positions 0 up to the rows of the largest sample, from the sample counts.
_POSITIONS = (
    "SELECT unnest(range(0, (SELECT coalesce(max(n_rows), 0) FROM rankmetrics_sample_counts) + 1)) "
    "AS position"
)


def _discounts() -> _Plan:
    """The plan of ``rankmetrics_discounts`` over the positions 0 up to the largest sample's
    rows counted by ``rankmetrics_sample_counts`` (read once the session holds them), the same
    positions ``sql/`` numbers over that sample's rows, and the same sums over them."""

    def edit(trees: list[Node]) -> Node:
        tree, positions = trees
        source = tree["node"]["from_table"]
        if source.get("type") != "SUBQUERY" or source.get("alias") != "positions":
            raise ValueError(f"{DISCOUNTS} of the SQL files reads no subquery named positions")
        source["subquery"]["node"] = positions["node"]
        return tree

    query = view_query(DISCOUNTS)
    return _Plan((DISCOUNTS, query, _POSITIONS), (query, _POSITIONS), edit, _head(DISCOUNTS))


COVERAGE = "rankmetrics_coverage_per_sample"
# The coverage view's counts as count_if of their conditions, the same counts: a sum of a CASE
# costs DuckDB more.
_COUNTED = {
    COVERAGE: {
        "covered": "count_if(i.score >= s.lowest_positive)",
        "unscored_positives": "count_if(i.truth > 0 AND i.score IS NULL)",
    }
}
# Without a weight column every weight is 1: the score counts' sums of the positives' and the
# negatives' weights are their counts (a row whose truth is not above 0 is a negative).
_UNWEIGHTED = {
    SCORE_COUNTS: {
        "pos": "CAST(count_if(truth > 0) AS DOUBLE)",
        "neg": "CAST(count(*) - count_if(truth > 0) AS DOUBLE)",
    }
}


def _counted(name: str, weighted: bool) -> dict[str, str]:
    """The columns of the view ``name`` that its variant counts (:data:`_COUNTED`, and without
    a weight column :data:`_UNWEIGHTED`)."""
    return _COUNTED.get(name, {}) | ({} if weighted else _UNWEIGHTED.get(name, {}))


def defined_variants(
    con: duckdb.DuckDBPyConnection, views: Set[str], *, grouped: bool, weighted: bool
) -> dict[str, str]:
    """The statements defining those of ``views`` that have a variant, made together: without
    ``by`` (not ``grouped``) the one-group views (:data:`ONE_GROUP_VIEWS`) grouped without
    ``grp``, the counts of :func:`_counted` (``weighted``: the table has a weight column), and
    the discounts over the sample counts where those are read too (held before the discounts);
    but the sample counts, which no query reads before the session defines them
    (:func:`sample_counts`: their variant reads the label range)."""
    names = {
        name for name in views
        if name != SAMPLE_COUNTS and (_counted(name, weighted) or not grouped
                                      and name in ONE_GROUP_VIEWS)
    }  # fmt: skip
    made = {name: _variant(name, None, _counted(name, weighted), one_group=not grouped)
            for name in sorted(names)}  # fmt: skip
    if DISCOUNTS in views and SAMPLE_COUNTS in views:
        made[DISCOUNTS] = _discounts()
    written = iter(_made(con, [plan for plan in made.values() if isinstance(plan, _Plan)]))
    return {name: plan if isinstance(plan, str) else next(written) for name, plan in made.items()}


def view_variant(
    con: duckdb.DuckDBPyConnection, name: str, *, grouped: bool, weighted: bool = True,
    query: str | None = None,
) -> str:  # fmt: skip
    """The statement defining the view ``name`` as DuckDB computes it: its counts as
    :func:`_counted` gives them (``weighted``: the table has a weight column) and, without
    ``by`` (not ``grouped``), grouped without ``grp``, the constant 0; ``query``: the view's
    query (default: as ``sql/`` writes it)."""
    plan = _variant(name, query, _counted(name, weighted), one_group=not grouped)
    return plan if isinstance(plan, str) else _made(con, [plan])[0]


def _head(name: str) -> str:
    return f"CREATE OR REPLACE TEMP VIEW {name} AS "


def _variant(
    name: str, query: str | None, columns: Mapping[str, str], *, one_group: bool,
    flags: tuple[tuple[str, tuple[str, ...]], ...] = (),
) -> _Plan | str:  # fmt: skip
    """The plan of ``CREATE OR REPLACE TEMP VIEW name AS`` the view's query (``query``; default:
    as ``sql/`` writes it) with each column of ``columns`` (alias -> expression) computed as
    given in the aggregations (the SELECTs with a GROUP BY), with ``one_group`` those grouped
    and every join joined on the sample alone (without ``by`` every ``grp`` is 0), and, for the
    sample counts, the row problems' flags of ``flags`` counted (:func:`_add_flags`); the
    statement itself where nothing changes."""
    query = view_query(name) if query is None else query
    new = {**columns, **({_GROUP: "0"} if one_group else {})}
    if not (new or flags):
        return _head(name) + query
    select = ", ".join(f"{expression} AS {alias}" for alias, expression in new.items())
    queries = (query, *([f"SELECT {select}"] if new else []))
    queries += _flag_queries(flags) if flags else ()

    def edit(trees: list[Node]) -> Node:
        tree = trees[0]
        if flags:
            _add_flags(tree, trees[-2], trees[-1], flags)
        if not new:
            return tree
        replacements = {item["alias"]: item for item in trees[1]["node"]["select_list"]}
        aggregations = [node for node in _nodes(tree) if _is_aggregation(node)]
        if columns:
            _replace_columns(name, aggregations, {c: replacements[c] for c in columns})
        if one_group:
            for node in aggregations:
                _grouped_without_grp(node, replacements[_GROUP])
            for node in list(_nodes(tree)):  # every join, a subquery's too: every grp is 0
                if node.get("type") == "JOIN" and node.get("condition") is not None:
                    node["condition"] = _without_group_equality(node["condition"])
        return tree

    key = (name, query, tuple(sorted(columns.items())), one_group, flags)
    return _Plan(key, queries, edit, _head(name))


def _parsed(con: duckdb.DuckDBPyConnection, *queries: str) -> list[Node]:
    """The syntax tree of each of ``queries`` (a SELECT each), as DuckDB's parser serialises
    it: parsed in one call."""
    found = con.execute("SELECT json_serialize_sql(?)", ["\n;\n".join(queries)]).fetchall()
    parsed = json.loads(found[0][0])
    if parsed["error"]:
        raise ValueError(f"DuckDB cannot parse a view of the SQL files: {parsed['error_message']}")
    statements: list[Node] = parsed["statements"]
    return statements


def _written(con: duckdb.DuckDBPyConnection, *statements: Node) -> list[str]:
    """The SQL of each statement's syntax tree (:func:`_parsed`): written in one call."""
    trees = [json.dumps({"error": False, "statements": [statement]}) for statement in statements]
    calls = ", ".join(["json_deserialize_sql(?)"] * len(trees))
    return [str(sql) for sql in con.execute(f"SELECT {calls}", trees).fetchall()[0]]


def _nodes(tree: Any) -> Iterator[Node]:
    """Every node of ``tree``, depth first."""
    if isinstance(tree, dict):
        yield tree
        for value in tree.values():
            yield from _nodes(value)
    elif isinstance(tree, list):
        for value in tree:
            yield from _nodes(value)


def _is_aggregation(node: Node) -> bool:
    return node.get("type") == "SELECT_NODE" and bool(node.get("group_expressions"))


def _column(node: Node) -> str | None:
    """The column a column reference names (``i.grp``: ``grp``); None for another node."""
    return node["column_names"][-1] if node.get("class") == "COLUMN_REF" else None


def _replace_columns(name: str, aggregations: list[Node], new: Mapping[str, Node]) -> None:
    """Each column of ``new`` (alias -> expression) computed as given where an aggregation of
    the view ``name`` selects it."""
    found = set()
    for node in aggregations:
        for i, item in enumerate(node["select_list"]):
            if item["alias"] in new:
                node["select_list"][i] = new[item["alias"]]
                found.add(item["alias"])
    missing = sorted(set(new) - found)
    if missing:
        raise ValueError(f"{name} of the SQL files aggregates no column {missing[0]!r}")


def _grouped_without_grp(node: Node, zero: Node) -> None:
    """The aggregation ``node`` grouped without its ``grp`` key, which it selects as the
    constant 0."""
    keys = node["group_expressions"]
    kept = [i for i, key in enumerate(keys) if _column(key) != _GROUP]
    if len(kept) == len(keys):
        return
    position = {old: new for new, old in enumerate(kept)}
    node["group_expressions"] = [keys[i] for i in kept]
    node["group_sets"] = [[position[i] for i in s if i in position] for s in node["group_sets"]]
    selected = node["select_list"]
    node["select_list"] = [zero if _column(item) == _GROUP else item for item in selected]


def _without_group_equality(condition: Node) -> Node:
    """``condition`` (a join's) without its conjuncts equating two ``grp`` columns."""
    if condition.get("type") != "CONJUNCTION_AND":
        return condition
    kept = [
        child
        for child in condition["children"]
        if not (
            child.get("type") == "COMPARE_EQUAL"
            and _column(child["left"]) == _GROUP
            and _column(child["right"]) == _GROUP
        )
    ]
    narrowed: Node = kept[0] if len(kept) == 1 else condition | {"children": kept}
    return narrowed
