"""scikit-learn's own metric tests, run against polars_rankmetrics.sklearn.

- ``plugin.py``: the pytest plugin that routes scikit-learn's functions to the drop-ins and
  compares each routed call with scikit-learn's original;
- ``run.py``: runs the tests shipped in the installed scikit-learn wheel with the plugin, in a
  subprocess, on one engine;
- ``select.py``: writes the selections below from a run of every test
  (``python -m sklearn_suite.select`` from ``tests/``);
- ``selected.txt`` (every test that routes a call), ``selected_duckdb.txt`` (the DuckDB engine's
  share of them), ``known_gaps.txt`` (tests that fail by a deliberate difference, and why).
"""
