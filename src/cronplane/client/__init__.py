"""cronplane's Python client: `Client(url, token, tenant=...)` (docs/client.md).

    from cronplane.client import Client

    with Client("http://127.0.0.1:8080", token="cpt_…", tenant="acme") as client:
        client.jobs.register("report", "python:billing.jobs:report")
        client.schedules.create("report", "0 2 * * *", name="nightly")
        for schedule in client.schedules.list():
            print(schedule.name, schedule.next_run)

Three layers, one HTTP implementation:

| module | what |
|---|---|
| `client.client`, `client.schedules` | `Client`: resources (`schedules`, `jobs`, `runs`, `alerts`, `audit`, `environments`) in one tenant, stack and environment |
| `client.remote` (+ `queue`, `alerts`, `versions`, `promotion`, `audit`) | `RemoteService`: the service's use cases over HTTP, a `ControlPlane` (the remote CLI's) |
| `client.http` | `RemoteHTTP`: the connection pool, requests, coded errors raised again |

A coded error answer raises the `cronplane.errors` class the server raised
(`NotFound`, `Conflict`, `StaleRevision`, …, all `CronplaneError`); a server
that cannot be reached raises `Unavailable`.
"""

from __future__ import annotations

from cronplane.client.client import Alerts, Audit, Client, Jobs, Runs
from cronplane.client.promotion import Environments
from cronplane.client.remote import RemoteService
from cronplane.client.schedules import Schedules

__all__ = [
    "Alerts",
    "Audit",
    "Client",
    "Environments",
    "Jobs",
    "RemoteService",
    "Runs",
    "Schedules",
]
