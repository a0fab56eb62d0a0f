"""What every SQL engine shares: the queries over the per-sample views of ``sql/`` that the
requested metrics need, and turning their rows into the engines' common frames.

The queries are built from the metric registry, never from user input: a metric's record names
its per-sample view and a SQL expression over that view's columns; each view is read only when a
requested metric needs it, and only for those metrics. Group keys come back as the struct
``grp`` (a constant without ``by``) and are unnested here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from polars_rankmetrics.engines.sql.export import views_read
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.registry import RANKING_VIEW, VIEWS_WITH_K, Context, MetricKey
from polars_rankmetrics.metrics.sums import undefined_column, weight_column
from polars_rankmetrics.metrics.undefined import CONDITIONS, applies, ill_defined_column


@dataclass(frozen=True)
class ViewQuery:
    """One query over one per-sample view; its columns ``v0, w0, v1, w1, ...`` belong to
    ``keys`` in order (``w`` in sums queries only)."""

    keys: tuple[MetricKey, ...]
    sql: str
    view: str

    @property
    def has_k(self) -> bool:
        return self.view in VIEWS_WITH_K


def ranks_positives(view: str) -> bool:
    """Whether ``view`` reads the positives' ranks (``rankmetrics_positive_ranks``, the windows
    every ranking, gain and retrieval view is built on), directly or through another view."""
    return "rankmetrics_positive_ranks" in views_read([view])


# A metric's other view holding its value, read when another requested key's view ranks the
# positives anyway: coverage_error then reads the positives' largest rank instead of a pass over
# every row.
RANKED_VIEWS = {"coverage_error": RANKING_VIEW}


def sql_views(keys: Sequence[MetricKey]) -> dict[MetricKey, str]:
    """The per-sample view each of ``keys`` is read from: its metric's ``sql_view``, or its
    :data:`RANKED_VIEWS` entry when another key's view ranks the positives anyway."""
    own = {key: key.metric.sql_view for key in keys}
    ranking = {key for key, view in own.items() if ranks_positives(view)}
    return {
        key: RANKED_VIEWS[key.name] if key.name in RANKED_VIEWS and ranking - {key} else view
        for key, view in own.items()
    }


def by_view(keys: Sequence[MetricKey]) -> dict[str, list[MetricKey]]:
    """``keys`` by the per-sample view each is read from (:func:`sql_views`), in order."""
    views: dict[str, list[MetricKey]] = {}
    for key, view in sql_views(keys).items():
        views.setdefault(view, []).append(key)
    return views


def cutoffs(keys: Sequence[MetricKey]) -> list[int | None]:
    """The rows of ``rankmetrics_cutoffs``: the cut-offs of the keys read from a view with one
    row per cut-off (None for a key without)."""
    views = sql_views(keys)
    return list(dict.fromkeys(key.sql_row for key in keys if views[key] in VIEWS_WITH_K)) or [None]


def key_weight(key: MetricKey) -> str:
    """A sample's weight in ``key``'s mean, over a per-sample view's columns."""
    if key.metric.weighting == "ideal":
        return f"weight * {key.metric.sql_ideal}"
    return "weight * n_positives" if key.metric.weighting == "positives" else "weight"


def sums_queries(keys: Sequence[MetricKey], context: Context) -> list[ViewQuery]:
    """Per view and key, per group (and cut-off): ``sum(weight * value)``, the weights of the
    non-null values and the count of null values of positive weight
    (see :mod:`polars_rankmetrics.metrics.sums`); for a key whose ill-defined samples
    ``context`` counts, their count (``i``, :mod:`polars_rankmetrics.metrics.undefined`)."""
    queries = []
    for view, view_keys in by_view(keys).items():
        group = "grp, k" if view in VIEWS_WITH_K else "grp"
        columns = []
        for i, key in enumerate(view_keys):
            weight, value = key_weight(key), f"({key.metric.sql_value})"
            # a NULL value (a 0/0 with zero_division NaN) drops out with its weight
            columns += [
                f"coalesce(sum({weight} * {value}), 0) AS v{i}",
                f"coalesce(sum(CASE WHEN {value} IS NOT NULL THEN {weight} END), 0) AS w{i}",
                f"count(CASE WHEN {value} IS NULL AND {weight} > 0 THEN 1 END) AS x{i}",
            ]
            ill = ill_defined_condition(key, context)
            if ill is not None:
                columns.append(f"count(CASE WHEN {ill} THEN 1 END) AS i{i}")
        sql = f"SELECT {group}, {', '.join(columns)} FROM {view} GROUP BY {group}"
        queries.append(ViewQuery(tuple(view_keys), sql, view))
    return queries


