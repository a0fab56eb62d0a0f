"""ir_measures' own tests (vendored from terrierteam/ir_measures 0.4.3 with its license,
``LICENSE.txt``: ``base.py`` and the test modules beside this file) answered by
:mod:`polars_rankmetrics.ir_measures`.

Each test runs with the provider registered (first in ir_measures' default pipeline, so that
``ir_measures.calc``, ``iter_calc``, ``calc_aggregate`` and ``Measure.calc`` reach it) and in
the place of the two providers whose measures it computes: ``ir_measures.pytrec_eval`` (and
``PytrecEvalProvider()``) and ``ir_measures.judged``. A test that no call of the provider
answers fails: it would pass without the provider.

ir_measures' registry keeps the providers that are installed here: ``test_measures.py``
compares every provider that supports a measure with every other (the provider among them:
against ranx's and gdeval's, whose ``ERR@k`` reads numeric topic ids, as these tests have);
``cwl_eval`` and ``pyndeval`` are not installed, and are left out of it.
"""

from __future__ import annotations

import ir_measures
import pytest

import polars_rankmetrics.ir_measures as rm_ir


def pytest_collection_modifyitems(items):
    # ranx (compared with the provider in test_measures.py) casts its qrels' integer type
    # through numba, which warns in the name of the compiled file (the peers' code).
    ignore = pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaTypeSafetyWarning")
    for item in items:
        if "ir_measures_suite" in item.nodeid:
            item.add_marker(ignore)


@pytest.fixture(autouse=True)
def answered_by_the_provider(monkeypatch: pytest.MonkeyPatch):
    calls = []
    evaluator = rm_ir.RankmetricsProvider._evaluator

    def counted(self, measures, qrels):
        calls.append(list(measures))
        return evaluator(self, measures, qrels)

    monkeypatch.setattr(rm_ir.RankmetricsProvider, "_evaluator", counted)
    monkeypatch.setattr(ir_measures, "pytrec_eval", rm_ir.provider)
    monkeypatch.setattr(ir_measures, "judged", rm_ir.provider)
    monkeypatch.setattr(ir_measures.providers, "PytrecEvalProvider", lambda: rm_ir.provider)
    working = {
        name: provider
        for name, provider in ir_measures.providers.registry.items()
        if provider.is_available()
    }
    monkeypatch.setattr(ir_measures.providers, "registry", working)
    rm_ir.register()
    try:
        yield
    finally:
        rm_ir.unregister()
    assert calls, "no call reached polars_rankmetrics.ir_measures"
