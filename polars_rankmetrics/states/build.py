"""``state``: one evaluation of a partition, kept as a table that merges (:mod:`.format`)."""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from typing import Any, Unpack

import polars as pl

from polars_rankmetrics.checks import validation
from polars_rankmetrics.engines import driver
from polars_rankmetrics.inference import hashing, recorded
from polars_rankmetrics.inference.samples import per_sample_keys
from polars_rankmetrics.inference.units import unit_table
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.label_averages import LABEL, combine
from polars_rankmetrics.metrics.parameters import parameters
from polars_rankmetrics.metrics.registry import MetricKey, parse_keys
from polars_rankmetrics.metrics.undefined import UndefinedMetricWarning
from polars_rankmetrics.options import Options, Run, documented
from polars_rankmetrics.outputs import replacing
from polars_rankmetrics.states import format as fmt
from polars_rankmetrics.states.params import params_of

# The tables a state of the per-label report keeps, and the keys whose checks they need.
PER_LABEL_TABLES = ("labels", "curves", "precisions")
# The per-label tables a state keeps, and the columns besides the group and label that key them.
LABEL_PARTS = {"labels": (), "curves": ("score",), "precisions": (), "topk_labels": ()}
PER_LABEL_KEYS = (MetricKey("f1_macro"), MetricKey("roc_auc_macro"), MetricKey("lwlrap"))


