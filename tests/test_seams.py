"""The seams of docs/architecture.md, kept by CI (issue 34), each detector proven on a plant.

- the layers (edges → service → store → core; the core pure): import-linter's
  contracts in pyproject.toml, run through the installed `lint-imports`;
- no database backend's name compared outside `store/dialects/` (a decision
  by name belongs to a Dialect's attribute);
- SQL only in `store/` (and in the one importer that reads another product's
  database);
- PostgreSQL-only SQL (its functions, COPY, arrays, casts, session settings)
  only in `store/dialects/` and the modules named for it (`postgresql.py`);
- no module over MAX_LINES.

Where main does not hold yet, a ratchet lists the offenders with their size
today: the list may only shrink, and an offender may not grow.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import cronplane

ROOT = Path(__file__).resolve().parent.parent
SRC = Path(cronplane.__file__).parent
MAX_LINES = 400
BACKENDS = {"sqlite", "postgresql", "postgres", "mysql", "mariadb"}
# Building statements and running them: the store's vocabulary.
SQL_NAMES = {"select", "insert", "update", "delete", "text"}
SQL_CALLS = {"execute", "exec_driver_sql", "scalar", "scalars"}
# What only PostgreSQL reads, in a string (docstrings aside).
POSTGRES_ONLY = re.compile(
    r"\bpg_[a-z_]+\s*\(|\bCOPY\b.*\bFROM STDIN\b|\bunnest\s*\(|=\s*ANY\s*\("
    r"|\bset_config\s*\(|\bclock_timestamp\s*\(|\bhashtextextended\s*\("
    r"|\bFILTER\s*\(\s*WHERE|\bSKIP LOCKED\b|\bSET LOCAL\b|\bLISTEN\s+\w"
    r"|::(?:text|uuid|int[248]?|bigint|timestamptz|jsonb?|bool(?:ean)?|regclass)\b",
    re.IGNORECASE,
)

# What main holds today and may not make worse (issue 34 takes them down).
LONG_MODULES: dict[str, int] = {}
SQL_ELSEWHERE = {
    # Reads another product's database (django-celery-beat's tables), not ours.
    "importers/django_celery_beat_source.py",
}


def _modules() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def _name(path: Path) -> str:
    return path.relative_to(SRC).as_posix()


# -- the detectors ----------------------------------------------------------------


def backend_comparisons(source: str) -> list[int]:
    """Lines where a backend's name is compared (==, !=, in, a match case)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for operand in operands:
                values = (
                    operand.elts
                    if isinstance(operand, ast.Tuple | ast.List | ast.Set)
                    else [operand]
                )
                if any(
                    isinstance(v, ast.Constant) and isinstance(v.value, str) and v.value in BACKENDS
                    for v in values
                ):
                    found.append(node.lineno)
        elif isinstance(node, ast.MatchValue):
            value = node.value
            if isinstance(value, ast.Constant) and value.value in BACKENDS:
                found.append(node.lineno)
    return found


