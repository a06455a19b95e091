"""Business calendars (core.calendars): the days a schedule that excludes one does not run on."""

from __future__ import annotations

from sqlalchemy import Column, Integer, String, Table, UniqueConstraint, Uuid

from cronplane.store.tables.base import metadata
from cronplane.store.types import JSONDocument, UTCDateTime

calendars = Table(
    "calendars",
    metadata,
    Column("id", Uuid, primary_key=True),
    Column("tenant", String(64), nullable=False),
    Column("name", String(64), nullable=False),
    # Weekday names ("sat", "sun") and ISO dates, as lists; holidays "GB-ENG" or NULL.
    Column("weekly", JSONDocument, nullable=False),
    Column("dates", JSONDocument, nullable=False),
    Column("holidays", String(16), nullable=True),
    Column("description", String(500), nullable=True),
    # Bumped by every change, as a schedule's: an edit names the revision it read.
    Column("revision", Integer, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("updated_by", String(128), nullable=False),
    UniqueConstraint("tenant", "name", name="uq_calendars_key"),
)
