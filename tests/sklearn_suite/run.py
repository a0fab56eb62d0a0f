"""Run scikit-learn's metric tests (shipped in the installed wheel) with the plugin, in a
subprocess, and read its record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import sklearn

HERE = Path(__file__).parent
SITE = Path(sklearn.__file__).parent.parent
# The selections of select.py, by engine, and the tests that fail by a deliberate difference.
SELECTIONS = {"polars": HERE / "selected.txt", "duckdb": HERE / "selected_duckdb.txt"}
KNOWN_GAPS = HERE / "known_gaps.txt"
TEST_FILES = [
    "sklearn/metrics/tests/test_classification.py",
    "sklearn/metrics/tests/test_common.py",
    "sklearn/metrics/tests/test_ranking.py",
]


def node_ids(path: Path | str) -> dict[str, str]:
    """The node ids of a list file (one a line, ``#`` starts a comment), with their comments."""
    ids = {}
    for line in Path(path).read_text().splitlines():
        nodeid, _, comment = line.partition("#")
        if nodeid.strip():
            ids[nodeid.strip()] = comment.strip()
    return ids


def run(engine: str, selection: Path | None, workdir: Path) -> dict[str, Any]:
    """The plugin's record of the tests in ``selection`` (None: every test of
    :data:`TEST_FILES`) on ``engine``, with the run's ``returncode`` and the ``output``'s end."""
    record = workdir / f"record-{engine}.json"
    paths = [str(HERE.parent), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")},
        "PYTHONPATH": os.pathsep.join(paths),
        "PYTHONDONTWRITEBYTECODE": "1",  # nothing written into the installed scikit-learn
        "RANKMETRICS_SKLEARN_ENGINE": engine,
        "RANKMETRICS_SKLEARN_RECORD": str(record),
    }
    if selection is not None:
        env["RANKMETRICS_SKLEARN_SELECT"] = str(selection)
    command = [
        sys.executable, "-m", "pytest", "-p", "sklearn_suite.plugin", "-p", "no:cacheprovider",
        "-q", "--no-header", f"--rootdir={SITE}", *(str(SITE / f) for f in TEST_FILES),
    ]  # fmt: skip
    done = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True)
    output = (done.stdout + done.stderr)[-4000:]
    if not record.exists():
        raise RuntimeError(f"the scikit-learn suite did not run ({done.returncode}):\n{output}")
    return json.loads(record.read_text()) | {"returncode": done.returncode, "output": output}
