"""Request and response models of tenants and their quotas (platform tokens only).

The base models are `api.schemas`'; these are apart to keep one module per noun.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, Field

from cronplane.api.schemas import Request, Response
from cronplane.core.quotas import MAX_LIMIT


def _json_number(value: object) -> object:
    """Refuse what lax validation would turn into a number: `false`/`true` (0/1) and numeric
    strings (`"5"`); an integral float (`3.0`) stays, and becomes 3."""
    if isinstance(value, bool | str):
        raise ValueError("must be a whole number or null")
    return value


# The bounds core.quotas.checked_limits enforces, stated in the OpenAPI document too.
QuotaLimit = Annotated[
    Annotated[int, Field(ge=0, le=MAX_LIMIT)] | None, BeforeValidator(_json_number)
]
IntervalLimit = Annotated[
    Annotated[int, Field(ge=1, le=MAX_LIMIT)] | None, BeforeValidator(_json_number)
]


class QuotaBody(Request):
    """A tenant's own limits (core.quotas). PUT: every limit, an absent one cleared back to
    the platform's default. PATCH: only those given; null clears one."""

    max_schedules: QuotaLimit = None
    max_jobs: QuotaLimit = None
    min_interval: IntervalLimit = None
    max_fires_per_minute: QuotaLimit = None
    max_queued: QuotaLimit = None


class QuotaOut(Response):
    """A tenant's effective limits; null: unlimited (min_interval null: 1 s)."""

    max_schedules: int | None
    max_jobs: int | None
    min_interval: int | None
    max_fires_per_minute: int | None
    max_queued: int | None


class UsageCounts(Response):
    """What a tenant holds and fires now."""

    schedules: int
    jobs: int
    fires_last_hour: int
    queued: int


class TenantOut(Response):
    """A tenant's usage against its quota, and which limits its own row sets."""

    tenant: str
    usage: UsageCounts
    quota: QuotaOut
    overrides: list[str]


class TenantList(Response):
    """Every known tenant (a schedule, a job or a quota row), by name."""

    items: list[TenantOut]
