"""The SQL of ``sql/`` for other engines: transpiled by sqlglot, plus a short list of rewrites.

``sql/`` is the single source, written in constructs that standard engines share (window
functions with explicit frames and ``NULLS LAST``, CASE, no table functions, a DOUBLE operand in
every division, never-null group keys joined with ``=``). Each dialect is generated from it:
sqlglot parses the files as DuckDB SQL and writes the target dialect, then these rewrites fix
what sqlglot gets wrong or cannot know:

1. Spark: the views are ``TEMPORARY`` (a persistent view may not read the temporary view a
   user's input usually is).
2. SQLite: no ``CREATE OR REPLACE VIEW``: ``DROP VIEW IF EXISTS`` then ``CREATE VIEW``.
3. PostgreSQL and Snowflake: no ``isnan``: ``x = CAST('NaN' AS <double>)`` (both treat NaN as
   equal to itself).
4. SQLite: no NaN at all (it stores NaN as NULL, which the null checks catch): ``isnan`` is
   false.
5. DataFusion: no sqlglot dialect of its own; it reads the PostgreSQL output, with its own
   ``isnan`` and without ``TEMPORARY`` (its views live in the session anyway).
6. Two functions that ``sql/state/`` calls and no dialect has, written out by the exporter:
   ``rankmetrics_hex_integer(digits)``, the integer of 8 hex digits, each dialect's own way
   (:data:`HEX_INTEGER`), and ``rankmetrics_poisson_count(z)``, the CASE over
   :data:`~polars_rankmetrics.inference.hashing.POISSON_THRESHOLDS`. The files of
   ``sql/state/`` are transpiled for DuckDB too (sqlglot reads and writes DuckDB SQL).

Verified by the test suite on a real engine: duckdb, spark, postgres, datafusion, sqlite.
Generated only (no engine to test here): trino, bigquery, snowflake.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from polars_rankmetrics.inference.hashing import POISSON_THRESHOLDS
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.ranks import cumulative_discount
from polars_rankmetrics.metrics.registry import MAX_INT64, MetricKey, TrecRow, trec_row

DIALECTS = ("duckdb", "spark", "postgres", "datafusion", "sqlite", "trino", "bigquery", "snowflake")
VERIFIED = ("duckdb", "spark", "postgres", "datafusion", "sqlite")

_SQLGLOT_DIALECT = {"datafusion": "postgres"}
_NO_STRUCT = ("sqlite", "datafusion")
_NO_TEMPORARY = ("datafusion",)  # its views live in the session context anyway

if TYPE_CHECKING:
    from sqlglot import exp


def sql_directory() -> Path:
    """Where the SQL files are: in the installed package, or the checkout's top-level ``sql/``."""
    package = Path(__file__).resolve().parents[2]
    for candidate in (package / "sql", package.parent / "sql"):
        if any(candidate.glob("*.sql")):
            return candidate
    raise FileNotFoundError("the rankmetrics SQL files are missing from this installation")


def sql_files() -> list[Path]:
    """The view definitions, in the order they must run (each reads the ones before it)."""
    return sorted(sql_directory().glob("*.sql"))


def state_sql_files() -> list[Path]:
    """The views of the evaluation state and its finalizing (``sql/state/``), in order: they
    read relations of their own besides the views of :func:`sql_files`, so they are exported
    only with a state (:mod:`.state`)."""
    return sorted((sql_directory() / "state").glob("*.sql"))


def view_names() -> list[str]:
    """The views the files of ``sql/`` define, in the order they are defined."""
    return [name for name, _ in _written_views()]


def _target(dialect: str) -> str:
    if dialect not in DIALECTS:
        raise ValueError(f"unknown SQL dialect {dialect!r}; choose one of {', '.join(DIALECTS)}")
    return _SQLGLOT_DIALECT.get(dialect, dialect)


def number_literal(value: float) -> str:
    """A finite number as a SQL literal."""
    if not math.isfinite(value):
        raise ValueError(f"{value!r} is not a finite number")
    return repr(value)


def quote_identifier(name: str) -> str:
    """A SQL identifier for any column name: double-quoted, inner quotes doubled (DuckDB SQL,
    which every dialect is transpiled from)."""
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    """A SQL string literal: single-quoted, inner quotes doubled."""
    return "'" + text.replace("'", "''") + "'"


