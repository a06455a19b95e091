"""Every route x every role x own/other tenant, with the route inventory taken from the app.

`EXPECTED` states, independently of the code, which action each operation
is and what a permitted call answers here. A route added to the app without
an entry (or with a different rule) fails `test_every_route_is_in_the_matrix`.

The matrix then calls every operation as: no token; each role of a token of
tenant `acme`, on `acme` (own) and on `globex` (other); and each role of a
platform token on `globex`. It checks:

- no token -> 401;
- other tenant -> 404 `X404906TENNFD`, the body identical to the one for a
  tenant that does not exist (it learns nothing), and `globex` unchanged;
- own tenant, role lacks the permission -> 403 and nothing changed;
- own tenant, role permits -> the route's own answer (EXPECTED status);
- no `acme` answer ever mentions a `globex` row (cross-tenant canary);
- a platform-only route (tenants and their quotas) -> 403 for every tenant
  token, on its own tenant or another (it learns nothing of either).
"""

from __future__ import annotations

import contextlib
import itertools
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from api_support import Api, bearer, make_api, seed_tenant
from sqlalchemy import select

from cronplane.api.auth import PUBLIC, inventory
from cronplane.core.access import PLATFORM_ONLY, Action, Role, permits
from cronplane.core.alerts import Alert, RuleSpec
from cronplane.core.inputs import JobPatch, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.errors import AlertRuleExists, ChannelExists, ScheduleNotFound
from cronplane.store.alerts import save_alert
from cronplane.store.database import Database
from cronplane.store.tables import (
    alert_channels,
    alert_rules,
    alerts,
    calendars,
    events,
    jobs,
    queue_items,
    schedules,
)

OWN, OTHER, NOBODY = "acme", "globex", "initech"
_unique = itertools.count()


@dataclass(frozen=True)
class Op:
    """One operation's rule, the status a permitted call answers here, and its body."""

    action: Action | str
    ok: int = 200
    body: Callable[[str], Any] | None = None
    query: dict[str, Any] = field(default_factory=dict)


def _name(prefix: str) -> str:
    return f"{prefix}-{next(_unique)}"


