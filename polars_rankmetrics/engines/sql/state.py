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
  ``rankmetrics_finalize_parameters``, the count tables of ``sql/`` over the merged states,
  ``rankmetrics_label_means``, ``rankmetrics_micro_replicates`` and ``rankmetrics_finalize``
  on the finalizing side.

The rows follow the state's format (``polars_rankmetrics/states/format.py``): the ``sums``,
``units`` (with ``intervals``), ``labels``, ``curves``, ``sketch`` and (a dense table)
``labelset`` parts. The keys averaged over samples finalize from the sums, with a Poisson
bootstrap interval from the ``units`` rows; the keys averaged over labels from the ``labels``
and ``curves`` rows, through the views of ``sql/`` that average the per-label count tables over
labels (``sql/state/04_label_tables.sql`` shapes the merged rows as those tables), the
threshold ``_micro`` averages with an interval from the units of their per-sample counts.
Verified on DuckDB, Spark SQL and PostgreSQL (the dialects of :data:`~.export.HEX_INTEGER`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence

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
    view_names,
    view_query,
    view_statements,
    views_read,
    words,
)
from polars_rankmetrics.inference import recorded
from polars_rankmetrics.inference.samples import MICRO, per_sample_keys, supported_keys
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.registry import VIEWS_WITH_K, Context, MetricKey
from polars_rankmetrics.metrics.sums import undefined_column, weight_column
from polars_rankmetrics.metrics.undefined import ill_defined_column

STATE_DIALECTS = tuple(HEX_INTEGER)
# The most replicates rankmetrics_replicates numbers (five digits).
MAX_REPLICATES = 100_000
# The evaluation views the state's parts read besides the per-sample views of its keys.
_PART_VIEWS = ("rankmetrics_label_counts", "rankmetrics_score_counts")
# The view of sql/ that averages the per-label tables over labels, which the finalize reads.
_LABEL_SUMMARY = "rankmetrics_label_summary"
# The prefixes of the finalize's copies of the relations of sql/ (_merged): over the merged
# states, and over the bootstrap replicates of the _micro averages.
_MERGED, _REPLICATE = "rankmetrics_merged_", "rankmetrics_replicate_"


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
                f"{key} reads label propensities, which the SQL state does not record (a state "
                "records the propensity table's fingerprint, the md5 of its rows as Polars "
                "writes them): compute its state with polars_rankmetrics.state(..., "
                "propensities=...), which rankmetrics_finalize finalizes"
            )
        if key.metric.reduction == "topk_labels":
            raise ValueError(
                f"{key} is averaged over labels from per-label counts at each cut-off, which "
                "the SQL state does not record: keep its state with polars_rankmetrics.state "
                "and finalize it with polars_rankmetrics.finalize, or read it from "
                "rankmetrics_topk_label_summary (sql/20_topk_label_counts.sql)"
            )


def _create(name: str, query: str, dialect: str, temporary: bool) -> list[str]:
    """``CREATE OR REPLACE VIEW name AS query`` (DuckDB SQL) in ``dialect``: as written for
    DuckDB (the exporter's queries call none of the functions it writes out)."""
    if dialect == "duckdb":
        return [f"CREATE OR REPLACE {'TEMP ' if temporary else ''}VIEW {name} AS {query}"]
    return transpiled(f"CREATE OR REPLACE VIEW {name} AS {query}", dialect, temporary=temporary)


def _files(dialect: str, temporary: bool, names: Sequence[str]) -> list[str]:
    """The statements of the files of ``sql/state/`` called ``names`` (without ``.sql``), in
    the order of ``names``."""
    statements = _file_statements(dialect, temporary)
    return [statement for name in names for statement in statements[name]]


