"""Whether a due schedule fires: the pure decision behind every fire (SPEC §6).

The dispatcher reads a due row, the job's status and whether the schedule
still has an item queued or running, then asks :func:`decide`. Nothing here
reads a clock or a database: `now` and the occurrence function are arguments.

Which occurrence an item stands for
-----------------------------------
When the dispatcher reaches a row late (downtime, takeover, restart), every
occurrence from the row's ``next_run`` up to ``now`` is due. They coalesce
into one fire whose ``scheduled_for`` is the **latest** due occurrence
(``<= now``), not the row's ``next_run``:

- the item stands for the run the user would expect now, so ``lateness``
  (``fired_at - scheduled_for``) measures the dispatcher, not the downtime;
- ``misfire_grace`` is judged against that latest occurrence: a schedule
  missed for an hour whose latest occurrence is 2 s old fires, while one whose
  latest occurrence is itself older than the grace is skipped;
- the ledger event carries ``coalesced`` (how many occurrences this one
  decision stands for, >= 1) and ``first_due`` (the row's ``next_run``), so
  "did 10:00 run?" is still one query.

The unique key ``(scheduled_for, schedule_id)`` forbids a second item for one
occurrence; the fire transaction also compares ``next_run`` with the value it
read, so two fires of one window cannot both commit either.

Jitter and pause (docs/controls.md)
-----------------------------------
A jittered row's ``next_run`` is its nominal occurrence plus ``jitter_offset``:
the row is found due at the fire instant, while ``scheduled_for`` (and the
unique key) stay nominal. The window is computed on nominal instants (an
occurrence is due once ``nominal + offset <= now``), and ``misfire_grace`` is
judged from the fire instant, so jitter never eats into the grace.

A paused row (``paused_at`` set) records ``SKIPPED_PAUSED`` for an occurrence
before ``paused_until`` (or for every one, without an until). The first
occurrence at or after ``paused_until`` is decided as usual and the decision
``resumes``: its transaction clears the pause. Coalescing means a dispatcher
that reaches the row late fires once, not a burst. A pause that carries a
policy for what it passed (``paused_missed`` once or all) hands it on as
``Decision.missed``: the same transaction enqueues those occurrences
(service.backfills, as a resume ``--missed`` does).

Decision order (first match wins)
---------------------------------
1. the next occurrence cannot be computed (an error, not "there is none")
   → ``CALC_FAILED`` (row disabled);
2. paused and the occurrence is before ``paused_until`` → ``SKIPPED_PAUSED``;
   a calendar the row excludes (``on_excluded`` skip) names its day
   → ``SKIPPED_EXCLUDED`` (core.excluded; previous/next move the occurrence
   instead, in the occurrence function itself);
3. the job is missing or inactive → ``JOB_MISSING`` (next_run advances);
4. the latest occurrence is older than ``misfire_grace`` → ``SKIPPED_MISFIRE``;
5. the overlap rule (the schedule's items queued or running, a manual run
   included: :class:`Previous`):

   - ``skip``: an item queued or running → ``SKIPPED_OVERLAP``;
   - ``buffer_one``: an item already *waiting* (queued) → ``SKIPPED_OVERLAP``;
     only a running one → ``FIRE`` (the new item waits behind it: workers do
     not start an item while another of its schedule runs);
   - ``cancel_running``: → ``FIRE`` with ``cancels``: the running item is
     asked to stop and a waiting one is cancelled, in the fire's transaction;
   - ``allow``: → ``FIRE``;
6. the tenant's fire-time quota is used (``over_quota``: the fire path
   judged this row past its tenant's budget, store.dispatch.quotas)
   → ``SKIPPED_QUOTA`` (next_run advances; not a run);
7. otherwise → ``FIRE``.

When a schedule comes to an end
-------------------------------
A row ends, staying enabled with ``next_run`` None (``Decision.ends``), when
no occurrence follows the latest due one (a one-off, an expression with no
further occurrence) or the next one is after ``end_at``, and when a fire
uses its last run (``runs_left`` 1). The ending occurrence is decided as
usual by the order above (it fires, or is skipped); only a fire counts as a
run. The fire paths then also write ``V200150SCHEND``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from datetime import datetime, timedelta
from typing import Protocol

from cronplane.core.dst import DstPolicy

# Counting missed occurrences one by one is exact but unbounded (an
# every-minute schedule down for a year is 525,600 steps); past this many the
# count is reported as a lower bound and the search jumps ahead.
MAX_COUNTED = 1_000
# Windows tried, smallest first, when jumping to the latest occurrence <= now.
_JUMP_WINDOWS = tuple(
    timedelta(seconds=s) for s in (60, 3600, 86_400, 31 * 86_400, 366 * 86_400, 5 * 366 * 86_400)
)

# Pause policies that enqueue what the pause passed (core.controls.MISSED less skip).
_ENQUEUING = ("once", "all")

NextAfter = Callable[[datetime], "datetime | None"]
"""The schedule's occurrence function: the first occurrence strictly after an instant."""


