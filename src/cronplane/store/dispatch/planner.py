"""A batch's decisions, one per distinct input, encoded once for both fire paths.

Rows due at one instant mostly share their decision inputs, so each path asks
the planner once per input rather than once per row.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from cronplane import events as ev
from cronplane.core.calendars import Calendar
from cronplane.core.dst import DstPolicy
from cronplane.core.excluded import Exclusion, exclusion_of
from cronplane.core.firing import (
    POLICY_FIELDS,
    Decision,
    DueRow,
    Outcome,
    Previous,
    decide,
)
from cronplane.core.items import ItemOptions
from cronplane.core.model import PAUSE_FIELDS
from cronplane.core.quotas import UNLIMITED, Quota
from cronplane.errors import CronplaneError
from cronplane.store.dialects import Dialect
from cronplane.store.dispatch.occurrences import Occurrences
from cronplane.store.dispatch.quotas import OverQuota
from cronplane.store.dispatch.reads import DueWhen
from cronplane.store.dispatch.transaction import EndedPause

# A tenant's calendars by name (store.calendars.tenant_calendars on the batch's connection).
CalendarLoader = Callable[[str], Mapping[str, Calendar]]
_WHEN = len(DueWhen._fields)
_MILLISECOND = timedelta(milliseconds=1)

LEDGER = {
    Outcome.FIRE: (ev.SCHEDULE_FIRED, "fired"),
    Outcome.SKIPPED_OVERLAP: (ev.SKIPPED_OVERLAP, "skipped: previous item still queued or running"),
    Outcome.SKIPPED_MISFIRE: (ev.SKIPPED_MISFIRE, "skipped: past its misfire grace"),
    Outcome.SKIPPED_PAUSED: (ev.SKIPPED_PAUSED, "skipped: schedule paused"),
    Outcome.JOB_MISSING: (ev.JOB_MISSING, "not fired: job missing or inactive"),
    Outcome.SKIPPED_QUOTA: (ev.SKIPPED_QUOTA, "skipped: tenant quota"),
    Outcome.SKIPPED_EXCLUDED: (ev.SKIPPED_EXCLUDED, "skipped: an excluded calendar's day"),
    Outcome.CALC_FAILED: (ev.NEXT_RUN_FAILED, "next run cannot be computed; schedule disabled"),
}

# A decision that `resumes` ends the operator's pause (a write to `schedules`).
CLEAR_PAUSE = ", ".join(f"{name} = NULL" for name in PAUSE_FIELDS)
# Decision inputs stored as datetimes (text as read on SQLite).
_INSTANT_FIELDS = frozenset(("paused_at", "paused_until", "end_at"))

# V200150SCHEND's message, per reason (core.firing.Decision.ended).
_ENDED = {
    "end_at": "schedule ended: its next occurrence is after end_at",
    "max_runs": "schedule ended: max_runs reached",
    "no_occurrence": "schedule ended: no occurrence left",
}

# schedule_state changes, per outcome: the columns set (their values come from
# the plan) and any further assignment. Each is a compare-and-set on the
# next_run the batch read. A plain fire writes nothing else: only a decision
# that disables (below) or resumes (CLEAR_PAUSE) also writes `schedules`.
ROW_CHANGES: dict[Outcome, tuple[tuple[str, ...], str]] = {
    # run_count counts fires (max_runs ends the row, core.firing).
    Outcome.FIRE: (("last_run", "next_run"), "run_count = run_count + 1"),
    Outcome.SKIPPED_OVERLAP: (("next_run",), ""),
    Outcome.SKIPPED_MISFIRE: (("next_run",), ""),
    Outcome.SKIPPED_PAUSED: (("next_run",), ""),
    Outcome.JOB_MISSING: (("next_run",), ""),
    Outcome.SKIPPED_QUOTA: (("next_run",), ""),
    Outcome.SKIPPED_EXCLUDED: (("next_run",), ""),
    Outcome.CALC_FAILED: (("next_run",), "enabled = false"),
}
# Disabling is a definition change (unlike a fire), so it bumps the revision
# (the `schedules` row's; updated_at is the batch's now).
DISABLE = "revision = revision + 1"


class PlanKey(NamedTuple):
    """What a due row's decision depends on: rows with equal keys share one Plan."""

    inputs: tuple[Any, ...]  # the row's decision inputs (reads.INPUT_FIELDS), in order
    active: int  # its schedule's items active: QUEUED | RUNNING (0: none, or not asked)
    job_active: bool  # its job exists and is active
    over: OverQuota | None  # past its tenant's fire-time quota: (limit, value)