@functools.cache
def _file_statements(dialect: str, temporary: bool) -> dict[str, tuple[str, ...]]:
    """Per file of ``sql/state/`` (without ``.sql``), its statements in ``dialect``: transpiled
    once per process."""
    return {
        path.stem: tuple(transpiled(path.read_text(), dialect, temporary=temporary))
        for path in state_sql_files()
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


def _parts(keys: Sequence[MetricKey], intervals: bool, sums: bool, label_sets: bool) -> str:
    """The rows of the state's parts that ``keys`` need (``sums``: the sums of keys averaged
    over samples, and their units with ``intervals``), the sketch, and (``label_sets``, a dense
    table) each group's label set; the first branch, empty, gives
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
    if sums:
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
    if label_sets:
        branches.append(
            f"SELECT grp, 'labelset', label, {null_score}, fingerprint, 'states', "
            "CAST(1 AS DOUBLE) FROM rankmetrics_state_label_sets"
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
    the keys averaged over labels, every group's ``sketch`` and, over a dense table (no
    ``truth_table``), every group's ``labelset``. The sample ids must be integers or strings
    (their text is hashed). Names are quoted and numbers checked finite; the parameters are one
    string literal."""
    _check_dialect(dialect)
    _check_request(keys, cols.by)
    # With intervals, the units hold each key's per-sample columns (a _micro average's counts),
    # and the sums those columns' sums, as polars_rankmetrics.state keeps them.
    sample_keys = per_sample_keys(keys) if intervals else [
        k for k in keys if k.metric.reduction == "samples"
    ]  # fmt: skip
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
        f"CAST({recorded.FORMAT} AS INT) AS rm_format, p.rm_params "
        f"FROM ({_parts(keys, intervals, bool(sample_keys), truth_table is None)}) AS r "
        f"CROSS JOIN rankmetrics_state_parameters AS p{join}"
    )
    inputs = input_statements(
        table, cols, dialect, results.cutoffs(sample_keys), temporary=temporary,
        bool_truth=bool_truth, bool_pred=bool_pred, threshold=context.threshold,
        beta=context.beta, zero_division=context.zero_division, n_labels=n_labels,
        truth_table=truth_table, gain=gain,
    )  # fmt: skip
    parameters = f"SELECT CAST({quote_literal(params)} AS VARCHAR) AS rm_params"
    return [
        *inputs,
        *view_statements(dialect, temporary=temporary, views=views),
        *_create("rankmetrics_state_parameters", parameters, dialect, temporary),
        *_files(dialect, temporary, ("01_sample_hashes",)),
        *_create(
            "rankmetrics_state_unit_sums", _unit_sums(sample_keys, context), dialect, temporary
        ),
        *_files(dialect, temporary, ("02_state",)),
        *_create("rankmetrics_state", state, dialect, temporary),
    ]


def _refuse_unfinalized(keys: Sequence[MetricKey], ci: float | None) -> None:
    """Refuse the keys ``rankmetrics_finalize`` does not finalize, by name and why: the TREC
    keys, a key without a view in ``sql/``, a key averaged over labels that
    ``rankmetrics_label_summary`` has no column of; with ``ci``, the keys without an interval,
    as :func:`polars_rankmetrics.finalize` refuses them."""
    columns = words([view_query(_LABEL_SUMMARY)])
    for key in keys:
        if key.metric.family == "trec":
            raise ValueError(
                f"{key} is not finalized in SQL: the TREC keys follow trec_eval's rules (the run "
                "joined with its qrels, geometric means and sums over topics), which the weighted "
                "means of a state's sums do not; evaluate them with polars_rankmetrics.evaluate"
            )
        if not key.metric.sql_view:
            raise ValueError(
                f"{key} is not finalized in SQL: sql/ has no view of it (the {key.metric.family} "
                "keys are computed by the Polars engine only); finalize its states with "
                "polars_rankmetrics.finalize"
            )
        if key.metric.reduction != "samples" and (key.k is not None or key.name not in columns):
            raise ValueError(
                f"{key} is not finalized in SQL: {_LABEL_SUMMARY} (sql/15_label_summary.sql), "
                f"which averages the states' per-label tables over labels, has no column "
                f"{str(key)!r}; finalize its states with polars_rankmetrics.finalize"
            )
    if ci is not None:
        supported_keys(keys, micro=True)


def _merged(name: str, prefix: str = _MERGED) -> str:
    """The name of a copy of ``sql/``'s relation ``name``: the finalize's
    (``rankmetrics_label_counts``: ``rankmetrics_merged_label_counts``), or another
    ``prefix``'s."""
    return name.replace("rankmetrics_", prefix, 1)


def _copy_query(name: str, renamed: Mapping[str, str]) -> str:
    """The query of ``sql/``'s view ``name`` (DuckDB SQL) reading, for each relation of
    ``renamed``, the one it is renamed to."""
    return re.sub(
        r"\brankmetrics_\w+", lambda found: renamed.get(found[0], found[0]), view_query(name)
    )


def _long(
    relation: str, keys: Sequence[MetricKey], columns: Mapping[str, str], *, where: str = "",
    replicate: bool = False,
) -> str:  # fmt: skip
    """A row per row of ``relation`` and key of ``keys``: ``grp``, ``metric`` (the key),
    (``replicate``: the row's ``sample``, a replicate, as ``replicate``) and ``value``, the
    relation's column ``columns[key name]``; the rows that satisfy ``where``."""
    picked = " ".join(
        f"WHEN {quote_literal(k.name)} THEN s.{quote_identifier(columns[k.name])}" for k in keys
    )
    names = ", ".join(f"({quote_literal(k.name)})" for k in keys)
    return (
        f"SELECT s.grp, k.metric, {'s.sample AS replicate, ' if replicate else ''}"
        f"CASE k.metric {picked} END AS value "
        f"FROM {relation} AS s CROSS JOIN (VALUES {names}) AS k(metric)"
        f"{f' WHERE {where}' if where else ''}"
    )


