"""The API over shards (issue 41): a tenant's requests reach the database of the shard it
lives on, before and after a move; tokens are checked in the control database; a write
while the tenant moves is refused with its code and changes nothing."""

from __future__ import annotations

from typing import Any

from api_support import START, V1, bearer
from fastapi.testclient import TestClient

from cronplane.api.app import create_app
from cronplane.api.shard_router import ShardRouter
from cronplane.clock import FakeClock
from cronplane.core.access import Role
from cronplane.service.shards import ShardService
from cronplane.store import shard_map
from cronplane.store.database import Database
from cronplane.store.shard_databases import ShardDatabases

JOB = {"name": "billing", "target": "python:billing.jobs:run"}


def _router(
    databases: ShardDatabases, clock: FakeClock, *, ui: bool = False
) -> tuple[TestClient, Any]:
    """The router over the shards, as `serve` builds it, and the control app's service."""
    control_app = create_app(databases.control, clock, ui=ui)

    def build(database: Database) -> Any:
        return create_app(database, clock, tokens=databases.control)

    client = TestClient(ShardRouter(control_app, databases, build))
    return client, control_app.state.cronplane.service


def _names(client: TestClient, tenant: str, token: str) -> list[str]:
    answer = client.get(f"{V1}/tenants/{tenant}/schedules", headers=bearer(token))
    assert answer.status_code == 200, answer.text
    return [row["name"] for row in answer.json()["items"]]


def _add(client: TestClient, tenant: str, token: str, name: str) -> Any:
    body = {"name": name, "job": "billing", "cron": "0 * * * *"}
    return client.post(f"{V1}/tenants/{tenant}/schedules", json=body, headers=bearer(token))


def test_requests_follow_the_tenant_to_its_shard(databases: ShardDatabases) -> None:
    clock = FakeClock(START)
    client, service = _router(databases, clock)
    acme = service.tokens.create(tenant="acme", role=Role.ADMIN, actor="test").secret
    globex = service.tokens.create(tenant="globex", role=Role.ADMIN, actor="test").secret
    for tenant, token in (("acme", acme), ("globex", globex)):
        made = client.post(f"{V1}/tenants/{tenant}/jobs", json=JOB, headers=bearer(token))
        assert made.status_code == 201, made.text
        assert _add(client, tenant, token, "nightly").status_code == 201

    ShardService(databases, clock).move("acme", "s2", actor="ops")
    assert _names(client, "acme", acme) == ["nightly"]
    assert _add(client, "acme", acme, "hourly").status_code == 201
    # acme's rows are in s2's database now, globex's where they were.
    with databases.database("s2").read() as conn:
        from cronplane.store.tenant_moves import read_rows

        assert sorted(r["name"] for r in read_rows(conn, "acme")["schedules"]) == [
            "hourly",
            "nightly",
        ]
    with databases.control.read() as conn:
        assert read_rows(conn, "acme")["schedules"] == []
    assert _names(client, "globex", globex) == ["nightly"]
    # A token of another tenant still reaches nothing of acme's on its shard.
    refused = client.get(f"{V1}/tenants/acme/schedules", headers=bearer(globex))
    assert refused.status_code == 404 and refused.json()["code"] == "X404906TENNFD"
    # No token, or a made-up one: the shard's app refuses it against the control's tokens.
    assert client.get(f"{V1}/tenants/acme/schedules").status_code == 401
    fake = client.get(f"{V1}/tenants/acme/schedules", headers=bearer("cp_" + "x" * 40))
    assert fake.status_code == 401


def test_a_write_while_the_tenant_moves_is_refused_and_changes_nothing(
    databases: ShardDatabases,
) -> None:
    clock = FakeClock(START)
    client, service = _router(databases, clock)
    acme = service.tokens.create(tenant="acme", role=Role.ADMIN, actor="test").secret
    assert client.post(f"{V1}/tenants/acme/jobs", json=JOB, headers=bearer(acme)).status_code == 201
    with databases.control.begin() as conn:
        shard_map.begin_move(conn, "acme", "s1", clock.now())  # a move under way
    refused = _add(client, "acme", acme, "nightly")
    assert refused.status_code == 409, refused.text
    assert refused.json()["code"] == "X409420SHDMOV" and refused.headers["Retry-After"] == "1"
    assert _names(client, "acme", acme) == []  # reads still answer, from where it lives
    ShardService(databases, clock).move("acme", "s1", actor="ops")  # the move completes
    assert _add(client, "acme", acme, "nightly").status_code == 201
    assert _names(client, "acme", acme) == ["nightly"]