def _rewrite_nan(node: exp.Expression, dialect: str) -> exp.Expression:
    from sqlglot import exp

    if not isinstance(node, exp.IsNan):
        return node
    if dialect == "sqlite":
        return exp.false()
    if dialect in ("postgres", "snowflake"):
        nan = exp.cast(exp.Literal.string("NaN"), exp.DataType.build("DOUBLE"))
        return exp.paren(exp.EQ(this=node.this, expression=nan))
    if dialect == "datafusion":
        return exp.Anonymous(this="isnan", expressions=[node.this])
    return node


# Where rankmetrics_hex_integer(digits) is the integer of 8 hex digits: each dialect's own way
# (DuckDB reads a 0x literal, Spark converts the base, PostgreSQL reads a bit string).
HEX_INTEGER = {
    "duckdb": "CAST('0x' || digits AS BIGINT)",
    "spark": "CAST(CONV(digits, 16, 10) AS BIGINT)",
    "postgres": "CAST(CAST('x' || digits AS BIT(32)) AS BIGINT)",
}
_EXPORTED = ("rankmetrics_hex_integer", "rankmetrics_poisson_count")


def _hex_integer(digits: exp.Expression, dialect: str) -> exp.Expression:
    """:data:`HEX_INTEGER` of ``dialect`` over ``digits``; refused for another dialect."""
    import sqlglot
    from sqlglot import exp

    if dialect not in HEX_INTEGER:
        raise ValueError(
            f"the state's sample hash reads hex digits as an integer, which the exporter writes "
            f"for {', '.join(HEX_INTEGER)} only, not {dialect}"
        )
    template = sqlglot.parse_one(HEX_INTEGER[dialect], read=_target(dialect))
    return template.transform(
        lambda node: digits.copy() if isinstance(node, exp.Column) and node.name == "digits"
        else node
    )  # fmt: skip


def _poisson_count(z: exp.Expression) -> exp.Expression:
    """The number of Poisson thresholds at or below ``z``: a CASE, lowest threshold first."""
    from sqlglot import exp

    case = exp.Case()
    for count, threshold in enumerate(POISSON_THRESHOLDS):
        below = exp.LT(this=z.copy(), expression=exp.Literal.number(threshold))
        case = case.when(below, exp.Literal.number(count))
    return case.else_(exp.Literal.number(len(POISSON_THRESHOLDS)))


def _rewrite_exported(node: exp.Expression, dialect: str) -> exp.Expression:
    """The functions of ``sql/state/`` that the exporter writes out (rewrite 6)."""
    from sqlglot import exp

    if not isinstance(node, exp.Anonymous) or node.name.lower() not in _EXPORTED:
        return node
    (argument,) = node.expressions
    if node.name.lower() == "rankmetrics_hex_integer":
        return _hex_integer(argument, dialect)
    return _poisson_count(argument)


def transpiled(sql: str, dialect: str, *, temporary: bool = False) -> list[str]:
    """``sql``, DuckDB SQL, transpiled to ``dialect`` with the rewrites above. (sqlglot is
    imported here, on first use: DuckDB runs the SQL as written and never pays its import.)"""
    import sqlglot
    from sqlglot import exp

    out = []
    for tree in sqlglot.parse(sql, read="duckdb"):
        if tree is None:
            continue
        tree = tree.transform(lambda node: _rewrite_nan(node, dialect))
        tree = tree.transform(lambda node: _rewrite_exported(node, dialect))
        view = isinstance(tree, exp.Create) and tree.kind == "VIEW"
        if view and ((temporary and dialect not in _NO_TEMPORARY) or dialect == "spark"):
            properties = tree.args.get("properties") or exp.Properties(expressions=[])
            properties.append("expressions", exp.TemporaryProperty())
            tree.set("properties", properties)
        if view and dialect == "sqlite":
            tree.set("replace", False)
            out.append(f"DROP VIEW IF EXISTS {tree.this.sql(dialect='sqlite')}")
        out.append(tree.sql(dialect=_target(dialect), pretty=True))
    return out


