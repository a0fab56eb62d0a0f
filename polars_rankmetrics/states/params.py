"""The parameters a state records (:mod:`polars_rankmetrics.inference.recorded`), read back,
and the check that states merge: every recorded parameter equal."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from typing import Any

from polars_rankmetrics.engines import driver, topk
from polars_rankmetrics.inference import recorded
from polars_rankmetrics.inputs.columns import Columns
from polars_rankmetrics.inputs.sources import Source
from polars_rankmetrics.metrics.registry import Context, MetricKey


def params_of(
    keys: Sequence[MetricKey], cols: Columns, context: Context, inputs: driver.TopK, *,
    intervals: bool, per_label: bool, score_decimals: int | None,
) -> dict[str, Any]:  # fmt: skip
    """The parameters a state of ``keys`` records (:func:`.recorded.params`; ``cols`` with the
    inside names of the run)."""
    return recorded.params(
        keys, cols.in_source(), context, n_labels=inputs.n_labels,
        top_k=inputs.truth_table is not None,
        propensities=_fingerprint(inputs.propensities, cols), intervals=intervals,
        per_label=per_label, score_decimals=score_decimals,
    )  # fmt: skip


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
