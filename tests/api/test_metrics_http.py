"""`/metrics` names no tenant unless told to, and can require a token (issue 33, item 3).

Before: `cronplane_tenant_fires_total{tenant="acme"}` was served to anyone, so an
unauthenticated scrape listed the tenants that the identical-404 rule hides. Now the
per-tenant series are fed only with CRONPLANE_METRICS_TENANT_LABEL=1, and with
CRONPLANE_METRICS_TOKEN set `/metrics` answers 401 X401001AUTHRQ without that bearer token.
The metrics registry is process-wide, so each case fires a tenant of its own name.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from api_support import START, Api, bearer, make_api

from cronplane.core.inputs import JobSpec, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.processes.node import Node, NodeOptions
from cronplane.store.database import Database


def _fire_once(api: Api, tenant: str) -> None:
    """A due schedule of `tenant` fired by a real node's dispatcher tick."""
    api.service.register_job(tenant, "default", JobSpec(name="job", target="python:m:f"), actor="t")
    api.service.create_schedule(
        Scope(tenant), ScheduleSpec(job="job", cron="* * * * *", name="s"), actor="t"
    )
    node = Node(api.database, NodeOptions(workers=0, alerts=False), api.clock)
    assert node.dispatcher is not None and node.dispatcher.on_tick is not None
    api.clock.set(START.replace(second=0) + timedelta(minutes=1))
    node.dispatcher.on_tick(node.dispatcher.tick())


@pytest.mark.parametrize("setting", [None, "0", "1"])
def test_tenant_series_only_when_enabled(
    sqlite_database: Database, monkeypatch: pytest.MonkeyPatch, setting: str | None
) -> None:
    tenant = f"metrics-{setting or 'unset'}"
    if setting is None:
        monkeypatch.delenv("CRONPLANE_METRICS_TENANT_LABEL", raising=False)
    else:
        monkeypatch.setenv("CRONPLANE_METRICS_TENANT_LABEL", setting)
    monkeypatch.delenv("CRONPLANE_METRICS_TOKEN", raising=False)
    api = make_api(sqlite_database)
    _fire_once(api, tenant)
    scrape = api.client.get("/metrics")
    assert scrape.status_code == 200
    named = [line for line in scrape.text.splitlines() if tenant in line]
    if setting == "1":
        assert f'cronplane_tenant_fires_total{{tenant="{tenant}"}} 1.0' in named, named
    else:
        assert named == []


def test_a_metrics_token_is_required_when_set(
    sqlite_database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CRONPLANE_METRICS_TOKEN", "scrape-secret")
    api = make_api(sqlite_database)
    api_token = api.token(None)  # an API token is not the scraper's secret
    for headers in ({}, bearer("wrong"), bearer(api_token), {"Authorization": "scrape-secret"}):
        refused = api.client.get("/metrics", headers=headers)
        assert refused.status_code == 401, headers
        assert refused.json()["code"] == "X401001AUTHRQ"
        assert "CRONPLANE_METRICS_TOKEN" in refused.json()["message"]
    allowed = api.client.get("/metrics", headers=bearer("scrape-secret"))
    assert allowed.status_code == 200 and "cronplane_fires_total" in allowed.text
    # Health and readiness stay public: probes carry no secret.
    assert api.client.get("/healthz").status_code == 200


def test_metrics_stay_public_without_the_setting(
    sqlite_database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CRONPLANE_METRICS_TOKEN", raising=False)
    assert make_api(sqlite_database).client.get("/metrics").status_code == 200


def test_every_skip_outcome_has_its_own_reason_series() -> None:
    """A new way to skip (a business calendar's day, issue 36) is counted under its own
    reason, not lumped into `other`."""
    from cronplane.api.metrics import SKIP_REASONS
    from cronplane.core.firing import Outcome
    from cronplane.processes.node import _SKIP_REASONS

    assert set(_SKIP_REASONS) == set(Outcome) - {Outcome.FIRE}
    assert set(_SKIP_REASONS.values()) <= set(SKIP_REASONS)
    assert _SKIP_REASONS[Outcome.SKIPPED_EXCLUDED] == "excluded"