class OccurrenceLoader(Protocol):
    """A stored row's occurrence function from its cron, zone and DST policy (Debian's
    rules when none is given)."""

    def __call__(self, cron: str, timezone: str, dst: DstPolicy = ...) -> NextAfter: ...


class Outcome(enum.Enum):
    """What happens to one due occurrence; each leaves one ledger event."""

    FIRE = "fire"
    SKIPPED_OVERLAP = "skipped_overlap"
    SKIPPED_MISFIRE = "skipped_misfire"
    SKIPPED_PAUSED = "skipped_paused"
    JOB_MISSING = "job_missing"
    SKIPPED_QUOTA = "skipped_quota"
    SKIPPED_EXCLUDED = "skipped_excluded"
    CALC_FAILED = "calc_failed"


@dataclass(frozen=True, slots=True)
class DueRow:
    """The part of a due schedule row the decision needs.

    Every field after `next_run` is a `schedules` column of the same name: the
    fire paths read the row's policy by POLICY_FIELDS, so a new decision input
    is one field here (and its use in `decide`) plus its column.
    """

    next_run: datetime
    misfire_grace: int | None
    overlap: str  # "skip" | "allow" | "buffer_one" | "cancel_running"
    jitter_offset: int = 0  # seconds next_run lies after the nominal occurrence
    paused_at: datetime | None = None
    paused_until: datetime | None = None
    paused_by: str | None = None
    paused_note: str | None = None
    paused_missed: str | None = None  # skip | once | all: what the pause's own end enqueues
    end_at: datetime | None = None
    # max_runs - run_count (None: no limit). Derived rather than run_count
    # itself, so rows without a limit still share one decision per instant.
    runs_left: int | None = None


@dataclass(frozen=True, slots=True)
class Previous:
    """The schedule's items still active when it is due: any waiting, any running."""

    queued: bool = False
    running: bool = False

    @property
    def active(self) -> bool:
        """True when an item is queued or running."""
        return self.queued or self.running


NO_PREVIOUS = Previous()


# The row's own policy columns, in DueRow's order (what follows next_run).
POLICY_FIELDS: tuple[str, ...] = tuple(field.name for field in fields(DueRow))[1:]


@dataclass(frozen=True, slots=True)
class Decision:
    """The outcome for one due row, and how the row changes."""

    outcome: Outcome
    scheduled_for: datetime
    # Occurrences this decision stands for (>= 1); a lower bound when not exact.
    coalesced: int
    coalesced_exact: bool
    # The row's new next_run; None with CALC_FAILED (the row is disabled) or
    # when the row ends (`ends`: it stays enabled, with no occurrence left).
    next_run: datetime | None
    error: str | None = None
    # Seconds the fire instant lies after scheduled_for (the row's jitter offset).
    offset: int = 0
    # True when the row was paused and this decision ends the pause (until reached).
    resumes: bool = False
    # With `resumes`: the pause's policy for what it passed when it enqueues any
    # ("once" or "all"), else None.
    missed: str | None = None
    # FIRE under `cancel_running` with an item active: stop it (running), cancel it (queued).
    cancels: bool = False
    # Why the row ends: "end_at", "max_runs" or "no_occurrence"; None when it goes on.
    ended: str | None = None
    # SKIPPED_EXCLUDED: the calendar that excludes the occurrence's day, and why.
    excluded_by: tuple[str, str] | None = None

    @property
    def fire_at(self) -> datetime:
        """When this occurrence was meant to fire: scheduled_for + the jitter offset."""
        return self.scheduled_for + timedelta(seconds=self.offset)

    @property
    def enqueues(self) -> bool:
        """True when the decision inserts a queue item."""
        return self.outcome is Outcome.FIRE

    @property
    def disables(self) -> bool:
        """True when the row is disabled (next_run cannot be computed)."""
        return self.outcome is Outcome.CALC_FAILED

    @property
    def ends(self) -> bool:
        """True when the row ends: enabled, next_run None, V200150SCHEND written."""
        return self.ended is not None


@dataclass(frozen=True, slots=True)
class _Window:
    latest: datetime
    count: int
    exact: bool
    following: datetime | None  # None: no occurrence after `latest`