# The head of a view's statement in sql/, in any layout: CREATE OR REPLACE VIEW <name> AS.
_CREATE_VIEW = re.compile(r"\bCREATE\s+OR\s+REPLACE\s+VIEW\s+(\w+)\s+AS\b", re.IGNORECASE)


def _as_written(sql: str, *, temporary: bool) -> list[str]:
    """The statements of a file of ``sql/`` as they are written (DuckDB SQL already), each
    ending at a line's closing ``;``; views ``TEMP`` if ``temporary``."""
    create = "CREATE OR REPLACE TEMP VIEW" if temporary else "CREATE OR REPLACE VIEW"
    statements = (s.strip() for s in re.split(r";[ \t]*$", sql, flags=re.MULTILINE))
    return [
        _CREATE_VIEW.sub(lambda head: f"{create} {head[1]} AS", s, count=1)
        for s in statements
        if _CREATE_VIEW.search(s)
    ]


def view_statements(
    dialect: str = "duckdb", *, temporary: bool = False, views: Collection[str] | None = None,
    variants: Mapping[str, str] | None = None,
) -> tuple[str, ...]:  # fmt: skip
    """The statements of ``sql/``, in order, in ``dialect``; ``temporary`` views where the
    dialect has them (always on Spark). With ``views``, only those views' and the views they
    read (:func:`views_read`): an engine binds every view it creates, so a run defines only
    what its queries read. Without, every view that reads no relation but the three of
    :func:`input_statements` a user defines ("SQL alone", docs/engines.md): not the views of
    the TREC keys, which read their parameters (:data:`TREC_INPUTS`) and a run prepared in
    Python (:func:`~polars_rankmetrics.engines.topk.trec_tables`). ``variants``: per view,
    the statement an engine defines it with instead (its own way to compute the same rows)."""
    return tuple(
        statement
        for _, statement in named_view_statements(
            dialect, temporary=temporary, views=views, variants=variants
        )
    )


def named_view_statements(
    dialect: str = "duckdb", *, temporary: bool = False, views: Collection[str] | None = None,
    variants: Mapping[str, str] | None = None,
) -> tuple[tuple[str, str], ...]:  # fmt: skip
    """:func:`view_statements`, each with the name of the view it defines."""
    wanted = _alone() if views is None else views_read(views)
    variants = variants or {}
    return tuple(
        (name, statement)
        for name, statements in _view_statements(dialect, temporary)
        if wanted is None or name in wanted
        for statement in ((variants[name],) if name in variants else statements)
    )


def view_query(name: str) -> str:
    """The query of the view ``name`` of ``sql/`` as written (DuckDB SQL): its statement after
    ``CREATE OR REPLACE VIEW name AS``, for an engine's variant of it."""
    text = dict(_written_views())[name]
    head = _CREATE_VIEW.search(text)
    assert head is not None  # _written_views holds statements that create a view
    return text[head.end() :].strip()


@functools.cache
def _view_statements(dialect: str, temporary: bool) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each view of ``sql/`` in order: its name and its statements in ``dialect``. Transpiled
    once per process; DuckDB's are the files' own, run as written (DuckDB never imports
    sqlglot)."""
    _target(dialect)
    return tuple(
        (name, tuple(_as_written(text, temporary=temporary)) if dialect == "duckdb"
         else tuple(transpiled(text, dialect, temporary=temporary)))
        for name, text in _written_views()
    )  # fmt: skip


@functools.cache
def _written_views() -> tuple[tuple[str, str], ...]:
    """Each view of ``sql/`` in order: its name and its statement as written."""
    return tuple(
        (head[1], text)
        for path in sql_files()
        for text in _as_written(path.read_text(), temporary=False)
        if (head := _CREATE_VIEW.search(text)) is not None
    )


TREC_INPUTS = frozenset(
    {"rankmetrics_trec_parameters", "rankmetrics_trec_points", "rankmetrics_trec_gains"}
)
"""The relations of the TREC keys' parameters (:func:`trec_queries`)."""


@functools.cache
def _alone() -> frozenset[str]:
    """The views of ``sql/`` that read none of :data:`TREC_INPUTS`, directly or through
    another view."""
    reads = _reads()
    return frozenset(
        name for name in reads if not any(reads[v] & TREC_INPUTS for v in views_read([name]))
    )