def ill_defined_condition(key: MetricKey, context: Context) -> str | None:
    """The SQL test of ``key``'s ill-defined samples, where ``context`` counts them."""
    condition = key.metric.ill_defined
    if condition is None or not applies(condition, context):
        return None
    return CONDITIONS[condition][0]


def per_sample_queries(keys: Sequence[MetricKey], context: Context) -> list[ViewQuery]:
    """Per view: each of its keys' per-sample value and its weight in the mean (0 where the
    value is NULL); for a key whose ill-defined samples ``context`` counts, whether the
    sample's is (``i``, 0 or 1)."""
    queries = []
    for view, view_keys in by_view(keys).items():
        group = "grp, sample, k" if view in VIEWS_WITH_K else "grp, sample"
        columns = []
        for i, key in enumerate(view_keys):
            weight, value = key_weight(key), f"({key.metric.sql_value})"
            columns += [
                f"{value} AS v{i}",
                f"CASE WHEN {value} IS NOT NULL THEN {weight} ELSE 0 END AS w{i}",
            ]
            ill = ill_defined_condition(key, context)
            if ill is not None:
                columns.append(f"CASE WHEN {ill} THEN 1 ELSE 0 END AS i{i}")
        queries.append(
            ViewQuery(tuple(view_keys), f"SELECT {group}, {', '.join(columns)} FROM {view}", view)
        )
    return queries


def ungroup(frame: pl.DataFrame, cols: Columns) -> pl.DataFrame:
    """A view's ``grp`` as the ``by`` columns: the column itself for one, a struct unnested for
    several, dropped without ``by`` (see :func:`.sql_export.input_statements`)."""
    if not cols.by:
        return frame.drop("grp")
    if len(cols.by) == 1:
        return frame.rename({"grp": cols.by[0]})
    return frame.unnest("grp")


def group_values(grp: object, cols: Columns) -> dict[str, object]:
    """One row's ``grp`` as ``{by column: value}``."""
    if not cols.by:
        return {}
    if len(cols.by) == 1:
        return {cols.by[0]: grp}
    return dict(grp)  # type: ignore[call-overload, no-any-return]


def log_base_scale(key: MetricKey, context: Context) -> float:
    """What ``key``'s SQL value is multiplied by for ``context``'s log base."""
    # The SQL computes dcg in base 2; 1 / log_b(x) = ln(b) / ln(x) = (ln(b) / ln(2)) / log2(x).
    if key.metric.scales_with_log_base:
        return math.log(context.log_base) / math.log(2)
    return 1.0


def _columns(
    results: Sequence[tuple[ViewQuery, pl.DataFrame]],
    ids: list[str],
    context: Context,
    *,
    with_weights: bool,
    with_undefined: bool = True,
) -> list[pl.DataFrame]:
    parts = []
    for query, frame in results:
        for i, key in enumerate(query.keys):
            rows = frame.filter(pl.col("k").eq_missing(key.sql_row)) if query.has_k else frame
            scale = log_base_scale(key, context)
            columns = [(pl.col(f"v{i}") * scale).alias(str(key))]
            if with_weights:
                columns.append(pl.col(f"w{i}").cast(pl.Float64).alias(weight_column(key)))
            if with_weights and with_undefined:
                columns.append(pl.col(f"x{i}").cast(pl.Float64).alias(undefined_column(key)))
            if f"i{i}" in frame.columns:
                columns.append(pl.col(f"i{i}").cast(pl.Float64).alias(ill_defined_column(key)))
            parts.append(rows.select(*ids, *columns))
    return parts


def _joined(parts: list[pl.DataFrame], ids: list[str]) -> pl.DataFrame:
    if not ids:
        return pl.concat(parts, how="horizontal")
    result = parts[0]
    for part in parts[1:]:
        result = result.join(part, on=ids, how="left", nulls_equal=True)
    return result


def sums_frame(
    results: Sequence[tuple[ViewQuery, pl.DataFrame]], cols: Columns, context: Context
) -> pl.DataFrame:
    """The sums rows of :mod:`polars_rankmetrics.metrics.sums` from the :func:`sums_queries`
    results."""
    ungrouped = [(query, ungroup(frame, cols)) for query, frame in results]
    return _joined(_columns(ungrouped, list(cols.by), context, with_weights=True), list(cols.by))


def per_sample_frame(
    results: Sequence[tuple[ViewQuery, pl.DataFrame]], cols: Columns, context: Context
) -> pl.DataFrame:
    """Per-sample output from the :func:`per_sample_queries` results, sample column renamed:
    each key's value and weight (``key/w``), and whether its value is ill-defined (``key/i``,
    where counted)."""
    ids = [*cols.by, "sample"]
    ungrouped = [(query, ungroup(frame, cols)) for query, frame in results]
    columns = _columns(ungrouped, ids, context, with_weights=True, with_undefined=False)
    result = _joined(columns, ids)
    return result.rename({"sample": cols.sample})
