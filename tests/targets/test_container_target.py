"""`container:` targets: an image run through podman by the real worker process, with
the timeout, output capture and gating of `command:`; who may make one; no engine.

The podman runs use the image deploy/image/build.sh makes (cronplane's own, which has
`sh`), so they are marked `deploy` and run in CI's deployment step.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
from api_support import make_api
from cli_process import command
from podman_support import image, podman

from cronplane.clock import FakeClock, SystemClock
from cronplane.core.access import Principal, Role
from cronplane.core.inputs import JobPatch, JobSpec
from cronplane.core.model import QueueItem, Scope
from cronplane.errors import CommandJobForbidden, CommandTargetsOff, InvalidTarget
from cronplane.importers import kubernetes
from cronplane.service import ScheduleService
from cronplane.service.base import Context
from cronplane.service.runs import RunService
from cronplane.store.database import Database
from cronplane.targets import RunContext
from cronplane.targets.command import CommandsDisabled
from cronplane.targets.container import (
    ContainerTarget,
    NoContainerEngine,
    engine_arguments,
    find_engine,
)
from firing_support import START, TENANT, add_job, add_schedule

TENANT_ADMIN = Principal(uuid4(), "acme", Role.ADMIN, "acme-admin")
PLATFORM_ADMIN = Principal(uuid4(), None, Role.ADMIN, "root")
SCOPE = Scope(TENANT)


def context() -> RunContext:
    return RunContext("acme", "default", "default", "nightly", uuid4(), None, None, None, 1, "api")


# -- the command line and the engine, no engine run ----------------------------------


def test_engine_arguments_map_command_args_and_env_by_name() -> None:
    options = {"command": ["/bin/sh", "-c"], "args": ["echo hi"], "pull": "never"}
    argv = engine_arguments("registry/app:1", options, "cronplane-x-1", ["GREETING"])
    assert argv == [
        "run", "--rm", "--name", "cronplane-x-1", "--pull", "never",
        "--label", "cronplane.run=cronplane-x-1", "--no-healthcheck", "--env", "GREETING",
        "--entrypoint", "/bin/sh", "registry/app:1", "-c", "echo hi",
    ]  # fmt: skip
    # No command: the image's entrypoint; args replace its CMD.
    assert engine_arguments("app", {"args": ["a"]}, "n", [])[-2:] == ["app", "a"]


@pytest.mark.parametrize(
    "options",
    [{"command": "sh -c x"}, {"args": [1]}, {"pull": "sometimes"}, {"network": "-x"}],
)
def test_bad_options_fail_permanently(options: dict[str, Any]) -> None:
    with pytest.raises(Exception, match="options") as raised:
        engine_arguments("app", options, "n", [])
    assert type(raised.value).__name__ == "PermanentFailure"


def test_no_engine_is_a_coded_failure(tmp_path: Path) -> None:
    assert find_engine({"PATH": str(tmp_path)}) is None
    with pytest.raises(NoContainerEngine) as raised:
        ContainerTarget(True, None).run("app", {}, context())
    assert str(raised.value).startswith("X503253CTRENG")
    # Whichever the host has: docker when it is the only one, the named one when set.
    docker = tmp_path / "docker"
    docker.write_text("#!/bin/sh\n")
    docker.chmod(0o755)
    assert find_engine({"PATH": str(tmp_path)}) == str(docker)
    assert ContainerTarget.from_environ({"PATH": str(tmp_path)}).engine == str(docker)
    named = {"PATH": str(tmp_path), "CRONPLANE_CONTAINER_ENGINE": "podman"}
    assert find_engine(named) is None  # named and missing: not another one silently


def test_switched_off_refuses_without_running() -> None:
    with pytest.raises(CommandsDisabled) as raised:
        ContainerTarget(False, "/usr/bin/podman").run("app", {}, context())
    assert str(raised.value).startswith("X403250CMDOFF")
    assert not ContainerTarget.from_environ({}).enabled


# -- who may make one: the command: rule -----------------------------------------------

CONTAINER = JobSpec(name="etl", target="container:registry.example.com/etl:1.4")


def test_container_jobs_are_a_platform_admins(database: Database) -> None:
    off = ScheduleService(database, FakeClock(START), allow_commands=False)
    with pytest.raises(CommandTargetsOff, match="container: targets are off"):
        off.register_job("acme", "default", CONTAINER, actor="t", principal=PLATFORM_ADMIN)
    service = ScheduleService(database, FakeClock(START), allow_commands=True, local_admin=False)
    with pytest.raises(CommandJobForbidden, match="a container: job"):
        service.register_job("acme", "default", CONTAINER, actor="t", principal=TENANT_ADMIN)
    job = service.register_job("acme", "default", CONTAINER, actor="t", principal=PLATFORM_ADMIN)
    assert job.kind == "container"
    for patch, field in [
        (JobPatch(target="container:evil:latest"), "target"),
        (JobPatch(options={"command": ["sh", "-c", "id"]}), "options"),
    ]:
        with pytest.raises(CommandJobForbidden) as refused:
            service.update_job("acme", "default", "etl", patch, actor="t", principal=TENANT_ADMIN)
        assert refused.value.detail["field"] == field


@pytest.mark.parametrize("image_ref", ["", "-v /:/host app", "two words", "app\n"])
def test_an_image_reference_is_one_word_not_an_option(database: Database, image_ref: str) -> None:
    service = ScheduleService(database, FakeClock(START), allow_commands=True)
    with pytest.raises(InvalidTarget):
        service.register_job("acme", "default", JobSpec("x", f"container:{image_ref}"), actor="t")


# -- through the real worker process and podman ---------------------------------------


@pytest.fixture
def worker(database: Database) -> Iterator[Database]:
    """`cronplane worker` on the test's database, with container targets switched on."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRONPLANE_")}
    env["CRONPLANE_ALLOW_COMMAND_TARGETS"] = "1"
    process = subprocess.Popen(
        [command(), "worker", "--db", database.url, "--threads", "2"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        yield database
    finally:
        process.send_signal(signal.SIGINT)
        try:
            _, err = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            _, err = process.communicate()
        print(err.decode(errors="replace")[-3000:])


def run_image(database: Database, options: dict[str, Any], payload: Any = None) -> QueueItem:
    add_job(database, target=f"container:{image()}", options={"pull": "never", **options})
    add_schedule(database)
    runs = RunService(Context(database, SystemClock()))
    item = runs.run_now(SCOPE, "every-minute", actor="test", payload=payload)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        item = runs.get_item(TENANT, item.id)
        if item.status not in ("queued", "running"):
            return item
        time.sleep(0.2)
    raise AssertionError(f"item still {item.status}")


@pytest.mark.deploy
@pytest.mark.timeout(900)  # cold, the image takes minutes to build
def test_worker_runs_the_image_and_keeps_its_output(worker: Database) -> None:
    # The worker's own variables stay out (CRONPLANE_ALLOW_COMMAND_TARGETS is set there).
    line = 'echo "$CRONPLANE_PAYLOAD|$GREETING|${CRONPLANE_ALLOW_COMMAND_TARGETS:-unset}|$(id -u)"'
    line += "; echo e >&2"
    options = {"command": ["sh", "-c", line], "env": {"GREETING": "hi"}}
    item = run_image(worker, options, payload={"batch": 2})
    assert item.status == "succeeded", item.error
    assert item.result == {
        "exit_code": 0,
        "stdout": f"{json.dumps({'batch': 2})}|hi|unset|10001\n",
        "stderr": "e\n",
    }


@pytest.mark.deploy
@pytest.mark.timeout(900)  # cold, the image takes minutes to build
def test_worker_fails_a_non_zero_exit_with_its_code(worker: Database) -> None:
    item = run_image(worker, {"command": ["sh", "-c", "echo bad >&2; exit 3"], "max_attempts": 1})
    assert item.status == "failed"
    assert item.error is not None and "container exited with 3; stderr: bad" in item.error


@pytest.mark.deploy
@pytest.mark.timeout(900)  # cold, the image takes minutes to build
def test_timeout_kills_the_container_not_only_the_client(worker: Database) -> None:
    started = time.monotonic()
    item = run_image(worker, {"command": ["sleep", "120"], "timeout": 2, "max_attempts": 1})
    assert item.status == "failed" and time.monotonic() - started < 45
    assert item.error is not None and "container timed out after 2 s and was killed" in item.error
    name = f"cronplane-{item.id}-1"
    left = podman("ps", "--all", "--filter", f"name={name}", "--format", "{{.Names}}").stdout
    assert left.strip() == ""  # killed through the engine and removed (--rm)


@pytest.mark.deploy
@pytest.mark.timeout(900)  # cold, the image takes minutes to build
def test_an_imported_cronjob_runs_in_its_image(worker: Database) -> None:
    """`cronplane import kubernetes` (its default, container:): the CronJob's command
    and args run in its image as the kubelet would run them, `$(VAR)` expanded by the
    importer, the variable passed to the container, imagePullPolicy kept."""
    container = {
        "name": "greet",
        "image": image(),
        "imagePullPolicy": "Never",
        "command": ["sh", "-c"],
        "args": ['echo "$(GREETING) from $GREETING"'],
        "env": [{"name": "GREETING", "value": "hi"}],
    }
    cronjob = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "greet"},
        "spec": {
            "schedule": "0 3 * * *",
            "jobTemplate": {"spec": {"backoffLimit": 0, "template": {"spec": {
                "containers": [container]}}}},
        },
    }  # fmt: skip
    job = kubernetes.translate([("cj.yaml", cronjob)], stack="default").document["jobs"]["greet"]
    assert job["target"] == f"container:{image()}"
    assert job["options"]["pull"] == "never" and job["options"]["max_attempts"] == 1
    item = run_image(worker, job["options"])
    assert item.status == "succeeded", item.error
    assert item.result["stdout"] == "hi from hi\n"


