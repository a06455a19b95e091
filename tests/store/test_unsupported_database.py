"""A database cronplane does not run on is refused when a Database is made, coded."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from cronplane.errors import UnsupportedDatabase
from cronplane.exits import EXIT_INVALID
from cronplane.store import dialects
from cronplane.store.database import Database


@pytest.mark.parametrize(
    "url",
    [
        "mysql://user@127.0.0.1/cron",
        "oracle://user@127.0.0.1/cron",
        # A known database through a driver cronplane does not use.
        "postgresql+psycopg2://postgres@127.0.0.1/cron",
        "sqlite+pysqlcipher:///cron.db",
        "not a url",
    ],
)
def test_unsupported_url_is_refused_with_its_code(url: str) -> None:
    with pytest.raises(UnsupportedDatabase) as refused:
        Database(url)
    assert refused.value.code.text == "X400009DBUNSP"
    assert refused.value.exit_code == EXIT_INVALID
    assert refused.value.detail["supported"] == ["postgresql", "sqlite"]


def test_unknown_dialect_name_is_refused() -> None:
    with pytest.raises(UnsupportedDatabase):
        dialects.by_name("mssql")


def test_supported_urls_pick_their_dialect() -> None:
    assert dialects.for_url("sqlite:///x.db").name == "sqlite"
    assert dialects.for_url(dialects.normalize_url("postgres://u@h/d")).name == "postgresql"


def test_cli_exits_with_the_invalid_input_code() -> None:
    env = {**os.environ, "CRONPLANE_DATABASE_URL": "mysql://user@127.0.0.1/cron"}
    done = subprocess.run(
        [sys.executable, "-m", "cronplane", "db", "current"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == EXIT_INVALID, done.stderr
    assert done.stderr.startswith("X400009DBUNSP: unsupported database 'mysql'")
