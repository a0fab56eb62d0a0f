"""Which of Polars' engines queries a table of a given size."""

from __future__ import annotations

from typing import Literal

# The Polars engine a query is collected with: "in-memory" for a small table, "auto" (Polars'
# default, its streaming engine) for the others.
Collector = Literal["auto", "in-memory"]

# A table of at most this many rows is queried by Polars' in-memory engine, the others by
# Polars' default, its streaming engine. The streaming engine takes longer to start a query,
# which an evaluation of a small table pays in each of its queries (a dozen), and gains on
# tables of many batches (morsels of up to 100,000 rows) only: it holds fewer copies of a large
# table at once.
IN_MEMORY_ROWS = 100_000


def collector(rows: int | None) -> Collector:
    """The engine that queries a table of ``rows`` rows (None: not known)."""
    return "in-memory" if rows is not None and rows <= IN_MEMORY_ROWS else "auto"
