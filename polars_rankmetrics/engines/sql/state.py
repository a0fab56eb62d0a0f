"""The evaluation state in SQL: ``rankmetrics_state`` over a table, and ``rankmetrics_finalize``
over a table of states, ``rankmetrics_states``, so that a warehouse keeps a state table and rolls
it up with SQL alone (docs/engines.md, "States in SQL").

The views are the files of ``sql/state/`` (:func:`~.export.state_sql_files`) and the views of
``sql/`` they read; the exporter writes what depends on the request, each a short view:

- ``rankmetrics_state_parameters``: the state's ``rm_params`` (canonical JSON of
  :func:`state_params`);
- ``rankmetrics_state_unit_sums``: per group, resampling unit and key averaged over samples, the
  sums of :mod:`polars_rankmetrics.metrics.sums`, from the metric registry as
  :func:`~.results.sums_queries` reads it;
- ``rankmetrics_state``: the parts the keys need, with the ``by`` columns under their names;
- ``rankmetrics_state_groups``, ``rankmetrics_finalize_keys``,
  ``rankmetrics_finalize_parameters`` and ``rankmetrics_finalize`` on the finalizing side.

The rows follow the state's format (``polars_rankmetrics/states/format.py``): the ``sums``,
``units`` (with ``intervals``), ``labels``, ``curves`` and ``sketch`` parts. The keys averaged
over samples finalize in SQL, with a Poisson bootstrap interval from the ``units`` rows; the
per-label parts are kept for :func:`polars_rankmetrics.finalize`. Verified on DuckDB, Spark SQL and
PostgreSQL (the dialects of :data:`~.export.HEX_INTEGER`).
"""

from __future__ import annotations

from collections.abc import Sequence

from polars_rankmetrics.engines.sql import results
from polars_rankmetrics.engines.sql.export import (
    HEX_INTEGER,
    group_expression,
    input_statements,
    number_literal,
    quote_identifier,
    quote_literal,
    source_relation,
    state_sql_files,
    transpiled,
    view_statements,
)
from polars_rankmetrics.inference import recorded
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.registry import VIEWS_WITH_K, Context, MetricKey
from polars_rankmetrics.metrics.sums import undefined_column, weight_column
from polars_rankmetrics.metrics.undefined import ill_defined_column

STATE_DIALECTS = tuple(HEX_INTEGER)
# The most replicates rankmetrics_replicates numbers (five digits).
MAX_REPLICATES = 100_000
# The evaluation views the state's parts read besides the per-sample views of its keys.
_PART_VIEWS = ("rankmetrics_label_counts", "rankmetrics_score_counts")


def state_params(
    keys: Sequence[MetricKey], cols: Columns, context: Context, *, intervals: bool,
    n_labels: int | None = None, top_k: bool = False,
) -> str:  # fmt: skip
    """A state's ``rm_params`` (:mod:`polars_rankmetrics.inference.recorded`), as
    :func:`polars_rankmetrics.state` records them (without propensities, per-label tables or
    rounded scores, which the SQL state does not offer)."""
    return recorded.text(
        recorded.params(
            keys,
            cols,
            context,
            n_labels=n_labels,
            top_k=top_k,
            propensities=None,
            intervals=intervals,
            per_label=False,
            score_decimals=None,
        )
    )


def _check_dialect(dialect: str) -> None:
    if dialect not in STATE_DIALECTS:
        raise ValueError(
            f"the SQL state is exported for {', '.join(STATE_DIALECTS)}, not {dialect!r}: its "
            "sample hash reads md5's hex digits as integers, which each dialect writes its own way"
        )


def _check_request(keys: Sequence[MetricKey], by: Sequence[str]) -> None:
    if not keys:
        raise ValueError("a state needs at least one metric key")
    for name in by:
        if name.startswith("rm_"):
            raise ValueError(
                f"by column {name!r}: names starting with 'rm_' are the state's own columns; "
                "rename it"
            )
    for key in keys:
        if key.metric.needs_propensities:
            raise ValueError(
                f"{key} reads label propensities, which the SQL state does not record: "
                "compute its state with polars_rankmetrics.state(..., propensities=...)"
            )


def _create(name: str, query: str, dialect: str, temporary: bool) -> list[str]:
    """``CREATE OR REPLACE VIEW name AS query`` (DuckDB SQL) in ``dialect``."""
    return transpiled(f"CREATE OR REPLACE VIEW {name} AS {query}", dialect, temporary=temporary)


