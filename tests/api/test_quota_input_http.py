"""Quota routes take whole numbers only, and tenant names of the documented pattern (issue 33,
item 6). Before: `"max_queued": false` was stored as 0 and `"5"` as 5 (pydantic's lax ints).
PATCH's null clears a limit back to the platform's default (docs/api.md), never a 500.
"""

from __future__ import annotations

from typing import Any

import pytest
from api_support import Api, seed_tenant

from cronplane.core.access import Role

QUOTA = "/tenants/acme/quota"


def _quota(api: Api) -> dict[str, Any]:
    shown: dict[str, Any] = api.call("GET", "/tenants/acme", tenant=None, role=Role.VIEWER).json()
    return shown


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
@pytest.mark.parametrize("value", [False, True, "5", "", 3.5, [1], {"n": 1}])
def test_a_quota_limit_that_is_not_a_whole_number_is_refused(
    api: Api, method: str, value: object
) -> None:
    seed_tenant(api.service, "acme")
    before = _quota(api)
    answer = api.call(method, QUOTA, tenant=None, json={"max_queued": value})
    assert answer.status_code == 400, answer.text
    assert answer.json()["code"] == "X400007REQINV"
    assert "max_queued" in answer.text
    assert _quota(api) == before  # nothing written


def test_an_integral_number_is_taken_and_null_clears(api: Api) -> None:
    seed_tenant(api.service, "acme")
    made = api.call("PUT", QUOTA, tenant=None, json={"max_queued": 3.0, "max_jobs": 2})
    assert made.status_code == 200, made.text
    assert made.json()["quota"]["max_queued"] == 3
    cleared = api.call("PATCH", QUOTA, tenant=None, json={"max_queued": None})
    assert cleared.status_code == 200, cleared.text
    assert cleared.json()["quota"]["max_queued"] is None
    assert cleared.json()["overrides"] == ["max_jobs"]


@pytest.mark.parametrize("tenant", ["a b", "..", "x" * 65, "ac%24me", "%C3%A9t%C3%A9"])
@pytest.mark.parametrize("method", ["PUT", "PATCH"])
def test_a_tenant_name_outside_the_pattern_is_refused(api: Api, method: str, tenant: str) -> None:
    answer = api.call(method, f"/tenants/{tenant}/quota", tenant=None, json={"max_queued": 1})
    assert answer.status_code in (400, 404), answer.text
    assert answer.json()["code"] in ("X400005NAMINV", "X400007REQINV", "X404001NOROUT")
    listed = api.call("GET", "/tenants", tenant=None, role=Role.VIEWER).json()["items"]
    assert listed == []  # no quota row was made
