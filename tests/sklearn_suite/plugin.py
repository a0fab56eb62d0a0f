"""A pytest plugin that runs scikit-learn's own metric tests against
:mod:`polars_rankmetrics.sklearn`.

scikit-learn's metric functions are replaced, where scikit-learn defines them and in
``sklearn.metrics``, by routers before the test modules import them. A call whose input the
drop-in takes is routed: multilabel indicator ``y_true`` (and ``y_pred`` for the set metrics),
or any (samples x labels) truth for dcg and ndcg. Every other call, and every call scikit-learn's
functions make to each other while a routed call runs, goes to scikit-learn's original; so does a
routed call that the drop-in refuses by design (``DECLINED``: the partial ROC AUC), counted.

A routed call runs the original too, both recording every warning, and the test fails where the
two disagree:

- both returned, and the values differ (beyond 1e-9 relative; NaN equals NaN; a text but for
  a printed number exactly halfway between two, rounded the other way);
- both returned, and the warnings differ in class or message (each distinct warning counted once:
  scikit-learn repeats a curve's warning per label, a drop-in says it once). A warning where
  scikit-learn gives none fails the test here, whatever the test itself asserts.

The test sees the drop-in's value and warnings. Where both refuse the call with the same kind of
error (a ``ValueError``, a ``TypeError``), the test sees scikit-learn's error, whose message it
may match: the drop-ins' messages are their own. Where only one refuses, the drop-in's outcome
goes to the test, whose assertions judge it.

Environment:

- ``RANKMETRICS_SKLEARN_ENGINE``: the drop-ins' ``engine=`` (default ``polars``);
- ``RANKMETRICS_SKLEARN_SELECT``: a file of test node ids (``selected.txt``): only those run,
  each must be collected, and each fails if no call reaches the drop-ins;
- ``RANKMETRICS_SKLEARN_RECORD``: where to write, at the end, a JSON record per test: outcome,
  whether its code mentions warnings, routed, declined and refused calls, calls where
  scikit-learn warned, disagreements.

``known_gaps.txt`` (beside this file) lists tests that fail by a deliberate difference, with the
reason: they are marked ``xfail(strict=True)``, so one that starts passing fails the run.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import os
import threading
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import polars_rankmetrics.sklearn as dropins
from sklearn_suite.run import KNOWN_GAPS as KNOWN_GAPS_FILE
from sklearn_suite.run import node_ids

# The functions routed, by the module of scikit-learn that defines them, and which calls are the
# drop-in's: "sets" (y_true and y_pred multilabel indicator), "curves" (y_true multilabel
# indicator, with scores or probabilities), "gains" (y_true a samples x labels matrix of any
# numbers).
ROUTES = {
    "sklearn.metrics._classification": {
        "accuracy_score": "sets", "classification_report": "sets", "f1_score": "sets",
        "fbeta_score": "sets", "hamming_loss": "sets", "jaccard_score": "sets",
        "log_loss": "curves", "brier_score_loss": "curves",
        "multilabel_confusion_matrix": "sets", "precision_recall_fscore_support": "sets",
        "precision_score": "sets", "recall_score": "sets", "zero_one_loss": "sets",
    },
    "sklearn.metrics._ranking": {
        "average_precision_score": "curves", "coverage_error": "curves",
        "label_ranking_average_precision_score": "curves", "label_ranking_loss": "curves",
        "roc_auc_score": "curves", "dcg_score": "gains", "ndcg_score": "gains",
    },
}  # fmt: skip
_GAINS = {"multilabel-indicator", "multiclass-multioutput", "continuous-multioutput"}
# Calls a drop-in refuses by design, as its docstring says.
DECLINED: dict[str, Callable[[dict[str, Any]], bool]] = {
    "roc_auc_score": lambda arguments: arguments.get("max_fpr") not in (None, 1),  # partial AUC
}
RTOL, ATOL = 1e-9, 1e-12
ENGINE = os.environ.get("RANKMETRICS_SKLEARN_ENGINE", "polars")


_SELECT = os.environ.get("RANKMETRICS_SKLEARN_SELECT")
SELECTED = node_ids(_SELECT) if _SELECT else None
KNOWN_GAPS = node_ids(KNOWN_GAPS_FILE)


@dataclass
class Record:
    """What one test did."""

    outcome: str = "not run"
    checks_warnings: bool = False  # the test's code mentions warnings
    routed: Counter[str] = field(default_factory=Counter)
    declined: Counter[str] = field(default_factory=Counter)
    warned: Counter[str] = field(default_factory=Counter)  # routed calls where sklearn warned
    refused: int = 0  # routed calls both refused
    raised: list[str] = field(default_factory=list)  # routed calls either refused
    problems: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {k: dict(v) if isinstance(v, Counter) else v for k, v in vars(self).items()}


RECORDS: defaultdict[str, Record] = defaultdict(Record)
_OUTSIDE = "<outside a test>"


class _Current(threading.local):
    test = _OUTSIDE
    routing = False  # a routed call is running: calls it makes go to the originals


CURRENT = _Current()


@dataclass
class Outcome:
    """One function's answer to a call: its value or error, and the warnings it gave."""

    value: Any = None
    error: Exception | None = None
    records: list[warnings.WarningMessage] = field(default_factory=list)

    @property
    def warned(self) -> set[tuple[type[Warning], str]]:
        return {(w.category, str(w.message)) for w in self.records}

    def shown(self) -> str:
        if self.error is None:
            return "returned " + _shown(self.value, 80)
        return f"raised {type(self.error).__name__}: {_shown(str(self.error), 200)}"


