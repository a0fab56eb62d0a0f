import os
import sys
from dataclasses import dataclass, field

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import polars_rankmetrics as rm  # noqa: E402


@dataclass(frozen=True)
class Engine:
    """One way of running evaluate(): an engine and the options that select its code path."""

    name: str
    options: dict = field(default_factory=dict)

    def evaluate(self, data, metrics=None, **options):
        return rm.evaluate(data, metrics, engine=self.name, **self.options, **options)

    def __str__(self) -> str:
        return self.name + ("-buckets" if self.options else "")


ENGINES = [
    Engine("polars"),
    # A 2KB budget forces several hash buckets even for tiny tables.
    Engine("polars", {"memory_limit": "2KB"}),
    Engine("duckdb"),
]


@pytest.fixture(params=ENGINES, ids=str)
def engine(request) -> Engine:
    """Every engine-level test body runs on each engine and code path."""
    return request.param
