"""How an alert's notifications went: each channel's last delivery on the alert row
(written by targets.notify, in the transaction that records the attempt), and the
open alerts counted by it (the `cronplane_open_alerts_by_delivery` gauge)."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from sqlalchemy import Connection, select, update

from cronplane.core.alerts import DELIVERY_ORDER, worst_delivery
from cronplane.store.tables import alerts


def record_delivery(
    conn: Connection, alert_id: UUID, channel: str, state: str, at: datetime, error: str | None
) -> UUID | None:
    """Set an alert's last delivery on `channel` (sent, retrying or failed); its schedule's
    id, or None when the alert is gone. `alert_values` leaves the column to this writer
    alone, so an evaluator writing the alert back never undoes a delivery's record."""
    row = conn.execute(
        select(alerts.c.schedule_id, alerts.c.deliveries)
        .where(alerts.c.id == alert_id)
        .with_for_update()
    ).first()
    if row is None:
        return None
    kept = dict(row[1] or {})
    kept[channel] = {"state": state, "at": at.isoformat(), "error": error}
    conn.execute(update(alerts).where(alerts.c.id == alert_id).values(deliveries=kept))
    schedule_id: UUID = row[0]
    return schedule_id


def open_by_delivery(conn: Connection) -> dict[str, int]:
    """Open alerts per their worst channel's last delivery (`none`: not tried yet)."""
    query = select(alerts.c.deliveries).where(alerts.c.status == "open")
    counts = dict.fromkeys((*DELIVERY_ORDER, "none"), 0)
    for (deliveries,) in conn.execute(query):
        counts[worst_delivery(deliveries or {}) or "none"] += 1
    return counts
