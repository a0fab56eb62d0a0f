"""docs/architecture.md agrees with the code: its layer tables are the import-linter contracts of
pyproject.toml (which `lint-imports` holds in CI), every module of the package has a layer, and
the top of the package holds the front door alone.

``python tests/test_architecture.py`` rewrites the tables from pyproject.toml.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import polars_rankmetrics

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
PACKAGE = Path(polars_rankmetrics.__file__).parent
BLOCK = re.compile(r"(<!-- layers:begin -->\n).*?(<!-- layers:end -->)", re.S)
# The front door: at most this many modules at the top of the package.
MOST_TOP_MODULES = 10


def contracts() -> list[dict]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return config["tool"]["importlinter"]["contracts"]


def _modules(cell: str) -> str:
    return ", ".join(f"`{m.strip()}`" for m in re.split(r"[:|]", cell))


def tables() -> str:
    """Each contract as the docs show it: a layers contract as a table, top layer first (each
    layer imports only from those below it; in a row, `:` and `|` separate independent
    modules), a forbidden contract as a sentence."""
    parts = []
    for contract in contracts():
        parts.append(f"**{contract['name']}**\n")
        if contract["type"] == "layers":
            within = ", ".join(f"`{c}`" for c in contract["containers"])
            parts.append(f"| layer (in {within}) | modules |\n|---|---|")
            layers = contract["layers"]
            parts += [f"| {i + 1} | {_modules(layer)} |" for i, layer in enumerate(layers)]
        else:
            sources = ", ".join(f"`{m}`" for m in contract["source_modules"])
            forbidden = ", ".join(f"`{m}`" for m in contract["forbidden_modules"])
            parts.append(f"{sources} import none of {forbidden}.")
        parts.append("")
    return "\n".join(parts)


def rendered(doc: str) -> str:
    return BLOCK.sub(lambda m: m.group(1) + tables() + m.group(2), doc)


def top_modules() -> list[str]:
    return sorted(p.stem for p in PACKAGE.glob("*.py"))


def test_the_layer_tables_are_the_contracts():
    doc = DOC.read_text()
    assert BLOCK.search(doc), "docs/architecture.md has no <!-- layers:begin/end --> block"
    assert doc == rendered(doc), "run `python tests/test_architecture.py` to rewrite the tables"


def test_every_module_and_package_at_the_top_has_a_layer():
    layers = contracts()[0]["layers"]
    named = {m.strip().split(".")[0] for layer in layers for m in re.split(r"[:|]", layer)}
    found = {p.stem for p in PACKAGE.glob("*.py")} | {
        p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()
    }
    missing = found - named - {"__init__", "__main__"}
    assert not missing, f"modules without a layer in pyproject.toml: {sorted(missing)}"


def test_the_top_of_the_package_is_the_front_door():
    assert len(top_modules()) <= MOST_TOP_MODULES, top_modules()


def test_the_tree_names_every_package_and_top_module():
    doc = DOC.read_text()
    packages = [p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()]
    for name in [*packages, *top_modules()]:
        assert re.search(rf"\b{re.escape(name)}\b", doc), f"docs/architecture.md misses {name}"


if __name__ == "__main__":
    DOC.write_text(rendered(DOC.read_text()))
    sys.exit(0)