@functools.cache
def _reads() -> dict[str, set[str]]:
    """Per view of ``sql/``: the names of ``rankmetrics_`` relations its statement reads
    (comments left out)."""
    return {
        name: set(re.findall(r"\brankmetrics_\w+", re.sub(r"--[^\n]*", "", text))) - {name}
        for name, text in _written_views()
    }


def words(statements: Iterable[str]) -> set[str]:
    """The words of SQL ``statements``, comments left out: a superset of the column names they
    read."""
    return {w for s in statements for w in re.findall(r"\w+", re.sub(r"--[^\n]*", "", s))}


def views_read(views: Collection[str]) -> set[str]:
    """``views`` and every view of ``sql/`` they read, directly or through another; refuses a
    name that is not a view of ``sql/``."""
    reads = _reads()
    unknown = sorted(set(views) - set(reads))
    if unknown:
        raise ValueError(f"{unknown[0]!r} is not a view of the SQL files")
    found: set[str] = set()
    todo = list(views)
    while todo:
        name = todo.pop()
        if name not in found:
            found.add(name)
            todo += [read for read in reads[name] if read in reads]
    return found


def quote(name: str, dialect: str) -> str:
    """An identifier quoted the dialect's way (``"a b"``, ``\\`a b\\```)."""
    if dialect == "duckdb":
        return quote_identifier(name)
    from sqlglot import exp

    return exp.to_identifier(name, quoted=True).sql(dialect=_target(dialect))


def _unscored_discount(n_labels: int | None, k: int | None) -> str:
    """The base-2 cumulative discount at ``min(n_labels, k)``: where a top-k table's unscored
    block ends within the cut (NULL for a dense table), in constant time for any size
    (:func:`~polars_rankmetrics.metrics.ranks.cumulative_discount`). Each of ``n_labels`` and
    ``k`` is at most :data:`~polars_rankmetrics.metrics.registry.MAX_INT64`, the largest
    BIGINT: a larger one is refused."""
    for name, value in (("n_labels", n_labels), ("k", k)):
        if value is not None and value > MAX_INT64:
            raise ValueError(f"{name} must be at most 2**63 - 1 ({MAX_INT64}), not {value}")
    if n_labels is None:
        return "NULL"
    last = n_labels if k is None else min(n_labels, k)
    return number_literal(cumulative_discount(last) * math.log(2))


def _table(name: str) -> str:
    """A dotted table name, each part quoted."""
    return ".".join(quote_identifier(part) for part in name.split("."))


def _top_k_join(
    predictions: str, truth_table: str, cols: Columns, gain: bool,
    truth_by: Sequence[str] | None = None,
) -> str:  # fmt: skip
    """The full outer join of a top-k run's predictions and truth table, as a subquery with the
    columns of a joined top-k table (``__predicted`` marking the predictions' rows).
    ``truth_by``: the ``by`` columns the truth table has (:func:`source_relation`)."""
    shared = list(cols.by) if truth_by is None else _truth_by(cols, truth_by)
    keys = [quote_identifier(c) for c in [*cols.by, cols.sample, cols.label]]
    own = [quote_identifier(c) for c in (cols.score, cols.weight, cols.pred) if c is not None]
    truth = quote_identifier(cols.truth)
    true_gain = f"t.{truth}" if gain else "1"
    coalesced = [f"coalesce(p.{k}, t.{k}) AS {k}" for k in keys]
    on = " AND ".join(f"p.{k} = t.{k}" for k in keys)
    return (
        f"(SELECT {', '.join(coalesced)}, "
        f"{', '.join(f'p.{c}' for c in [*own, quote_identifier('__predicted')])}, "
        f'CASE WHEN t."__true" IS NULL THEN 0 ELSE t.{truth} END AS {truth} '
        f'FROM (SELECT {", ".join([*keys, *own])}, 1 AS "__predicted" '
        f"FROM {_table(predictions)}) AS p "
        f'FULL OUTER JOIN (SELECT {", ".join(keys)}, {true_gain} AS {truth}, 1 AS "__true" '
        f"FROM {_truth_rows(predictions, truth_table, cols, shared, gain)}) AS t ON {on}) "
        "AS rankmetrics_top_k"
    )


