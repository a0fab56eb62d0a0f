"""The benchmarks' figures as a record: JSON files under ``benchmarks/results/`` (committed, with
the machine, versions and date, so that a regression shows in a diff), and the tables of the
README and of docs/ regenerated from them between ``<!-- NAME:begin -->`` and
``<!-- NAME:end -->`` markers.
"""

from __future__ import annotations

import json
from pathlib import Path

from measure import environment

RESULTS = Path(__file__).parent / "results"
ROOT = Path(__file__).parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


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
    """Replace the block between the NAME markers by ``text`` in every document holding one."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    found = False
    for document in DOCUMENTS:
        content = document.read_text()
        head, marker, rest = content.partition(begin)
        if not marker:
            continue
        found = True
        tail = rest.split(end, 1)[1]
        document.write_text(head + begin + "\n" + text.strip("\n") + "\n" + end + tail)
    if not found:
        raise SystemExit(f"no document has a {begin} ... {end} block")
