"""Every third-party module the package imports comes from a distribution pyproject.toml declares:
one that arrives only through another dependency can disappear with that dependency's next
release (starlette, httpx, anyio and protobuf once came only through a2a-sdk and mcp)."""

from __future__ import annotations

import ast
import re
import sys
from importlib import metadata
from pathlib import Path

import tomlkit

ROOT = Path(__file__).resolve().parents[1]


def _imported() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "taskfs").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return {m for m in found if m not in sys.stdlib_module_names and m != "taskfs"}


def _declared() -> set[str]:
    project = tomlkit.parse((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = set()
    for requirement in project["dependencies"]:  # type: ignore[union-attr]
        name = re.match(r"[A-Za-z0-9._-]+", str(requirement))
        assert name is not None, requirement
        names.add(_normal(name.group()))
    return names


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_imported_module_is_a_declared_dependency() -> None:
    providers = metadata.packages_distributions()
    declared = _declared()
    undeclared = {}
    for module in sorted(_imported()):
        dists = {_normal(d) for d in providers.get(module, [])}
        assert dists, f"{module} is imported but no installed distribution provides it"
        if not dists & declared:
            undeclared[module] = sorted(dists)
    assert not undeclared, f"imported, not declared in pyproject.toml: {undeclared}"
