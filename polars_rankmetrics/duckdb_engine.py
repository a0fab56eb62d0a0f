"""The DuckDB engine's public functions, at the path the documentation shows (the engine lives
in :mod:`polars_rankmetrics.engines.duckdb`)."""

from polars_rankmetrics.engines.duckdb import connect, register_views, unregister_views

__all__ = ["connect", "register_views", "unregister_views"]
