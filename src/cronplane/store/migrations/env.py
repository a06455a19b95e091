"""Alembic environment: always run on a connection handed in by Database.upgrade()."""

from __future__ import annotations

from alembic import context

from cronplane.store import dialects
from cronplane.store.tables import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through cronplane.store.database.Database.upgrade()")

context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=dialects.of(connection).batch_migrations,
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