def planner_key(
    inputs: tuple[Any, ...], active: int, job_active: bool, over: OverQuota | None = None
) -> PlanKey:
    """A due row's key for `Planner.plan`: the one place either fire path builds it."""
    return PlanKey(inputs, active, job_active, over)


@dataclass(slots=True)
class Plan:
    """One decision shared by every due row with the same inputs, encoded once.

    `decide` is pure, so rows due at one instant with one cron, zone, grace,
    overlap rule, job state and overlap state get one decision: a burst of
    10,000 rows is a handful of plans. On PostgreSQL a plan's rows get one
    UPDATE (they all move to one next_run); `set_values` and `keys` are that
    path's.
    """

    decision: Decision
    due_raw: Any  # the next_run read, as stored: the compare-and-set value
    code: str
    message: str
    scheduled_for: Any  # encoded
    set_values: tuple[Any, ...]  # encoded, in ROW_CHANGES order
    detail: Any  # the ledger event's JSON text, encoded
    keys: list[Any] = field(default_factory=list)  # the rows' keys (due_query)
    # When the decision ends its rows: V200150SCHEND's message and detail, encoded.
    end_message: str | None = None
    end_detail: Any = None
    # When the decision ends a pause whose policy enqueues what it passed.
    ended_pause: EndedPause | None = None

    @property
    def count(self) -> int:
        """Due rows this decision stands for."""
        return len(self.keys)

    @property
    def writes_schedules(self) -> bool:
        """True when its rows' `schedules` rows change too (a disable or a resume);
        every other decision writes only their schedule_state."""
        return self.decision.disables or self.decision.resumes