def test_a_platform_token_lists_the_tenants_of_every_shard(databases: ShardDatabases) -> None:
    clock = FakeClock(START)
    client, service = _router(databases, clock)
    platform = service.tokens.create(tenant=None, role=Role.ADMIN, actor="test").secret
    for tenant in ("acme", "globex", "initech"):
        made = client.post(f"{V1}/tenants/{tenant}/jobs", json=JOB, headers=bearer(platform))
        assert made.status_code == 201, made.text
        assert _add(client, tenant, platform, "nightly").status_code == 201
    shards = ShardService(databases, clock)
    shards.move("acme", "s1", actor="ops")
    shards.move("initech", "s3", actor="ops")
    listed = client.get(f"{V1}/tenants", headers=bearer(platform))
    assert listed.status_code == 200, listed.text
    usage = {row["tenant"]: row["usage"] for row in listed.json()["items"]}
    assert sorted(usage) == ["acme", "globex", "initech"]
    assert all(row["schedules"] == 1 and row["jobs"] == 1 for row in usage.values())
    shown = client.get(f"{V1}/tenants/acme", headers=bearer(platform))
    assert shown.status_code == 200 and shown.json()["usage"]["schedules"] == 1
    quota = client.patch(
        f"{V1}/tenants/acme/quota", json={"max_schedules": 1}, headers=bearer(platform)
    )
    assert quota.status_code == 200, quota.text
    refused = _add(client, "acme", platform, "second")  # the quota is read on acme's shard
    assert refused.status_code == 403 and refused.json()["code"] == "X403260QTASCH"


def test_the_seed_sync_path_reaches_the_tokens_tenant_on_its_shard(
    databases: ShardDatabases,
) -> None:
    """`/api/method/shc.schedule.sync` names its tenant in the body or the token, not the path."""
    clock = FakeClock(START)
    client, service = _router(databases, clock)
    acme = service.tokens.create(tenant="acme", role=Role.ADMIN, actor="test").secret
    ShardService(databases, clock).move("acme", "s2", actor="ops")  # a map row, no rows yet
    job = {"name": "report", "stack": "shop", "target": "python:billing.jobs:run"}
    made = client.post(f"{V1}/tenants/acme/jobs", json=job, headers=bearer(acme))
    assert made.status_code == 201, made.text
    body = {"stackName": "shop", "crons": {"report": {"cron": "0 3 * * *", "job": "report"}}}
    synced = client.post("/api/method/shc.schedule.sync", json=body, headers=bearer(acme))
    assert synced.status_code == 200, synced.text
    with databases.database("s2").read() as conn:
        from cronplane.store.tenant_moves import read_rows

        assert [r["name"] for r in read_rows(conn, "acme")["schedules"]] == ["report"]
    with databases.control.read() as conn:
        assert read_rows(conn, "acme")["schedules"] == []


def test_the_console_shows_and_changes_a_moved_tenant_on_its_shard(
    databases: ShardDatabases,
) -> None:
    """The console's pages read and write the shard their session's tenant lives on."""
    from cronplane.ui.session import SESSION_COOKIE, csrf_token

    clock = FakeClock(START)
    client, service = _router(databases, clock, ui=True)
    acme = service.tokens.create(tenant="acme", role=Role.ADMIN, actor="test").secret
    assert client.post(f"{V1}/tenants/acme/jobs", json=JOB, headers=bearer(acme)).status_code == 201
    assert _add(client, "acme", acme, "zz-moved-nightly").status_code == 201
    ShardService(databases, clock).move("acme", "s1", actor="ops")
    client.cookies.set(SESSION_COOKIE, acme)
    page = client.get("/")
    assert page.status_code == 200 and "zz-moved-nightly" in page.text
    shown = client.get("/schedules/default/default/zz-moved-nightly")
    assert shown.status_code == 200, shown.text
    paused = client.post(
        "/schedules/default/default/zz-moved-nightly/pause",
        data={"note": "moved", "csrf": csrf_token(acme)},
    )
    assert paused.status_code in (200, 303), paused.text
    with databases.database("s1").read() as conn:
        from cronplane.store.tenant_moves import read_rows

        (row,) = read_rows(conn, "acme")["schedules"]
    assert row["paused_note"] == "moved"  # written on acme's shard


def test_the_consoles_tenants_page_spans_the_shards(databases: ShardDatabases) -> None:
    """A platform session's Tenants page lists every shard's tenants; a quota set there
    is written on the tenant's shard."""
    from cronplane.ui.session import SESSION_COOKIE, csrf_token

    clock = FakeClock(START)
    client, service = _router(databases, clock, ui=True)
    platform = service.tokens.create(tenant=None, role=Role.ADMIN, actor="test").secret
    for tenant in ("zz-acme", "zz-globex"):
        made = client.post(f"{V1}/tenants/{tenant}/jobs", json=JOB, headers=bearer(platform))
        assert made.status_code == 201, made.text
    ShardService(databases, clock).move("zz-acme", "s2", actor="ops")
    client.cookies.set(SESSION_COOKIE, platform)
    page = client.get("/tenants")
    assert page.status_code == 200 and "zz-acme" in page.text and "zz-globex" in page.text
    saved = client.post(
        "/tenants/zz-acme/quota",
        data={"max_schedules": "5", "csrf": csrf_token(platform)},
        follow_redirects=False,
    )
    assert saved.status_code == 303, saved.text
    with databases.database("s2").read() as conn:
        from cronplane.store.tenant_moves import read_rows

        (quota,) = read_rows(conn, "zz-acme")["tenant_quotas"]
    assert quota["max_schedules"] == 5