def _latest_due(first: datetime, now: datetime, next_after: NextAfter) -> _Window:
    """Walk from the first due occurrence to the latest one <= now.

    Raises ValueError when an occurrence cannot be computed.
    """
    latest, count = first, 1
    while True:
        following = next_after(latest)
        if following is None:
            return _Window(latest, count, True, None)
        if following <= latest:
            raise ValueError(f"occurrence function went backwards at {latest.isoformat()}")
        if following > now:
            return _Window(latest, count, True, following)
        latest, count = following, count + 1
        if count > MAX_COUNTED:
            return _jump(latest, count, now, next_after)


def _jump(latest: datetime, count: int, now: datetime, next_after: NextAfter) -> _Window:
    """Find the latest occurrence <= now without counting every missed one."""
    for window in _JUMP_WINDOWS:
        candidate = next_after(now - window)
        if candidate is not None and latest < candidate <= now:
            latest = candidate
            break
    # From here the remaining gap is at most one window of occurrences.
    while True:
        following = next_after(latest)
        if following is None or following > now:
            return _Window(latest, count, False, following)
        latest, count = following, count + 1


def _until(next_after: NextAfter, end_at: datetime | None) -> NextAfter:
    """The occurrence function cut at `end_at` (inclusive): nothing after it."""
    if end_at is None:
        return next_after

    def bounded(after: datetime) -> datetime | None:
        found = next_after(after)
        return None if found is None or found > end_at else found

    return bounded


def decide(
    row: DueRow,
    *,
    now: datetime,
    next_after: NextAfter,
    job_active: bool,
    previous: Previous,
    over_quota: bool = False,
    excluded: Callable[[datetime], tuple[str, str] | None] | None = None,
) -> Decision:
    """Decide one due row's outcome at `now` (see the module docstring for the order).

    `job_active`: the job exists in (tenant, stack) and is active.
    `previous`: whether the schedule has an item queued, and one running.
    `over_quota`: a fire would pass the tenant's fire-time quota (skipped instead).
    `excluded`: for a row whose excluded days are skipped (core.excluded), the calendar
    that excludes an occurrence's day and why, or None.
    """
    if row.next_run > now:
        raise ValueError(f"row not due: next_run {row.next_run.isoformat()} > now")
    offset = timedelta(seconds=row.jitter_offset)
    try:
        # Nominal instants: an occurrence is due once its fire instant is.
        window = _latest_due(row.next_run - offset, now - offset, _until(next_after, row.end_at))
    except (ValueError, OverflowError, ArithmeticError) as error:
        return Decision(
            Outcome.CALC_FAILED,
            row.next_run - offset,
            1,
            True,
            None,
            error=f"{type(error).__name__}: {error}",
            offset=row.jitter_offset,
        )
    paused = row.paused_at is not None
    held = paused and (row.paused_until is None or window.latest < row.paused_until)

    def outcome(kind: Outcome, cancels: bool = False) -> Decision:
        following, ended = window.following, None
        if following is None:
            # Past end_at when the expression itself goes on.
            cut = row.end_at is not None and next_after(window.latest) is not None
            ended = "end_at" if cut else "no_occurrence"
        elif kind is Outcome.FIRE and row.runs_left is not None and row.runs_left <= 1:
            following, ended = None, "max_runs"
        return Decision(
            kind,
            window.latest,
            window.count,
            window.exact,
            None if following is None else following + offset,
            offset=row.jitter_offset,
            resumes=paused and not held,
            missed=row.paused_missed
            if paused and not held and row.paused_missed in _ENQUEUING
            else None,
            cancels=cancels,
            ended=ended,
        )

    if held:
        return outcome(Outcome.SKIPPED_PAUSED)
    excluded_by = None if excluded is None else excluded(window.latest)
    if excluded_by is not None:
        return replace(outcome(Outcome.SKIPPED_EXCLUDED), excluded_by=excluded_by)
    if not job_active:
        return outcome(Outcome.JOB_MISSING)
    if row.misfire_grace is not None and now - (window.latest + offset) > timedelta(
        seconds=row.misfire_grace
    ):
        return outcome(Outcome.SKIPPED_MISFIRE)
    if (row.overlap == "skip" and previous.active) or (
        row.overlap == "buffer_one" and previous.queued
    ):
        return outcome(Outcome.SKIPPED_OVERLAP)
    if over_quota:
        return outcome(Outcome.SKIPPED_QUOTA)
    return outcome(Outcome.FIRE, cancels=row.overlap == "cancel_running" and previous.active)
