"""Credentials in URLs are masked on every read (issue 33): the pure helper, the API
(job, item, events), the installed CLI in a subprocess; the stored value is untouched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from api_support import make_api
from cli_process import run_cronplane
from sqlalchemy import update

from cronplane import events as ev
from cronplane.core.inputs import JobSpec, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.core.redact import redact_text, redact_url, redact_value
from cronplane.store.database import Database
from cronplane.store.events import append_event
from cronplane.store.tables import queue_items

SECRET_TARGET = "webhook:https://deploy:hunter2@8.8.8.8/hook?token=tok-123&id=7&sig=s1g"
MASKED_TARGET = "webhook:https://***@8.8.8.8/hook?token=***&id=7&sig=***"
LEAKS = ("hunter2", "tok-123", "s1g", "k3y")


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("https://a:b@h.example/x", "https://***@h.example/x"),
        ("https://h.example/x?api_key=k&page=2", "https://h.example/x?api_key=***&page=2"),
        (
            "https://h.example/x?access_token=1&password=2&secret=3&key=4&signature=5",
            "https://h.example/x?access_token=***&password=***&secret=***&key=***&signature=***",
        ),
        ("https://h.example/cb#access_token=z", "https://h.example/cb#access_token=***"),
        ("https://h.example/x?q=token", "https://h.example/x?q=token"),  # a value, not a name
        ("not a url", "not a url"),
    ],
)
def test_redact_url(url: str, masked: str) -> None:
    assert redact_url(url) == masked
    assert redact_text(f"POST {url} failed") == f"POST {masked} failed"


def test_redact_value_walks_json() -> None:
    value = {"a": ["x https://u:p@h/ y", 1, None], "b": {"c": "http://h/?token=t"}}
    assert redact_value(value) == {
        "a": ["x https://***@h/ y", 1, None],
        "b": {"c": "http://h/?token=***"},
    }


def seed(database: Database) -> tuple[Scope, str]:
    """A job with credentials in its URL, a schedule, an item whose error and an event
    whose message quote a URL with credentials; the item's id."""
    api = make_api(database)
    service = api.service
    scope = Scope("acme", "billing", "prod")
    service.register_job("acme", "billing", JobSpec(name="hook", target=SECRET_TARGET), actor="t")
    service.create_schedule(scope, ScheduleSpec(job="hook", cron="@daily", name="h"), actor="t")
    item = service.run_now(scope, "h", actor="t")
    with database.begin() as conn:
        conn.execute(
            update(queue_items)
            .where(queue_items.c.id == item.id)
            .values(
                error="posting to https://u:hunter2@8.8.8.8/x?token=tok-123 failed",
                result={"echo": "https://h.example/?api_key=k3y"},
            )
        )
        append_event(
            conn,
            ev.ALERT_UNSENT,
            tenant="acme",
            actor="t",
            now=api.clock.now(),
            message="not delivered to https://u:hunter2@h.example/",
            detail={"error": "https://h.example/?sig=s1g"},
        )
    return scope, str(item.id)


def test_api_reads_are_masked(database: Database) -> None:
    _, item_id = seed(database)
    api = make_api(database)
    job = api.call("GET", "/tenants/acme/jobs/billing/hook")
    assert job.status_code == 200 and job.json()["target"] == MASKED_TARGET
    listed = api.call("GET", "/tenants/acme/jobs").text
    item = api.call("GET", f"/tenants/acme/queue/items/{item_id}")
    assert item.json()["error"] == "posting to https://***@8.8.8.8/x?token=*** failed"
    events = api.call("GET", "/tenants/acme/events").text
    for text in (job.text, listed, item.text, events):
        assert not any(leak in text for leak in LEAKS), text
    # What the worker reads is the stored URL.
    assert api.service.get_job("acme", "billing", "hook").target == SECRET_TARGET


def test_cli_reads_are_masked(database: Database, tmp_path: Path) -> None:
    _, item_id = seed(database)
    env = {"CRONPLANE_DATABASE_URL": str(database.url), "CRONPLANE_TENANT": "acme"}
    outputs = []
    for args in (
        ("job", "ls", "--stack", "billing"),
        ("job", "ls", "--stack", "billing", "--json"),
        ("queue", "info", item_id),
        ("queue", "info", item_id, "--json"),
        ("queue", "ls", "--json"),
    ):
        done = run_cronplane(*args, env=env, cwd=tmp_path)
        assert done.code == 0, done
        outputs.append(done.stdout)
        assert not any(leak in done.stdout for leak in LEAKS), (args, done.stdout)
    assert json.loads(outputs[1])[0]["target"] == MASKED_TARGET
    assert "***@8.8.8.8" in outputs[0]