def _label_statements(
    keys: Sequence[MetricKey], dialect: str, temporary: bool, *, intervals: bool
) -> list[str]:
    """The statements that finalize the keys averaged over labels (none: the empty relations
    ``rankmetrics_finalized`` reads): the views of ``sql/state/04_label_tables.sql``, copies of
    the count tables of ``sql/`` over them (a table the states do not hold for ``keys`` stands
    in with the labels of the other, NULL or 0: the threshold keys read ``tp``, ``fp``, ``fn``,
    the curves ``pos``, ``neg`` and the labels' support, ``tp + fn``), copies of the views of
    ``sql/`` that average them over labels, then ``rankmetrics_label_means`` and
    ``rankmetrics_micro_replicates`` (``intervals``: of the threshold ``_micro`` averages). The
    copies are named ``rankmetrics_merged_...``, so that a state's views in the same warehouse
    (which read ``rankmetrics_label_counts``, ``rankmetrics_set_scores``, ...) keep theirs; the
    replicates' sets are scored by copies of their own, ``rankmetrics_replicate_set_counts``
    and ``rankmetrics_replicate_set_scores``, which the averages over labels do not read."""
    label_keys = [k for k in keys if k.metric.reduction != "samples"]
    micro = [k for k in label_keys if k.name in MICRO] if intervals else []
    none = "FROM rankmetrics_state_groups WHERE 1 = 0"
    means = f"SELECT grp, CAST(NULL AS VARCHAR) AS metric, CAST(NULL AS DOUBLE) AS value {none}"
    replicates = (
        "SELECT grp, CAST(NULL AS VARCHAR) AS metric, CAST(NULL AS BIGINT) AS replicate, "
        f"CAST(NULL AS DOUBLE) AS value {none}"
    )
    if not label_keys:
        return [
            *_create("rankmetrics_label_means", means, dialect, temporary),
            *_create("rankmetrics_micro_replicates", replicates, dialect, temporary),
        ]
    reductions = {k.metric.reduction for k in label_keys}
    counts = (
        "SELECT grp, label, tp, fp, fn FROM rankmetrics_state_label_counts"
        if "labels" in reductions
        else "SELECT grp, label, CAST(0 AS DOUBLE) AS tp, CAST(0 AS DOUBLE) AS fp, "
        "sum(pos) AS fn FROM rankmetrics_state_score_counts GROUP BY grp, label"
    )
    scores = (
        "SELECT grp, label, score, pos, neg FROM rankmetrics_state_score_counts"
        if "curves" in reductions
        else "SELECT grp, label, CAST(NULL AS DOUBLE) AS score, CAST(NULL AS DOUBLE) AS pos, "
        "CAST(NULL AS DOUBLE) AS neg FROM rankmetrics_state_label_counts"
    )
    precisions = (
        "SELECT grp, label, CAST(NULL AS DOUBLE) AS precision_sum "
        f"FROM {_merged('rankmetrics_label_counts')}"
    )
    own = {
        "rankmetrics_label_counts": counts,
        "rankmetrics_score_counts": scores,
        "rankmetrics_label_precisions": precisions,
    }
    # The _micro averages of the threshold scores are rankmetrics_set_scores' level 'micro'; the
    # others, rankmetrics_label_summary's columns (read only where asked for: an engine that
    # inlines views, Spark, would plan every view it reads).
    micro_keys = [k for k in label_keys if k.name in MICRO]
    summary_keys = [k for k in label_keys if k.name not in MICRO]
    # 04_label_tables.sql defines the copies of the parameters and the sample counts.
    replaced = views_read([*own, "rankmetrics_sample_counts"])
    read = views_read([_LABEL_SUMMARY if summary_keys else "rankmetrics_set_scores"]) - replaced
    copied = {*read, *own, "rankmetrics_sample_counts", "rankmetrics_parameters"}
    renamed = {name: _merged(name) for name in copied}
    # The replicates' sets, scored by copies of their own (see 04_label_tables.sql).
    replicate = {"rankmetrics_set_counts", "rankmetrics_set_scores", "rankmetrics_sample_counts"}
    renamed_replicate = renamed | {name: _merged(name, _REPLICATE) for name in replicate}
    views = [
        statement
        for name in view_names()
        for copy, names in ((_merged(name), renamed),
                            *([(_merged(name, _REPLICATE), renamed_replicate)]
                              if micro and name in replicate else []))
        if name in read
        for statement in _create(copy, _copy_query(name, names), dialect, temporary)
    ]  # fmt: skip
    set_scores = _merged("rankmetrics_set_scores")
    parts = [
        *([_long(set_scores, micro_keys, MICRO, where="s.level = 'micro'")] if micro_keys else []),
        *([_long(_merged(_LABEL_SUMMARY), summary_keys, {k.name: k.name for k in summary_keys})]
          if summary_keys else []),
    ]  # fmt: skip
    means = " UNION ALL ".join(parts)
    if micro:
        replicates = _long(
            _merged("rankmetrics_set_scores", _REPLICATE), micro, MICRO,
            where="s.level = 'sample'", replicate=True,
        )  # fmt: skip
    return [
        *_files(dialect, temporary, ("04_label_tables",)),
        *(s for name, query in own.items()
          for s in _create(_merged(name), query, dialect, temporary)),
        *views,
        *_create("rankmetrics_label_means", means, dialect, temporary),
        *_create("rankmetrics_micro_replicates", replicates, dialect, temporary),
    ]  # fmt: skip


