"""The files the library writes (states, HTML reports, the command's ``--output``), each
replaced whole (:mod:`.atomic`)."""

from polars_rankmetrics.outputs.atomic import TEMPORARY_MARK, replacing, write_text

__all__ = ["TEMPORARY_MARK", "replacing", "write_text"]
