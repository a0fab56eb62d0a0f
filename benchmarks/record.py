"""The benchmarks' figures as a record: JSON files under ``benchmarks/results/`` (committed, with
the machine, versions and date, so that a regression shows in a diff), and the README's tables
regenerated from them between ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->`` markers.
"""

from __future__ import annotations

import json
from pathlib import Path

from measure import environment

RESULTS = Path(__file__).parent / "results"
README = Path(__file__).parent.parent / "README.md"


def save(name: str, rows: list[dict]) -> Path:
    """Write ``rows`` with the environment they were measured in to ``results/NAME.json``."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps({**environment(), "results": rows}, indent=2) + "\n")
    return path


def load(name: str) -> dict | None:
    """A saved record (its environment and ``results``), or None when none was saved."""
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def measured_in(record: dict) -> str:
    """The one-line provenance printed under a generated table."""
    return (
        f"Measured {record['date']} on {record['cpus']} cores ({record['machine']}), Python "
        f"{record['python']}, polars {record['polars']}, duckdb {record['duckdb']}, "
        f"polars-rankmetrics {record['polars_rankmetrics']}."
    )


def render(name: str, text: str) -> None:
    """Replace the README's block between the NAME markers by ``text``."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    readme = README.read_text()
    head, found, rest = readme.partition(begin)
    if not found or end not in rest:
        raise SystemExit(f"README.md has no {begin} ... {end} block")
    README.write_text(head + begin + "\n" + text.strip("\n") + "\n" + end + rest.split(end, 1)[1])
