"""What every use case shares: the database, the clock, the write transaction, the
lookups that answer NotFound, and the change events.

A use case opens exactly one transaction through `Context.write()`. When
it changed a schedule it marks the transaction (`tx.schedules_changed()`);
then, inside the transaction, PostgreSQL LISTENers are notified (delivered
at commit), and after the commit the in-process `on_change` hook runs. Both
let a dispatcher wake before its planned sleep ends.

Every definition change writes a version (store.versions) stamped with a
`Change`: the actor the use case names, and how it came (`Transaction.via`):
the Context's own (`api`, `cli`, …), or what an edge or use case set around
the call with `changes_via` (the console; a rollback, a restore; `--reason`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from cronplane import outbound
from cronplane.clock import Clock
from cronplane.codes import Code
from cronplane.core import cron as cron_engine
from cronplane.core import validation
from cronplane.core.access import Principal, check_command_job, host_kind
from cronplane.core.inputs import JobSpec
from cronplane.core.model import Job, Schedule, Scope
from cronplane.core.outbound import DENY_ALL_PRIVATE, OutboundPolicy, url_host_port
from cronplane.core.python_targets import DEFAULT_PREFIXES, check_target
from cronplane.core.quotas import UNLIMITED, Quota
from cronplane.core.versions import Change, Via
from cronplane.errors import JobInactive, JobNotFound, ScheduleNotFound, StaleRevision
from cronplane.store import jobs as job_store
from cronplane.store import schedules as schedule_store
from cronplane.store.database import Database
from cronplane.store.events import append_events, event_values


@dataclass
class Transaction:
    """One use case's transaction: its connection, its "now", and whether schedules changed."""

    conn: Connection
    now: datetime
    changed: bool = False
    via: Via = "service"
    reason: str | None = None

    def schedules_changed(self) -> None:
        """Record that this transaction changed a schedule (wake the dispatcher)."""
        self.changed = True

    def change(self, actor: str, **sync: str | None) -> Change:
        """Who, when and how this transaction changes a definition (`sync`: its digest
        and app_version)."""
        return Change(actor, self.via, self.now, self.reason, **sync)


@dataclass(frozen=True, slots=True)
class How:
    """How the changes made inside `changes_via` came, and why."""

    via: Via
    reason: str | None = None


HOW: ContextVar[How | None] = ContextVar("cronplane_how", default=None)


@contextmanager
def changes_via(via: Via, reason: str | None = None) -> Iterator[None]:
    """Stamp the definition changes made inside with `via` and `reason`."""
    token = HOW.set(How(via, reason))
    try:
        yield
    finally:
        HOW.reset(token)


@dataclass(frozen=True, slots=True)
class Context:
    """The database, the clock and the change hook the parts of one service share;
    `min_interval` is the installation's shortest allowed interval in seconds;
    `allow_commands` the CRONPLANE_ALLOW_COMMAND_TARGETS switch; `local_admin`
    whether a call naming no principal is a platform admin's (a process that
    holds the database, like the local CLI: True; the API's service: False);
    `quotas` the platform's default tenant quota (settings.quota_defaults);
    `outbound` the addresses webhook targets may name (settings.outbound_policy);
    `python_targets` the module prefixes `python:` jobs may name (CRONPLANE_PYTHON_TARGETS);
    `replica` a read-only replica (CRONPLANE_READ_URL) that :meth:`listing` reads;
    `via` how its changes come when nothing else says (`api`, `cli`; core.versions)."""

    database: Database
    clock: Clock
    on_change: Callable[[], None] | None = None
    min_interval: int = 1
    allow_commands: bool = False
    local_admin: bool = True
    quotas: Quota = UNLIMITED
    outbound: OutboundPolicy = DENY_ALL_PRIVATE
    python_targets: tuple[str, ...] = DEFAULT_PREFIXES
    replica: Database | None = None
    via: Via = "service"

    def caller(self, principal: Principal | None) -> Caller:
        """Who is writing, as the `command:`, `python:` and outbound rules judge it."""
        return Caller(
            principal, self.allow_commands, self.local_admin, self.outbound, self.python_targets
        )

    @contextmanager
    def write(self) -> Iterator[Transaction]:
        """One write transaction; notifies listeners when schedules changed."""
        with self.database.begin() as conn:
            how = HOW.get() or How(self.via)
            tx = Transaction(conn, self.clock.now(), via=how.via, reason=how.reason)
            yield tx
            if tx.changed:
                schedule_store.notify_changed(conn)
        if tx.changed and self.on_change is not None:
            self.on_change()

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """One read-only transaction."""
        with self.database.read() as conn:
            yield conn

    @contextmanager
    def listing(self) -> Iterator[Connection]:
        """One read-only transaction on the replica when there is one, else the database:
        for listings and history a person reads, where an answer a moment stale is fine.
        Never for a read that a write, a fire or a claim acts on."""
        with (self.replica or self.database).read() as conn:
            yield conn


