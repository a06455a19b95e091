"""Property (issue 21): any input gives a result or a coded error, and quickly.

Over the manifest loader (YAML text, and documents dumped then mutated) and
every create and update body of the API: whatever hypothesis makes, the
answer is a value or a `CronplaneError` (over HTTP: a status below 500 with a
coded body), never another exception, within 50 ms for inputs under the size
limits. Time is measured per example as the CPU time of this process (the
app answers in a thread of it), since four test runs share two cores and
wall time measures the neighbours; an input that makes the code slow costs
CPU all the same. The first calls warm the app up and are not timed, and a
slow answer is asked again once (a GC pause or a first import is slow once;
an input that is slow to answer is slow both times).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from api_support import Api, make_api, seed_tenant
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cronplane.errors import CronplaneError
from cronplane.manifest import Manifest, parse_manifest
from cronplane.store.database import Database
from hostile_support import billion_laughs

BUDGET = 0.050  # seconds per answer
WARM_UP = 5  # calls not timed
CODED = re.compile(r"X\d{6}[A-Z]{6}")
EXAMPLES = 150

HOSTILE_TEXT = st.sampled_from(
    ["\ud800", "a\udfffb", "\x00", ".", "..", "", " ", "x" * 300, "0 0 * * *", "H/5 * * * *",
     "UTC", "Europe/Paris", "python:m:f", "webhook:http://[", "webhook:https://e.com/h",
     "sealed:v1:abc", "report", "billing", "prod", "${x}", "*", "W/\"1\"", "true"]
)  # fmt: skip
TEXT = st.one_of(HOSTILE_TEXT, st.text(max_size=20))
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**64), st.floats(allow_nan=False), TEXT
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=12,
)


def fields(*names: str) -> st.SearchStrategy[dict[str, Any]]:
    """Bodies with any subset of `names` (and sometimes an unknown key), any values."""
    known = st.fixed_dictionaries({}, optional=dict.fromkeys(names, JSON))
    return st.one_of(known, JSON, st.builds(lambda b, v: {**b, "zzz": v}, known, JSON))


SCHEDULE = ("job", "cron", "name", "stack", "environment", "timezone", "payload",
            "misfire_grace", "overlap", "enabled")  # fmt: skip
JOB = ("name", "target", "stack", "title", "kind", "payload", "payload_schema", "options",
       "status")  # fmt: skip
WRITES: list[tuple[str, str, st.SearchStrategy[Any]]] = [
    ("POST", "/api/v1/tenants/acme/schedules", fields(*SCHEDULE)),
    ("PATCH", "/api/v1/tenants/acme/schedules/billing/prod/acme-nightly", fields(*SCHEDULE[:1], *SCHEDULE[5:], "cron")),
    ("POST", "/api/v1/tenants/acme/jobs", fields(*JOB)),
    ("PATCH", "/api/v1/tenants/acme/jobs/billing/report", fields(*JOB[1:2], *JOB[3:])),
    ("POST", "/api/v1/tenants/acme/sync", fields("stack", "environment", "crons", "dry_run")),
    ("POST", "/api/method/shc.schedule.sync", fields("stack", "environment", "crons", "tenant", "dry_run")),
    ("POST", "/api/v1/tenants/acme/apps", fields("manifest", "environment", "dry_run")),
    ("POST", "/api/v1/cron/explain", fields("expression", "timezone", "count", "after", "seed")),
]  # fmt: skip


class Timer:
    """Times calls after a warm-up; a slow one is repeated once before it counts."""

    def __init__(self) -> None:
        self.calls = 0

    def check(self, call: Callable[[], Any], what: str) -> Any:
        self.calls += 1
        started = time.process_time()
        result = call()
        elapsed = time.process_time() - started
        if self.calls > WARM_UP and elapsed > BUDGET:
            started = time.process_time()
            result = call()
            elapsed = time.process_time() - started
            assert elapsed <= BUDGET, f"{elapsed * 1000:.0f} ms (twice) for {what}"
        return result


def load(text: str | bytes) -> Manifest | CronplaneError:
    try:
        return parse_manifest(text)
    except CronplaneError as error:
        return error


MANIFEST_SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)


@MANIFEST_SETTINGS
@given(st.one_of(st.text(max_size=200), st.binary(max_size=200)))
def test_any_text_loads_or_is_a_coded_error(text: str | bytes) -> None:
    Timer().check(lambda: load(text), repr(text)[:200])


DOCUMENTS = st.fixed_dictionaries(
    {},
    optional={
        "name": JSON,
        "jobs": st.one_of(JSON, st.dictionaries(TEXT, fields(*JOB), max_size=3)),
        "crons": st.one_of(JSON, st.dictionaries(TEXT, st.one_of(TEXT, fields(*SCHEDULE)), max_size=3)),
        "version": JSON,
    },
)  # fmt: skip


@MANIFEST_SETTINGS
@given(DOCUMENTS, st.integers(0, 400), st.sampled_from(["", "&a ", "*a", "[", "{", "\t", "!!set "]))
def test_any_manifest_document_loads_or_is_a_coded_error(
    document: dict[str, Any], cut: int, splice: str
) -> None:
    timer = Timer()
    timer.calls = WARM_UP  # the loader needs no warm-up
    text = yaml.safe_dump(document, allow_unicode=True)
    for variant in (text, text[:cut] + splice + text[cut:], billion_laughs(3, 4) + text):
        timer.check(lambda variant=variant: load(variant), variant[:200])  # type: ignore[misc]


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Api:
    """One app over one SQLite file for every example (rows accumulate, as in use)."""
    path: Path = tmp_path_factory.mktemp("hostile") / "cronplane.db"
    database = Database(f"sqlite:///{path}")
    database.upgrade()
    made = make_api(database)
    seed_tenant(made.service, "acme")
    return made


@pytest.mark.parametrize(
    ("method", "path", "bodies"), WRITES, ids=[w[1] + " " + w[0] for w in WRITES]
)
def test_any_body_gets_a_result_or_a_coded_error(
    api: Api, method: str, path: str, bodies: st.SearchStrategy[Any]
) -> None:
    headers = {**api.headers(None, "admin"), "Content-Type": "application/json"}
    timer = Timer()

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(bodies)
    def answer(body: Any) -> None:
        content = json.dumps(body).encode()
        response = timer.check(
            lambda: api.client.request(method, path, content=content, headers=headers),
            f"{method} {path} {content[:200]!r}",
        )
        assert response.status_code < 500, (response.text, content[:300])
        if response.status_code >= 400:
            assert CODED.fullmatch(response.json()["code"]), response.text

    answer()
