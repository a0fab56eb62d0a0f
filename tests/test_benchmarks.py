"""Every script of ``benchmarks/`` runs in its ``--small`` mode: tiny data in a temporary
directory, every step it times (the children, the peers), no record written and no document or
plot regenerated, so that a change to the package cannot break a benchmark unnoticed. The
scripts are found by listing the directory (a module with a ``__main__`` block is a script): a
new script without a small mode fails here. Each runs in this process (``main()`` with its
arguments in ``sys.argv``), its children as it starts them."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

# Subprocesses and seconds each: left out of the quick subset (conftest.py), run by CI.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).parent.parent
BENCHMARKS = ROOT / "benchmarks"
SCRIPTS = sorted(
    path for path in BENCHMARKS.glob("*.py") if 'if __name__ == "__main__":' in path.read_text()
)


def generated() -> dict[Path, bytes]:
    """What only a full run may change: the records, and the documents and plots made from
    them."""
    paths = [
        *(BENCHMARKS / "results").glob("*.json"),
        *BENCHMARKS.glob("*.png"),
        ROOT / "README.md",
        *(ROOT / "docs").glob("*.md"),
    ]
    return {path: path.read_bytes() for path in paths}


def test_scripts_are_found():
    names = {path.name for path in SCRIPTS}
    assert {"speed.py", "floors.py", "make_data.py", "pipelines.py"} <= names
    assert not {"measure.py", "record.py"} & names  # helpers, without a __main__ block


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
# ranx's nDCG casts its qrels' integer type through numba, which warns (the peers' code) in
# the name of the compiled file, not of a module.
@pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaTypeSafetyWarning")
def test_small_mode(script: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # the scripts import their helpers by name
    # The children that run the rankmetrics command find it beside this interpreter.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(sys, "argv", [str(script), "--small"])
    before = generated()
    spec = importlib.util.spec_from_file_location(f"benchmark_{script.stem}", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main()
    printed = capsys.readouterr()
    assert (printed.out + printed.err).strip()  # what it measured
    changed = [str(path.relative_to(ROOT)) for path, text in before.items()
               if not path.exists() or path.read_bytes() != text]  # fmt: skip
    assert not changed, f"--small changed {changed}"
