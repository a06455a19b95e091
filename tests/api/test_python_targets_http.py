"""A `python:` job outside CRONPLANE_PYTHON_TARGETS is refused over HTTP (issue 33, item 1).

Before the rule, an editor could register `python:pty:spawn` and an operator's run made the
worker call it. Now create, update and app install answer 403 X403252PYDENY naming the
module and the setting, and nothing is stored. The tests allow their own job modules
(tests/allowed_modules.py: `billing` among them).
"""

from __future__ import annotations

import pytest
from api_support import Api

from cronplane.core.access import Role

JOBS = "/tenants/acme/jobs"


def _job_names(api: Api) -> list[str]:
    return [job["name"] for job in api.call("GET", JOBS).json()["items"]]


def _assert_refused(answer: object, module: str) -> None:
    assert getattr(answer, "status_code", None) == 403, getattr(answer, "text", answer)
    body = answer.json()  # type: ignore[attr-defined]
    assert body["code"] == "X403252PYDENY"
    assert module in body["message"] and "CRONPLANE_PYTHON_TARGETS" in body["message"]
    assert body["detail"]["field"] == "target"


@pytest.mark.parametrize(
    ("target", "module"),
    [
        ("python:pty:spawn", "pty"),
        ("python:os:system", "os"),
        # A prefix allows itself and what is under it, not a longer name.
        ("python:billingx.jobs:report", "billingx.jobs"),
        # A dunder walks out of an allowed module (f.__globals__ …).
        ("python:billing.jobs:report.__globals__", "billing.jobs"),
    ],
)
def test_an_editor_cannot_register_a_python_job_outside_the_allowed_modules(
    seeded: Api, target: str, module: str
) -> None:
    before = _job_names(seeded)
    answer = seeded.call(
        "POST", JOBS, role=Role.EDITOR, json={"name": "evil", "target": target, "stack": "billing"}
    )
    _assert_refused(answer, module)
    assert _job_names(seeded) == before  # nothing stored


def test_a_platform_admin_is_refused_too_and_an_allowed_module_is_accepted(seeded: Api) -> None:
    refused = seeded.call(
        "POST", JOBS, tenant=None, json={"name": "evil", "target": "python:pty:spawn"}
    )
    _assert_refused(refused, "pty")
    made = seeded.call(
        "POST", JOBS, json={"name": "ok", "target": "python:billing.jobs:other", "stack": "billing"}
    )
    assert made.status_code == 201, made.text


def test_changing_a_job_to_a_module_outside_is_refused_and_changes_nothing(seeded: Api) -> None:
    key = f"{JOBS}/billing/report"
    answer = seeded.call("PATCH", key, role=Role.EDITOR, json={"target": "python:pty:spawn"})
    _assert_refused(answer, "pty")
    job = seeded.call("GET", key).json()
    assert job["target"] == "python:billing.jobs:report" and job["revision"] == 1


def test_an_app_install_naming_a_module_outside_is_refused_and_writes_nothing(seeded: Api) -> None:
    manifest = {
        "name": "shop",
        "jobs": {
            "pack": {"target": "python:shop.jobs:pack"},
            "evil": {"target": "python:pty:spawn"},
        },
        "crons": {"pack": "@daily", "evil": "@hourly"},
    }
    for dry_run in (True, False):
        answer = seeded.call(
            "POST", "/tenants/acme/apps", json={"manifest": manifest, "dry_run": dry_run}
        )
        _assert_refused(answer, "pty")
    assert seeded.call("GET", JOBS, params={"stack": "shop"}).json()["items"] == []
    schedules = seeded.call("GET", "/tenants/acme/schedules", params={"stack": "shop"}).json()
    assert schedules["items"] == []
