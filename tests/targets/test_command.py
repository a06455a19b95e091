"""`command:` targets: what the worker runs, what it keeps, and who may make one run."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
from api_support import make_api

from cronplane.clock import FakeClock
from cronplane.core.access import Principal, Role
from cronplane.core.inputs import JobPatch, JobSpec
from cronplane.core.model import Scope
from cronplane.errors import CommandJobForbidden, CommandTargetsOff, InvalidTarget
from cronplane.manifest import manifest_from_data
from cronplane.processes.dispatcher import Dispatcher
from cronplane.processes.worker import Worker
from cronplane.service import ScheduleService
from cronplane.store.database import Database
from cronplane.targets import RunContext, Targets
from cronplane.targets.command import CommandFailed, CommandsDisabled, CommandTarget
from firing_support import START, add_schedule, items, occurrences

TENANT_ADMIN = Principal(uuid4(), "acme", Role.ADMIN, "acme-admin")
PLATFORM_ADMIN = Principal(uuid4(), None, Role.ADMIN, "root")
PLATFORM_EDITOR = Principal(uuid4(), None, Role.EDITOR, "ops")


def context(**options: Any) -> RunContext:
    # As the worker builds it: the item carries the job's timeout option.
    return RunContext(
        tenant="acme",
        stack="default",
        environment="default",
        job="nightly",
        item_id=uuid4(),
        schedule_id=None,
        schedule="nightly",
        scheduled_for=START,
        attempt=1,
        source="schedule",
        options=options,
        timeout=options.get("timeout"),
    )


def run(line: str, payload: dict[str, Any] | None = None, **options: Any) -> Any:
    return CommandTarget(True).run(line, payload or {}, context(**options))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0): it is dead but not reaped (its parent was killed too).
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(") ")[1][0] != "Z"


# -- the target ------------------------------------------------------------------


def test_runs_a_shell_line_and_keeps_its_output() -> None:
    result = run("echo one | tr a-z A-Z; echo two >&2")
    assert result == {"exit_code": 0, "stdout": "ONE\n", "stderr": "two\n"}


def test_non_zero_exit_fails_with_the_code_and_stderr() -> None:
    with pytest.raises(CommandFailed, match=r"exited with 3; stderr: disk full"):
        run("echo disk full >&2; exit 3")


def test_output_keeps_the_last_bytes_behind_a_marker() -> None:
    target = CommandTarget(True, output_limit=1000)
    result = target.run("seq 1 2000", {}, context())
    produced = "".join(f"{n}\n" for n in range(1, 2001))
    cut = len(produced) - 1000
    assert result["stdout"] == f"[… {cut} bytes cut …]\n" + produced[-1000:]


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    with pytest.raises(CommandFailed, match=r"timed out after 1 s"):
        run(f"sleep 60 & echo $! > {pidfile}; wait", timeout=1)
    assert not alive(int(pidfile.read_text()))  # the line's own child went with it


def test_the_items_timeout_replaces_the_jobs() -> None:
    # A schedule's own `timeout` travels with the item (RunContext.timeout).
    ctx = replace(context(timeout=3600), timeout=1.0)
    with pytest.raises(CommandFailed, match=r"timed out after 1 s"):
        CommandTarget(True).run("sleep 30", {}, ctx)


def test_environment_has_the_payload_and_the_run_but_no_cronplane_secrets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CRONPLANE_DATABASE_URL", "postgresql://secret@db/x")
    line = 'echo "$CRONPLANE_PAYLOAD|$CRONPLANE_JOB|$GREETING|${CRONPLANE_DATABASE_URL:-unset}"'
    result = run(line, {"batch": 1}, env={"GREETING": "hi"})
    assert result["stdout"] == '{"batch": 1}|nightly|hi|unset\n'


def test_a_payload_is_data_never_part_of_the_line(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    result = run('echo "$CRONPLANE_PAYLOAD"', {"x": f"$(touch {marker})"})
    assert f"$(touch {marker})" in result["stdout"]
    assert not marker.exists()


def test_options_shell_and_cwd(tmp_path: Path) -> None:
    result = run("echo $0; pwd", shell="/bin/bash", cwd=str(tmp_path))
    assert result["stdout"] == f"/bin/bash\n{tmp_path}\n"


def test_switched_off_target_refuses_without_running(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    with pytest.raises(CommandsDisabled) as raised:
        CommandTarget(False).run(f"touch {marker}", {}, context())
    assert str(raised.value).startswith("X403250CMDOFF")
    assert not marker.exists()
    assert CommandTarget.from_environ({"CRONPLANE_ALLOW_COMMAND_TARGETS": "1"}).enabled
    assert not CommandTarget.from_environ({}).enabled


# -- the worker --------------------------------------------------------------------


def add_command_job(database: Database, line: str, **options: Any) -> None:
    service = ScheduleService(database, FakeClock(START), allow_commands=True)
    spec = JobSpec(name="job", target=f"command:{line}", options=options)
    service.register_job("acme", "default", spec, actor="test")


def fire_and_work(database: Database, enabled: bool) -> Any:
    clock = FakeClock(START)
    add_schedule(database)
    Dispatcher(database, clock, holder="d", occurrences=occurrences).tick()
    # The runner default_targets makes from the worker's environment, switch on or off.
    targets = Targets({"command": CommandTarget(enabled)})
    worker = Worker(database, clock, name="w", targets=targets, heartbeat=False)
    assert worker.run_once()
    (item,) = items(database)
    return item


def test_worker_records_the_commands_result(database: Database) -> None:
    add_command_job(database, "echo done")
    item = fire_and_work(database, enabled=True)
    assert item.status == "succeeded"
    assert item.result == {"exit_code": 0, "stdout": "done\n", "stderr": ""}


def test_worker_fails_a_non_zero_exit_with_its_code(database: Database) -> None:
    add_command_job(database, "exit 7", max_attempts=1)
    item = fire_and_work(database, enabled=True)
    assert item.status == "failed" and "command exited with 7" in item.error


def test_worker_with_the_switch_off_fails_the_item_unrun(
    database: Database, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    add_command_job(database, f"touch {marker}")  # max_attempts 3: still failed at once
    item = fire_and_work(database, enabled=False)
    assert item.status == "failed" and item.attempts == 1
    assert item.error.startswith("X403250CMDOFF")
    assert not marker.exists()


# -- who may create one (the service) --------------------------------------------------

COMMAND = JobSpec(name="backup", target="command:/usr/local/bin/backup --all")


def test_switch_off_refuses_creation_even_to_a_platform_admin(database: Database) -> None:
    service = ScheduleService(database, FakeClock(START), allow_commands=False)
    with pytest.raises(CommandTargetsOff):
        service.register_job("acme", "default", COMMAND, actor="t", principal=PLATFORM_ADMIN)
    assert service.list_jobs("acme") == []


@pytest.mark.parametrize("principal", [TENANT_ADMIN, PLATFORM_EDITOR, None])
def test_only_a_platform_admin_creates_one(database: Database, principal: Any) -> None:
    # local_admin=False: as in the API's service, a call must name its principal.
    service = ScheduleService(database, FakeClock(START), allow_commands=True, local_admin=False)
    with pytest.raises(CommandJobForbidden):
        service.register_job("acme", "default", COMMAND, actor="t", principal=principal)
    assert service.list_jobs("acme") == []
    job = service.register_job("acme", "default", COMMAND, actor="t", principal=PLATFORM_ADMIN)
    assert job.kind == "command"


def test_changing_the_command_is_an_admins_but_its_title_is_not(database: Database) -> None:
    service = ScheduleService(database, FakeClock(START), allow_commands=True, local_admin=False)
    service.register_job("acme", "default", COMMAND, actor="t", principal=PLATFORM_ADMIN)
    other = JobSpec(name="report", target="python:handlers:ok")
    service.register_job("acme", "default", other, actor="t", principal=TENANT_ADMIN)
    for name, patch, field in [
        ("backup", JobPatch(target="command:rm -rf /"), "target"),
        # The refusal names what the write changed (issue 33: it said "target").
        ("backup", JobPatch(options={"timeout": 7200}), "options"),
        ("report", JobPatch(target="command:id"), "target"),
    ]:
        with pytest.raises(CommandJobForbidden) as refused:
            service.update_job("acme", "default", name, patch, actor="t", principal=TENANT_ADMIN)
        assert refused.value.detail["field"] == field
    retitled = service.update_job(
        "acme", "default", "backup", JobPatch(title="Nightly"), actor="t", principal=TENANT_ADMIN
    )
    assert retitled.title == "Nightly" and retitled.target == COMMAND.target
    service.deactivate_job("acme", "default", "backup", actor="t", principal=TENANT_ADMIN)


def test_a_manifest_with_a_command_job_is_an_admins(database: Database) -> None:
    service = ScheduleService(database, FakeClock(START), allow_commands=True, local_admin=False)
    manifest = manifest_from_data(
        {"name": "ops", "jobs": {"backup": {"target": "command:backup"}}, "crons": {}}
    )
    for dry_run in (True, False):
        with pytest.raises(CommandJobForbidden):
            service.install_app(
                "acme", "default", manifest, actor="t", dry_run=dry_run, principal=TENANT_ADMIN
            )
    assert service.list_jobs("acme") == []
    service.install_app("acme", "default", manifest, actor="t", principal=PLATFORM_ADMIN)
    # Re-installing the same manifest changes no command: a tenant may.
    service.install_app("acme", "default", manifest, actor="t", principal=TENANT_ADMIN)
    service.uninstall_app(Scope("acme", "ops", "default"), actor="t")


@pytest.mark.parametrize(
    "line", ["", " leading-space", "\nleading-newline", "carriage\rreturn", "nul\x00"]
)
def test_a_command_starts_visibly_and_holds_no_control_but_tab_and_newline(
    database: Database, line: str
) -> None:
    service = ScheduleService(database, FakeClock(START), allow_commands=True)
    with pytest.raises(InvalidTarget):
        service.register_job("acme", "default", JobSpec("x", f"command:{line}"), actor="t")


def test_a_command_may_be_a_script_of_several_lines(database: Database) -> None:
    """A Kubernetes `sh -c` block scalar: the same gate and length limit as one line."""
    service = ScheduleService(database, FakeClock(START), allow_commands=True)
    script = "set -e\n\tcd /srv\n./nightly.sh"
    service.register_job("acme", "default", JobSpec("x", f"command:{script}"), actor="t")
    with pytest.raises(InvalidTarget):
        service.register_job(
            "acme", "default", JobSpec("y", "command:" + "echo x\n" * 200), actor="t"
        )


# -- over HTTP -----------------------------------------------------------------------


def test_http_refuses_a_tenant_token_and_admits_a_platform_admin(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CRONPLANE_ALLOW_COMMAND_TARGETS", "1")
    api = make_api(database)
    body = {"stack": "default", "name": "backup", "target": "command:backup --all"}
    refused = api.call("POST", "/tenants/acme/jobs", json=body, tenant="acme", role="admin")
    assert refused.status_code == 403 and refused.json()["code"] == "X403251CMDADM"
    app = {"environment": "default", "manifest": {"name": "ops", "jobs": {"b": body}}}
    app["manifest"]["jobs"]["b"] = {"target": "command:backup"}
    refused = api.call("POST", "/tenants/acme/apps", json=app, tenant="acme", role="admin")
    assert refused.status_code == 403 and refused.json()["code"] == "X403251CMDADM"
    editor = api.call("POST", "/tenants/acme/jobs", json=body, tenant=None, role="editor")
    assert editor.status_code == 403
    assert api.service.list_jobs("acme") == []
    created = api.call("POST", "/tenants/acme/jobs", json=body, tenant=None, role="admin")
    assert created.status_code == 201, created.text
    assert created.json()["kind"] == "command"


def test_http_with_the_switch_off_refuses_everyone(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CRONPLANE_ALLOW_COMMAND_TARGETS", raising=False)
    api = make_api(database)
    body = {"stack": "default", "name": "backup", "target": "command:backup --all"}
    refused = api.call("POST", "/tenants/acme/jobs", json=body, tenant=None, role="admin")
    assert refused.status_code == 403 and refused.json()["code"] == "X403250CMDOFF"
    assert api.service.list_jobs("acme") == []


def test_local_cli_creates_command_jobs_only_with_the_switch(tmp_path: Path) -> None:
    """The local CLI holds the database (a platform admin's power), still behind the switch."""
    from cli_process import run_cronplane

    env: dict[str, str | None] = {"CRONPLANE_DATABASE_URL": f"sqlite:///{tmp_path / 'c.db'}"}
    args = ("job", "add", "backup", "--target", "command:backup --all")
    refused = run_cronplane(*args, env=env, cwd=tmp_path)
    assert refused.code == 6 and "X403250CMDOFF" in refused.stderr
    allowed = run_cronplane(
        *args, "--json", env={**env, "CRONPLANE_ALLOW_COMMAND_TARGETS": "1"}, cwd=tmp_path
    )
    assert allowed.code == 0, allowed.stderr
    job = allowed.json()
    assert isinstance(job, dict) and job["kind"] == "command"