def _truth_by(cols: Columns, truth_by: Sequence[str]) -> list[str]:
    """``truth_by`` checked: ``by`` columns, each once."""
    for name in truth_by:
        if name not in cols.by:
            by = ", ".join(cols.by) or "none"
            raise ValueError(
                f"the truth table's by columns (truth_by, --truth-by) name {name!r}, which is "
                f"not a by column; the by columns: {by}"
            )
    if len(set(truth_by)) < len(truth_by):
        raise ValueError(
            f"the truth table's by columns (truth_by, --truth-by) name a column twice: "
            f"{', '.join(truth_by)}"
        )
    return list(truth_by)


def _truth_rows(
    predictions: str, truth_table: str, cols: Columns, shared: list[str], gain: bool
) -> str:
    """The truth table's rows with every ``by`` column, as a relation aliased ``t``: the table
    where it has them all (``shared``); otherwise each row once for every group of the
    predictions (their distinct ``by`` values) with its values of the ``shared`` columns, a
    join on those alone (a cross join where it has none), as the Polars engine shares one
    truth table among groups (:func:`~polars_rankmetrics.engines.topk.shared_truth`). A row
    that matches no group is left out: a group is known by its predictions. The gain column
    is read where ``gain``."""
    if len(shared) == len(cols.by):
        return f"{_table(truth_table)} AS t"
    own = [*shared, cols.sample, cols.label, *([cols.truth] if gain else [])]
    columns = [
        *(f"g.{quote_identifier(c)}" for c in cols.by if c not in shared),
        *(f"r.{quote_identifier(c)}" for c in own),
    ]
    groups = ", ".join(quote_identifier(c) for c in cols.by)
    on = " AND ".join(f"g.{quote_identifier(c)} = r.{quote_identifier(c)}" for c in shared)
    table = _table(truth_table)
    joined = f"JOIN {table} AS r ON {on}" if shared else f"CROSS JOIN {table} AS r"
    return (
        f"(SELECT {', '.join(columns)} FROM (SELECT DISTINCT {groups} "
        f"FROM {_table(predictions)}) AS g {joined}) AS t"
    )


def source_relation(
    table: str, cols: Columns, *, truth_table: str | None = None, gain: bool = False,
    truth_by: Sequence[str] | None = None,
) -> str:  # fmt: skip
    """What ``rankmetrics_input`` reads (see :func:`input_statements`): the table (a dotted
    name, each part quoted), or a top-k run's predictions joined with its truth table.
    ``truth_by``: the ``by`` columns the truth table has (None: all of them); without some, one
    truth table serves several groups: each of its rows is a true label of every group of the
    predictions with its values of the ``truth_by`` columns (of every group without any)."""
    if truth_table is None:
        return _table(table)
    return _top_k_join(table, truth_table, cols, gain, truth_by)


def group_expression(by: Sequence[str], dialect: str) -> str:
    """``grp`` over the ``by`` columns (DuckDB SQL): the constant 0 without one, the column
    itself for one, a struct of several (a jsonb object in PostgreSQL; refused on SQLite and
    DataFusion)."""
    if not by:
        return "0"
    if len(by) == 1:
        return quote_identifier(by[0])
    if dialect == "postgres":  # a view cannot hold an anonymous ROW; jsonb groups and compares
        pairs = ", ".join(f"{quote_literal(b)}, {quote_identifier(b)}" for b in by)
        return f"jsonb_build_object({pairs})"
    if dialect in _NO_STRUCT:
        raise ValueError(
            f"several by columns need a struct, which {dialect} lacks: combine them into one "
            "column of the input table first"
        )
    return "{" + ", ".join(f"{quote_literal(b)}: {quote_identifier(b)}" for b in by) + "}"