def _files(dialect: str, temporary: bool, names: Sequence[str]) -> dict[str, list[str]]:
    """The statements of the files of ``sql/state/`` called ``names`` (without ``.sql``)."""
    return {
        path.stem: transpiled(path.read_text(), dialect, temporary=temporary)
        for path in state_sql_files()
        if path.stem in names
    }


def _value(key: MetricKey) -> str:
    """``key``'s SQL value over its per-sample view: a column quoted (sqlglot, which transpiles
    the state's views, reads a column named like a function, ``map``, as a call), any other
    expression bracketed."""
    value = key.metric.sql_value
    return quote_identifier(value) if value.isidentifier() else f"({value})"


def _unit_sums(keys: Sequence[MetricKey], context: Context) -> str:
    """``rankmetrics_state_unit_sums``: per view of the keys averaged over samples, its rows
    joined with their samples' units and summed per (grp, unit) (and cut-off), then one row per
    sum's name; ``resampled`` 0 for the ill-defined counts, which the ``units`` part leaves
    out."""
    parts = []
    for view, view_keys in results.by_view(keys).items():
        has_k = view in VIEWS_WITH_K
        columns: list[str] = []
        names: list[tuple[str, int, int]] = []  # (rm_name, cut-off, resampled)
        for key in view_keys:
            weight, value = results.key_weight(key), _value(key)
            scale = results.log_base_scale(key, context)
            total = f"coalesce(sum({weight} * {value}), 0)"
            sums = {
                str(key): total if scale == 1.0 else f"{total} * {number_literal(scale)}",
                weight_column(key): (
                    f"coalesce(sum(CASE WHEN {value} IS NOT NULL THEN {weight} END), 0)"
                ),
                undefined_column(key): (
                    f"count(CASE WHEN {value} IS NULL AND {weight} > 0 THEN 1 END)"
                ),
            }
            ill = results.ill_defined_condition(key, context)
            if ill is not None:
                sums[ill_defined_column(key)] = f"count(CASE WHEN {ill} THEN 1 END)"
            for name, expression in sums.items():
                columns.append(f"CAST({expression} AS DOUBLE) AS c{len(names)}")
                resampled = 0 if name == ill_defined_column(key) else 1
                names.append((name, (key.k or 0) if has_k else 0, resampled))
        cut = "coalesce(v.k, 0)" if has_k else "0"
        rows = ", ".join(
            f"({quote_literal(name)}, {k}, {i}, {resampled})"
            for i, (name, k, resampled) in enumerate(names)
        )
        pick = " ".join(f"WHEN {i} THEN a.c{i}" for i in range(len(names)))
        parts.append(
            f"SELECT a.grp, a.rm_unit, n.rm_name, CASE n.position {pick} END AS rm_value, "
            "n.resampled "
            f"FROM (SELECT grp, rm_unit, cut, {', '.join(columns)} "
            f"FROM (SELECT v.*, u.unit AS rm_unit, {cut} AS cut FROM {view} AS v "
            "JOIN rankmetrics_sample_hashes AS u ON u.grp = v.grp AND u.sample = v.sample) AS s "
            "GROUP BY grp, rm_unit, cut) AS a "
            f"JOIN (VALUES {rows}) AS n(rm_name, cut, position, resampled) ON n.cut = a.cut"
        )
    if not parts:
        return (
            "SELECT grp, unit AS rm_unit, CAST(NULL AS VARCHAR) AS rm_name, "
            "CAST(NULL AS DOUBLE) AS rm_value, 1 AS resampled FROM rankmetrics_sample_hashes "
            "WHERE 1 = 0"
        )
    return " UNION ALL ".join(parts)


def _by_columns(by: Sequence[str], dialect: str, groups: str) -> tuple[str, str]:
    """The ``by`` columns of a relation ``r`` with ``grp`` made of them by
    :func:`~.export.group_expression`, as a select list (with a trailing comma), and the join
    that gives them: ``grp`` itself for one, a join with ``groups``'s distinct groups for
    several (a jsonb ``grp`` holds no column's type)."""
    if not by:
        return "", ""
    if len(by) == 1:
        return f"r.grp AS {quote_identifier(by[0])}, ", ""
    names = ", ".join(quote_identifier(b) for b in by)
    selected = "".join(f"g.{quote_identifier(b)}, " for b in by)
    join = (
        f" JOIN (SELECT DISTINCT {group_expression(by, dialect)} AS grp, {names} "
        f"FROM {groups}) AS g ON g.grp = r.grp"
    )
    return selected, join


