"""The core is pure (STYLE rule 1): it imports only itself and the foundation.

Read from the source with `ast`, so an import inside a function counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import cronplane.core

CORE = Path(cronplane.core.__file__).parent
# What core may import from cronplane: itself, and the foundation under it.
ALLOWED = ("cronplane.core", "cronplane.errors", "cronplane.codes")
# I/O and edge libraries: their arrival in core means a rule left its room.
BANNED = ("sqlalchemy", "fastapi", "starlette", "click", "httpx", "psycopg")


def _imported(source: Path) -> list[str]:
    """Every absolute module name `source` imports (`from . import x` resolved)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source.read_text(), str(source))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = "cronplane.core".rsplit(".", node.level - 1)[0]
                base = f"{package}.{node.module}" if node.module else package
            else:
                base = node.module or ""
            names.append(base)
            # `from cronplane import cron` imports the module cronplane.cron.
            names.extend(f"{base}.{alias.name}" for alias in node.names if base == "cronplane")
    return names


def _offends(name: str) -> bool:
    root = name.split(".")[0]
    if root in BANNED:
        return True
    if root != "cronplane" or name == "cronplane":
        return False
    return not any(name == allowed or name.startswith(allowed + ".") for allowed in ALLOWED)


@pytest.mark.parametrize("source", sorted(CORE.glob("*.py")), ids=lambda path: path.name)
def test_core_imports_nothing_above_it(source: Path) -> None:
    offending = [name for name in _imported(source) if _offends(name)]
    assert offending == [], f"core/{source.name} imports {offending}"


def test_the_check_catches_an_upward_import() -> None:
    assert _offends("cronplane.store.schedules")
    assert _offends("cronplane.cron")
    assert _offends("sqlalchemy.sql")
    assert not _offends("cronplane.core.cron_forms")
    assert not _offends("cronplane.errors")
    assert not _offends("jsonschema")
