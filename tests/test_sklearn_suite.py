"""scikit-learn's own tests, answered by polars_rankmetrics.sklearn on each engine.

The multilabel tests shipped in the installed scikit-learn wheel run in a subprocess with
``sklearn_suite/plugin.py``, which routes scikit-learn's functions to the drop-ins and fails a
test where a routed call's value or warnings differ from scikit-learn's on the same call. Every
selected test must pass (those of ``known_gaps.txt`` fail, as expected), each must route calls,
and as many calls as when the selection was made must reach the drop-ins.
"""

import pytest
from sklearn_suite.run import KNOWN_GAPS, SELECTIONS, node_ids, run

pytestmark = pytest.mark.slow


def _failures(tests: dict, expected: dict[str, str]) -> str:
    lines = []
    for nodeid, test in tests.items():
        if test["outcome"] != expected[nodeid]:
            lines.append(f"{nodeid}: {test['outcome']}")
            lines += [f"    {line}" for line in (test["problems"] + test["raised"])[:3]]
    return "\n".join(lines)


@pytest.mark.parametrize("engine", sorted(SELECTIONS))
def test_scikit_learn_tests_pass_on_the_drop_ins(engine, tmp_path):
    selected = node_ids(SELECTIONS[engine])
    gaps = node_ids(KNOWN_GAPS)
    record = run(engine, SELECTIONS[engine], tmp_path)
    tests = {nodeid: test for nodeid, test in record["tests"].items() if nodeid in selected}
    assert set(tests) == set(selected), record["output"]
    expected = {nodeid: "xfailed" if nodeid in gaps else "passed" for nodeid in selected}
    assert all(t["outcome"] == expected[n] for n, t in tests.items()), _failures(tests, expected)
    routed = {nodeid: sum(test["routed"].values()) for nodeid, test in tests.items()}
    assert all(routed.values())
    frozen = sum(int(calls) for calls in selected.values())
    assert sum(routed.values()) >= 0.95 * frozen, (sum(routed.values()), frozen)
