"""Overlap, timeout and job run options over real HTTP, from a manifest and from the API.

Bad values get coded errors and write nothing; an item carries the
schedule's timeout over the job's, and its job's max_concurrency.
"""

from __future__ import annotations

from api_support import Api

S = "/tenants/acme/schedules"
MANIFEST = {
    "name": "shop",
    "jobs": {
        "pack": {
            "title": "Pack orders",
            "target": "python:shop.jobs:pack",
            "options": {"timeout": 120, "max_concurrency": 3},
        }
    },
    "crons": {
        "pack": {"cron": "*/15 * * * *", "overlap": "buffer_one"},
        "nightly": {"job": "pack", "cron": "at 02:30", "overlap": "cancel_running", "timeout": 60},
    },
}


def test_manifest_declares_overlap_timeout_and_job_options(seeded: Api) -> None:
    done = seeded.call("POST", "/tenants/acme/apps", json={"manifest": MANIFEST})
    assert done.status_code == 200, done.text
    pack = seeded.call("GET", S + "/shop/default/pack").json()
    nightly = seeded.call("GET", S + "/shop/default/nightly").json()
    assert (pack["overlap"], pack["timeout"]) == ("buffer_one", None)
    assert (nightly["overlap"], nightly["timeout"]) == ("cancel_running", 60)
    # Run now: the schedule's timeout wins over the job's; the job's limit travels too.
    item = seeded.call("POST", S + "/shop/default/nightly/run").json()
    assert (item["timeout"], item["max_concurrency"]) == (60, 3)
    item = seeded.call("POST", S + "/shop/default/pack/run").json()
    assert (item["timeout"], item["max_concurrency"]) == (120, 3)
    again = seeded.call("POST", "/tenants/acme/apps", json={"manifest": MANIFEST}).json()
    assert again["summary"]["unchanged"] == 2


def test_bad_values_are_refused_with_codes(seeded: Api) -> None:
    for body, field in (
        ({"timeout": 0}, "timeout"),
        ({"timeout": -3}, "timeout"),
    ):
        answer = seeded.call(
            "POST", S, json={"job": "report", "cron": "@daily", "stack": "billing", **body}
        )
        assert (answer.status_code, answer.json()["code"]) == (400, "X400007REQINV"), answer.text
        assert field in answer.json()["message"]
    unknown = seeded.call(
        "POST",
        S,
        json={"job": "report", "cron": "@daily", "stack": "billing", "overlap": "queue_all"},
    )
    assert (unknown.status_code, unknown.json()["code"]) == (400, "X400007REQINV")
    job = seeded.call(
        "POST",
        "/tenants/acme/jobs",
        json={"name": "j", "target": "python:a:b", "options": {"max_concurrency": 0}},
    )
    assert (job.status_code, job.json()["code"]) == (400, "X400007REQINV")
    bad_manifest = {
        "name": "shop",
        "jobs": {"pack": {"target": "python:a:b", "options": {"timeout": 0}}},
        "crons": {"pack": {"cron": "@daily", "overlap": "sometimes"}},
    }
    answer = seeded.call("POST", "/tenants/acme/apps", json={"manifest": bad_manifest})
    assert (answer.status_code, answer.json()["code"]) == (400, "X400006MANINV")
    problems = " ".join(answer.json()["detail"]["problems"])
    assert "options" in problems and "overlap" in problems
    listed = seeded.call("GET", S).json()["items"]
    assert [row["name"] for row in listed] == ["acme-nightly"]  # nothing was written


def test_overlap_and_timeout_can_be_patched(seeded: Api) -> None:
    body = {"job": "report", "cron": "@daily", "name": "r", "stack": "billing"}
    made = seeded.call("POST", S, json=body)
    assert made.status_code == 201, made.text
    row = S + "/billing/default/r"
    patched = seeded.call("PATCH", row, json={"overlap": "cancel_running", "timeout": 30})
    assert patched.status_code == 200, patched.text
    assert (patched.json()["overlap"], patched.json()["timeout"]) == ("cancel_running", 30)
    cleared = seeded.call("PATCH", row, json={"timeout": None}).json()
    assert cleared["timeout"] is None