def finalize_statements(
    dialect: str, keys: Sequence[MetricKey], by: Sequence[str] = (), *,
    ci: float | None = None, n_boot: int = 1000, seed: int = 0, temporary: bool = False,
) -> list[str]:  # fmt: skip
    """The statements that define ``rankmetrics_finalize`` over ``rankmetrics_states`` (a
    table or view with the columns of ``rankmetrics_state``) in ``dialect``.

    ``rankmetrics_finalize`` has one row per group of the ``by`` columns given here (the
    states' other ``by`` columns are merged over: filter ``rankmetrics_states`` for a window)
    and key of ``keys``: the ``by`` columns, ``metric``, ``value`` (what
    :func:`polars_rankmetrics.evaluate` gives over the data behind the states; NULL where it
    gives NaN), ``lo`` and ``hi`` (with ``ci``, the percentile interval of ``n_boot`` Poisson
    bootstrap replicates drawn from the states' ``units`` rows with ``seed``, for the keys
    averaged over samples and the threshold ``_micro`` averages; else NULL) and
    ``ill_defined`` (the samples whose value is a convention, where the states count them;
    NULL for the keys averaged over labels). The keys averaged over labels read the states'
    ``labels`` and ``curves`` rows through the views of ``sql/`` that evaluate's SQL averages
    them with, and the metric parameters from ``rm_params``.
    ``rankmetrics_state_checks`` says, per group, how many different ``rm_params`` its states
    hold (1 where they may merge) and estimates the share of its samples that more than one
    merged state holds (``overlap``, 0 for states of disjoint samples).

    Refused: the TREC keys, a key without a view in ``sql/``, a key averaged over labels that
    ``rankmetrics_label_summary`` has no column of (the calibration errors with a bin count,
    ``ece_micro@10``), and with ``ci`` a key averaged over labels other than the threshold
    ``_micro`` averages, which :func:`polars_rankmetrics.finalize` gives no interval either."""
    _check_dialect(dialect)
    if not keys:
        raise ValueError("rankmetrics_finalize needs at least one metric key")
    _refuse_unfinalized(keys, ci)
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
    sample_keys = [k for k in keys if k.metric.reduction == "samples"]
    rows = ", ".join(
        f"({quote_literal(str(k))}, {quote_literal(weight_column(k))}, "
        f"{quote_literal(undefined_column(k))}, {quote_literal(ill_defined_column(k))}, "
        f"{1 if k.metric.undefined == 'nan' else 0})"
        for k in sample_keys
    )
    keys_query = (
        f"SELECT * FROM (VALUES {rows}) AS k(metric, weight_name, null_name, ill_name, nan_if_null)"
        if sample_keys
        else "SELECT CAST(NULL AS VARCHAR) AS metric, CAST(NULL AS VARCHAR) AS weight_name, "
        "CAST(NULL AS VARCHAR) AS null_name, CAST(NULL AS VARCHAR) AS ill_name, "
        "0 AS nan_if_null FROM rankmetrics_finalize_parameters WHERE 1 = 0"
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
    return [
        *_create("rankmetrics_state_groups", groups, dialect, temporary),
        *_create("rankmetrics_finalize_parameters", parameters, dialect, temporary),
        *_create("rankmetrics_finalize_keys", keys_query, dialect, temporary),
        *_files(dialect, temporary, ("03_finalize",)),
        *_label_statements(keys, dialect, temporary, intervals=ci is not None),
        *_files(dialect, temporary, ("05_finalized",)),
        *_create("rankmetrics_finalize", finalize, dialect, temporary),
    ]