T = "/api/v1/tenants/{tenant}"
S = T + "/schedules/{stack}/{environment}/{name}"
J = T + "/jobs/{stack}/{name}"
EXPECTED: dict[tuple[str, str], Op] = {
    ("GET", "/healthz"): Op(PUBLIC),
    ("GET", "/readyz"): Op(PUBLIC),
    ("GET", "/metrics"): Op(PUBLIC),
    ("GET", "/api/v1/whoami"): Op(Action.USE),
    ("GET", "/api/v1/cron/explain"): Op(Action.USE, query={"expression": "@daily"}),
    ("POST", "/api/v1/cron/explain"): Op(Action.USE, body=lambda t: {"expression": "@daily"}),
    ("GET", T + "/schedules"): Op(Action.READ),
    ("POST", T + "/schedules"): Op(
        Action.CREATE,
        201,
        lambda t: {
            "job": "report",
            "cron": "*/5 * * * *",
            "name": _name("made"),
            "stack": "billing",
            "environment": "prod",
        },
    ),
    ("GET", S): Op(Action.READ),
    ("PATCH", S): Op(Action.UPDATE, body=lambda t: {"cron": "15 3 * * *"}),
    ("DELETE", S): Op(Action.DELETE),
    ("POST", S + "/enable"): Op(Action.TOGGLE),
    ("POST", S + "/disable"): Op(Action.TOGGLE),
    ("POST", S + "/reset"): Op(Action.UPDATE, 409),  # a user row has no manifest
    ("POST", S + "/pause"): Op(Action.UPDATE, body=lambda t: {"note": "hold"}),
    ("POST", S + "/resume"): Op(Action.UPDATE),
    ("POST", S + "/backfill"): Op(
        Action.RUN,
        body=lambda t: {
            "from": "2026-01-04T00:00Z",
            "to": "2026-01-05T00:00Z",
            "allow_overlap": True,
        },
    ),
    ("GET", S + "/history"): Op(Action.READ),
    ("GET", S + "/preview"): Op(Action.READ),
    ("POST", S + "/run"): Op(Action.RUN, 202),
    # Versions (issue 38): reading needs READ, a rollback is an edit, a restore a create
    # (the seed's row exists: its name is taken, 409).
    ("GET", S + "/versions"): Op(Action.READ),
    ("GET", S + "/versions/{number}"): Op(Action.READ),
    ("GET", S + "/diff"): Op(Action.READ),
    ("POST", S + "/rollback"): Op(Action.UPDATE, body=lambda t: {"to": 1}),
    ("POST", S + "/restore"): Op(Action.CREATE, 409),
    # Actions by selector (issue 37): each as its single-row twin; the seed's rows are named.
    ("POST", T + "/schedules/actions/pause"): Op(Action.UPDATE, body=lambda t: {"q": "nightly"}),
    ("POST", T + "/schedules/actions/resume"): Op(Action.UPDATE, body=lambda t: {"q": "nightly"}),
    ("POST", T + "/schedules/actions/enable"): Op(Action.TOGGLE, body=lambda t: {"q": "nightly"}),
    ("POST", T + "/schedules/actions/disable"): Op(Action.TOGGLE, body=lambda t: {"q": "x"}),
    ("POST", T + "/schedules/actions/run"): Op(Action.RUN, body=lambda t: {"q": "nightly"}),
    ("GET", T + "/queue/items"): Op(Action.READ),
    ("GET", T + "/queue/items/{item_id}"): Op(Action.READ),
    ("GET", T + "/queue/items/{item_id}/logs"): Op(Action.READ),
    ("POST", T + "/queue/items/{item_id}/cancel"): Op(Action.RUN),
    ("GET", T + "/jobs"): Op(Action.READ),
    ("POST", T + "/jobs"): Op(
        Action.CREATE,
        201,
        lambda t: {"name": _name("job"), "target": "python:m:f", "stack": "billing"},
    ),
    ("GET", J): Op(Action.READ),
    ("PATCH", J): Op(Action.UPDATE, body=lambda t: {"title": "Reports"}),
    ("POST", J + "/deactivate"): Op(Action.UPDATE),
    # A job's versions (issue 38), as a schedule's: reading needs READ, a rollback is an edit
    ("GET", J + "/versions"): Op(Action.READ),
    ("GET", J + "/versions/{number}"): Op(Action.READ),
    ("GET", J + "/diff"): Op(Action.READ),
    ("POST", J + "/rollback"): Op(Action.UPDATE, body=lambda t: {"to": 1}),
    ("POST", T + "/sync"): Op(
        Action.SYNC,
        body=lambda t: {
            "stack": "billing",
            "environment": "prod",
            "crons": {"synced": {"job": "report", "cron": "@hourly"}},
        },
    ),
    ("POST", T + "/apps"): Op(
        Action.SYNC,
        body=lambda t: {
            "manifest": {
                "name": "shop",
                "jobs": {"pack": {"target": "python:shop.jobs:pack"}},
                "crons": {"pack": "@daily"},
            }
        },
    ),
    ("DELETE", T + "/apps/{stack}/{environment}"): Op(Action.SYNC, query={"dry_run": "true"}),
    # Environments (issue 38): a promote creates and updates (an editor's); dry-run here.
    ("GET", T + "/environments/diff"): Op(
        Action.READ, query={"from_env": "prod", "to_env": "staging"}
    ),
    ("POST", T + "/environments/promote"): Op(
        Action.PROMOTE, body=lambda t: {"from_env": "prod", "to_env": "staging", "dry_run": True}
    ),
    ("GET", T + "/events"): Op(Action.READ),
    ("GET", T + "/audit"): Op(Action.READ, query={"since": "2026-01-01", "kind": "changes"}),
    # Alerts (docs/alerts.md): rules and channels need UPDATE, acknowledging needs RUN.
    ("GET", T + "/alert-channels"): Op(Action.READ),
    ("POST", T + "/alert-channels"): Op(
        Action.UPDATE,
        201,
        lambda t: {
            "name": _name("mail"),
            "kind": "email",
            "config": {"host": "127.0.0.1", "sender": "a@b.c", "to": ["o@b.c"]},
        },
    ),
    ("DELETE", T + "/alert-channels/{name}"): Op(Action.UPDATE),
    ("GET", T + "/alert-rules"): Op(Action.READ),
    ("POST", T + "/alert-rules"): Op(
        Action.UPDATE,
        201,
        lambda t: {"name": _name("rule"), "condition": "failed", "channels": ["pager"]},
    ),
    ("DELETE", T + "/alert-rules/{name}"): Op(Action.UPDATE),
    ("GET", T + "/alerts"): Op(Action.READ),
    # Business calendars (issue 36): saving and removing need UPDATE.
    ("GET", T + "/calendars"): Op(Action.READ),
    ("GET", T + "/calendars/{name}"): Op(Action.READ),
    ("PUT", T + "/calendars/{name}"): Op(Action.UPDATE, body=lambda t: {"weekly": ["sat"]}),
    ("DELETE", T + "/calendars/{name}"): Op(Action.UPDATE),
    ("POST", T + "/alerts/{alert_id}/ack"): Op(Action.RUN),
    # The seed's path: the tenant is the token's, or the body's for a platform token.
    ("POST", "/api/method/shc.schedule.sync"): Op(
        Action.SYNC,
        body=lambda t: {"stack": "billing", "environment": "prod", "crons": {}, "tenant": t},
    ),
    # Platform tokens only (issue 18): tenants' usage, and their quotas.
    ("GET", "/api/v1/tenants"): Op(Action.TENANTS),
    ("GET", T): Op(Action.TENANTS),
    ("PUT", T + "/quota"): Op(Action.QUOTA, body=lambda t: {"max_jobs": 100}),
    ("PATCH", T + "/quota"): Op(Action.QUOTA, body=lambda t: {"max_jobs": 100}),
}


