"""Build a real django-celery-beat database with Django's own migrations and models.

Run as a script (`python django_beat_db.py URL KINDS`), in a process of its own,
so Django's global settings never meet the test process. URL is `sqlite:///path`,
`postgresql://user@host:port/name` or `mysql://user@host:port/name`; KINDS is
`today` (the schedule kinds whose cronplane fields exist on every branch),
`all` (also clocked one-offs, one_off intervals, start_time and expires) or
`lifecycle` (only rows beat has left behind or is done with: finished and
missed one-offs, a microsecond clocked time, expired and disabled tasks,
start_time long past; their instants are fixed, 2021 and 2030). Prints the task names it made, one a line.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from urllib.parse import urlsplit


def configure(url: str) -> None:
    import django
    from django.conf import settings

    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        database = {"ENGINE": "django.db.backends.sqlite3", "NAME": parts.path[1:]}
    else:
        # A server: mysql:// (MariaDB or MySQL) or postgresql://, with its defaults.
        engine, user, port = {
            "mysql": ("mysql", "root", 3306),
            "postgresql": ("postgresql", "postgres", 5432),
        }[parts.scheme]
        if engine == "mysql":
            import pymysql

            # Django's MySQL backend asks for mysqlclient; PyMySQL stands in for
            # it (no C build), as it does for the importer.
            pymysql.install_as_MySQLdb()
        database = {
            "ENGINE": f"django.db.backends.{engine}",
            "NAME": parts.path.lstrip("/"),
            "USER": parts.username or user,
            "PASSWORD": parts.password or "",
            "HOST": parts.hostname or "127.0.0.1",
            "PORT": str(parts.port or port),
        }
    settings.configure(
        DATABASES={"default": database},
        INSTALLED_APPS=["django_celery_beat"],
        USE_TZ=True,
        TIME_ZONE="UTC",
        CELERY_TIMEZONE="UTC",
        DEFAULT_AUTO_FIELD="django.db.models.AutoField",
    )
    django.setup()


def build(kinds: str) -> list[str]:
    from django.core.management import call_command
    from django_celery_beat.models import (
        ClockedSchedule,
        CrontabSchedule,
        IntervalSchedule,
        PeriodicTask,
        SolarSchedule,
    )

    call_command("migrate", "django_celery_beat", verbosity=0)
    if kinds == "lifecycle":
        return lifecycle()

    def crontab(zone: str = "UTC", **fields: str) -> CrontabSchedule:
        schedule: CrontabSchedule = CrontabSchedule.objects.create(timezone=zone, **fields)
        return schedule

    def interval(every: int, period: str) -> IntervalSchedule:
        schedule: IntervalSchedule = IntervalSchedule.objects.create(every=every, period=period)
        return schedule

    def task(name: str, **values: object) -> None:
        PeriodicTask.objects.create(name=name, **values)

    task(
        "send invoices",
        task="billing.tasks.send_invoices",
        crontab=crontab(minute="*/15"),
        kwargs=json.dumps({"batch": 100}),
        queue="billing",
    )
    task(
        "weekday report",
        task="billing.tasks.report",
        crontab=crontab("Europe/London", minute="30", hour="7", day_of_week="mon-fri"),
        args=json.dumps(["daily"]),
    )
    task(
        "every minute of 7",  # beat's meaning: minute `*` is every minute of the hour
        task="billing.tasks.ping",
        crontab=crontab("America/New_York", hour="7"),
    )
    task(
        "first monday",
        task="billing.tasks.report",
        crontab=crontab(minute="0", hour="9", day_of_month="1-7", day_of_week="1"),
    )
    task(
        "routed",
        task="billing.tasks.sync_rates",
        interval=interval(10, IntervalSchedule.MINUTES),
        exchange="rates",
        routing_key="rates.sync",
        priority=3,
        headers=json.dumps({"origin": "beat"}),
        expire_seconds=60,
    )
    task("ninety", task="billing.tasks.sync_rates", interval=interval(90, IntervalSchedule.MINUTES))
    task("half-minute", task="billing.tasks.flush", interval=interval(30, IntervalSchedule.SECONDS))
    task("two-hourly", task="billing.tasks.ping", interval=interval(2, IntervalSchedule.HOURS))
    task("daily", task="billing.tasks.export", interval=interval(1, IntervalSchedule.DAYS))
    task(
        "sunset lights",
        task="home.tasks.lights",
        solar=SolarSchedule.objects.create(event="sunset", latitude=51.5, longitude=-0.1),
    )
    task(
        "switched off",
        task="billing.tasks.cleanup",
        crontab=crontab(minute="0", hour="3"),
        enabled=False,
    )
    task(
        "broken args",
        task="billing.tasks.ping",
        interval=interval(5, IntervalSchedule.MINUTES),
        args="[not json",
    )
    if kinds == "all":
        task(
            "launch",
            task="billing.tasks.launch",
            clocked=ClockedSchedule.objects.create(
                clocked_time=datetime(2026, 4, 8, 9, 30, tzinfo=UTC)
            ),
            one_off=True,
        )
        task(
            "campaign",
            task="billing.tasks.campaign",
            crontab=crontab(minute="0", hour="*/6"),
            start_time=datetime(2026, 4, 8, 0, 0, tzinfo=UTC),
            expires=datetime(2026, 4, 10, 0, 0, tzinfo=UTC),
        )
        task(
            "once soon",
            task="billing.tasks.ping",
            interval=interval(4, IntervalSchedule.HOURS),
            one_off=True,
        )
    return list(PeriodicTask.objects.order_by("id").values_list("name", flat=True))


def lifecycle() -> list[str]:
    """Rows as a beat that has run for a while leaves them (what `timezone.now() + delta`
    gives: microseconds), with past instants in 2021 and future ones in 2030."""
    from django_celery_beat.models import (
        ClockedSchedule,
        CrontabSchedule,
        IntervalSchedule,
        PeriodicTask,
    )

    def clocked(*parts: int) -> ClockedSchedule:
        made: ClockedSchedule = ClockedSchedule.objects.create(
            clocked_time=datetime(*parts, tzinfo=UTC)  # type: ignore[misc]
        )
        return made

    def crontab(**fields: str) -> CrontabSchedule:
        made: CrontabSchedule = CrontabSchedule.objects.create(timezone="UTC", **fields)
        return made

    ran = {"total_run_count": 1, "last_run_at": datetime(2021, 3, 1, 9, 30, 1, tzinfo=UTC)}
    PeriodicTask.objects.create(
        name="launched",  # beat ran it and disabled it: it stays in the table
        task="shop.tasks.launch",
        clocked=clocked(2021, 3, 1, 9, 30, 0, 123456),
        one_off=True,
        enabled=False,
        **ran,
    )
    PeriodicTask.objects.create(
        name="missed launch",
        task="shop.tasks.launch",
        clocked=clocked(2021, 5, 1, 8, 0),
        one_off=True,
    )
    PeriodicTask.objects.create(
        name="future launch",
        task="shop.tasks.launch",
        clocked=clocked(2030, 1, 2, 3, 4, 5, 678901),
        one_off=True,
    )
    PeriodicTask.objects.create(
        name="expired campaign",
        task="shop.tasks.campaign",
        crontab=crontab(minute="0", hour="*/6"),
        expires=datetime(2021, 6, 1, tzinfo=UTC),
    )
    PeriodicTask.objects.create(
        name="ran once",
        task="shop.tasks.warmup",
        interval=IntervalSchedule.objects.create(every=4, period=IntervalSchedule.HOURS),
        one_off=True,
        enabled=False,
        **ran,
    )
    PeriodicTask.objects.create(
        name="paused nightly",
        task="shop.tasks.cleanup",
        crontab=crontab(minute="0", hour="3"),
        enabled=False,
    )
    PeriodicTask.objects.create(
        name="old start",
        task="shop.tasks.report",
        crontab=crontab(minute="30", hour="7"),
        start_time=datetime(2021, 1, 1, tzinfo=UTC),
    )
    PeriodicTask.objects.create(
        name="later start",
        task="shop.tasks.report",
        crontab=crontab(minute="30", hour="8"),
        start_time=datetime(2030, 1, 1, tzinfo=UTC),
    )
    return list(PeriodicTask.objects.order_by("id").values_list("name", flat=True))


if __name__ == "__main__":
    configure(sys.argv[1])
    print("\n".join(build(sys.argv[2])))
