"""A refused change to a `command:` job's options names `options` (issue 33, item 6).

Before: PATCH of only the options answered 403 X403251CMDADM with `detail.field = "target"`.
"""

from __future__ import annotations

import pytest
from api_support import make_api

from cronplane.store.database import Database

JOB = "/tenants/acme/jobs/default/backup"


def test_the_refusal_names_the_field_the_patch_changed(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CRONPLANE_ALLOW_COMMAND_TARGETS", "1")
    api = make_api(database)
    made = api.call(
        "POST", "/tenants/acme/jobs", tenant=None, json={"name": "backup", "target": "command:true"}
    )
    assert made.status_code == 201, made.text
    for body, field in (
        ({"options": {"timeout": 7200}}, "options"),
        ({"target": "command:id"}, "target"),
        ({"target": "command:id", "options": {"timeout": 5}}, "target"),
    ):
        refused = api.call("PATCH", JOB, json=body)  # the tenant's own admin
        assert refused.status_code == 403, refused.text
        assert refused.json()["code"] == "X403251CMDADM"
        assert refused.json()["detail"]["field"] == field, body
    assert api.call("GET", JOB).json()["revision"] == 1
