"""What a comparison of two environments reads (issue 38, service.promotion): the stacks
a tenant has schedules of in either environment. The rows themselves are
`store.schedules.in_scope`'s, one (stack, environment) at a time."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, select

from cronplane.store.tables import schedules


def stacks_of(conn: Connection, tenant: str, environments: Sequence[str]) -> list[str]:
    """The stacks with a schedule of the tenant in any of these environments, sorted."""
    query = (
        select(schedules.c.stack)
        .where(schedules.c.tenant == tenant, schedules.c.environment.in_(list(environments)))
        .distinct()
        .order_by(schedules.c.stack)
    )
    return [str(stack) for stack in conn.execute(query).scalars()]
