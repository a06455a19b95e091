"""Group commit for single creates: requests that arrive together share one transaction.

Each `POST …/schedules` still creates one schedule and gets its own answer
(the schedule, or its own coded error: `ScheduleService.create_schedules`
judges every request on its own). What is shared is the work around the
rows: one hop to the thread pool, one BEGIN/COMMIT, one job lookup, one
multi-row INSERT per group. That is what makes single creates cheap enough
under concurrency; no library does this for a request/response API, so it
is written here.

Nothing waits to fill a group. A request that finds no group being written
starts one at once (a lone request is never delayed); requests that arrive
while a group commits form the next one, up to `max_group`. The answer is
sent only after the commit, so an answered create is durable.

State is per event loop: each loop (uvicorn has one; a test client may
start several) has its own pending list and at most one writing task, and
only that loop's thread touches them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Final

from starlette.concurrency import run_in_threadpool

from cronplane.api import metrics
from cronplane.core.model import Schedule
from cronplane.errors import CronplaneError
from cronplane.service import NewSchedule, ScheduleService

# Large enough to amortize a commit, small enough that one group's
# transaction stays short (it holds SQLite's write lock).
DEFAULT_MAX_GROUP: Final = 128

Answer = Schedule | CronplaneError


@dataclass
class _LoopGroups:
    """One event loop's pending requests and whether a group is being written."""

    pending: list[tuple[NewSchedule, asyncio.Future[Answer]]] = field(default_factory=list)
    writer: asyncio.Task[None] | None = None


class CreateGroups:
    """`await groups.create(request)` -> the new Schedule, or raises its coded error."""

    def __init__(self, service: ScheduleService, max_group: int = DEFAULT_MAX_GROUP) -> None:
        self.service = service
        self.max_group = max_group
        self._loops: dict[asyncio.AbstractEventLoop, _LoopGroups] = {}

    async def create(self, request: NewSchedule) -> Schedule:
        loop = asyncio.get_running_loop()
        groups = self._loops.setdefault(loop, _LoopGroups())
        answer: asyncio.Future[Answer] = loop.create_future()
        groups.pending.append((request, answer))
        if groups.writer is None:
            # The writer lives until the pending list is empty, then clears itself.
            groups.writer = loop.create_task(self._write_groups(loop, groups))
        result = await answer
        if isinstance(result, CronplaneError):
            raise result
        return result

    async def _write_groups(self, loop: asyncio.AbstractEventLoop, groups: _LoopGroups) -> None:
        try:
            while groups.pending:
                group = groups.pending[: self.max_group]
                del groups.pending[: self.max_group]
                metrics.observe_create_group(len(group))
                try:
                    answers = await run_in_threadpool(
                        self.service.create_schedules, [request for request, _ in group]
                    )
                except Exception as error:  # the transaction failed: every request shares it
                    for _, future in group:
                        if not future.done():
                            future.set_exception(error)
                    continue
                for (_, future), result in zip(group, answers, strict=True):
                    # A request whose client went away was cancelled; its write stands.
                    if not future.done():
                        future.set_result(result)
        finally:
            # Only a cancelled task (the loop shutting down) leaves requests behind.
            for _, future in groups.pending:
                future.cancel()
            groups.pending.clear()
            groups.writer = None
            self._loops.pop(loop, None)
