"""What a state records of how its numbers were computed, and the check that states merge.

States merge only where every recorded parameter is equal: the metric keys, the columns' roles,
the metrics' parameters (``log_base``, ``threshold``, ``beta``, ``zero_division``), the top-k
shape (``n_labels``), the propensity model (a fingerprint of its table), whether a weight column
was read, what the state keeps (``intervals``, ``per_label``, ``score_decimals``) and the
resampling scheme (units, sketch size, hash).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from typing import Any

from polars_rankmetrics.engines import driver, topk
from polars_rankmetrics.inference import hashing
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.inputs.sources import Source
from polars_rankmetrics.metrics.registry import Context, MetricKey
from polars_rankmetrics.states import format as fmt


def params_of(
    keys: Sequence[MetricKey], cols: Columns, context: Context, inputs: driver.TopK, *,
    intervals: bool, per_label: bool, score_decimals: int | None,
) -> dict[str, Any]:  # fmt: skip
    """The parameters a state of ``keys`` records (``cols`` as the user names them)."""
    outer = cols.in_source()
    return {
        "format": fmt.FORMAT,
        "metrics": [str(k) for k in keys],
        "by": list(outer.by),
        "columns": {
            "sample": outer.sample,
            "label": outer.label,
            "score": outer.score,
            "truth": outer.truth,
            "pred": outer.pred,
            "weight": outer.weight,
        },  # fmt: skip
        "log_base": context.log_base,
        "threshold": context.threshold,
        "beta": context.beta,
        "zero_division": zero_division_param(context),
        "n_labels": inputs.n_labels,
        "top_k": inputs.truth_table is not None,
        "propensities": _fingerprint(inputs.propensities, cols),
        "intervals": intervals,
        "per_label": per_label,
        "score_decimals": score_decimals,
        "units": hashing.UNITS,
        "sketch": fmt.SKETCH,
        "hash": "md5-62",
    }


def zero_division_param(context: Context) -> str | float:
    """``zero_division`` as a state records it: ``"warn"``, ``"nan"`` or the number."""
    if context.warn_zero_division:
        return "warn"
    return "nan" if math.isnan(context.zero_division) else context.zero_division


def _fingerprint(propensities: Any, cols: Columns) -> str | None:
    """The md5 of the propensity table's rows (label, propensity) sorted by label, as CSV."""
    if propensities is None:
        return None
    table = topk.propensity_table(Source.of(propensities).lazy(), cols.in_source())
    text = table.sort(cols.in_source().label).collect().write_csv()
    return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()


def context_of(params: dict[str, Any]) -> Context:
    """The metrics' parameters a state was computed with."""
    columns = params["columns"]
    zero = params["zero_division"]
    return Context(
        truth=columns["truth"], score=columns["score"], pred=columns["pred"],
        log_base=params["log_base"], threshold=params["threshold"], beta=params["beta"],
        zero_division=0.0 if zero == "warn" else math.nan if zero == "nan" else float(zero),
        warn_zero_division=zero == "warn", n_labels=params["n_labels"],
        top_k=params["top_k"],
    )  # fmt: skip


def read_params(texts: Sequence[str]) -> dict[str, Any]:
    """The one set of parameters of the merged states' ``rm_params`` values (distinct); refuses
    states computed with different parameters, naming the first that differs and both
    values."""
    found = [json.loads(text) for text in texts]
    if not found:
        raise ValueError("no state to finalize: the states hold no rows")
    first = found[0]
    for other in found[1:]:
        for name in sorted(set(first) | set(other)):
            if first.get(name) != other.get(name):
                raise ValueError(
                    f"states computed with different {name} do not merge: "
                    f"{first.get(name)!r} and {other.get(name)!r}"
                )
    params: dict[str, Any] = first
    return params
