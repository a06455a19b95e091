"""Listing by label selector and search over real HTTP (issue 37), on SQLite and
PostgreSQL: `selector=`, `search=` and its short name `q=`, cursor paging through a
selection, and a malformed selector refused with its code and position."""

from __future__ import annotations

import pytest
from api_support import Api

S = "/tenants/acme/schedules"
ROWS = {
    "pay-eu": {"team": "payments", "region": "eu-west", "tier": "batch"},
    "pay-us": {"team": "payments", "region": "us-east"},
    "ops-eu": {"team": "ops", "region": "eu-west", "legacy": ""},
    "bare": {},
}


def _seed(api: Api) -> None:
    for name, labels in ROWS.items():
        body = {"job": "report", "cron": "0 2 * * *", "name": name, "stack": "billing"}
        created = api.call("POST", S, json={**body, "labels": labels})
        assert created.status_code == 201, created.text


def _names(api: Api, **params: str) -> list[str]:
    answer = api.call("GET", S, params=params)
    assert answer.status_code == 200, answer.text
    return [row["name"] for row in answer.json()["items"]]


def test_a_selector_and_a_search_narrow_the_listing(seeded: Api) -> None:
    _seed(seeded)
    assert _names(seeded, selector="team=payments") == ["pay-eu", "pay-us"]
    assert _names(seeded, selector="team=payments,region in (eu-west)") == ["pay-eu"]
    assert _names(seeded, selector="!legacy,team") == ["pay-eu", "pay-us"]
    assert _names(seeded, selector="region notin (eu-west)") == [
        "acme-nightly",
        "bare",
        "pay-us",
    ]
    assert _names(seeded, selector="tier!=batch,team") == ["ops-eu", "pay-us"]
    assert _names(seeded, q="US-EAST") == ["pay-us"]
    assert _names(seeded, search="us-east") == _names(seeded, q="us-east")
    assert _names(seeded, q="ops", selector="region=eu-west") == ["ops-eu"]
    # Another tenant's labels are never selected.
    assert seeded.call("GET", "/tenants/globex/schedules", tenant="globex",
                       params={"selector": "team"}).json()["items"] == []  # fmt: skip


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("region", ["ops-eu", "pay-eu", "pay-us"]),  # walks schedules by name
        ("team=payments,region", ["pay-eu", "pay-us"]),  # walks team=payments' index range
    ],
)
def test_paging_walks_a_whole_selection(seeded: Api, selector: str, expected: list[str]) -> None:
    _seed(seeded)
    seen, cursor = [], None
    while True:
        params = {"selector": selector, "limit": "1", **({"cursor": cursor} if cursor else {})}
        page = seeded.call("GET", S, params=params).json()
        seen += [row["name"] for row in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == expected


def test_a_malformed_selector_is_refused_naming_the_place(seeded: Api) -> None:
    refused = seeded.call("GET", S, params={"selector": "team in (payments"})
    assert refused.status_code == 400
    body = refused.json()
    assert body["code"] == "X400007REQINV"
    assert body["detail"] == {"field": "selector", "position": 18}
    assert "at character 18" in body["message"]
    assert seeded.call("GET", S, params={"selector": "x" * 3000}).status_code == 400