def input_statements(
    table: str,
    cols: Columns,
    dialect: str,
    cutoffs: Sequence[int | None] = (None,),
    *,
    temporary: bool = False,
    bool_truth: bool = False,
    bool_pred: bool = False,
    threshold: float = 0.5,
    beta: float = 1.0,
    zero_division: float = 0.0,
    n_labels: int | None = None,
    propensity: str | None = None,
    truth_table: str | None = None,
    gain: bool = False,
    truth_by: Sequence[str] | None = None,
    keys: Sequence[MetricKey] = (),
    relevance_level: int = 1,
    judged_only: bool = False,
) -> list[str]:
    """``rankmetrics_input`` over a user's table (a dotted name, each part quoted) and
    ``rankmetrics_cutoffs``, in ``dialect``. A top-k table (``cols.top_k``: predictions joined
    with a truth table, see :mod:`polars_rankmetrics.engines.topk`) marks the rows with a
    prediction in its ``__predicted`` column, and ``n_labels`` is the size of its label space (in
    ``rankmetrics_parameters``; the cut-offs' ``unscored`` column is the base-2 discount
    ``D(min(n_labels, k))`` of its unscored block). ``propensity`` names a column of label
    propensities. ``truth_table`` (with ``cols.top_k``): ``table`` holds the predictions and
    this table the true labels (with a gain in ``cols.truth`` if ``gain``, else 1 each); the
    input is their full outer join, on the ``by`` columns ``truth_by`` says the truth table
    has (None: all of them; fewer: one truth table shared by the groups,
    :func:`source_relation`). Several ``by`` columns become a struct (a jsonb
    object in PostgreSQL; refused on SQLite and DataFusion); one is used as it is; none is the
    constant 0. ``bool_truth`` (``bool_pred``) says the truth (pred) column is boolean: it is
    cast through an integer, as PostgreSQL casts no boolean to a number directly. ``pred`` is
    the ``pred`` column, or ``score >= threshold`` without one. ``rankmetrics_parameters`` holds
    ``beta`` and ``zero_division`` (NaN as NULL). The statements are written in DuckDB SQL and
    transpiled like the files; names are quoted identifiers (string literals as struct keys),
    numbers literals checked finite: no user text is pasted. Where ``keys`` holds TREC keys,
    their parameters, at ``relevance_level`` where a key names none (and ``judged_only``), are
    the rows of three more relations, :data:`TREC_INPUTS` (:func:`trec_queries`)."""
    source = source_relation(table, cols, truth_table=truth_table, gain=gain, truth_by=truth_by)
    grp = group_expression(cols.by, dialect)
    score = quote_identifier(cols.score)
    weight = (
        f"CAST({quote_identifier(cols.weight)} AS DOUBLE)" if cols.weight else "CAST(1 AS DOUBLE)"
    )
    truth = quote_identifier(cols.truth)
    if bool_truth:
        truth = f"CAST({truth} AS INT)"
    if cols.pred is not None:
        pred = quote_identifier(cols.pred)
        pred = f"CAST({f'CAST({pred} AS INT)' if bool_pred else pred} AS DOUBLE)"
    else:
        reached = f"{score} >= {number_literal(float(threshold))}"
        pred = f"CAST(CASE WHEN {reached} THEN 1 ELSE 0 END AS DOUBLE)"
    predicted = 'CASE WHEN NOT "__predicted" IS NULL THEN 1 ELSE 0 END' if cols.top_k else "1"
    propensities = f"CAST({quote_identifier(propensity) if propensity else 'NULL'} AS DOUBLE)"
    select = (
        f"SELECT {grp} AS grp, {quote_identifier(cols.sample)} AS sample, "
        f"{quote_identifier(cols.label)} AS label, CAST({score} AS DOUBLE) AS score, "
        f"CAST({truth} AS DOUBLE) AS truth, {weight} AS weight, {pred} AS pred, "
        f"CAST({predicted} AS INT) AS predicted, {propensities} AS propensity FROM {source}"
    )
    zd = "NULL" if math.isnan(zero_division) else number_literal(float(zero_division))
    space = "NULL" if n_labels is None else str(int(n_labels))
    parameters = (
        f"SELECT CAST({number_literal(float(beta))} AS DOUBLE) AS beta, "
        f"CAST({zd} AS DOUBLE) AS zero_division, CAST({space} AS BIGINT) AS n_labels"
    )
    union = " UNION ALL ".join(
        f"SELECT CAST({'NULL' if k is None else int(k)} AS BIGINT) AS k, "
        f"CAST({_unscored_discount(n_labels, k)} AS DOUBLE) AS unscored"
        for k in dict.fromkeys(cutoffs)
    )
    queries = {
        "rankmetrics_input": select, "rankmetrics_cutoffs": union,
        "rankmetrics_parameters": parameters,
    }  # fmt: skip
    if any(key.metric.family == "trec" for key in keys):
        queries |= trec_queries(cutoffs, keys, relevance_level, judged_only)
    if dialect == "duckdb":
        create = "CREATE OR REPLACE TEMP VIEW" if temporary else "CREATE OR REPLACE VIEW"
        return [f"{create} {name} AS {query}" for name, query in queries.items()]
    return [
        statement
        for name, query in queries.items()
        for statement in transpiled(
            f"CREATE OR REPLACE VIEW {name} AS {query}", dialect, temporary=temporary
        )
    ]


