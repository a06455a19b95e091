"""Token use cases and the `cronplane token` commands, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from cronplane.cli.main import cli
from cronplane.clock import FakeClock
from cronplane.core.access import Role
from cronplane.errors import InvalidName, InvalidRequest, TokenNotFound, Unauthenticated
from cronplane.events import TOKEN_CREATED, TOKEN_REVOKED
from cronplane.service.base import Context
from cronplane.service.tokens import TokenService, hash_token
from cronplane.store.database import Database
from cronplane.store.events import list_events
from cronplane.store.tables import api_tokens

START = datetime(2025, 1, 1, tzinfo=UTC)


@pytest.fixture
def service(database: Database) -> TokenService:
    return TokenService(Context(database, FakeClock(START)))


def test_create_shows_secret_once_and_stores_only_its_hash(
    service: TokenService, database: Database
) -> None:
    created = service.create(tenant="acme", role="editor", actor="test")
    assert created.secret.startswith("cpt_") and len(created.secret) > 40
    with database.read() as conn:
        rows = conn.execute(select(api_tokens)).mappings().all()
    assert len(rows) == 1
    stored = dict(rows[0])
    assert created.secret not in {str(value) for value in stored.values()}
    assert stored["token_hash"] == hash_token(created.secret)
    assert created.token.prefix == created.secret[:12]
    assert created.token.name == "acme-editor"


def test_authenticate_gives_the_principal(service: TokenService) -> None:
    created = service.create(tenant="acme", role="operator", name="ops", actor="test")
    principal = service.authenticate(created.secret)
    assert (principal.tenant, principal.role, principal.name) == ("acme", Role.OPERATOR, "ops")
    assert principal.token_id == created.token.id


def test_platform_token_has_no_tenant(service: TokenService) -> None:
    created = service.create(tenant=None, role="admin", actor="test")
    assert service.authenticate(created.secret).is_platform


@pytest.mark.parametrize("bad", ["", "nope", "cpt_" + "x" * 43, "cpt_" + "x" * 500])
def test_unknown_tokens_are_refused(service: TokenService, bad: str) -> None:
    service.create(tenant="acme", role="admin", actor="test")
    with pytest.raises(Unauthenticated):
        service.authenticate(bad)


def test_revoked_token_is_refused_at_once(service: TokenService, database: Database) -> None:
    created = service.create(tenant="acme", role="admin", actor="test")
    service.authenticate(created.secret)
    service.revoke(str(created.token.id), actor="test")
    with pytest.raises(Unauthenticated):
        service.authenticate(created.secret)
    with pytest.raises(TokenNotFound):
        service.revoke(created.token.id, actor="test")
    with pytest.raises(TokenNotFound):
        service.revoke("not-a-uuid", actor="test")
    with database.read() as conn:
        codes = [event.code for event in list_events(conn, tenant="acme")]
    assert codes == [TOKEN_REVOKED.text, TOKEN_CREATED.text]


def test_last_used_is_recorded_at_most_once_a_minute(service: TokenService) -> None:
    clock = service.clock
    assert isinstance(clock, FakeClock)
    created = service.create(tenant="acme", role="viewer", actor="test")
    service.authenticate(created.secret)
    first = service.list()[0].last_used_at
    assert first == START
    clock.advance(30)
    service.authenticate(created.secret)
    assert service.list()[0].last_used_at == START
    clock.advance(31)
    service.authenticate(created.secret)
    assert service.list()[0].last_used_at == clock.now()


def test_list_filters_and_hides_revoked(service: TokenService) -> None:
    a = service.create(tenant="acme", role="viewer", actor="test")
    service.create(tenant="globex", role="viewer", actor="test")
    service.revoke(a.token.id, actor="test")
    assert [t.tenant for t in service.list()] == ["globex"]
    assert [t.tenant for t in service.list(tenant="acme", include_revoked=True)] == ["acme"]


def test_create_validates(service: TokenService) -> None:
    with pytest.raises(InvalidRequest):
        service.create(tenant="acme", role="root", actor="test")
    with pytest.raises(InvalidName):
        service.create(tenant="a b", role="admin", actor="test")


def test_cli_create_prints_token_alone_on_last_line(sqlite_database: Database) -> None:
    runner = CliRunner()
    url = sqlite_database.url
    result = runner.invoke(
        cli, ["token", "create", "--tenant", "acme", "--role", "editor", "--database", url]
    )
    assert result.exit_code == 0, result.output
    secret = result.output.rstrip("\n").splitlines()[-1]
    assert secret.startswith("cpt_") and " " not in secret
    service = TokenService(Context(sqlite_database, FakeClock(START)))
    assert service.authenticate(secret).role is Role.EDITOR

    listed = runner.invoke(cli, ["token", "ls", "--json", "--database", url])
    assert listed.exit_code == 0 and secret not in listed.output
    token_id = service.list()[0].id
    revoked = runner.invoke(cli, ["token", "revoke", str(token_id), "--database", url])
    assert revoked.exit_code == 0, revoked.output
    with pytest.raises(Unauthenticated):
        service.authenticate(secret)


def test_cli_create_needs_tenant_or_platform(sqlite_database: Database) -> None:
    result = CliRunner().invoke(
        cli, ["token", "create", "--role", "admin", "--database", sqlite_database.url]
    )
    assert result.exit_code != 0


def test_cached_principal_expires_and_local_revocation_is_immediate(database: Database) -> None:
    clock = FakeClock(START)
    service = TokenService(Context(database, clock), cache_seconds=5)
    created = service.create(tenant="acme", role="admin", actor="test")
    service.authenticate(created.secret)
    # Revoked behind this process's back (another node, the CLI): cached until it expires.
    TokenService(Context(database, clock)).revoke(created.token.id, actor="test")
    assert service.authenticate(created.secret).tenant == "acme"
    clock.advance(6)
    with pytest.raises(Unauthenticated):
        service.authenticate(created.secret)
    other = service.create(tenant="acme", role="viewer", actor="test")
    service.authenticate(other.secret)
    service.revoke(other.token.id, actor="test")  # revoked here: refused at once
    with pytest.raises(Unauthenticated):
        service.authenticate(other.secret)
