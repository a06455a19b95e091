"""One listing query through every layer (issue 34): `ScheduleQuery` from the CLI's
remote client over real HTTP to the store, with the same answer as the local service.

A filter added to `core.queries.ScheduleQuery` and forgotten in the API's
query model, or dropped by the remote client, fails here by name.
"""

from __future__ import annotations

from dataclasses import MISSING, fields

import pytest
from api_support import make_api
from live_server import serving

from cronplane.api.schemas import ScheduleQueryParams
from cronplane.client import RemoteService
from cronplane.core.access import Role
from cronplane.core.inputs import JobSpec, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.core.queries import ScheduleQuery
from cronplane.errors import InvalidRequest
from cronplane.service import ScheduleService
from cronplane.store.database import Database

# Every field of the query, set to something that changes the answer.
QUERIES = {
    "stack": ScheduleQuery(stack="billing"),
    "environment": ScheduleQuery(environment="staging"),
    "source": ScheduleQuery(source="app"),
    "enabled": ScheduleQuery(enabled=False),
    "job": ScheduleQuery(job="export"),
    "search": ScheduleQuery(search="NIGHT"),
    "selector": ScheduleQuery(selector="team in (pay, ops),tier!=batch"),
    "limit": ScheduleQuery(limit=2),
}


def test_the_api_model_is_the_query_field_for_field() -> None:
    query_fields = {f.name: f for f in fields(ScheduleQuery)}
    assert set(ScheduleQueryParams.model_fields) == set(query_fields)
    for name, model_field in ScheduleQueryParams.model_fields.items():
        default = query_fields[name].default
        assert default is not MISSING and model_field.default == default, name
    # Every filter is exercised below (the cursor by paging).
    assert set(QUERIES) | {"cursor"} == set(query_fields)


def test_every_filter_answers_the_same_over_http_as_in_process(database: Database) -> None:
    api = make_api(database)
    service = api.service
    for stack in ("billing", "ops"):
        for job in ("report", "export"):
            service.register_job(
                "acme", stack, JobSpec(name=job, target=f"python:billing.jobs:{job}"), actor="seed"
            )
    for n, (stack, env, job, name) in enumerate(
        [
            ("billing", "prod", "report", "nightly-report"),
            ("billing", "staging", "export", "hourly-export"),
            ("ops", "prod", "export", "nightly-export"),
            ("ops", "staging", "report", "weekly-report"),
        ]
    ):
        service.create_schedule(
            Scope("acme", stack, env),
            ScheduleSpec(
                job=job,
                cron="0 * * * *",
                name=name,
                enabled=n != 3,
                labels={"team": ("pay", "ops")[n % 2], "tier": ("batch", "web")[n // 2]},
            ),
            actor="seed",
        )
    token = api.token("acme", Role.VIEWER)
    with serving(database) as url:
        remote = RemoteService(url, token)
        try:
            _compare(service, remote)
        finally:
            remote.close()


def _compare(service: ScheduleService, remote: RemoteService) -> None:
    for name, query in QUERIES.items():
        local = [r.name for r in service.list_schedules("acme", query).items]
        over_http = [r.name for r in remote.list_schedules("acme", query).items]
        assert over_http == local, name
        assert len(local) < 4, f"{name} filtered nothing: the check proves nothing"
    # Paging by cursor crosses the wire too.
    seen, cursor = [], None
    while True:
        page = remote.list_schedules("acme", ScheduleQuery(limit=3, cursor=cursor))
        seen += [r.name for r in page.items]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert sorted(seen) == seen and len(seen) == 4


@pytest.mark.parametrize(
    "query",
    [
        ScheduleQuery(limit=0),
        ScheduleQuery(source="nobody"),
        ScheduleQuery(search="x" * 129),
        ScheduleQuery(selector="team in (pay"),
    ],
)
def test_a_bad_query_is_a_coded_error(query: ScheduleQuery) -> None:
    with pytest.raises(InvalidRequest):
        query.checked()