def test_every_route_is_in_the_matrix(database: Database) -> None:
    api = make_api(database)
    served = {(entry.method, entry.path): entry.rule for entry in inventory(api.app)}
    assert set(served) == set(EXPECTED), "a route without a matrix entry, or a stale entry"
    for key, rule in served.items():
        assert rule == EXPECTED[key].action, f"{key}: declares {rule}"


class World:
    """Two seeded tenants, a fresh queued item on demand, and a snapshot of a tenant."""

    def __init__(self, api: Api) -> None:
        self.api = api
        for tenant in (OWN, OTHER):
            seed_tenant(api.service, tenant)

    def restore(self) -> None:
        """Put back each tenant's nightly schedule and job when a permitted call changed them."""
        for tenant in (OWN, OTHER):
            scope = Scope(tenant, "billing", "prod")
            job = self.api.service.get_job(tenant, "billing", "report")
            if not job.active:
                self.api.service.update_job(
                    tenant, "billing", "report", JobPatch(status="active"), actor="t"
                )
            mail = {"host": "127.0.0.1", "sender": "a@b.c", "to": ["o@b.c"]}
            for channel in ("report", "pager"):
                with contextlib.suppress(ChannelExists):
                    self.api.service.add_alert_channel(
                        tenant, channel, "email", mail, secret=None, actor="t"
                    )
            if not any(c["name"] == "report" for c in self.api.service.list_calendars(tenant)):
                self.api.service.save_calendar(tenant, "report", weekly=["sun"], actor="t")
            try:
                rule = RuleSpec("report", "failed", channels=("pager",))
                self.api.service.add_alert_rule(tenant, rule, actor="t")
            except AlertRuleExists:
                pass
            try:
                self.api.service.get_schedule(scope, f"{tenant}-nightly")
            except ScheduleNotFound:
                spec = ScheduleSpec(job="report", cron="30 2 * * *", name=f"{tenant}-nightly")
                self.api.service.create_schedule(scope, spec, actor="t")

    def item(self, tenant: str) -> str:
        """A fresh queued item of `tenant`."""
        scope = Scope(tenant, "billing", "prod")
        return str(
            self.api.app.state.cronplane.service.run_now(scope, f"{tenant}-nightly", actor="t").id
        )

    def alert(self, tenant: str) -> str:
        """A fresh open alert of `tenant` on its nightly schedule (rule `report`)."""
        service = self.api.service
        row = service.get_schedule(Scope(tenant, "billing", "prod"), f"{tenant}-nightly")
        (rule,) = [r for r in service.list_alert_rules(tenant) if r.name == "report"]
        now = service.clock.now()
        alert = Alert(
            uuid.uuid4(),
            tenant,
            rule.id,
            rule.name,
            rule.condition,
            row.id,
            row.name,
            row.stack,
            row.environment,
            "closed",
            1,
            now,
            now,
            now,
            now,
            None,
            None,
            "k",
            {},
        )
        with self.api.database.begin() as conn:
            save_alert(conn, alert, new=True)
        return str(alert.id)

    def snapshot(self, tenant: str) -> list[Any]:
        """Every row of `tenant` in every table (revision, timestamps and all)."""
        out: list[Any] = []
        with self.api.database.read() as conn:
            for table in (
                schedules,
                jobs,
                queue_items,
                events,
                alert_channels,
                alert_rules,
                alerts,
                calendars,
            ):
                query = select(table).where(table.c.tenant == tenant)
                out.append(sorted(str(tuple(row)) for row in conn.execute(query)))
        return out

    def url(self, path: str, tenant: str) -> str:
        values = {
            "tenant": tenant,
            "stack": "billing",
            "environment": "prod",
            "name": f"{tenant}-nightly" if "/schedules/" in path else "report",
            "number": 1,
        }
        if "{item_id}" in path:
            values["item_id"] = self.item(tenant if tenant != NOBODY else OTHER)
        if "{alert_id}" in path:
            values["alert_id"] = self.alert(tenant if tenant != NOBODY else OTHER)
        return path.format(**values)