def _answer(function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Outcome:
    outcome = Outcome()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            outcome.value = function(*args, **kwargs)
        except Exception as error:  # compared, then raised to the test
            outcome.error = error
    outcome.records = list(caught)
    return outcome


def _kind_of_target(y: object) -> str:
    from sklearn.utils.multiclass import type_of_target

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return str(type_of_target(y))
    except Exception:  # input scikit-learn cannot type: the original refuses it
        return "unknown"


def _takes(route: str, arguments: dict[str, Any]) -> bool:
    """Whether a call with ``arguments`` has the input the drop-in takes."""
    truth = _kind_of_target(arguments.get("y_true"))
    if route == "gains":
        return truth in _GAINS
    if route == "sets":
        return truth == _kind_of_target(arguments.get("y_pred")) == "multilabel-indicator"
    return truth == "multilabel-indicator"


def _same_text(ours: str, theirs: str) -> bool:
    """Equal texts, but for a number printed with d decimals that may differ by 10^-d: equal
    values (to 1e-9) that are halfway between two printed numbers may round either way."""
    mine, their = ours.split(), theirs.split()
    if len(mine) != len(their):
        return False
    for a, b in zip(mine, their, strict=True):
        if a != b:
            try:
                step = 10.0 ** -len(b.partition(".")[2])
                if abs(float(a) - float(b)) > step * 1.001:
                    return False
            except ValueError:
                return False
    return [len(line) for line in ours.splitlines()] == [len(line) for line in theirs.splitlines()]


def differences(ours: Any, theirs: Any, where: str = "value") -> list[str]:
    """How the drop-in's value differs from scikit-learn's (empty: equal)."""
    if isinstance(theirs, str) or isinstance(ours, str):
        same = isinstance(ours, str) and isinstance(theirs, str) and _same_text(ours, theirs)
        return [] if same else [f"{where}: {ours!r} != scikit-learn's {theirs!r}"]
    if isinstance(theirs, dict):
        if not isinstance(ours, dict) or list(ours) != list(theirs):
            return [f"{where}: keys {list(ours)!r} != scikit-learn's {list(theirs)!r}"]
        return [d for k in theirs for d in differences(ours[k], theirs[k], f"{where}[{k!r}]")]
    if isinstance(theirs, tuple | list):
        if not isinstance(ours, tuple | list) or len(ours) != len(theirs):
            return [f"{where}: {_shown(ours)} != scikit-learn's {_shown(theirs)}"]
        return [d for i, (a, b) in enumerate(zip(ours, theirs, strict=True))
                for d in differences(a, b, f"{where}[{i}]")]  # fmt: skip
    if theirs is None or ours is None:
        return [] if ours is theirs else [f"{where}: {ours!r} != scikit-learn's {theirs!r}"]
    a, b = np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float)
    if a.shape != b.shape:
        return [f"{where}: shape {a.shape} != scikit-learn's {b.shape}"]
    if not np.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True):
        return [f"{where}: {_shown(ours)} != scikit-learn's {_shown(theirs)}"]
    return []


def _shown(value: Any, limit: int = 400) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[:limit] + "..."


def _same_refusal(mine: Exception | None, theirs: Exception | None) -> bool:
    """Whether both refused a call with the same kind of error (a bad value, a bad type)."""
    return any(isinstance(mine, k) and isinstance(theirs, k) for k in (ValueError, TypeError))


def _warnings(outcome: Outcome) -> str:
    return repr(sorted(f"{c.__name__}: {m}" for c, m in outcome.warned))