def sql_uses(source: str) -> list[int]:
    """Lines that import SQLAlchemy's statement builders or run a statement."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sqlalchemy"):
            if any(alias.name in SQL_NAMES for alias in node.names):
                found.append(node.lineno)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in SQL_CALLS
            and node.args
        ):
            found.append(node.lineno)
    return found


def postgres_sql(source: str) -> list[int]:
    """Lines of strings (docstrings aside) written in SQL only PostgreSQL reads."""
    tree = ast.parse(source)
    documented = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, documented) and node.body and isinstance(node.body[0], ast.Expr)
    }

    def text_of(node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return None if id(node) in docstrings else node.value
        if isinstance(node, ast.JoinedStr):  # an f-string: its literal parts around {…}
            return "{}".join(v.value if isinstance(v, ast.Constant) else "" for v in node.values)
        return None

    return sorted(
        {
            node.lineno
            for node in ast.walk(tree)
            if (found := text_of(node)) is not None and POSTGRES_ONLY.search(found)
        }
    )


def test_the_detectors_find_their_planted_examples() -> None:
    planted = textwrap.dedent(
        """
        from sqlalchemy import select, func
        if conn.dialect.name == "postgresql":
            pass
        ok = name in ("sqlite", "other")
        match backend:
            case "mysql":
                pass
        conn.execute(select(table))
        """
    )
    assert backend_comparisons(planted) == [3, 5, 7]
    assert sql_uses(planted) == [2, 9]
    clean = "x = {'postgresql_where': 1}\nvariant = JSON().with_variant(JSONB(), 'postgresql')\n"
    assert backend_comparisons(clean) == [] and sql_uses(clean) == []
    postgres = textwrap.dedent(
        '''
        """A docstring may say pg_terminate_backend(pid) and COPY t FROM STDIN."""
        a = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
        b = f"COPY {name} (a, b) FROM STDIN"
        c = "UPDATE t SET x = v.x FROM unnest(%s) AS v(x)"
        d = "SELECT id::text FROM t WHERE id = ANY(%s)"
        net = "::ffff:0:0/96"
        e = "SELECT 1 FROM t WHERE a = :a"
        '''
    )
    assert postgres_sql(postgres) == [3, 4, 5, 6]


# -- the rules -------------------------------------------------------------------


def test_no_backend_name_is_compared_outside_the_dialects() -> None:
    offenders = {
        _name(path): lines
        for path in _modules()
        if not _name(path).startswith(("store/dialects/", "store/migrations/"))
        and not _name(path).startswith("importers/")  # foreign databases' own URLs
        and (lines := backend_comparisons(path.read_text()))
    }
    assert offenders == {}, f"ask the Dialect, not its name: {offenders}"


def test_sql_lives_in_the_store() -> None:
    offenders = {
        _name(path)
        for path in _modules()
        if not _name(path).startswith("store/") and sql_uses(path.read_text())
    }
    assert offenders <= SQL_ELSEWHERE, f"SQL outside store/: {sorted(offenders - SQL_ELSEWHERE)}"
    gone = SQL_ELSEWHERE - offenders
    assert not gone, f"moved into store/: take {sorted(gone)} off SQL_ELSEWHERE"


def test_postgresql_only_sql_lives_with_its_dialect() -> None:
    offenders = {
        _name(path): lines
        for path in _modules()
        if not _name(path).startswith(("store/dialects/", "store/migrations/"))
        and path.name != "postgresql.py"
        and (lines := postgres_sql(path.read_text()))
    }
    assert offenders == {}, f"PostgreSQL's SQL belongs to store/dialects/: {offenders}"


def test_no_module_grows_past_the_limit() -> None:
    sizes = {_name(p): len(p.read_text().splitlines()) for p in _modules()}
    over = {name: n for name, n in sizes.items() if n > MAX_LINES}
    new = {name: n for name, n in over.items() if name not in LONG_MODULES}
    assert new == {}, f"modules over {MAX_LINES} lines: split them"
    grown = {name: n for name, n in over.items() if n > LONG_MODULES[name]}
    assert grown == {}, f"over-long modules may only shrink: {grown}"
    fixed = sorted(set(LONG_MODULES) - set(over))
    assert not fixed, f"now within {MAX_LINES} lines: take {fixed} off LONG_MODULES"


def _lint_imports(config: Path, cwd: Path, env: dict[str, str] | None = None) -> Any:
    """The installed `lint-imports` run on `config` in `cwd`."""
    found = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert found, "lint-imports is not installed (the test extra installs import-linter)"
    return subprocess.run(
        [found, str(config)], capture_output=True, text=True, cwd=cwd, env=env, check=False
    )


def test_the_layers_hold() -> None:
    done = _lint_imports(ROOT / "pyproject.toml", ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_the_layers_contract_catches_a_planted_upward_import(tmp_path: Path) -> None:
    package = tmp_path / "planted"
    for part in ("", "core", "store"):
        (package / part).mkdir(exist_ok=True)
        (package / part / "__init__.py").write_text("")
    (package / "core" / "rules.py").write_text("from planted.store import rows\n")
    (package / "store" / "rows.py").write_text("X = 1\n")
    config = tmp_path / "contracts.toml"
    config.write_text(
        '[tool.importlinter]\nroot_package = "planted"\n\n'
        '[[tool.importlinter.contracts]]\nname = "store above core"\ntype = "layers"\n'
        'layers = ["planted.store", "planted.core"]\n'
    )
    done = _lint_imports(config, tmp_path, {**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "planted.core.rules -> planted.store.rows" in done.stdout


def test_the_ratchet_names_real_modules() -> None:
    assert [name for name in LONG_MODULES if not (SRC / name).is_file()] == []
