"""`GET /tenants/{tenant}/audit` (issue 38; docs/api.md, Audit export) over HTTP, and
`Client.audit` against a real server, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from api_support import START, Api, make_api, seed_tenant
from live_server import serving

from cronplane.client import Client
from cronplane.core.access import Role
from cronplane.core.audit import CSV_FIELDS
from cronplane.core.model import Scope
from cronplane.errors import InvalidAuditQuery
from cronplane.store.database import Database

PATH = "/tenants/acme/audit"


@pytest.fixture
def recorded(api: Api) -> Api:
    """Two tenants seeded; in acme a pause and a run now; the clock a minute on."""
    seed_tenant(api.service, "acme")
    seed_tenant(api.service, "globex")
    api.token("acme", Role.VIEWER)  # made now: its event is in the export too
    scope = Scope("acme", "billing", "prod")
    api.service.pause_schedule(scope, "acme-nightly", actor="ann", note="freeze")
    api.service.run_now(scope, "acme-nightly", actor="ann")
    api.clock.advance(60)
    return api


def _pages(api: Api, role: Role = Role.VIEWER, **params: Any) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    while True:
        answer = api.call("GET", PATH, role=role, params=params)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert set(body) == {"records", "next"}
        records += body["records"]
        if body["next"] is None:
            return records
        params = {**params, "after": body["next"]}


def test_a_viewer_pages_through_the_export_oldest_first(recorded: Api) -> None:
    everything = _pages(recorded, since="2026-01-05", limit=2)
    stored = sorted(recorded.service.audit.list("acme", limit=1000), key=lambda e: e.id)
    assert [r["id"] for r in everything] == [e.id for e in stored]
    assert all(r["tenant"] == "acme" for r in everything)
    assert set(everything[0]) == set(CSV_FIELDS)
    runs = _pages(recorded, since="2026-01-05", kind="runs")
    assert [(r["code"], r["kind"], r["job"], r["actor"]) for r in runs] == [
        ("V202007SCHRUN", "runs", "report", "ann")
    ]
    changes = _pages(recorded, since="2026-01-05", kind="changes")
    assert "V200101SCHPAU" in [r["code"] for r in changes]
    assert {r["kind"] for r in changes} == {"changes"}


def test_resuming_after_a_cursor_gives_the_rest(recorded: Api) -> None:
    everything = _pages(recorded, since="2026-01-05")
    cut = everything[2]["id"]
    rest = _pages(recorded, since="2026-01-05", after=cut)
    assert rest == everything[3:]


def test_until_and_durations(recorded: Api) -> None:
    later = START + timedelta(minutes=30)
    recorded.clock.set(later)
    scope = Scope("acme", "billing", "prod")
    recorded.service.resume_schedule(scope, "acme-nightly", actor="bob")
    recorded.clock.advance(60)
    assert [r["code"] for r in _pages(recorded, since="5m")] == ["V200102SCHRES"]
    before = _pages(recorded, since="2026-01-05", until=later.isoformat())
    assert "V200102SCHRES" not in [r["code"] for r in before] and before


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"since": "not a time"}, "X400382AUDINV"),
        ({"since": "2026-01-05", "until": "2026-01-04"}, "X400382AUDINV"),
        ({"kind": "secrets"}, "X400382AUDINV"),
        ({"limit": 0}, "X400007REQINV"),
        ({"after": "x"}, "X400007REQINV"),
    ],
)
def test_bad_input_is_a_coded_400(recorded: Api, params: dict[str, Any], code: str) -> None:
    answer = recorded.call("GET", PATH, role=Role.VIEWER, params=params)
    assert answer.status_code == 400
    assert answer.json()["code"] == code


@pytest.fixture
def served(database: Database) -> Iterator[tuple[Api, str, str]]:
    """(api, url, acme viewer token): a real server over `database`, on the api's clock."""
    api = make_api(database)
    token = api.token("acme", Role.VIEWER)
    with serving(database, api.clock) as url:
        yield api, url, token


def test_the_client_iterates_every_page_and_resumes(served: tuple[Api, str, str]) -> None:
    api, url, token = served
    seed_tenant(api.service, "acme")
    api.clock.advance(60)
    with Client(url, token, tenant="acme") as client:
        records = list(client.audit.export(since=START, page_size=2))
        stored = sorted(api.service.audit.list("acme", limit=1000), key=lambda e: e.id)
        assert [r.id for r in records] == [e.id for e in stored] and len(records) >= 3
        assert records[0].at >= START
        rest = list(client.audit.export(since=START, after=records[0].id))
        assert rest == records[1:]
        jobs = list(client.audit.export(since="2026-01-05", kind="changes"))
        assert "report" in {r.job for r in jobs}
        page = client.audit.page(since=START, limit=1)
        assert page.records == (records[0],) and page.next == records[0].id
        with pytest.raises(InvalidAuditQuery):
            client.audit.page(since="whenever")
