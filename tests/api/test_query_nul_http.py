"""A NUL in any query parameter is a coded 400 on both databases (issue 33, item 6).

Before: `?search=%00` listed every row on SQLite and failed the statement on PostgreSQL.
"""

from __future__ import annotations

import pytest
from api_support import Api


@pytest.mark.parametrize(
    "query",
    ["search=%00", "search=a%00b", "job=%00", "stack=billing&environment=%00", "cursor=%00"],
)
def test_a_nul_in_a_query_parameter_is_refused(seeded: Api, query: str) -> None:
    answer = seeded.call("GET", f"/tenants/acme/schedules?{query}")
    assert answer.status_code == 400, answer.text
    assert answer.json()["code"] == "X400007REQINV"
    assert answer.json()["detail"] == {"field": "query"}


def test_a_percent_sign_followed_by_00_is_plain_text(seeded: Api) -> None:
    answer = seeded.call("GET", "/tenants/acme/schedules?search=%2500")
    assert answer.status_code == 200, answer.text
    assert answer.json()["items"] == []
    every = seeded.call("GET", "/tenants/acme/schedules?search=nightly")
    assert [row["name"] for row in every.json()["items"]] == ["acme-nightly"]
