"""Fixtures for the API tests: the app over each database, seeded with two tenants."""

from __future__ import annotations

import pytest
from api_support import Api, make_api, seed_tenant

from cronplane.store.database import Database


@pytest.fixture
def api(database: Database) -> Api:
    """The API over the parametrized database (SQLite file, PostgreSQL)."""
    return make_api(database)


@pytest.fixture
def seeded(api: Api) -> Api:
    """Tenants `acme` and `globex`, each with job billing/report and a nightly schedule."""
    seed_tenant(api.service, "acme")
    seed_tenant(api.service, "globex")
    return api