_TREC_RELATIONS = {
    "rankmetrics_trec_parameters": (
        ("k", "BIGINT"), ("cut", "BIGINT"), ("level", "BIGINT"), ("p", "DOUBLE"),
        ("fraction", "DOUBLE"), ("beta", "DOUBLE"), ("ua", "DOUBLE"), ("ub", "DOUBLE"),
        ("uc", "DOUBLE"), ("ud", "DOUBLE"), ("judged_only", "BIGINT"),
    ),
    "rankmetrics_trec_points": (("k", "BIGINT"), ("point", "BIGINT"), ("recall", "DOUBLE")),
    "rankmetrics_trec_gains": (("k", "BIGINT"), ("relevance", "BIGINT"), ("gain", "DOUBLE")),
}  # fmt: skip


def trec_queries(
    cutoffs: Sequence[int | None], keys: Sequence[MetricKey] = (), relevance_level: int = 1,
    judged_only: bool = False,
) -> dict[str, str]:  # fmt: skip
    """The queries of the relations sql/19_trec_per_sample.sql reads the TREC keys'
    parameters from, one row per parameter set (:class:`~polars_rankmetrics.metrics.registry.
    TrecRow`) named by its ``k`` (:attr:`~polars_rankmetrics.metrics.registry.MetricKey.
    sql_row`): those of the TREC keys among ``keys``, and trec_eval's defaults for each other
    cut-off of ``cutoffs``, at ``relevance_level`` where a key names no level. Every value is
    an integer or a number literal checked finite. ``judged_only`` (trec_eval's ``-J``, 1 in
    every row's ``judged_only``): a topic left without a document retrieved has trec_eval's
    NaN for ``iprec_at_recall`` where it has one."""
    level = int(relevance_level)
    rows: dict[int | None, TrecRow] = {k: TrecRow(cut=k, level=level) for k in cutoffs}
    rows |= {key.sql_row: trec_row(key, level) for key in keys if key.metric.family == "trec"}
    values: dict[str, list[tuple[object, ...]]] = {name: [] for name in _TREC_RELATIONS}
    for k, row in rows.items():
        values["rankmetrics_trec_parameters"].append(
            (k, row.cut, row.level, row.p, row.fraction, row.beta, *row.coefficients,
             int(judged_only))
        )  # fmt: skip
        values["rankmetrics_trec_points"] += [(k, i, x) for i, x in enumerate(row.points)]
        values["rankmetrics_trec_gains"] += [(k, level, gain) for level, gain in row.gains]
    return {name: _values_query(_TREC_RELATIONS[name], values[name]) for name in _TREC_RELATIONS}


def _values_query(columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[object]]) -> str:
    """A query of ``rows`` (integers, floats or None) as ``columns`` (name, SQL type); none:
    a query of no row."""

    def literal(value: object, sql_type: str) -> str:
        if value is None:
            text = "NULL"
        elif sql_type == "BIGINT":
            assert isinstance(value, int)
            text = str(int(value))
        else:
            assert isinstance(value, (int, float))
            text = number_literal(float(value))
        return f"CAST({text} AS {sql_type})"

    if not rows:
        nulls = ", ".join(f"CAST(NULL AS {t}) AS {name}" for name, t in columns)
        return f"SELECT {nulls} WHERE 1 = 0"
    return " UNION ALL ".join(
        "SELECT " + ", ".join(
            f"{literal(value, t)} AS {name}" for value, (name, t) in zip(row, columns, strict=True)
        )
        for row in rows
    )  # fmt: skip