def test_the_documented_job_registers_and_maps_to_its_command_line(database: Database) -> None:
    # docs/targets.md's example, as a platform admin's manifest would register it.
    options = {
        "command": ["python", "-m", "etl"],
        "args": ["--since", "yesterday"],
        "env": {"REGION": "eu-west-1"},
        "pull": "missing",
        "network": "bridge",
        "timeout": 1800,
        "max_attempts": 1,
    }
    service = ScheduleService(database, FakeClock(START), allow_commands=True)
    spec = JobSpec(name="nightly-etl", target="container:registry.example.com/etl:1.4")
    job = service.register_job("acme", "default", replace(spec, options=options), actor="t")
    argv = engine_arguments(job.target.partition(":")[2], job.options, "n", ["REGION"])
    assert argv[-6:] == [
        "python", "registry.example.com/etl:1.4", "-m", "etl", "--since", "yesterday",
    ]  # fmt: skip
    assert argv[argv.index("--network") + 1] == "bridge"


def test_http_refuses_a_tenant_token_and_admits_a_platform_admin(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CRONPLANE_ALLOW_COMMAND_TARGETS", "1")
    api = make_api(database)
    body = {"stack": "default", "name": "etl", "target": "container:registry.example.com/etl:1"}
    refused = api.call("POST", "/tenants/acme/jobs", json=body, tenant="acme", role="admin")
    assert refused.status_code == 403 and refused.json()["code"] == "X403251CMDADM"
    made = api.call("POST", "/tenants/acme/jobs", json=body, tenant=None, role="admin")
    assert made.status_code == 201, made.text
