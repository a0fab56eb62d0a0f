"""Metric keys: the names users pass in ``metrics=`` and that label the result columns."""

from __future__ import annotations

import re
from dataclasses import dataclass

RANKING_METRICS = ("coverage_error", "lrap", "ranking_loss", "lwlrap", "dcg", "ndcg")
DEFAULT_METRICS = RANKING_METRICS

_AT_K = re.compile(r"^(dcg|ndcg)@([0-9]+)$")


@dataclass(frozen=True)
class MetricKey:
    """One requested metric: its name, and the cut-off ``k`` for ``dcg@k``/``ndcg@k``.

    ``k=None`` means the whole ranking. ``str(key)`` is the result column name.
    """

    name: str
    k: int | None = None

    def __post_init__(self) -> None:
        if self.name not in RANKING_METRICS:
            raise ValueError(f"unknown metric {self.name!r}")
        if self.k is not None and (
            isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1
        ):
            raise ValueError(f"k must be a positive integer, not {self.k!r}")

    def __str__(self) -> str:
        return self.name if self.k is None else f"{self.name}@{self.k}"

    @property
    def is_binary(self) -> bool:
        """Whether the metric needs truth in {0, 1} (dcg/ndcg accept graded gains)."""
        return self.name not in ("dcg", "ndcg")


def parse_key(text: str) -> MetricKey:
    """Parse ``"lrap"`` or ``"ndcg@5"``; raise ``ValueError`` naming the valid keys otherwise."""
    if text in RANKING_METRICS:
        return MetricKey(text)
    match = _AT_K.match(text)
    if match is not None:
        return MetricKey(match.group(1), int(match.group(2)))
    valid = ", ".join(RANKING_METRICS)
    raise ValueError(f"unknown metric {text!r}; valid metrics are {valid}, dcg@K and ndcg@K")


def parse_keys(metrics: str | list[str] | tuple[str, ...] | None) -> list[MetricKey]:
    """Parse a list of keys (or one key, or ``None`` for the default ranking set), each once."""
    if metrics is None:
        metrics = DEFAULT_METRICS
    elif isinstance(metrics, str):
        metrics = [metrics]
    keys = [parse_key(m) for m in metrics]
    if not keys:
        raise ValueError("metrics is empty; ask for at least one metric")
    return list(dict.fromkeys(keys))
