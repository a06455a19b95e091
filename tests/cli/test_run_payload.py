"""Run now with a payload: `schedule run NAME --payload JSON|@file` and `POST …/run`
with `{"payload": …}`, locally and against a server; the ledger says who overrode it."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from cli_process import Outcome, run_cronplane
from live_server import serving

from cronplane.clock import SystemClock
from cronplane.service.base import Context
from cronplane.service.tokens import TokenService
from cronplane.store.database import Database

SCHEMA = {
    "type": "object",
    "properties": {"batch": {"type": "integer"}},
    "required": ["batch"],
    "additionalProperties": False,
}


def scenario(run: object, tmp_path: Path) -> None:
    """The same commands and expectations, whichever side answers."""

    def cp(*args: str) -> Outcome:
        return run(*args)  # type: ignore[operator,no-any-return]

    assert (
        cp(
            "job",
            "add",
            "pack",
            "--target",
            "python:a:b",
            "--schema",
            json.dumps(SCHEMA),
            "--payload",
            '{"batch": 1}',
        ).code
        == 0
    )
    assert cp("schedule", "add", "nightly", "--job", "pack", "--cron", "@daily").code == 0
    plain = cp("schedule", "run", "nightly", "--json").json()
    assert isinstance(plain, dict) and plain["payload"] == {"batch": 1}
    given = cp("schedule", "run", "nightly", "--payload", '{"batch": 7}', "--json").json()
    assert isinstance(given, dict) and given["payload"] == {"batch": 7}
    (tmp_path / "p.json").write_text('{"batch": 9}')
    from_file = cp("schedule", "run", "nightly", "--payload", "@p.json", "--json").json()
    assert isinstance(from_file, dict) and from_file["payload"] == {"batch": 9}
    bad = cp("schedule", "run", "nightly", "--payload", '{"batch": "many"}')
    assert bad.code == 2 and bad.stderr.startswith("X400002PAYINV"), bad.stderr
    assert cp("schedule", "run", "nightly", "--payload", "[1]").code == 2
    # The refused runs enqueued nothing; the schedule's own payload is untouched.
    items = cp("queue", "ls", "--json").json()
    assert isinstance(items, list) and len(items) == 3
    info = cp("schedule", "info", "nightly", "--json").json()
    assert isinstance(info, dict) and info["payload"] == {"batch": 1}
    history = cp("schedule", "history", "nightly", "--json").json()
    assert isinstance(history, list)
    runs = [e for e in history if e["code"] == history[0]["code"]]
    overridden = [e for e in runs if (e["detail"] or {}).get("payload_overridden")]
    assert len(overridden) == 2 and all("payload overridden" in e["message"] for e in overridden)
    assert {json.dumps(e["detail"]["payload"]) for e in overridden} == {
        '{"batch": 7}',
        '{"batch": 9}',
    }
    assert all(e["actor"] for e in overridden)


def test_run_with_a_payload_locally(tmp_path: Path) -> None:
    env = {
        "CRONPLANE_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}",
        "CRONPLANE_TENANT": "acme",
        "CRONPLANE_ACTOR": "cli:ops",
    }
    scenario(lambda *args: run_cronplane(*args, env=env, cwd=tmp_path), tmp_path)


def test_run_with_a_payload_against_a_server(database: Database, tmp_path: Path) -> None:
    token = TokenService(Context(database, SystemClock())).create(
        tenant="acme", role="admin", actor="t"
    )
    with serving(database) as url:
        env = {"CRONPLANE_URL": url, "CRONPLANE_TOKEN": token.secret, "CRONPLANE_TENANT": "acme"}
        scenario(lambda *args: run_cronplane(*args, env=env, cwd=tmp_path), tmp_path)
        route = f"{url}/api/v1/tenants/acme/schedules/default/default/nightly/run"
        headers = {"Authorization": f"Bearer {token.secret}"}
        unknown = httpx.post(route, json={"payload": {"batch": 2}, "pay": 1}, headers=headers)
        assert unknown.status_code in (400, 422), unknown.text
        assert unknown.json()["code"].startswith("X4"), unknown.text
        not_object = httpx.post(route, json={"payload": [1]}, headers=headers)
        assert not_object.status_code in (400, 422) and not_object.json()["code"].startswith("X4")
        empty = httpx.post(route, headers=headers)
        assert empty.status_code == 202 and empty.json()["payload"] == {"batch": 1}


@pytest.fixture(autouse=True)
def _no_server_database_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CRONPLANE_DATABASE_URL", raising=False)
