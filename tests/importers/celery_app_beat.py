"""A Celery app whose beat_schedule holds every kind of entry the importer meets."""

from __future__ import annotations

from datetime import timedelta

from celery import Celery
from celery.schedules import crontab, schedule, solar
from kombu import Queue


def _solar(event: str, lat: float, lon: float) -> solar:
    # solar() needs the `ephem` package only to compute sun times, which the
    # importer never does; build the value without it, as beat would hold it.
    value = solar.__new__(solar)
    value.event, value.lat, value.lon = event, lat, lon
    return value


app = Celery("billing", broker="memory://", set_as_current=False)
app.conf.timezone = "Europe/London"
app.conf.beat_schedule = {
    # crontab, every field kind
    "invoices every 15 min": {
        "task": "billing.tasks.send_invoices",
        "schedule": crontab(minute="*/15"),
        "kwargs": {"batch": 100},
        "options": {"queue": "billing"},
    },
    "weekday-report": {
        "task": "billing.tasks.report",
        "schedule": crontab(minute=30, hour=7, day_of_week="mon-fri"),
        "args": ["daily"],
    },
    "quarterly": {
        "task": "billing.tasks.report",
        "schedule": crontab(minute=0, hour=[1, 13], day_of_month="1", month_of_year="1,4,7,10"),
        "args": ["quarter"],
    },
    "sunday-cleanup": {
        "task": "billing.tasks.cleanup",
        "schedule": crontab(minute=0, hour=3, day_of_week="sunday"),
        "options": {
            "queue": Queue("maintenance"),
            "priority": 3,
            "expires": 600,
            "headers": {"origin": "beat"},
        },
    },
    # timedelta: minutes, hours, days, and a number of seconds
    "heartbeat": {"task": "billing.tasks.ping", "schedule": timedelta(minutes=5)},
    "sync-rates": {"task": "billing.tasks.sync_rates", "schedule": timedelta(hours=2)},
    "every-90-min": {"task": "billing.tasks.sync_rates", "schedule": timedelta(minutes=90)},
    "weekly-digest": {"task": "billing.tasks.digest", "schedule": timedelta(days=7)},
    "daily-export": {"task": "billing.tasks.export", "schedule": timedelta(days=1)},
    "seconds-as-number": {"task": "billing.tasks.ping", "schedule": 600.0},
    "schedule-object": {"task": "billing.tasks.ping", "schedule": schedule(timedelta(hours=1))},
    # below a minute, or not a whole number of minutes: every N seconds
    "every-30-seconds": {"task": "billing.tasks.ping", "schedule": 30.0},
    "flush-10s": {"task": "billing.tasks.flush", "schedule": timedelta(seconds=10)},
    "relay-90s": {"task": "billing.tasks.ping", "schedule": schedule(timedelta(seconds=90))},
    # not translatable, each for its own reason
    "sunset-lights": {"task": "billing.tasks.lights", "schedule": _solar("sunset", 51.5, -0.1)},
    "half-second": {"task": "billing.tasks.ping", "schedule": 0.5},
    "first-monday": {
        "task": "billing.tasks.report",
        "schedule": crontab(minute=0, hour=9, day_of_month="1-7", day_of_week="mon"),
    },
    "odd-args": {
        "task": "billing.tasks.ping",
        "schedule": timedelta(minutes=1),
        "args": [timedelta(seconds=1)],
    },
    "with-countdown": {
        "task": "billing.tasks.ping",
        "schedule": timedelta(minutes=10),
        "options": {"countdown": 5},
    },
}
