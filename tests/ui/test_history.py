"""The History tab over a real ledger: a dispatcher fire that coalesced missed occurrences."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from fastapi.testclient import TestClient

from cronplane.api.app import create_app
from cronplane.clock import FakeClock
from cronplane.core.inputs import JobSpec, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.processes.dispatcher import Dispatcher
from cronplane.store.database import Database

START = datetime(2026, 3, 2, 9, 0, 30, tzinfo=UTC)


def test_history_shows_fired_occurrences_with_coalesced_counts(sqlite_database: Database) -> None:
    clock = FakeClock(START)
    app = create_app(sqlite_database, clock, ui=True)
    ctx = app.state.cronplane
    ctx.service.register_job("acme", "ops", JobSpec(name="ping", target="python:m:f"), actor="t")
    scope = Scope("acme", "ops", "prod")
    ctx.service.create_schedule(
        scope, ScheduleSpec(job="ping", cron="*/10 * * * *", name="pinger"), actor="t"
    )
    clock.advance(minutes=35)  # 09:10, 09:20 and 09:30 are due: one fire coalesces three
    Dispatcher(sqlite_database, clock).tick()
    secret = ctx.service.tokens.create(tenant="acme", role="viewer", actor="t").secret
    with TestClient(app, follow_redirects=False) as client:
        client.get("/login")
        client.post(
            "/login",
            data={"token": secret, "csrf": client.cookies.get("cronplane_signin_csrf")},
        )
        page = client.get("/schedules/ops/prod/pinger?tab=history")
    assert page.status_code == 200
    ledger = page.text[page.text.index('id="ledger"') : page.text.index('id="items"')]
    assert "fired" in ledger
    assert re.search(r"<td>3 <span class=\"muted\">\(2 missed\)</span></td>", ledger), ledger
    assert "V200610SCHTRG" in ledger
    # 09:30 fired at 09:35:30: the lateness beside the fire instant.
    assert '<span class="muted">(330,000 ms late)</span>' in ledger, ledger
    items = page.text[page.text.index('id="items"') : page.text.index('id="changes"')]
    assert "queued" in items and "schedule" in items


def test_the_listing_knows_a_fired_row_from_one_that_never_fired(
    sqlite_database: Database,
) -> None:
    clock = FakeClock(START)
    app = create_app(sqlite_database, clock, ui=True)
    ctx = app.state.cronplane
    ctx.service.register_job("acme", "ops", JobSpec(name="ping", target="python:m:f"), actor="t")
    scope = Scope("acme", "ops", "prod")
    for name, cron in (("fires", "*/10 * * * *"), ("waits", "0 0 1 1 *")):
        ctx.service.create_schedule(
            scope, ScheduleSpec(job="ping", cron=cron, name=name), actor="t"
        )
    clock.advance(minutes=15)
    Dispatcher(sqlite_database, clock).tick()
    secret = ctx.service.tokens.create(tenant="acme", role="viewer", actor="t").secret
    with TestClient(app, follow_redirects=False) as client:
        client.get("/login")
        client.post(
            "/login",
            data={"token": secret, "csrf": client.cookies.get("cronplane_signin_csrf")},
        )
        listing = client.get("/").text
        fired = client.get("/schedules/ops/prod/fires").text
        waiting = client.get("/schedules/ops/prod/waits").text

    def row(name: str) -> str:
        start = listing.index(f'data-name="{name}"')
        return listing[start : listing.index("</tr>", start)]

    assert "never fired" not in row("fires")
    assert 'class="badge tone-info"' in row("fires") and ">queued</a>" in row("fires")
    assert "never fired" in row("waits") and "no run yet" in row("waits")
    assert "never fired" not in fired
    assert "never fired" in waiting