class Planner:
    """A batch's decisions, one per distinct input, and its jobs' item options, encoded."""

    def __init__(
        self,
        dialect: Dialect,
        now: datetime,
        term: int,
        next_after: Occurrences,
        quotas: Quota = UNLIMITED,
        calendars: CalendarLoader | None = None,
    ) -> None:
        # Values for inserted rows (COPY text on PostgreSQL) and for UPDATE parameters.
        self.enc = dialect.row_encoder
        self.params = dialect.params
        self.now = now
        self.term = term
        self.next_after = next_after
        # The platform's default tenant quota (store.dispatch.quotas applies it).
        self.quotas = quotas
        # A tenant's calendars by name, read once per batch for the rows that exclude any.
        self._calendars = calendars
        self._exclusions: dict[tuple[str, str], Exclusion | None] = {}
        self._loaded: dict[str, Mapping[str, Calendar]] = {}
        self.now_value = self.enc.datetime(now)
        self.now_param = self.params.datetime(now)
        self.plans: dict[PlanKey, Plan] = {}
        # (tenant, stack, job) → encoded (priority, expires_at, max_attempts)
        self._job_plans: dict[tuple[str, str, str], tuple[Any, Any, Any, Any, Any]] = {}

    def plan(self, key: PlanKey) -> Plan:
        """The decision for a key (`planner_key`), made once per distinct key."""
        found = self.plans.get(key)
        if found is None:
            found = self.plans[key] = self._plan(key)
        return found

    def _plan(self, key: PlanKey) -> Plan:
        """The key's decision (core.firing.decide) and its ledger event, encoded."""
        when = DueWhen._make(key.inputs[:_WHEN])
        inputs: dict[str, Any] = {
            name: _instant(value) if name in _INSTANT_FIELDS and value is not None else value
            for name, value in zip(POLICY_FIELDS, key.inputs[_WHEN:], strict=True)
        }
        row = DueRow(_instant(when.next_run), **inputs)
        exclusion = self.exclusion(when)
        skips = exclusion is not None and exclusion.policy == "skip"
        dst = DstPolicy(when.dst_gap, when.dst_repeat)
        decision = decide(
            row,
            now=self.now,
            next_after=self.next_after.of(when.cron, when.timezone, dst, exclusion),
            job_active=key.job_active,
            previous=previous_of(key.active),
            over_quota=key.over is not None,
            excluded=exclusion.excluded if skips and exclusion is not None else None,
        )
        moved = self._moved(when, dst, exclusion, decision)
        message, detail = self._ledger(key, row, decision, exclusion, moved)
        return self._encoded(when.next_run, row, decision, message, detail)

    def _moved(
        self, when: DueWhen, dst: DstPolicy, exclusion: Exclusion | None, decision: Decision
    ) -> list[datetime]:
        """A fire its excluded days moved (a `previous` or `next` policy): the raw
        occurrences it stands for, other than itself; else none."""
        if exclusion is None or exclusion.policy == "skip" or not decision.enqueues:
            return []
        if decision.excluded_by is not None:
            return []
        raw = self.next_after.raw(when.cron, when.timezone, dst)
        return exclusion.origins(decision.scheduled_for, raw)

    def _ledger(
        self,
        key: PlanKey,
        row: DueRow,
        decision: Decision,
        exclusion: Exclusion | None,
        moved: list[datetime],
    ) -> tuple[str, dict[str, Any]]:
        """The decision's ledger event: its message and detail (before encoding)."""
        message = _message(row, decision)
        detail = self._detail(row, decision)
        if decision.outcome is Outcome.SKIPPED_QUOTA:
            assert key.over is not None  # SKIPPED_QUOTA only for a row past its quota
            limit, value = key.over
            message = f"skipped: tenant quota {limit} ({value}) used"
            detail["limit"], detail["value"] = limit, value
        if decision.excluded_by is not None:
            detail["calendar"], detail["why"] = decision.excluded_by
            message = f"skipped: excluded by calendar {decision.excluded_by[0]} ({decision.excluded_by[1]})"
        elif moved and exclusion is not None:
            detail["moved_from"] = [instant.isoformat() for instant in moved]
            message = f"fired on the {exclusion.policy} business day (moved from an excluded day)"
        if decision.resumes:
            detail["resumed"] = "pause until reached"
            if decision.missed is not None:
                detail["missed"] = decision.missed
        if decision.error is not None:
            detail["error"] = decision.error
        if row.overlap != "skip" and key.active and decision.outcome is not Outcome.JOB_MISSING:
            detail["overlap"] = row.overlap
            detail["previous"] = _previous_detail(key.active)
        return message, detail

    def _detail(self, row: DueRow, decision: Decision) -> dict[str, Any]:
        """The ledger detail every decision has, and its jitter and pause when it has them."""
        detail: dict[str, Any] = {
            "coalesced": decision.coalesced,
            "first_due": row.next_run.isoformat(),
            "next_run": None if decision.next_run is None else decision.next_run.isoformat(),
            # The leader term that fired: audits which leader wrote each occurrence.
            "term": self.term,
            # How late the decision came after the instant the occurrence was
            # meant to fire (nominal + jitter offset). Per plan, so per due
            # instant, not per row: the batch shares one `now`.
            "late_ms": round((self.now - decision.fire_at) / _MILLISECOND),
        }
        if not decision.coalesced_exact:
            detail["coalesced_at_least"] = True
        if decision.offset:
            detail["jitter_offset"] = decision.offset
            detail["fire_at"] = decision.fire_at.isoformat()
        if decision.outcome is Outcome.SKIPPED_PAUSED:
            detail["paused_by"] = row.paused_by
            detail["note"] = row.paused_note
            detail["until"] = None if row.paused_until is None else row.paused_until.isoformat()
        return detail

    def _encoded(
        self, due_raw: Any, row: DueRow, decision: Decision, message: str, detail: dict[str, Any]
    ) -> Plan:
        """The plan: the decision with its writes' values encoded (`due_raw`: the next_run
        as read, the compare-and-set value)."""
        enc, params = self.enc, self.params
        set_values: tuple[Any, ...]
        if decision.enqueues:  # last_run, next_run
            set_values = (self.now_param, params.datetime(decision.next_run))
        elif decision.disables:  # next_run
            set_values = (None,)
        else:  # next_run
            set_values = (params.datetime(decision.next_run),)
        plan = Plan(
            decision,
            due_raw,
            LEDGER[decision.outcome][0].text,
            message,
            enc.datetime(decision.scheduled_for),
            set_values,
            enc.json(detail),
        )
        if decision.ended is not None:
            plan.end_message = _ENDED[decision.ended]
            plan.end_detail = enc.json({"reason": decision.ended, "term": self.term})
        if decision.missed is not None and row.paused_at is not None:
            plan.ended_pause = EndedPause(
                None, row.paused_at, row.paused_until, row.paused_by, row.paused_note,
                decision.missed, decision.scheduled_for,
            )  # fmt: skip
        return plan

    def preload(self, exclusions: Iterable[str | None]) -> None:
        """Read the calendars of the tenants whose rows in the batch exclude any, one query
        a tenant, before the PostgreSQL path streams its COPY (no other statement may run
        on the connection while it does)."""
        for text in set(exclusions):
            if text is not None:
                self._tenant_calendars(_exclusion_parts(text)[0])

    def exclusion(self, when: DueWhen) -> Exclusion | None:
        """The row's excluded days (core.excluded), or None when it excludes none."""
        if when.exclusion is None or self._calendars is None:
            return None
        key = (when.exclusion, when.timezone)
        if key not in self._exclusions:
            tenant, policy, names = _exclusion_parts(when.exclusion)
            try:
                found = exclusion_of(names, policy, when.timezone, self._tenant_calendars(tenant))
            except CronplaneError:
                # An unknown zone: the occurrence function fails too and the row is
                # disabled. (A calendar is never removed while a row excludes it.)
                found = None
            self._exclusions[key] = found
        return self._exclusions[key]

    def _tenant_calendars(self, tenant: str) -> Mapping[str, Calendar]:
        found = self._loaded.get(tenant)
        if found is None:
            loader = self._calendars
            found = self._loaded[tenant] = {} if loader is None else loader(tenant)
        return found

    def job_plan(
        self, key: tuple[str, str, str], options: dict[str, Any]
    ) -> tuple[Any, Any, Any, Any, Any]:
        """A job's item (priority, expires_at, max_attempts, timeout, max_concurrency), encoded.

        The timeout is the job's; a row's own `timeout` replaces it where the
        item is written.
        """
        found = self._job_plans.get(key)
        if found is None:
            item = ItemOptions.scheduled(options)
            enc = self.enc
            found = self._job_plans[key] = (
                enc.int(item.priority),
                enc.datetime(item.expires_at(self.now)),
                enc.int(item.max_attempts),
                enc.null if item.timeout is None else enc.float(item.timeout),
                enc.null if item.max_concurrency is None else enc.int(item.max_concurrency),
            )
        return found


