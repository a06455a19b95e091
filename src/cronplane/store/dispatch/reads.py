"""The dispatcher's reads: when the next row is due, how many are, a batch's rows and lookups."""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from typing import Any, NamedTuple

from sqlalchemy import (
    ColumnElement,
    Connection,
    Integer,
    String,
    Text,
    TextClause,
    bindparam,
    case,
    cast,
    func,
    literal,
    literal_column,
    null,
    select,
    text,
    true,
    tuple_,
    type_coerce,
)
from sqlalchemy.dialects.postgresql import ARRAY

from cronplane.core.firing import POLICY_FIELDS
from cronplane.store import dialects
from cronplane.store.dispatch.fair import Fairness, Offer, Taken, fill
from cronplane.store.tables import STATE_FIELDS, jobs, schedule_state, schedules


class DueWhen(NamedTuple):
    """When a due row is due, and what finds its next occurrence."""

    # As stored (no per-row type processing): written back unchanged as the
    # compare-and-set value.
    next_run: Any
    cron: str
    timezone: str
    dst_gap: str
    dst_repeat: str | None
    # None when it excludes no calendar, else "tenant on_excluded [names as JSON]"
    # (EXCLUSION_SQL): the calendars are the tenant's, by name.
    exclusion: str | None


# A due row's decision inputs: when it is due, then its policy columns
# (core.firing.POLICY_FIELDS). Rows that share them share one decision
# (planner.Planner.plan). Both fire paths read them by these names:
# PostgreSQL selects them after the written columns (Due), SQLite packs
# them into one `json_array` key (sqlite.py).
INPUT_FIELDS: tuple[str, ...] = DueWhen._fields + POLICY_FIELDS
# The decision inputs that are not a column of their own, as SQL both databases read.
DERIVED_INPUTS: dict[str, str] = {
    "runs_left": "max_runs - run_count",
    "exclusion": "CASE WHEN s.exclude = '[]' THEN NULL "
    "ELSE s.tenant || ' ' || s.on_excluded || ' ' || s.exclude END",
}


class Due(NamedTuple):
    """PostgreSQL: one due row, decoded once (`decode`) from the select's columns
    (DUE_FIELDS): those copied into items and events, then the decision inputs."""

    id: str  # as text, which COPY takes as it is (a UUID object is formatted per row)
    tenant: str
    stack: str
    environment: str
    name: str
    job: str
    # The payload is copied into the item as stored: no decode/encode per fire.
    payload: str
    timeout: int | None  # the row's own; None: the job's
    row_key: str  # what the batch's UPDATEs find the row by (the id again)
    # The decision inputs (INPUT_FIELDS, in order), as the planner's key holds them:
    # read by name only in `core.firing.DueRow`, so a new one changes nothing here.
    inputs: tuple[Any, ...]

    @property
    def overlap(self) -> str:
        """Its overlap policy (which rows need their active items counted)."""
        overlap: str = self.inputs[_OVERLAP_AT]
        return overlap

    @property
    def exclusion(self) -> str | None:
        """Its calendars' exclusion (DueWhen.exclusion)."""
        exclusion: str | None = self.inputs[_EXCLUSION_AT]
        return exclusion


_WRITTEN = len(Due._fields) - 1
# A PostgreSQL due row's columns as selected: the written ones, then the decision inputs.
DUE_FIELDS: tuple[str, ...] = (*Due._fields[:_WRITTEN], *INPUT_FIELDS)
_OVERLAP_AT = INPUT_FIELDS.index("overlap")
_EXCLUSION_AT = INPUT_FIELDS.index("exclusion")


def decode(row: Any) -> Due:
    """A selected row (DUE_FIELDS) as a Due."""
    return Due._make((*row[:_WRITTEN], tuple(row[_WRITTEN:])))