def _compare(name: str, record: Record, call: str, mine: Outcome, theirs: Outcome) -> None:
    if mine.error is not None or theirs.error is not None:
        record.raised.append(f"{call}: drop-in {mine.shown()}; scikit-learn {theirs.shown()}")
        record.refused += _same_refusal(mine.error, theirs.error)
        return
    record.warned[name] += bool(theirs.warned)
    found = differences(mine.value, theirs.value)
    if mine.warned != theirs.warned:
        found.append(f"warnings: {_warnings(mine)} != scikit-learn's {_warnings(theirs)}")
    record.problems += [f"{call}: {difference}" for difference in found]


def router(name: str, route: str, original: Callable[..., Any]) -> Callable[..., Any]:
    """``original`` answered by the drop-in ``name`` where its input is the drop-in's."""
    ours = getattr(dropins, name)
    signature = inspect.signature(original)
    declined = DECLINED.get(name, lambda arguments: False)

    def routed(*args: Any, **kwargs: Any) -> Any:
        if CURRENT.routing:
            return original(*args, **kwargs)
        try:
            arguments = signature.bind(*args, **kwargs).arguments
        except TypeError:
            return original(*args, **kwargs)
        if not _takes(route, arguments):
            return original(*args, **kwargs)
        record = RECORDS[CURRENT.test]
        if declined(arguments):
            record.declined[name] += 1
            return original(*args, **kwargs)
        record.routed[name] += 1
        CURRENT.routing = True
        try:
            theirs = _answer(original, args, kwargs)
            mine = _answer(ours, args, {**kwargs, "engine": ENGINE})
        finally:
            CURRENT.routing = False
        shown = [*map(_shown, args), *(f"{k}={_shown(v)}" for k, v in kwargs.items())]
        _compare(name, record, f"{name}({', '.join(shown)})", mine, theirs)
        for w in mine.records:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        if _same_refusal(mine.error, theirs.error):
            raise theirs.error  # type: ignore[misc]
        if mine.error is not None:
            raise mine.error
        return mine.value

    # Named as the original, so that pickle finds it by reference (scorers sent to workers).
    return functools.update_wrapper(routed, original)


def patch() -> None:
    """Replace scikit-learn's functions by routers where scikit-learn defines them and in
    ``sklearn.metrics``."""
    import sklearn.metrics

    for module_name, routes in ROUTES.items():
        module = importlib.import_module(module_name)
        for name, route in routes.items():
            original = getattr(module, name)
            routed = router(name, route, original)
            setattr(module, name, routed)
            if getattr(sklearn.metrics, name) is original:
                setattr(sklearn.metrics, name, routed)


def pytest_configure(config: pytest.Config) -> None:
    patch()


@functools.cache
def _mentions_warnings(function: Callable[..., Any]) -> bool:
    try:
        return "warn" in inspect.getsource(function)
    except (OSError, TypeError):
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        function = getattr(item, "function", None)
        RECORDS[item.nodeid].checks_warnings = function is not None and _mentions_warnings(function)
        if item.nodeid in KNOWN_GAPS:
            item.add_marker(pytest.mark.xfail(reason=KNOWN_GAPS[item.nodeid], strict=True))
    if SELECTED is None:
        return
    missing = set(SELECTED) - {item.nodeid for item in items}
    if missing:
        raise pytest.UsageError(
            f"{len(missing)} selected tests not collected: {sorted(missing)[:5]}"
        )
    config.hook.pytest_deselected(items=[item for item in items if item.nodeid not in SELECTED])
    items[:] = [item for item in items if item.nodeid in SELECTED]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    CURRENT.test = item.nodeid
    try:
        return (yield)
    finally:
        CURRENT.test = _OUTSIDE


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    result = yield
    record = RECORDS[item.nodeid]
    if record.problems:
        shown = "\n".join(record.problems[:10])
        raise AssertionError(f"the drop-ins disagree with scikit-learn:\n{shown}")
    if SELECTED is not None and not record.routed:
        raise AssertionError("selected, but no call reached the drop-ins")
    return result


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    record = RECORDS[report.nodeid]
    if report.failed:
        record.outcome = "failed" if report.when == "call" else "error"
    elif hasattr(report, "wasxfail"):
        record.outcome = "xfailed" if report.skipped else "xpassed"
    elif record.outcome == "not run" and (report.skipped or report.when == "call"):
        record.outcome = report.outcome


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = os.environ.get("RANKMETRICS_SKLEARN_RECORD")
    if path:
        tests = {nodeid: record.as_dict() for nodeid, record in RECORDS.items()}
        Path(path).write_text(json.dumps({"engine": ENGINE, "tests": tests}, indent=1))