@documented(Options)
def state(
    data: Any,
    metrics: str | Sequence[str] | None = None,
    *,
    by: str | Sequence[str] | None = None,
    truth_table: Any = None,
    n_labels: int | None = None,
    propensities: Any = None,
    log_base: float = 2,
    threshold: float = 0.5,
    beta: float = 1.0,
    zero_division: float | str = "warn",
    intervals: bool = False,
    per_label: bool = False,
    score_decimals: int | None = None,
    path: str | os.PathLike[str] | None = None,
    **options: Unpack[Options],
) -> pl.DataFrame:
    """Evaluate ``data`` once into a state: a table whose rows add up over partitions.

    :func:`~polars_rankmetrics.finalize` of one state, of several (days, shards, ...), or of a
    filter of them gives what :func:`~polars_rankmetrics.evaluate` gives on the union of the
    data behind them; ``by`` columns that ``finalize`` is not given are merged over. The table
    and its merge rules are documented in :mod:`polars_rankmetrics.states.format` and
    ``docs/pipelines.md``.

    Parameters
    ----------
    data, metrics, by, truth_table, n_labels, propensities, log_base, threshold, beta, zero_division
        As for :func:`~polars_rankmetrics.evaluate`; the input is checked and refused the same
        way. The parameters are recorded in the state: states computed with different ones do
        not merge. The sample ids must be integers or strings: the state keeps a sketch of
        their hashes (md5 of their text, which differs between engines for a float or a date).
    intervals
        Also keep, per group, the sums of each of the 4,096 resampling units
        (:mod:`polars_rankmetrics.inference.hashing`), which ``finalize(ci=...)`` and
        ``compare`` of states read: at most 4,096 rows per group and value, whatever the
        number of samples.
    per_label
        Also keep the per-label tables of :func:`~polars_rankmetrics.label_report` and
        :func:`~polars_rankmetrics.lwlrap_per_class` (binary truth is then required).
    score_decimals
        Round the scores to this many decimals in the tables of the curve metrics
        (``average_precision_*``, ``roc_auc_*``, and the per-label report): those tables hold a
        row per (label, distinct score), so rounding bounds their size by the labels times
        ``10**score_decimals``; the curves are then those of the rounded scores (ties where
        scores round alike), an approximation that ``docs/pipelines.md`` measures. None (the
        default): exact.
    path
        Also write the state there as Parquet, atomically (a temporary file in the same
        directory, renamed into place).
    **options

    Returns
    -------
    polars.DataFrame
        The ``by`` columns, then ``rm_part``, ``rm_label``, ``rm_score``, ``rm_unit``,
        ``rm_name``, ``rm_value``, ``rm_format`` and ``rm_params``
        (:mod:`polars_rankmetrics.states.format`). Its size grows with the groups, keys and
        labels (and distinct scores of the curve metrics), not with the samples.

    Raises
    ------
    ValueError
        For input that :func:`~polars_rankmetrics.evaluate` refuses, a ``by`` column named
        ``rm_...``, sample ids that are neither integers nor strings, or trec_eval's measures
        (``P_5``, ``AP``, ...: a state keeps none of them).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as rm
    >>> df = pl.read_parquet("data/example.parquet")
    >>> days = df.with_columns(day=pl.col("sample").str.tail(1).cast(pl.Int32) % 3)
    >>> keys = ["lrap", "f1_micro"]
    >>> states = [rm.state(day, keys, by="model") for day in days.partition_by("day")]
    >>> rm.finalize(states, by="model")  # rm.evaluate(df, keys, by="model")'s numbers
    shape: (2, 3)
    ┌───────────┬──────────┬──────────┐
    │ model     ┆ lrap     ┆ f1_micro │
    │ ---       ┆ ---      ┆ ---      │
    │ str       ┆ f64      ┆ f64      │
    ╞═══════════╪══════════╪══════════╡
    │ baseline  ┆ 0.418674 ┆ 0.176736 │
    │ candidate ┆ 0.69374  ┆ 0.201508 │
    └───────────┴──────────┴──────────┘
    """
    keys = parse_keys(metrics)
    trec = [str(k) for k in keys if k.metric.family == "trec"]
    if trec:
        raise ValueError(
            f"a state cannot keep trec_eval's measures ({', '.join(trec)}): their topics' values "
            "come from trec_eval's ordering of the run, and some are geometric means or sums "
            "over topics; evaluate them with rm.evaluate or rm.trec_eval"
        )
    context = parameters(
        log_base=log_base, threshold=threshold, beta=beta, zero_division=zero_division
    )
    if score_decimals is not None and (
        isinstance(score_decimals, bool) or not isinstance(score_decimals, int)
    ):
        raise ValueError(f"score_decimals must be an integer or None, not {score_decimals!r}")
    run, cols = Run.of(options, by=by)
    fmt.check_by_names(cols.by)
    inputs = driver.TopK(truth_table, n_labels, propensities)
    sample_keys = [k for k in keys if k.metric.reduction == "samples"]
    # With intervals, the units hold each key's per-sample columns (a _micro average's counts).
    columns = per_sample_keys(keys) if intervals else sample_keys
    checked = [*keys, *(k for k in [*columns, *PER_LABEL_KEYS] if k not in keys
                        and (per_label or k not in PER_LABEL_KEYS))]  # fmt: skip
    # "samples": the ids the sketch hashes; "per_sample": the values the units sum.
    tables = [*(["sums"] if sample_keys else []), "samples"]
    tables += ["per_sample"] if intervals and columns else []
    tables += [t for t in PER_LABEL_TABLES if per_label or _reads(keys, t)]
    tables += ["topk_labels"] if _reads(keys, "topk_labels") else []
    # A dense table's label set, recorded per group, comes from the label counts, a row per
    # (group, label) that the engines give in the same pass.
    label_set = truth_table is None
    counted = label_set and "labels" not in tables
    tables += ["labels"] if counted else []
    validation.check_result_names(cols, [str(k) for k in keys])
    with warnings.catch_warnings():
        # The state records the ill-defined counts; finalize warns of them.
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        with driver.inside_names(cols) as inner:
            collected, context = run.collect(
                data, inner, checked, tables, parameters=context, inputs=inputs
            )
            if label_set:
                group = list(inner.by) or [validation.GROUP]
                labels = pl.concat(collected["labels"]).select(*group, LABEL)
            if counted:
                del collected["labels"]
            rows, label_type = _rows(collected, inner, sample_keys, columns,
                                     score_decimals=score_decimals)  # fmt: skip
            if label_set:
                rows.append(_label_set(labels, inner.by))
                label_type = labels.schema[LABEL]
            params = params_of(keys, cols, context, inputs, intervals=intervals,
                               per_label=per_label, score_decimals=score_decimals)  # fmt: skip
            result = inner.restored(fmt.finished(rows, inner.by, params, label_type))
    if path is not None:
        write(result, path)
    return result