# Which of a schedule's items are active, as both fire paths read it: a bit
# set, QUEUED | RUNNING (0: none, or overlap `allow`, which never asks).
QUEUED, RUNNING = 1, 2


def previous_of(flags: int) -> Previous:
    """The decision's view of a schedule's active items from the fire paths' bit set."""
    return Previous(queued=bool(flags & QUEUED), running=bool(flags & RUNNING))


def _previous_detail(flags: int) -> str:
    return " and ".join(
        name for bit, name in ((QUEUED, "queued"), (RUNNING, "running")) if flags & bit
    )


def _message(row: DueRow, decision: Decision) -> str:
    """The ledger message of the decision's outcome (LEDGER), or its overlap's own."""
    if decision.outcome is Outcome.SKIPPED_OVERLAP and row.overlap == "buffer_one":
        return "skipped: an item already waits behind the running one (buffer_one)"
    if decision.cancels:
        return "fired; the previous item is asked to stop (cancel_running)"
    return LEDGER[decision.outcome][1]


def _instant(raw: Any) -> datetime:
    """A next_run as read (text on SQLite, datetime on PostgreSQL) as aware UTC."""
    parsed = raw if isinstance(raw, datetime) else datetime.fromisoformat(raw)
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _exclusion_parts(text: str) -> tuple[str, str, tuple[str, ...]]:
    """A due row's `exclusion` input (reads.DueWhen): tenant, on_excluded, calendar names."""
    tenant, policy, names_json = text.split(" ", 2)
    return tenant, policy, tuple(json.loads(names_json))
