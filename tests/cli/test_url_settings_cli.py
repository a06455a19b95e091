"""A CRONPLANE_LISTEN_URL that is not a PostgreSQL URL, or does not parse, stops the
long-running processes before they start (issue 40): exit 2, X400009DBUNSP naming the
variable, no password echoed, no database file made. So does a CRONPLANE_READ_URL that
names no database cronplane runs on."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import Cronplane

BAD = [
    ("mysql://cron:hunter2@127.0.0.1/cron", "not mysql://"),
    ("sqlite:///listen.db", "not sqlite://"),
    ("not a url", "does not parse"),
    # A port that is no number: SQLAlchemy's parser refuses it.
    ("postgresql://cron:hunter2@127.0.0.1:five/cron", "does not parse"),
    # An option libpq does not know (the listener would retry it forever).
    ("postgresql://cron@127.0.0.1/cron?colour=blue", 'invalid connection option "colour"'),
]


@pytest.mark.parametrize(("url", "says"), BAD, ids=[url for url, _ in BAD])
@pytest.mark.parametrize(
    "command",
    [("serve", "--port", "1"), ("dispatcher",), ("dispatcher", "--once"), ("worker", "--once")],
    ids=" ".join,
)
def test_a_bad_listen_url_refuses_to_start(
    cronplane: Cronplane, tmp_path: Path, url: str, says: str, command: tuple[str, ...]
) -> None:
    # Unfixed, `serve` and `dispatcher` would run until the timeout instead of refusing.
    done = cronplane(*command, CRONPLANE_LISTEN_URL=url, timeout=60)
    assert done.code == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith("X400009DBUNSP: CRONPLANE_LISTEN_URL must be a PostgreSQL URL")
    assert says in done.stderr
    assert "hunter2" not in done.stderr
    assert not (tmp_path / "cli.db").exists()  # refused before anything was opened


def test_a_postgresql_listen_url_lets_a_sqlite_node_run(cronplane: Cronplane) -> None:
    """The check refuses only what cannot be a PostgreSQL URL (SQLite never LISTENs)."""
    url = "postgresql://cron@127.0.0.1:1/cron?host=127.0.0.1:2&target_session_attrs=read-write"
    done = cronplane("dispatcher", "--once", CRONPLANE_LISTEN_URL=url)
    assert done.code == 0, done.stderr
    assert done.stdout.startswith("leader=True")


def test_a_bad_read_url_refuses_to_start_serve(cronplane: Cronplane, tmp_path: Path) -> None:
    done = cronplane("serve", "--port", "1", CRONPLANE_READ_URL="mysql://u:hunter2@h/d", timeout=60)
    assert done.code == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith("X400009DBUNSP: CRONPLANE_READ_URL: unsupported database 'mysql'")
    assert "hunter2" not in done.stderr
    assert not (tmp_path / "cli.db").exists()
