"""The Spark engine's public functions, at the path the documentation shows (the engine lives in
:mod:`polars_rankmetrics.engines.spark`)."""

from polars_rankmetrics.engines.spark import local_session

__all__ = ["local_session"]
