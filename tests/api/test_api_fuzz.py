"""Schemathesis against the OpenAPI document: no server errors, no answer outside the schema.

Bounded for CI: `MAX_EXAMPLES` valid and as many invalid cases per operation and database
(SQLite and PostgreSQL), at least 2,000 requests in all (asserted). A
platform admin token is sent, so random tenants are reachable and the cases
get past authentication into the routes and the service; tenants `acme` and
`globex` are seeded so some requests hit real rows.

Hypothesis drives each operation's strategy directly (schemathesis's pytest
plugin does not yet run under this pytest); a failing check is shrunk, then
recorded, and every operation still runs.
"""

from __future__ import annotations

import itertools
import os
from typing import Any

import schemathesis
from api_support import make_api, seed_tenant
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from cronplane.store.database import Database

MAX_EXAMPLES = int(os.environ.get("CRONPLANE_FUZZ_EXAMPLES", "20"))
# Valid inputs (must never answer 5xx or off-schema) and invalid ones (must be refused, coded).
MODES = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
MIN_REQUESTS_PER_DATABASE = 1_000  # two databases: at least 2,000 requests
# Codes for a rule the document describes (shape, type, name pattern, target
# schemes, If-Match): a POSITIVE case answered with one of them means the
# schema promised more than the server accepts. Semantic refusals (a cron the
# parser refuses, an unknown zone, a missing row) stay allowed.
DESCRIBED_RULES = frozenset({"X400007REQINV", "X400005NAMINV", "X400008TGTINV"})
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]


def semantic(answer: dict[str, Any]) -> bool:
    """A refusal no schema can describe: a cursor this server did not make, or a
    platform token's seed sync without a tenant (the rule depends on the token)."""
    detail = answer.get("detail") or {}
    return detail.get("field") == "cursor" or "platform token" in str(answer.get("message"))


def fuzz(app: Any, headers: dict[str, str]) -> tuple[int, list[str]]:
    """Run every operation's generated cases; return (requests made, failures)."""
    schema = schemathesis.openapi.from_asgi("/api/v1/openapi.json", app)
    count = 0
    failures: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    for operation, mode in itertools.product(operations, MODES):

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=MAX_EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def run(case: schemathesis.Case) -> None:
            nonlocal count
            count += 1
            response = case.call_and_validate(headers=headers, checks=CHECKS)
            # run() is called within this iteration, so `mode` is the current one.
            if mode is GenerationMode.POSITIVE and response.status_code == 400:  # noqa: B023
                answer = response.json()
                code = answer.get("code")
                assert code not in DESCRIBED_RULES or semantic(answer), (
                    f"a valid request was refused: {code} {response.json().get('message')}\n"
                    f"{case.method} {case.formatted_path} {case.body!r}"
                )

        try:
            run()
        except Unsatisfiable:
            pass  # nothing to make invalid (no parameters, no body): /healthz and friends
        except Exception as error:
            failures.append(f"{operation.label} ({mode.value}): {error}")
    return count, failures


def test_fuzz_the_openapi_document(database: Database) -> None:
    api = make_api(database)
    seed_tenant(api.service, "acme")
    seed_tenant(api.service, "globex")
    count, failures = fuzz(api.app, api.headers(None, "admin"))
    assert not failures, "\n\n".join(failures)
    if MAX_EXAMPLES >= 20:
        assert count >= MIN_REQUESTS_PER_DATABASE, count
