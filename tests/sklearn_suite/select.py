"""Write the selections of scikit-learn tests that ``tests/test_sklearn_suite.py`` runs.

Run from ``tests/``: ``python -m sklearn_suite.select``. It runs every test of
:data:`~sklearn_suite.run.TEST_FILES` with the plugin on the Polars engine and keeps those in
which at least one call reached the drop-ins (a test that routed nothing covers nothing), each
with its number of routed calls:

- ``selected.txt``: all of them, for the Polars engine;
- ``selected_duckdb.txt``: the DuckDB engine's share, within its time budget (a DuckDB
  evaluation costs ~0.1 s, five times Polars'): the warning tests of test_classification.py and
  test_ranking.py (whose code mentions warnings: each engine counts what is ill-defined in its
  own way) of at most ``DUCKDB_MAX_WARNING_CALLS`` routed calls; then, for each pair of a test
  function and a drop-in it calls, the test with the fewest routed calls (at most
  ``DUCKDB_MAX_CALLS``) that covers it; then, for a drop-in still without a test, its cheapest.
"""

from __future__ import annotations

import sys
import tempfile
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

from sklearn_suite.run import SELECTIONS, TEST_FILES, run

DUCKDB_MAX_WARNING_CALLS, DUCKDB_MAX_CALLS = 30, 6

_HEADER = (
    "{what} Written by `python -m sklearn_suite.select` (run from tests/) from a run of every "
    "test of {files} (scikit-learn {version}) with tests/sklearn_suite/plugin.py: the tests in "
    "which at least one call reached polars_rankmetrics.sklearn{rule}. Each line: a node id, "
    "then the number of calls the test routes. Regenerate after changing the routes or "
    "scikit-learn."
)


def routed(test: dict[str, Any]) -> int:
    return sum(test["routed"].values())


def duckdb_share(tests: dict[str, dict[str, Any]]) -> list[str]:
    """The DuckDB engine's selection (see the module's docstring)."""

    def pairs(nodeid: str) -> set[tuple[str, str]]:
        return {(nodeid.split("[")[0], name) for name in tests[nodeid]["routed"]}

    cheapest = sorted(tests, key=lambda n: (routed(tests[n]), n))
    chosen = [
        n for n in tests
        if tests[n]["checks_warnings"] and "test_common.py" not in n
        and routed(tests[n]) <= DUCKDB_MAX_WARNING_CALLS
    ]  # fmt: skip
    covered = set().union(*map(pairs, chosen))
    for nodeid in cheapest:
        if routed(tests[nodeid]) <= DUCKDB_MAX_CALLS and not pairs(nodeid) <= covered:
            chosen.append(nodeid)
            covered |= pairs(nodeid)
    for name in {name for test in tests.values() for name in test["routed"]}:
        if all(name not in tests[n]["routed"] for n in chosen):
            chosen.append(next(n for n in cheapest if name in tests[n]["routed"]))
    return [nodeid for nodeid in tests if nodeid in set(chosen)]


def write(path: Path, what: str, rule: str, nodeids: list[str], tests: dict[str, Any]) -> None:
    import sklearn

    text = _HEADER.format(
        what=what, files=", ".join(Path(f).name for f in TEST_FILES), version=sklearn.__version__,
        rule=rule,
    )  # fmt: skip
    total = sum(routed(tests[n]) for n in nodeids)
    header = textwrap.fill(text, 98, initial_indent="# ", subsequent_indent="# ")
    header += f"\n# tests: {len(nodeids)}, routed calls: {total}\n"
    lines = [f"{n}  # {routed(tests[n])}" for n in nodeids]
    path.write_text(header + "\n".join(lines) + "\n")


def main() -> None:
    with tempfile.TemporaryDirectory() as workdir:
        record = run("polars", None, Path(workdir))
    tests = {n: t for n, t in record["tests"].items() if routed(t) and "::" in n}
    write(SELECTIONS["polars"], "The scikit-learn tests run on the Polars engine.", "",
          list(tests), tests)  # fmt: skip
    share = duckdb_share(tests)
    write(
        SELECTIONS["duckdb"], "The scikit-learn tests run on the DuckDB engine.",
        ", then the DuckDB engine's share of them (as sklearn_suite/select.py says)", share,
        tests,
    )  # fmt: skip
    outcomes = Counter(t["outcome"] for t in tests.values())
    print(
        f"{len(tests)} tests selected ({dict(outcomes)}), {len(share)} on DuckDB", file=sys.stderr
    )


if __name__ == "__main__":
    main()
