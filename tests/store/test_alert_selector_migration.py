"""Migration 0022 (alert rules scoped by a selector) both ways, on both databases: the
scope CHECK takes `selector` after it and refuses it before; going down removes the
selector rules (they have no older form) and keeps the others."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from alembic import command
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from cronplane.clock import FakeClock
from cronplane.core.alerts import RuleSpec
from cronplane.service import ScheduleService
from cronplane.store.database import Database, alembic_config
from cronplane.store.tables import alert_rules

MAIL = {"host": "127.0.0.1", "port": 9, "sender": "cron@example.com", "to": ["o@example.com"]}


def names(database: Database) -> list[str]:
    with database.read() as conn:
        return sorted(conn.execute(select(alert_rules.c.name)).scalars())


def test_0022_down_drops_selector_rules_and_up_takes_them_again(database: Database) -> None:
    service = ScheduleService(database, FakeClock(datetime(2026, 3, 2, tzinfo=UTC)))
    service.add_alert_channel("acme", "ops", "email", MAIL, secret=None, actor="t")
    service.add_alert_rule("acme", RuleSpec("all", "failed", channels=("ops",)), actor="t")
    spec = RuleSpec("pay", "failed", "selector", selector="team=payments", channels=("ops",))
    service.add_alert_rule("acme", spec, actor="t")
    assert names(database) == ["all", "pay"]
    with database.begin() as conn:
        command.downgrade(alembic_config(conn), "0021")
    with database.read() as conn:
        (kept,) = conn.exec_driver_sql("SELECT name, scope FROM alert_rules").all()
    assert tuple(kept) == ("all", "tenant")
    with pytest.raises(IntegrityError), database.begin() as conn:  # the old CHECK
        conn.exec_driver_sql("UPDATE alert_rules SET scope = 'selector'")
    database.upgrade()
    service.add_alert_rule("acme", spec, actor="t")
    assert names(database) == ["all", "pay"]
    (rule,) = [r for r in service.list_alert_rules("acme") if r.name == "pay"]
    assert rule.selector == "team=payments"
