"""The tables' shared metadata: the naming convention and the event id type."""

from __future__ import annotations

from sqlalchemy import BigInteger, Integer, MetaData

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING)

# Event ids grow forever: BIGINT on PostgreSQL, INTEGER (rowid alias) on SQLite.
EventId = BigInteger().with_variant(Integer(), "sqlite")