def _reads(keys: Sequence[MetricKey], table: str) -> bool:
    return any(k.metric.reduction == table for k in keys)


def _label_set(labels: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """The ``labelset`` rows (:mod:`.format`) of the label counts' (group, label) rows: each
    label with its group's fingerprint, held by one state."""
    group = list(by) or [validation.GROUP]
    rows = recorded.label_set_rows(labels, group, LABEL).with_columns(pl.lit(1.0).alias(fmt.STATES))
    return fmt.long_rows(rows, by, "labelset", [fmt.STATES], label=LABEL,
                         unit=recorded.FINGERPRINT)  # fmt: skip


def _rows(
    collected: dict[str, list[pl.DataFrame]], cols: Columns, keys: Sequence[MetricKey],
    columns: Sequence[MetricKey], *, score_decimals: int | None,
) -> tuple[list[pl.DataFrame], pl.DataType]:  # fmt: skip
    by = list(cols.by)
    group = by or [validation.GROUP]
    ids = pl.concat(collected.pop("samples")).select(*by, cols.sample)
    distinct = ids.select(cols.sample).unique()
    lookup = distinct.with_columns(hashing.sample_hashes(distinct[cols.sample], cols.sample)
                                   .alias("h"))  # fmt: skip
    hashed = ids.join(lookup, on=cols.sample, how="left")
    counts = (hashed.group_by(by) if by else hashed.group_by(pl.lit(0).alias("__one"))).agg(
        pl.len().cast(pl.Float64).alias(fmt.SAMPLES),
        pl.col("h").unique().sort().head(fmt.SKETCH).alias("h"),
    )  # fmt: skip
    sketch = counts.select(*by, "h").explode("h").with_columns(pl.lit(1.0).alias(fmt.SAMPLES))
    rows = [fmt.long_rows(sketch, by, "sketch", [fmt.SAMPLES], unit="h")]
    if keys:
        sums = pl.concat(collected.pop("sums"))
        sums = sums.group_by(by).agg(pl.all().sum()) if by else sums.select(pl.all().sum())
        sample_counts = counts.select(*by, fmt.SAMPLES)
        sums = sums.join(sample_counts, on=by, nulls_equal=True) if by else pl.concat(
            [sums, sample_counts], how="horizontal"
        )  # fmt: skip
        rows.append(fmt.long_rows(sums, by, "sums", [c for c in sums.columns if c not in by]))
    for frame in collected.pop("per_sample", []):
        if not frame.height:
            continue
        aligned = frame.select(cols.sample).join(lookup, on=cols.sample, how="left",
                                                 maintain_order="left")  # fmt: skip
        units = unit_table(frame, cols.sample, columns, hashes=aligned["h"])
        if by:
            units = frame.select(by).head(1).join(units, how="cross")
        names = [c for c in units.columns if c not in (*by, fmt.UNIT)]
        rows.append(fmt.long_rows(units, by, "units", names, unit=fmt.UNIT))
    label_type: pl.DataType = pl.Null()
    for table, extra in LABEL_PARTS.items():
        if table not in collected:
            continue
        keys_of = [*group, LABEL, *extra]
        combined = combine(collected.pop(table), keys_of)
        if table == "curves" and score_decimals is not None:
            rounded = pl.col("score").round(score_decimals) + 0.0
            combined = combine([combined.with_columns(rounded)], keys_of)
        label_type = combined.schema[LABEL]
        names = [c for c in combined.columns if c not in keys_of]
        rows.append(fmt.long_rows(combined, by, table, names, label=LABEL,
                                  score="score" if table == "curves" else None))  # fmt: skip
    return rows, label_type


def write(frame: pl.DataFrame, path: str | os.PathLike[str]) -> None:
    """Write ``frame`` as Parquet at ``path`` crash-safely
    (:func:`~polars_rankmetrics.outputs.replacing`): a reader, a crash or a second writer sees
    the whole file or the one before it, never a part."""
    with replacing(path) as temporary:
        frame.write_parquet(temporary)