def _parts(keys: Sequence[MetricKey], intervals: bool) -> str:
    """The rows of the state's parts that ``keys`` need; the first branch, empty, gives
    ``rm_label`` the label column's type (a union of NULLs has none, and PostgreSQL types a
    union pairwise from its first branches)."""
    null_score, null_unit = "CAST(NULL AS DOUBLE)", "CAST(NULL AS BIGINT)"
    branches = [
        f"SELECT grp, 'labels' AS rm_part, label AS rm_label, {null_score} AS rm_score, "
        f"{null_unit} AS rm_unit, CAST(NULL AS VARCHAR) AS rm_name, "
        "CAST(NULL AS DOUBLE) AS rm_value FROM rankmetrics_input WHERE 1 = 0"
    ]
    reductions = {key.metric.reduction for key in keys}
    if "labels" in reductions:
        branches.append(
            f"SELECT grp, 'labels', label, {null_score}, {null_unit}, rm_name, rm_value "
            "FROM rankmetrics_state_labels"
        )
    if "curves" in reductions:
        branches.append(
            f"SELECT grp, 'curves', label, score, {null_unit}, rm_name, rm_value "
            "FROM rankmetrics_state_curves"
        )
    if "samples" in reductions:
        branches.append(
            f"SELECT grp, 'sums', NULL, {null_score}, {null_unit}, rm_name, rm_value "
            "FROM rankmetrics_state_sums"
        )
        if intervals:
            branches.append(
                f"SELECT grp, 'units', NULL, {null_score}, rm_unit, rm_name, rm_value "
                "FROM rankmetrics_state_units"
            )
    branches.append(
        f"SELECT grp, 'sketch', NULL, {null_score}, h, 'samples', CAST(1 AS DOUBLE) "
        "FROM rankmetrics_state_sketch"
    )
    return " UNION ALL ".join(branches)


def state_statements(
    table: str, cols: Columns, dialect: str, keys: Sequence[MetricKey], *, context: Context,
    intervals: bool = False, temporary: bool = False, bool_truth: bool = False,
    bool_pred: bool = False, truth_table: str | None = None, n_labels: int | None = None,
    gain: bool = False,
) -> list[str]:  # fmt: skip
    """The statements that define ``rankmetrics_state`` over ``table`` in ``dialect``: the
    input views (:func:`~.export.input_statements`, whose options these are), the views of
    ``sql/`` the state reads, and those of ``sql/state/``.

    ``rankmetrics_state`` holds the ``by`` columns (none without ``by``), then ``rm_part``,
    ``rm_label``, ``rm_score``, ``rm_unit``, ``rm_name``, ``rm_value``, ``rm_format`` and
    ``rm_params``: for the keys averaged over samples their ``sums`` (and, with ``intervals``,
    the ``units`` rows that intervals are drawn from), the ``labels`` and ``curves`` counts of
    the keys averaged over labels, and every group's ``sketch``. The sample ids must be
    integers or strings (their text is hashed). Names are quoted and numbers checked finite;
    the parameters are one string literal."""
    _check_dialect(dialect)
    _check_request(keys, cols.by)
    sample_keys = [k for k in keys if k.metric.reduction == "samples"]
    views = {*results.sql_views(sample_keys).values(), *_PART_VIEWS}
    params = state_params(
        keys, cols, context, intervals=intervals, n_labels=n_labels,
        top_k=truth_table is not None,
    )  # fmt: skip
    by, join = _by_columns(
        cols.by, dialect, source_relation(table, cols, truth_table=truth_table, gain=gain)
    )
    state = (
        f"SELECT {by}r.rm_part, r.rm_label, r.rm_score, r.rm_unit, r.rm_name, r.rm_value, "
        "CAST(1 AS INT) AS rm_format, p.rm_params "
        f"FROM ({_parts(keys, intervals)}) AS r "
        f"CROSS JOIN rankmetrics_state_parameters AS p{join}"
    )
    inputs = input_statements(
        table, cols, dialect, results.cutoffs(sample_keys), temporary=temporary,
        bool_truth=bool_truth, bool_pred=bool_pred, threshold=context.threshold,
        beta=context.beta, zero_division=context.zero_division, n_labels=n_labels,
        truth_table=truth_table, gain=gain,
    )  # fmt: skip
    parameters = f"SELECT CAST({quote_literal(params)} AS VARCHAR) AS rm_params"
    files = _files(dialect, temporary, ("01_sample_hashes", "02_state"))
    return [
        *inputs,
        *view_statements(dialect, temporary=temporary, views=views),
        *_create("rankmetrics_state_parameters", parameters, dialect, temporary),
        *files["01_sample_hashes"],
        *_create(
            "rankmetrics_state_unit_sums", _unit_sums(sample_keys, context), dialect, temporary
        ),
        *files["02_state"],
        *_create("rankmetrics_state", state, dialect, temporary),
    ]