def _due_columns(main: Any, state: Any) -> tuple[Any, ...]:
    """A due row's columns (DUE_FIELDS) read from `main` (schedules or an alias of
    it) and `state` (schedule_state or an alias), joined on id."""
    # Where a due row's columns are not the stored column itself.
    expressions: dict[str, Any] = {
        "id": cast(state.c.id, Text),
        "payload": cast(main.c.payload, Text),
        "row_key": cast(state.c.id, Text),
        "next_run": type_coerce(state.c.next_run, String),
        "runs_left": main.c.max_runs - state.c.run_count,
        # Constants as SQL text, not parameters: the statement stays one text (and
        # its plan one plan) whatever the batch.
        "exclusion": case(
            (cast(main.c.exclude, Text) == literal_column("'[]'"), null()),
            else_=func.concat_ws(
                literal_column("' '"), main.c.tenant, main.c.on_excluded, cast(main.c.exclude, Text)
            ),
        ),
    }
    return tuple(
        (
            expressions[name]
            if name in expressions
            else (state if name in STATE_FIELDS else main).c[name]
        ).label(name)
        for name in DUE_FIELDS
    )


_DUE_COLUMNS = _due_columns(schedules, schedule_state)


def _due(now: datetime) -> tuple[ColumnElement[bool], ...]:
    """What "due" means (the partial index ix_schedule_state_due answers it)."""
    return (schedule_state.c.enabled, schedule_state.c.next_run <= now)


def earliest_next_run(conn: Connection) -> datetime | None:
    """The earliest next_run of an enabled schedule (an index lookup)."""
    value: datetime | None = conn.execute(
        select(func.min(schedule_state.c.next_run)).where(schedule_state.c.enabled)
    ).scalar()
    return value


def count_due(conn: Connection, now: datetime, *, cap: int | None = None) -> int:
    """How many enabled rows are due at `now`, counting no further than `cap` (if given)."""
    due = select(literal(1)).where(*_due(now)).limit(cap).subquery()
    return int(conn.execute(select(func.count()).select_from(due)).scalar_one())


def due_rows(conn: Connection, now: datetime, limit: int) -> list[Due]:
    """PostgreSQL: up to `limit` due rows in next_run order (`due_query`), decoded."""
    return list(map(decode, conn.execute(due_query(now, limit))))


def due_query(now: datetime, limit: int) -> Any:
    """PostgreSQL: enabled rows with next_run <= now, earliest first, locked (SKIP LOCKED).

    A range scan of ix_schedule_state_due, each row's schedule by its key;
    both rows locked (an edit locks `schedules`, a fire writes the state).
    Each row is DUE_FIELDS.
    """
    query = (
        select(*_DUE_COLUMNS)
        .select_from(schedule_state.join(schedules, schedules.c.id == schedule_state.c.id))
        .where(*_due(now))
        .order_by(schedule_state.c.next_run)
        .limit(limit)
    )
    # A row being edited is skipped, not waited for: the next tick sees it.
    return query.with_for_update(skip_locked=True, of=[schedule_state, schedules])


# The tenants with due rows, earliest due first: a skip scan of
# ix_schedule_state_tenant_due (one `min(tenant) > t` probe per tenant with enabled
# rows), then one probe for each tenant's earliest next_run. No due row is read.
_DUE_TENANTS = """
WITH RECURSIVE t(tenant) AS (
    SELECT min(tenant) FROM schedule_state WHERE {enabled}
    UNION ALL
    SELECT (SELECT min(s.tenant) FROM schedule_state AS s
        WHERE s.{enabled} AND s.tenant > t.tenant)
    FROM t WHERE t.tenant IS NOT NULL
)
SELECT tenant FROM (
    SELECT t.tenant, (SELECT min(s.next_run) FROM schedule_state AS s
        WHERE s.{enabled} AND s.tenant = t.tenant) AS first
    FROM t WHERE t.tenant IS NOT NULL
) AS f WHERE first <= {now} ORDER BY first, tenant
"""


def due_tenants(conn: Connection, now: Any) -> list[str]:
    """The tenants with a due row at `now` (as the dialect binds it), earliest due first."""
    enabled = dialects.of(conn).true_sql.format(column="enabled")
    sql = _due_tenants_sql(enabled)
    return [row[0] for row in conn.execute(sql, {"now": now})]


@lru_cache(maxsize=4)
def _due_tenants_sql(enabled: str) -> TextClause:
    return text(_DUE_TENANTS.format(enabled=enabled, now=":now"))


