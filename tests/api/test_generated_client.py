"""A client generated from our OpenAPI document drives a real server (issue 42).

`openapi-python-client` (the `test` extra) generates a package from the
document the server answers at `/api/v1/openapi.json`, without a warning;
the test imports it and, over real HTTP, registers a job, creates a
schedule, lists, pauses and reads it back, and reads a coded error. Its
functions carry our operation ids (`schedules_create`, `jobs_get`;
api/operations.py). Without the generator the test skips locally and fails
under CI=true.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from api_support import make_api
from live_server import serving

from cronplane.core.access import Role
from cronplane.store.database import Database
from required_services import require_service

PACKAGE = "cronplane_generated_client"


def _generator() -> str:
    found = shutil.which("openapi-python-client", path=str(Path(sys.executable).parent))
    found = found or shutil.which("openapi-python-client")
    if found is None:
        require_service("openapi-python-client", "not installed (pip install -e '.[test]')")
    return found


@pytest.fixture
def generated(tmp_path: Path) -> Iterator[Any]:
    """A callable: (openapi document) -> the generated package, importable; unloaded after."""

    def generate(document: str) -> ModuleType:
        spec = tmp_path / "openapi.json"
        spec.write_text(document)
        into = ("--output-path", str(tmp_path / PACKAGE))
        # Its post-generation hooks run ruff, found on PATH: this interpreter's first.
        path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
        done = subprocess.run(
            [_generator(), "generate", "--path", str(spec), "--meta", "none", *into],
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
            cwd=tmp_path,
            env={**os.environ, "PATH": path},
        )
        output = done.stdout + done.stderr
        assert done.returncode == 0, output
        # The generator names what it could not read (a schema, a parameter) as warnings.
        assert "Warning" not in output and "Unable" not in output, output
        sys.path.insert(0, str(tmp_path))
        return importlib.import_module(PACKAGE)

    yield generate
    if str(tmp_path) in sys.path:
        sys.path.remove(str(tmp_path))
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]


def test_a_generated_client_drives_a_real_server(database: Database, generated: Any) -> None:
    api = make_api(database)
    token = api.token("acme", Role.ADMIN)
    with serving(database) as url:
        document = httpx.get(url + "/api/v1/openapi.json").text
        package = generated(document)
        models = importlib.import_module(PACKAGE + ".models")
        # One module per operation, named by its operation id, in its tag's folder.
        api_modules = {
            op: importlib.import_module(f"{PACKAGE}.api.{tag}.{op}")
            for tag, op in [
                ("jobs", "jobs_register"),
                ("jobs", "jobs_get"),
                ("schedules", "schedules_create"),
                ("schedules", "schedules_list"),
                ("schedules", "schedules_pause"),
                ("schedules", "schedules_get"),
            ]
        }
        jobs_register, jobs_get = api_modules["jobs_register"], api_modules["jobs_get"]
        schedules_create, schedules_list = (
            api_modules["schedules_create"],
            api_modules["schedules_list"],
        )
        schedules_pause, schedules_get = (
            api_modules["schedules_pause"],
            api_modules["schedules_get"],
        )

        with package.AuthenticatedClient(base_url=url, token=token) as client:
            job = jobs_register.sync(
                "acme",
                client=client,
                body=models.JobCreate(name="report", target="python:billing.jobs:report"),
            )
            assert isinstance(job, models.JobOut), job
            assert jobs_get.sync("acme", "default", "report", client=client).id == job.id

            created = schedules_create.sync(
                "acme",
                client=client,
                body=models.ScheduleCreate(job="report", cron="0 2 * * *", name="nightly"),
            )
            assert isinstance(created, models.ScheduleOut), created
            assert (created.name, created.cron, created.enabled) == ("nightly", "0 2 * * *", True)

            page = schedules_list.sync("acme", client=client, limit=10)
            assert isinstance(page, models.SchedulePage), page
            assert [row.name for row in page.items] == ["nightly"]

            paused = schedules_pause.sync(
                "acme",
                "default",
                "default",
                "nightly",
                client=client,
                body=models.PauseBody(note="maintenance"),
            )
            assert isinstance(paused, models.ScheduleOut), paused
            read = schedules_get.sync("acme", "default", "default", "nightly", client=client)
            assert isinstance(read, models.ScheduleOut), read
            assert (read.state, read.paused_note) == ("paused", "maintenance")

            # A coded error is the documented ErrorBody, with its code.
            missing = schedules_get.sync_detailed(
                "acme", "default", "default", "nobody", client=client
            )
            assert missing.status_code == 404
            assert isinstance(missing.parsed, models.ErrorBody), missing.parsed
            assert missing.parsed.code == "X404902SCHNFD"
