"""Evaluation states: each partition evaluated once into a table that merges exactly
(``docs/pipelines.md``).

:func:`state` evaluates a partition (:mod:`.build`); :func:`finalize` gives the numbers of any
merge of states (:mod:`.finalize`): days into a window, shards into the whole. The table and
its merge rule are :mod:`.format`; the parameters a state records and the check that states
merge, :mod:`.params`; reading and merging states into the driver's tables, :mod:`.merge`.
"""

from polars_rankmetrics.states.build import state, write
from polars_rankmetrics.states.finalize import finalize
from polars_rankmetrics.states.merge import Merged, is_state, merge

__all__ = ["Merged", "finalize", "is_state", "merge", "state", "write"]
