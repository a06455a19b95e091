"""What differs between the databases cronplane runs on: one module per database.

Everything that depends on which database is behind a connection is asked of
its :class:`Dialect` (``dialects.of(conn)``, ``Database.backend``), never
decided by comparing names elsewhere:

==================  ===============================  ==================================
                    SQLite (`sqlite.py`)             PostgreSQL (`postgresql.py`)
==================  ===============================  ==================================
engine              one file, WAL, busy timeout      psycopg 3, a pool
write transaction   BEGIN IMMEDIATE                  the default
row locks           none (one writer)                FOR UPDATE SKIP LOCKED
scope locks         none (one writer)                transaction advisory locks
fire path           SQL over temporary tables        COPY text built in Python
fire lanes          one                              several (parallel transactions)
bulk values         driver values                    COPY text, array parameters
clock               the process's                    the database's (DatabaseClock)
change wake-ups     none                             LISTEN/NOTIFY (pooled: a direct URL, or none)
sessions            none to bound or end             idle bound, a dead leader's ended
migrations          batch mode, run when behind      an advisory lock, run by hand
pooler              none                             `?pgbouncer=true`: nothing prepared
==================  ===============================  ==================================

A URL naming any other database (or driver) is refused where a Database is
made, with UnsupportedDatabase: no code path guesses.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection
from sqlalchemy.engine import make_url

from cronplane.errors import UnsupportedDatabase
from cronplane.store.dialects.base import Dialect
from cronplane.store.dialects.postgresql import PostgreSQL
from cronplane.store.dialects.sqlite import SQLite

__all__ = ["Dialect", "PostgreSQL", "SQLite", "by_name", "for_url", "normalize_url", "of"]

_DIALECTS: dict[str, Dialect] = {d.name: d for d in (SQLite(), PostgreSQL())}


def normalize_url(url: str) -> str:
    """Accept `postgresql://` and `postgres://` as psycopg 3 URLs."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def by_name(name: str) -> Dialect:
    """The dialect called `name` (SQLAlchemy's backend name); UnsupportedDatabase otherwise."""
    found = _DIALECTS.get(name)
    if found is None:
        raise _unsupported(name)
    return found


def of(conn: Connection) -> Dialect:
    """The dialect of an open connection."""
    return by_name(conn.dialect.name)


def for_url(url: str) -> Dialect:
    """The dialect of a (normalized) database URL; UnsupportedDatabase for any other."""
    try:
        parsed = make_url(url)
    except Exception as error:  # SQLAlchemy's ArgumentError: not a URL at all
        raise _unsupported(url.partition(":")[0] or url) from error
    dialect = by_name(parsed.get_backend_name())
    if parsed.get_driver_name() != dialect.driver:
        raise _unsupported(f"{parsed.get_backend_name()}+{parsed.get_driver_name()}")
    return dialect


def _unsupported(name: str) -> UnsupportedDatabase:
    supported: Any = sorted(_DIALECTS)
    return UnsupportedDatabase(
        f"unsupported database {name!r}: use {' or '.join(supported)}",
        {"database": name, "supported": supported},
    )
