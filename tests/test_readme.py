"""The README's examples run as written."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def test_readme_starts_with_the_two_commands():
    first = blocks("bash")[0].strip().splitlines()
    assert first == [
        "pip install . && rankmetrics evaluate data/example.parquet --by model",
        'pip install ".[test]" && pytest',
    ]


@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_python_examples_run(index, monkeypatch):
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    for code in blocks("python")[: index + 1]:  # later blocks reuse the names of earlier ones
        exec(compile(code, "README.md", "exec"), namespace)


@pytest.mark.skipif(
    shutil.which("duckdb") is None,
    reason="the duckdb command line (test extra duckdb-cli) is not installed",
)
def test_sql_alone_example_runs_in_the_duckdb_command_line(tmp_path):
    script = next(b for b in blocks("bash") if "rankmetrics sql" in b)
    os.symlink(ROOT / "data", tmp_path / "data")
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "candidate" in done.stdout and "baseline" in done.stdout and "ndcg" in done.stdout
