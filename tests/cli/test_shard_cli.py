"""`cronplane shard ls|add|move|drain` through the installed command (issue 41): a tenant
moved to another database is what its commands reach next; a dispatcher over the
shards fires it there; refusals are coded with their exit codes."""

from __future__ import annotations

import json
import sqlite3
import time
import urllib.request
from pathlib import Path
from typing import Any

from cli_process import Cronplane, background

from make_run_server import free_port, wait_listening


def _json(done: Any) -> Any:
    assert done.code == 0, (done.stdout, done.stderr)
    return done.json()


def _schedule(cronplane: Cronplane, name: str, **env: str) -> None:
    assert cronplane("job", "add", "flush", "--target", "python:app.jobs:flush", **env).code == 0
    added = cronplane("schedule", "add", name, "--job", "flush", "--cron", "* * * * *", **env)
    assert added.code == 0, added.stderr


def test_a_tenant_moves_to_another_database_and_its_commands_follow(
    cronplane: Cronplane, tmp_path: Path
) -> None:
    _schedule(cronplane, "sweep")
    _schedule(cronplane, "other", CRONPLANE_TENANT="globex")
    url = f"sqlite:///{tmp_path / 'eu.db'}"
    assert _json(cronplane("shard", "add", "eu", url, "--json"))["added"] is True
    assert _json(cronplane("shard", "add", "eu", url, "--json"))["added"] is False  # a repeat

    listed = {row["name"]: row for row in _json(cronplane("shard", "ls", "--json"))}
    assert listed["default"]["tenants"] == ["acme", "globex"] and listed["eu"]["tenants"] == []

    moved = _json(cronplane("shard", "move", "acme", "--to", "eu", "--json"))
    assert moved[0]["from"] == "default" and moved[0]["to"] == "eu" and moved[0]["epoch"] == 1
    assert moved[0]["rows"]["schedules"] == 1 and moved[0]["rows"]["jobs"] == 1
    listed = {row["name"]: row for row in _json(cronplane("shard", "ls", "--json"))}
    assert listed["default"]["tenants"] == ["globex"] and listed["eu"]["tenants"] == ["acme"]

    # acme's commands now reach the eu database: the schedule is there, and a new one lands there.
    assert [row["name"] for row in _json(cronplane("schedule", "ls", "--json"))] == ["sweep"]
    assert cronplane("schedule", "add", "later", "--job", "flush", "--cron", "0 * * * *").code == 0
    eu = f"sqlite:///{tmp_path / 'eu.db'}"
    on_eu = _json(cronplane("schedule", "ls", "--json", CRONPLANE_DATABASE_URL=eu))
    assert sorted(row["name"] for row in on_eu) == ["later", "sweep"]
    # globex stayed on the control database.
    globex = _json(cronplane("schedule", "ls", "--json", CRONPLANE_TENANT="globex"))
    assert [row["name"] for row in globex] == ["other"]

    # The moved tenant's ledger on its new shard says where it came from.
    history = _json(cronplane("schedule", "history", "sweep", "--json"))
    assert history is not None
    again = cronplane("shard", "move", "acme", "--to", "eu")
    assert again.code == 0 and "already lives on shard eu" in again.stdout


def test_drain_moves_every_tenant_off_a_shard(cronplane: Cronplane, tmp_path: Path) -> None:
    for name in ("a", "b"):
        assert cronplane("shard", "add", name, f"sqlite:///{tmp_path / name}.db").code == 0
    _schedule(cronplane, "sweep")
    assert cronplane("shard", "move", "acme", "--to", "a").code == 0
    drained = _json(cronplane("shard", "drain", "a", "--json"))
    assert [(r["tenant"], r["from"], r["to"]) for r in drained] == [("acme", "a", "b")]
    listed = {row["name"]: row for row in _json(cronplane("shard", "ls", "--json"))}
    assert listed["a"]["state"] == "draining" and listed["a"]["tenants"] == []
    refused = cronplane("shard", "move", "acme", "--to", "a")
    assert refused.code == 4 and refused.stderr.count("X409421SHDDRN: ") == 1, refused.stderr
    assert [row["name"] for row in _json(cronplane("schedule", "ls", "--json"))] == ["sweep"]


def test_refusals_are_coded_and_change_nothing(cronplane: Cronplane, tmp_path: Path) -> None:
    unknown = cronplane("shard", "move", "acme", "--to", "nowhere")
    assert unknown.code == 3 and unknown.stderr.count("X404420SHDNFD: ") == 1, unknown.stderr
    bad = cronplane("shard", "add", "Bad Name", f"sqlite:///{tmp_path / 'x.db'}")
    assert bad.code == 2 and bad.stderr.count("X400420SHDINV: ") == 1, bad.stderr
    control = cronplane("shard", "add", "same", f"sqlite:///{tmp_path / 'cli.db'}")
    assert control.code == 2 and "control database" in control.stderr
    system = cronplane("shard", "move", "_system", "--to", "default")
    assert system.code == 2
    env = cronplane("shard", "ls", "--json", CRONPLANE_SHARDS="nourl")
    assert env.code == 2 and json.loads(env.stderr)["code"] == "X400420SHDINV"  # --json: JSON
    assert [row["name"] for row in _json(cronplane("shard", "ls", "--json"))] == ["default"]