def finalize_statements(
    dialect: str, keys: Sequence[MetricKey], by: Sequence[str] = (), *,
    ci: float | None = None, n_boot: int = 1000, seed: int = 0, temporary: bool = False,
) -> list[str]:  # fmt: skip
    """The statements that define ``rankmetrics_finalize`` over ``rankmetrics_states`` (a
    table or view with the columns of ``rankmetrics_state``) in ``dialect``.

    ``rankmetrics_finalize`` has one row per group of the ``by`` columns given here (the
    states' other ``by`` columns are merged over: filter ``rankmetrics_states`` for a window)
    and key of ``keys`` averaged over samples: the ``by`` columns, ``metric``, ``value`` (the
    mean that :func:`polars_rankmetrics.evaluate` gives over the data behind the states; NULL
    where it gives NaN), ``lo`` and ``hi`` (with ``ci``, the percentile interval of ``n_boot``
    Poisson bootstrap replicates drawn from the states' ``units`` rows with ``seed``; else
    NULL) and ``ill_defined`` (the samples whose value is a convention, where the states count
    them). ``rankmetrics_state_checks`` says, per group, how many different ``rm_params`` its
    states hold (1 where they may merge) and estimates the share of its samples that more than
    one merged state holds (``overlap``, 0 for states of disjoint samples)."""
    _check_dialect(dialect)
    keys = [k for k in keys if k.metric.reduction == "samples"]
    if not keys:
        raise ValueError("rankmetrics_finalize finalizes the keys averaged over samples: give one")
    if ci is not None and not 0 < ci < 1:
        raise ValueError(f"ci must be a confidence level in (0, 1), such as 0.95, not {ci!r}")
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or not 0 < n_boot <= MAX_REPLICATES:
        raise ValueError(f"n_boot must be an integer in 1 .. {MAX_REPLICATES:,}, not {n_boot!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an integer, not {seed!r}")
    replicates = 0 if ci is None else n_boot
    alpha = 0.05 if ci is None else (1 - ci) / 2
    parameters = (
        f"SELECT CAST({replicates} AS BIGINT) AS n_boot, "
        f"CAST({seed % (2**31 - 1)} AS BIGINT) AS seed, "
        f"CAST({number_literal(alpha)} AS DOUBLE) AS lo_quantile, "
        f"CAST({number_literal(1 - alpha)} AS DOUBLE) AS hi_quantile"
    )
    rows = ", ".join(
        f"({quote_literal(str(k))}, {quote_literal(weight_column(k))}, "
        f"{quote_literal(undefined_column(k))}, {quote_literal(ill_defined_column(k))}, "
        f"{1 if k.metric.undefined == 'nan' else 0})"
        for k in keys
    )
    groups = (
        f"SELECT {group_expression(by, dialect)} AS grp, rm_part, rm_label, rm_score, rm_unit, "
        "rm_name, rm_value, rm_params FROM rankmetrics_states"
    )
    selected, join = _by_columns(by, dialect, "rankmetrics_states")
    finalize = (
        f"SELECT {selected}r.metric, r.value, r.lo, r.hi, r.ill_defined "
        f"FROM rankmetrics_finalized AS r{join}"
    )
    keys_query = (
        f"SELECT * FROM (VALUES {rows}) AS k(metric, weight_name, null_name, ill_name, nan_if_null)"
    )
    return [
        *_create("rankmetrics_state_groups", groups, dialect, temporary),
        *_create("rankmetrics_finalize_keys", keys_query, dialect, temporary),
        *_create("rankmetrics_finalize_parameters", parameters, dialect, temporary),
        *_files(dialect, temporary, ("03_finalize",))["03_finalize"],
        *_create("rankmetrics_finalize", finalize, dialect, temporary),
    ]
