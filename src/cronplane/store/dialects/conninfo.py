"""PostgreSQL URLs as the connection strings psycopg connects with, outside the engine.

The dispatcher's LISTEN connection is psycopg's own, not the engine's: it must
read a URL exactly as the engine does, or a multi-host URL (a Patroni pair,
`?host=a:5432&host=b:5432&target_session_attrs=read-write`, docs/operations.md)
would name one host, or none that libpq can parse. So the engine dialect's
own reading of hosts and ports makes the connection string here.

CRONPLANE_LISTEN_URL is checked here once, when a process starts: a value that
does not parse, or names another database or driver, is UnsupportedDatabase
(X400009DBUNSP) naming the variable, instead of a listener retrying for ever.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from psycopg.conninfo import make_conninfo
from sqlalchemy.dialects.postgresql.psycopg import dialect
from sqlalchemy.engine import make_url

from cronplane.errors import UnsupportedDatabase
from cronplane.settings import LISTEN_URL_VARIABLE, listen_url_setting
from cronplane.store.dialects import normalize_url
from cronplane.store.dialects.postgresql import POOLER_OPTION

__all__ = ["libpq_conninfo", "listen_conninfo"]


def listen_conninfo(environ: Mapping[str, str] | None = None) -> str | None:
    """CRONPLANE_LISTEN_URL as a connection string (None: unset); UnsupportedDatabase
    naming the variable when it is no PostgreSQL URL."""
    value = listen_url_setting(environ)
    return None if value is None else libpq_conninfo(value, LISTEN_URL_VARIABLE)


def libpq_conninfo(value: str, variable: str) -> str:
    """A PostgreSQL URL as psycopg's connection string, read the way the engine reads it
    (every host of a multi-host URL; cronplane's `pgbouncer` option dropped);
    UnsupportedDatabase naming `variable` for anything else. The message shows the
    scheme only: a URL that does not parse cannot have its password masked."""
    scheme = value.partition("://")[0] if "://" in value else "(no scheme)"
    expected = f"{variable} must be a PostgreSQL URL (postgresql://user@host:port/database)"
    detail = {"field": variable, "database": scheme, "supported": ["postgresql"]}
    try:
        url = make_url(normalize_url(value))
    except Exception as error:  # ArgumentError, or ValueError for a port that is no number
        raise UnsupportedDatabase(f"{expected}; {scheme}://… does not parse", detail) from error
    if (url.get_backend_name(), url.get_driver_name()) != ("postgresql", "psycopg"):
        raise UnsupportedDatabase(f"{expected}, not {scheme}://…", detail)
    make_dialect: Any = dialect  # SQLAlchemy's dialect classes are untyped
    try:
        _, options = make_dialect().create_connect_args(
            url.difference_update_query([POOLER_OPTION])
        )
        return make_conninfo("", **options)
    except Exception as error:  # an option libpq does not know, host forms mixed
        reason = (str(error).splitlines() or [type(error).__name__])[0]
        raise UnsupportedDatabase(f"{expected}; libpq refuses it: {reason}", detail) from error
