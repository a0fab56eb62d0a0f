"""Running an evaluation: the engine interface and registry (:mod:`.base`), the bucket driver
(:mod:`.driver`) with top-k preparation (:mod:`.topk`), the memory budget (:mod:`.memory`) and
interrupts (:mod:`.interrupts`), and one module or package per engine: :mod:`.polars`,
:mod:`.duckdb`, :mod:`.spark`. The SQL engines share :mod:`.sql` (sessions, checks, results,
dialect export). Adding an engine: a module with an ``ENGINE`` that implements
:class:`.base.Engine`, registered in :mod:`.base`."""