def _call(api: Api, method: str, path: str, op: Op, tenant: str, headers: dict[str, str]) -> Any:
    world_url = path
    body = op.body(tenant) if op.body else None
    return api.client.request(method, world_url, json=body, params=op.query, headers=headers)


def test_matrix(database: Database) -> None:
    api = make_api(database)
    world = World(api)
    problems: list[str] = []
    protected = [(k, op) for k, op in EXPECTED.items() if op.action != PUBLIC]
    for (method, template), op in protected:
        tenant_scoped = "{tenant}" in template or template.startswith("/api/method/")

        # No token at all.
        answer = api.client.request(
            method,
            world.url(template, OWN),
            json=op.body(OWN) if op.body else None,
            params=op.query,
        )
        if answer.status_code != 401:
            problems.append(f"{method} {template} without a token: {answer.status_code}")

        for role in Role:
            # Own tenant.
            world.restore()
            url = world.url(template, OWN)
            before = world.snapshot(OWN)
            answer = _call(api, method, url, op, OWN, api.headers(OWN, role))
            allowed = permits(role, op.action) if isinstance(op.action, Action) else True
            platform_only = op.action in PLATFORM_ONLY
            if allowed and not platform_only and answer.status_code != op.ok:
                problems.append(
                    f"{method} {template} as {role.value}: {answer.status_code} {answer.text[:200]}"
                )
            if not allowed or platform_only:
                if answer.status_code != 403 or answer.json()["code"] != "X403001FORBID":
                    problems.append(
                        f"{method} {template} as {role.value}: {answer.status_code}, wanted 403"
                    )
                elif world.snapshot(OWN) != before:
                    problems.append(
                        f"{method} {template} as {role.value}: refused but changed rows"
                    )
            if "globex" in answer.text:
                problems.append(f"{method} {template} as {role.value}: mentions globex")

            if not tenant_scoped:
                continue
            # Another tenant (with rows) and one that does not exist: same answer, no change.
            world.restore()
            other_url, nobody_url = world.url(template, OTHER), world.url(template, NOBODY)
            before = world.snapshot(OTHER)
            other = _call(api, method, other_url, op, OTHER, api.headers(OWN, role))
            nobody = _call(api, method, nobody_url, op, NOBODY, api.headers(OWN, role))
            refusal = (403, "X403001FORBID") if platform_only else (404, "X404906TENNFD")
            if (other.status_code, other.json()["code"]) != refusal:
                problems.append(
                    f"{method} {template} as {role.value} on globex: {other.status_code} {other.text[:200]}"
                )
            elif other.text.replace(OTHER, "T") != nobody.text.replace(NOBODY, "T"):
                problems.append(f"{method} {template}: globex answer differs from initech's")
            if world.snapshot(OTHER) != before:
                problems.append(f"{method} {template} as {role.value} changed globex")
            if "globex-nightly" in other.text:
                problems.append(f"{method} {template} as {role.value}: leaked a globex row name")

            # A platform token of the same role reaches globex like its own tenant.
            platform = _call(
                api, method, world.url(template, OTHER), op, OTHER, api.headers(None, role)
            )
            if (
                allowed
                and platform.status_code in (401, 403, 404)
                and platform.json()["code"]
                in (
                    "X401001AUTHRQ",
                    "X403001FORBID",
                    "X404906TENNFD",
                )
            ):
                problems.append(
                    f"{method} {template} as platform {role.value}: {platform.status_code}"
                )
            if not allowed and platform.status_code != 403:
                problems.append(
                    f"{method} {template} as platform {role.value}: {platform.status_code}, wanted 403"
                )
    assert not problems, "\n".join(problems)


def test_revoked_token_is_refused_everywhere(database: Database) -> None:
    api = make_api(database)
    created = api.tokens.create(tenant=OWN, role="admin", actor="t")
    api.tokens.revoke(created.token.id, actor="t")
    answer = api.client.get("/api/v1/whoami", headers=bearer(created.secret))
    assert answer.status_code == 401


@pytest.mark.parametrize("role", list(Role))
def test_whoami_lists_exactly_the_granted_permissions(database: Database, role: Role) -> None:
    api = make_api(database)
    granted = set(api.call("GET", "/whoami", tenant=OWN, role=role).json()["permissions"])
    from cronplane.core.access import GRANTS

    assert granted == {p.value for p in GRANTS[role]}