@dataclass(frozen=True, slots=True)
class Caller:
    """The writer of a job, for the rules that depend on more than the role: a
    `command:` job is a platform admin's (core.access.check_command_job), and a
    `python:` job names an allowed module (core.python_targets)."""

    principal: Principal | None
    allow_commands: bool
    local_admin: bool
    outbound: OutboundPolicy = DENY_ALL_PRIVATE
    python_targets: tuple[str, ...] = DEFAULT_PREFIXES

    def check_job(self, before: Job | None, after: Job | JobSpec) -> None:
        """Refuse a write that creates a `command:` job or changes its command or options,
        or that sets a `python:` target outside the allowed modules; other changes to
        either (title, payload, status) follow the role alone. A new or changed
        `webhook:` URL must not name a denied address (cronplane.outbound)."""
        check_webhook_target(self.outbound, before, after)
        if before is None or before.target != after.target:
            check_target(after.target, self.python_targets)
        kind = host_kind(after.target)  # command: or container:, one rule for both
        if kind is None:
            return
        if before is not None and (before.target, before.options) == (after.target, after.options):
            return
        # The field the refused change touched: a change to the options alone names them.
        field = "options" if before is not None and before.target == after.target else "target"
        check_command_job(
            self.principal,
            enabled=self.allow_commands,
            local_admin=self.local_admin,
            field=field,
            kind=kind,
        )


def check_webhook_target(policy: OutboundPolicy, before: Job | None, after: Job | JobSpec) -> None:
    """OutboundAddressDenied for a new or changed `webhook:` target whose host is, or
    resolves to, a denied address (a name that does not resolve is judged at send)."""
    if not after.target.startswith("webhook:"):
        return
    if before is not None and before.target == after.target:
        return
    try:
        host, port = url_host_port(after.target.removeprefix("webhook:"))
    except ValueError:
        return  # the target's shape is validation's to refuse
    outbound.check_at_create(policy, host, port)


class ServiceBase:
    """A part of the service: its use cases over the shared Context."""

    def __init__(self, context: Context) -> None:
        self.context = context
        self.database = context.database
        self.clock = context.clock
        self._write = context.write
        self._read = context.read
        self._listing = context.listing


def checked_scope(scope: Scope) -> Scope:
    """The scope with each part checked as a name (InvalidName otherwise)."""
    validation.validate_name(scope.tenant, "tenant")
    validation.validate_name(scope.stack, "stack")
    validation.validate_name(scope.environment, "environment")
    return scope


def check_interval(cron: str, minimum: int) -> None:
    """IntervalTooShort (X400010INTMIN, naming `minimum`) for a normalized cron that fires
    more often; rows already stored are never checked, only what a write sets."""
    if minimum > 1:
        validation.check_min_interval(cron_engine.parse(cron), minimum)


def json_value(value: object) -> object:
    """A value fit for an event's JSON detail (datetimes as ISO text)."""
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def active_job(conn: Connection, scope: Scope, name: str) -> Job:
    """The job a schedule runs: JobNotFound or JobInactive when it cannot be used."""
    job = job_store.get_job(conn, scope.tenant, scope.stack, name)
    if job is None:
        raise JobNotFound(
            f"job {name!r} not found in {scope.tenant}/{scope.stack}",
            {"tenant": scope.tenant, "stack": scope.stack, "job": name},
        )
    if not job.active:
        raise JobInactive(f"job {name!r} is inactive", {"job": name})
    return job


def existing(conn: Connection, scope: Scope, name: str, *, for_update: bool = False) -> Schedule:
    """The schedule with this key; ScheduleNotFound otherwise."""
    row = schedule_store.get_by_key(
        conn, scope.tenant, scope.stack, scope.environment, name, for_update=for_update
    )
    if row is None:
        raise ScheduleNotFound(
            f"schedule {name!r} not found in {scope.tenant}/{scope.stack}/{scope.environment}",
            {"name": name},
        )
    return row


def check_revision(row: Schedule, revision: int | None) -> None:
    """StaleRevision when a revision was given and the row moved past it."""
    if revision is not None and revision != row.revision:
        raise StaleRevision(
            f"schedule {row.name!r} is at revision {row.revision}, not {revision}",
            {"current": row.revision, "given": revision},
        )


# An action by selector (service.selections) names itself in the event of each row it
# changes through the single-row use cases: set around each call, read here.
ACTING_ON: ContextVar[Mapping[str, Any] | None] = ContextVar("cronplane_acting_on", default=None)


def with_selection(detail: dict[str, Any] | None) -> dict[str, Any] | None:
    """An event's detail with the selection acting on its row (ACTING_ON), if any."""
    acting = ACTING_ON.get()
    return detail if not acting else {**(detail or {}), **acting}


def change_event(
    tx: Transaction,
    code: Code,
    schedule: Schedule,
    actor: str,
    verb: str,
    detail: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The event row of one schedule change, with its actor."""
    return event_values(
        code,
        tenant=schedule.tenant,
        stack=schedule.stack,
        environment=schedule.environment,
        schedule_id=schedule.id,
        schedule_name=schedule.name,
        actor=actor,
        message=f"schedule {schedule.name} {verb} by {actor}",
        now=tx.now,
        detail={"revision": schedule.revision, **(with_selection(detail) or {})},
    )


def schedule_event(
    tx: Transaction,
    code: Code,
    schedule: Schedule,
    actor: str,
    verb: str,
    detail: dict[str, Any] | None = None,
) -> None:
    """Append the event of one schedule change, with its actor."""
    append_events(tx.conn, [change_event(tx, code, schedule, actor, verb, detail)])