# PostgreSQL's fair round: per offered tenant (unnest of two arrays), its
# earliest due rows by ix_schedule_state_tenant_due, each with its schedule
# row, both locked (SKIP LOCKED). A later
# round asks a tenant again for all it has taken plus its new offer: the rows
# it already holds come back (they are locked by us, not skipped) and are
# dropped in Python, so ties on next_run need no keyset column in the index.
_OFFER = (
    func.unnest(
        bindparam("tenants", type_=ARRAY(Text)),
        bindparam("counts", type_=ARRAY(Integer)),
    )
    .table_valued("tenant", "n")
    .render_derived(with_types=False)
    .alias("offer")
)
_PICK = schedule_state.alias("pick")
_PICK_MAIN = schedules.alias("pick_main")
_PICKED = (
    select(*_due_columns(_PICK_MAIN, _PICK))
    .select_from(_PICK.join(_PICK_MAIN, _PICK_MAIN.c.id == _PICK.c.id))
    .where(
        _PICK.c.enabled,
        # `tenant = t AND next_run <= now`, written as the range
        # (t) <= (tenant) and (tenant, next_run) <= (t, now): exactly the
        # entries of ix_schedule_state_tenant_due to walk, and an order (tenant,
        # next_run) only that index gives. Written plainly, the planner takes
        # the tenant as fixed, cannot know its share of the due rows, and may
        # walk ix_schedule_state_due instead, filtering out the other tenants' rows:
        # reading a whole burst ahead of a small tenant's rows.
        _PICK.c.tenant >= _OFFER.c.tenant,
        tuple_(_PICK.c.tenant, _PICK.c.next_run) <= tuple_(_OFFER.c.tenant, bindparam("now")),
    )
    .order_by(_PICK.c.tenant, _PICK.c.next_run)
    .limit(_OFFER.c.n)
    .with_for_update(skip_locked=True, of=[_PICK, _PICK_MAIN])
    .correlate(_OFFER)
    .lateral("picked")
)
_FAIR_ROUND = select(*(_PICKED.c[name] for name in DUE_FIELDS)).select_from(
    _OFFER.join(_PICKED, true())
)


def fair_tenants(conn: Connection, now: Any, fairness: Fairness | None) -> list[str]:
    """The tenants a batch is shared across (store.dispatch.fair), earliest due first; none
    when it is taken in next_run order (no `fairness`, or fewer than two tenants due)."""
    if fairness is None:
        return []
    tenants = due_tenants(conn, now)
    return tenants if len(tenants) >= 2 else []


def fair_rows(
    conn: Connection, now: datetime, limit: int, fairness: Fairness, tenants: list[str]
) -> list[Due]:
    """PostgreSQL: up to `limit` due rows shared fairly across tenants (store.dispatch.fair), decoded."""
    rows: list[Due] = []
    held: set[str] = set()

    def take(offer: Offer) -> Taken:
        names = list(offer)
        # `after` is how many rows the tenant holds already.
        wanted = {t: count for t, (count, _after) in offer.items()}
        holds = {t: after or 0 for t, (_count, after) in offer.items()}
        params = {"tenants": names, "counts": [wanted[t] + holds[t] for t in names], "now": now}
        new: dict[str, list[Due]] = {t: [] for t in names}
        for row in map(decode, conn.execute(_FAIR_ROUND, params)):
            if row.id not in held:
                new[row.tenant].append(row)
        taken: Taken = {}
        for tenant, found in new.items():
            # Past a tie, a scan may return other rows than the last round's:
            # those past the offer stay locked and unused (they fire next round).
            found = found[: wanted[tenant]]
            held.update(row.id for row in found)
            rows.extend(found)
            taken[tenant] = (len(found), len(found) + holds[tenant])
        return taken

    fill(limit, tenants, take, fairness)
    return rows


def job_options(
    conn: Connection, tenants: set[str], names: set[str]
) -> dict[tuple[str, str, str], Any]:
    """Active jobs among `tenants` × `names`, keyed (tenant, stack, name) → options."""
    found = conn.execute(
        select(jobs.c.tenant, jobs.c.stack, jobs.c.name, jobs.c.options).where(
            jobs.c.tenant.in_(tenants), jobs.c.name.in_(names), jobs.c.status == "active"
        )
    )
    return {(j.tenant, j.stack, j.name): j.options or {} for j in found}
