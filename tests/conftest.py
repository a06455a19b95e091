"""Session-wide fixtures: where PostgreSQL is, and the rule that CI never skips it."""

from __future__ import annotations

import os

import pytest

PG_ADMIN_URL = os.environ.get(
    "CRONPLANE_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


def under_ci() -> bool:
    """CI sets CI=true: there a missing service fails the test instead of skipping it."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require_service(name: str, error: Exception) -> None:
    """Skip locally when a service is missing; fail under CI."""
    message = f"{name} is not reachable: {error}"
    if under_ci():
        pytest.fail(message + " (CI=true: services must run)", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def pg_admin_url() -> str:
    """The admin URL of the local PostgreSQL server (checked reachable)."""
    import psycopg

    plain = PG_ADMIN_URL.replace("postgresql+psycopg://", "postgresql://")
    try:
        with psycopg.connect(plain, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as error:
        require_service("PostgreSQL", error)
    return PG_ADMIN_URL