def test_shards_named_in_the_environment_are_registered(
    cronplane: Cronplane, tmp_path: Path
) -> None:
    shards = f"one=sqlite:///{tmp_path / 'one.db'}  two=sqlite:///{tmp_path / 'two.db'}"
    listed = _json(cronplane("shard", "ls", "--json", CRONPLANE_SHARDS=shards))
    assert [row["name"] for row in listed] == ["default", "one", "two"]
    file = tmp_path / "shards.yaml"
    file.write_text(f"shards:\n  three: sqlite:///{tmp_path / 'three.db'}\n")
    listed = _json(cronplane("shard", "ls", "--json", CRONPLANE_SHARDS_FILE=str(file)))
    assert [row["name"] for row in listed] == ["default", "one", "three", "two"]  # by name
    upgraded = _json(cronplane("db", "upgrade", "--json"))
    assert upgraded["shards"] == ["one", "three", "two"]
    assert json.dumps(upgraded)  # a plain document


def _node(args: list[str], tmp_path: Path) -> Any:
    """A `cronplane` process over the test's control database (cli.db)."""
    return background(
        args, tmp_path, {"CRONPLANE_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}"}
    )


def test_a_node_over_shards_fires_and_runs_a_moved_tenant_on_its_new_shard(
    cronplane: Cronplane, tmp_path: Path
) -> None:
    """`dispatcher` and `worker` processes over the listed shards fire and run acme's
    schedule on the eu database; the control database holds none of acme's items."""
    job = cronplane("job", "add", "flush", "--target", "python:worker_handlers:ok")
    assert job.code == 0, job.stderr
    added = cronplane("schedule", "add", "tick", "--job", "flush", "--cron", "@every 1s")
    assert added.code == 0, added.stderr
    eu = f"sqlite:///{tmp_path / 'eu.db'}"
    assert cronplane("shard", "add", "eu", eu).code == 0
    assert cronplane("shard", "move", "acme", "--to", "eu").code == 0
    runs: list[Any] = []
    with _node(["dispatcher"], tmp_path), _node(["worker"], tmp_path):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(r["status"] == "succeeded" for r in runs):
            time.sleep(0.5)
            runs = _json(cronplane("queue", "ls", "--json", CRONPLANE_DATABASE_URL=eu))
    assert any(r["status"] == "succeeded" for r in runs), runs
    with sqlite3.connect(tmp_path / "cli.db") as control:
        query = "SELECT count(*) FROM queue_items WHERE tenant = 'acme'"
        assert control.execute(query).fetchone() == (0,)


def test_serve_over_shards_answers_a_moved_tenant_from_its_shard(
    cronplane: Cronplane, tmp_path: Path
) -> None:
    """`cronplane serve` with shards listed: the API (real HTTP) routes by tenant."""
    _schedule(cronplane, "sweep")
    _schedule(cronplane, "other", CRONPLANE_TENANT="globex")
    assert cronplane("shard", "add", "eu", f"sqlite:///{tmp_path / 'eu.db'}").code == 0
    assert cronplane("shard", "move", "acme", "--to", "eu").code == 0
    token = _json(cronplane("token", "create", "--tenant", "acme", "--role", "admin", "--json"))
    port = free_port()
    args = ["serve", "--port", str(port), "--no-dispatcher", "--no-worker"]
    with _node(args, tmp_path) as server:
        wait_listening(port, server)
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/v1/tenants/acme/schedules",
            headers={"Authorization": f"Bearer {token['token']}"},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            names = [row["name"] for row in json.loads(answer.read())["items"]]
    assert names == ["sweep"]


def test_tenant_commands_span_the_shards(cronplane: Cronplane, tmp_path: Path) -> None:
    """`tenant ls` lists every shard's tenants; `tenant show|set-quota NAME` reach NAME's shard."""
    _schedule(cronplane, "sweep")
    _schedule(cronplane, "other", CRONPLANE_TENANT="globex")
    assert cronplane("shard", "add", "eu", f"sqlite:///{tmp_path / 'eu.db'}").code == 0
    assert cronplane("shard", "move", "acme", "--to", "eu").code == 0
    listed = _json(cronplane("tenant", "ls", "--json"))
    assert [(row["tenant"], row["usage"]["schedules"]) for row in listed] == [
        ("acme", 1),
        ("globex", 1),
    ]
    shown = _json(cronplane("tenant", "show", "acme", "--json", CRONPLANE_TENANT="globex"))
    assert shown["usage"]["schedules"] == 1
    quota = cronplane("tenant", "set-quota", "acme", "--max-schedules", "1", "--json")
    assert quota.code == 0, quota.stderr
    refused = cronplane("schedule", "add", "two", "--job", "flush", "--cron", "0 * * * *")
    assert refused.code == 9 and "X403260QTASCH" in refused.stderr
