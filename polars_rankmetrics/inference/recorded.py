"""What an evaluation state records of how its numbers were computed: its format, the size of
its sketch of sample hashes, each group's label set with its fingerprint, and its parameters as
canonical JSON (``rm_params``), written alike by :func:`polars_rankmetrics.state` and by the SQL
state (:mod:`polars_rankmetrics.engines.sql.state`), so that states of either merge.

States merge only where every recorded parameter is equal: the metric keys, the ``by`` columns,
the columns' roles, the metrics' parameters, the top-k shape (``n_labels``), the propensity
model (a fingerprint of its table), what the state keeps (``intervals``, ``per_label``,
``score_decimals``) and the resampling scheme (:mod:`.hashing`: units, sketch, hash). Where
they merge, the label sets of a group's states must be equal, as ``evaluate`` wants every
sample of a table to carry the same labels: a dense table's state records, per group, each
label with its set's fingerprint (:func:`label_set_rows`), a top-k table's none (its label space
is ``n_labels``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from polars_rankmetrics.inference import hashing
from polars_rankmetrics.inference.hashing import UNITS
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.metrics.registry import Context, MetricKey

# The version of the state's table (polars_rankmetrics.states.format); finalize refuses a
# state of another version by name (polars_rankmetrics.states.merge).
FORMAT = 2
# The smallest distinct sample hashes a state keeps per group, to find samples held twice.
SKETCH = 128
HASH = "md5-62"
# The column of label_set_rows that holds a label set's fingerprint.
FINGERPRINT = "fingerprint"


def params(
    keys: Sequence[MetricKey], cols: Columns, context: Context, *, n_labels: int | None,
    top_k: bool, propensities: str | None, intervals: bool, per_label: bool,
    score_decimals: int | None,
) -> dict[str, Any]:  # fmt: skip
    """The parameters a state of ``keys`` records (``cols`` as the user names the columns;
    ``propensities``: the propensity table's fingerprint, or None)."""
    return {
        "format": FORMAT,
        "metrics": [str(k) for k in keys],
        "by": list(cols.by),
        "columns": {
            "sample": cols.sample,
            "label": cols.label,
            "score": cols.score,
            "truth": cols.truth,
            "pred": cols.pred,
            "weight": cols.weight,
        },  # fmt: skip
        "log_base": context.log_base,
        "threshold": context.threshold,
        "beta": context.beta,
        "zero_division": zero_division(context),
        "n_labels": n_labels,
        "top_k": top_k,
        "propensities": propensities,
        "intervals": intervals,
        "per_label": per_label,
        "score_decimals": score_decimals,
        "units": UNITS,
        "sketch": SKETCH,
        "hash": HASH,
    }


def zero_division(context: Context) -> str | float:
    """``zero_division`` as a state records it: ``"warn"``, ``"nan"`` or the number."""
    if context.warn_zero_division:
        return "warn"
    return "nan" if math.isnan(context.zero_division) else context.zero_division


def text(recorded: Mapping[str, Any]) -> str:
    """``recorded`` as canonical JSON: sorted keys, no spaces, NaN as the string ``"nan"``."""

    def plain(value: Any) -> Any:
        if isinstance(value, float) and math.isnan(value):
            return "nan"
        if isinstance(value, tuple | list):
            return [plain(v) for v in value]
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        return value

    return json.dumps(plain(dict(recorded)), sort_keys=True, separators=(",", ":"))


def label_set_rows(labels: pl.DataFrame, group: Sequence[str], label: str) -> pl.DataFrame:
    """Per group of the ``group`` columns of ``labels``, each of its distinct labels (column
    ``label``) with the fingerprint of the group's label set (:data:`FINGERPRINT`,
    :func:`~.hashing.set_fingerprint` of the labels' hashes, :func:`~.hashing.label_hashes`)."""
    keys = list(group)
    distinct = labels.select(*keys, label).unique()
    hashed = distinct.with_columns(hashing.label_hashes(distinct[label]).alias("__hash"))
    prints = hashed.group_by(keys).agg(hashing.set_fingerprint(pl.col("__hash")).alias(FINGERPRINT))
    return hashed.drop("__hash").join(prints, on=keys, nulls_equal=True)
