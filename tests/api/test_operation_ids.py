"""Readable OpenAPI operation ids (issue 42): `schedules_create`, not FastAPI's
`create_schedule_api_v1_tenants__tenant__schedules_post`, for every operation
of the document a generated client is made from (docs/api.md)."""

from __future__ import annotations

import re

from api_support import Api

from cronplane.api.operations import OPERATIONS

READABLE = re.compile(r"^[a-z]+(_[a-z]+)+$")
# Words of a path or a method that FastAPI's default puts in an id; none may appear.
FRAGMENTS = ("api", "v1", "tenant", "post", "put", "patch", "delete", "environment", "stack")


def test_every_operation_id_is_readable_unique_and_names_its_resource(api: Api) -> None:
    document = api.client.get("/api/v1/openapi.json").json()
    ids = [
        (method.upper(), path, operation["operationId"])
        for path, item in document["paths"].items()
        for method, operation in item.items()
    ]
    assert len(ids) == len(OPERATIONS)  # every route is in the document, none is left over
    names = [name for _, _, name in ids]
    assert len(set(names)) == len(names), "operation ids are not unique"
    for method, path, name in ids:
        assert READABLE.match(name), (method, path, name)
        words = name.split("_")
        assert not set(words) & set(FRAGMENTS), (method, path, name)
        assert len(words) <= 3, (method, path, name)
    by_route = {(method, path): name for method, path, name in ids}
    key = "/api/v1/tenants/{tenant}/schedules/{stack}/{environment}/{name}"
    assert by_route["POST", "/api/v1/tenants/{tenant}/schedules"] == "schedules_create"
    assert by_route["GET", "/api/v1/tenants/{tenant}/schedules"] == "schedules_list"
    assert by_route["GET", key] == "schedules_get"
    assert by_route["POST", key + "/pause"] == "schedules_pause"
    assert by_route["GET", "/api/v1/tenants/{tenant}/jobs/{stack}/{name}"] == "jobs_get"


def test_no_component_keeps_a_path_long_name(api: Api) -> None:
    """Request-body and response component names are built from the ids too."""
    document = api.client.get("/api/v1/openapi.json").json()
    for name in document.get("components", {}).get("schemas", {}):
        assert "api_v1" not in name and "__" not in name, name
