import os
import sys
from dataclasses import dataclass, field

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import polars_rankmetrics as rm  # noqa: E402
from polars_rankmetrics import duckdb_engine  # noqa: E402


@dataclass(frozen=True)
class Engine:
    """One way of running evaluate(): an engine and the options that select its code path."""

    name: str
    options: dict = field(default_factory=dict)
    # DuckDB's bytes per bucket row, raised so that a 256MB budget splits tiny tables too.
    duckdb_bytes_per_row: int | None = None

    def evaluate(self, data, metrics=None, **options):
        if self.duckdb_bytes_per_row is None:
            return rm.evaluate(data, metrics, engine=self.name, **self.options, **options)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(duckdb_engine, "BYTES_PER_ROW", self.duckdb_bytes_per_row)
            return rm.evaluate(data, metrics, engine=self.name, **self.options, **options)

    def __str__(self) -> str:
        return self.name + ("-buckets" if self.options else "")


ENGINES = [
    Engine("polars"),
    # A 2KB budget forces several hash buckets even for tiny tables.
    Engine("polars", {"memory_limit": "2KB"}),
    Engine("duckdb"),
    # 0.6 * 256MB / 10**7 bytes per row: buckets of 15 rows.
    Engine("duckdb", {"memory_limit": "256MB"}, duckdb_bytes_per_row=10**7),
]


@pytest.fixture(params=ENGINES, ids=str)
def engine(request) -> Engine:
    """Every engine-level test body runs on each engine and code path."""
    return request.param
