"""`celery:` targets: publish through the real worker to RabbitMQ and Redis, where a
real `celery worker` process (tests/targets/celery_app.py) consumes the task."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from cronplane.clock import FakeClock
from cronplane.processes.dispatcher import Dispatcher
from cronplane.processes.worker import Worker
from cronplane.store.database import Database
from cronplane.targets import Targets
from cronplane.targets.celery import CeleryTarget, publish_options, task_arguments
from firing_support import START, TENANT, add_job, add_schedule, items, occurrences
from required_services import require_service

HERE = Path(__file__).parent


BROKERS = {
    "rabbitmq": os.environ.get("CRONPLANE_TEST_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672//"),
    "redis": os.environ.get("CRONPLANE_TEST_REDIS_URL", "redis://127.0.0.1:6379/0"),
}
RESULT_WAIT = 45.0  # seconds for the worker to start and run the task (usually 2-3)


def reachable(url: str) -> None:
    """Skip locally, fail under CI, when nothing listens at the broker's address."""
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 0), 2):
            pass
    except OSError as error:
        require_service(f"broker {parts.scheme}://{parts.hostname}:{parts.port}", error)


@dataclass
class CeleryWorker:
    """A `celery worker` process on one unique queue, and where its task writes."""

    broker: str
    queue: str
    out: Path
    process: subprocess.Popen[bytes]
    log: Path

    def result(self, task_id: str) -> dict[str, Any]:
        """The task's record, waiting (bounded) for the worker to run it."""
        path = self.out / f"{task_id}.json"
        deadline = time.monotonic() + RESULT_WAIT
        while time.monotonic() < deadline:
            if path.exists():
                document: dict[str, Any] = json.loads(path.read_text())
                return document
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        pytest.fail(f"the celery worker did not run task {task_id}; log:\n{self.log.read_text()}")


def delete_queue(broker: str, queue: str) -> None:
    """Leave no test queue behind on the broker (best effort)."""
    from kombu import Connection

    try:
        with Connection(broker, connect_timeout=3) as connection:
            connection.default_channel.queue_delete(queue)
            # Celery routes a queue through a direct exchange of the same name.
            connection.default_channel.exchange_delete(queue)
        if broker.startswith("redis://"):
            import redis

            # kombu's Redis transport keeps the queue's exchange bindings in keys of their own.
            with redis.Redis.from_url(broker, socket_timeout=3) as client:
                client.delete(f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}")
    except Exception:
        pass  # a broker gone by now has no queue to clean


@pytest.fixture(params=sorted(BROKERS))
def celery_worker(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[CeleryWorker]:
    broker = BROKERS[request.param]
    reachable(broker)
    queue = f"cronplane-test-{uuid.uuid4().hex[:12]}"
    out = tmp_path / "out"
    out.mkdir()
    log = tmp_path / "celery-worker.log"
    env = {
        **os.environ,
        "CELERY_TEST_BROKER_URL": broker,
        "CELERY_TEST_OUT": str(out),
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    }
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "celery_app",
        "worker",
        "--pool=solo",
        "--concurrency=1",
        "-Q",
        queue,
        "-n",
        f"{queue}@127.0.0.1",
        # No cluster chatter: this worker talks to nobody but its queue.
        "--without-heartbeat",
        "--without-mingle",
        "--without-gossip",
        "--loglevel=INFO",
    ]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT)
    try:
        yield CeleryWorker(broker, queue, out, process, log)
    finally:
        # Killed, not stopped: Celery's warm and cold shutdowns both linger seconds on
        # closing an AMQP connection, and this worker has nothing left to finish.
        process.kill()
        process.wait(timeout=10)
        delete_queue(broker, queue)


def cronplane_worker(database: Database, clock: FakeClock, target: CeleryTarget) -> Worker:
    return Worker(
        database,
        clock,
        name="w1",
        heartbeat=False,
        jitter=lambda: 0.0,
        targets=Targets({"celery": target}),
    )


def test_task_published_and_run_by_a_real_worker(
    sqlite_database: Database, celery_worker: CeleryWorker
) -> None:
    database, clock = sqlite_database, FakeClock(START)
    add_job(
        database,
        target="celery:cronplane_test.record",
        options={
            "queue": celery_worker.queue,
            "priority": 3,
            "headers": {"origin": "beat"},
            "timeout": 30,
        },
    )
    add_schedule(database, name="with-args", payload={"args": [1, "two"], "kwargs": {"batch": 100}})
    add_schedule(database, name="as-kwargs", payload={"batch": 7, "region": "eu"})
    Dispatcher(database, clock, holder="d", occurrences=occurrences).tick()
    target = CeleryTarget(celery_worker.broker)
    try:
        worker = cronplane_worker(database, clock, target)
        assert worker.run_once() and worker.run_once()
    finally:
        target.close()
    published = {row.payload.get("batch", 100): row for row in items(database)}
    for row in published.values():
        assert row.status == "succeeded", row.error
        assert row.result == {
            "celery_task_id": str(row.id),
            "task": "cronplane_test.record",
            "queue": celery_worker.queue,
        }
    with_args = celery_worker.result(str(published[100].id))
    assert with_args["args"] == [1, "two"] and with_args["kwargs"] == {"batch": 100}
    context = with_args["cronplane"]
    assert context["tenant"] == TENANT and context["item_id"] == str(published[100].id)
    assert context["schedule"] == "with-args" and context["attempt"] == 1
    assert with_args["origin"] == "beat"
    # The item's timeout (the job's options.timeout here) is the task's hard time limit.
    assert with_args["timelimit"][0] == 30
    as_kwargs = celery_worker.result(str(published[7].id))
    assert as_kwargs["args"] == [] and as_kwargs["kwargs"] == {"batch": 7, "region": "eu"}


def closed_port() -> int:
    """A loopback port nothing listens on (bound a moment ago, closed now)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.mark.parametrize("scheme", ["amqp", "redis"])
def test_broker_down_is_retried_with_backoff(sqlite_database: Database, scheme: str) -> None:
    database, clock = sqlite_database, FakeClock(START)
    url = (
        f"amqp://guest:guest@127.0.0.1:{closed_port()}//"
        if scheme == "amqp"
        else f"redis://127.0.0.1:{closed_port()}/0"
    )
    add_job(
        database,
        target="celery:cronplane_test.record",
        options={"max_attempts": 3, "retry_base": 20},
    )
    add_schedule(database, payload={})
    Dispatcher(database, clock, holder="d", occurrences=occurrences).tick()
    target = CeleryTarget(url, connect_timeout=1.0)
    started = time.monotonic()
    try:
        assert cronplane_worker(database, clock, target).run_once()
    finally:
        target.close()
    assert time.monotonic() - started < 20  # bounded: one short in-call retry, then backoff
    (row,) = items(database)
    assert row.status == "queued" and row.attempts == 1 and row.error
    assert (row.available_at - clock.now()).total_seconds() == 20


def test_unset_broker_fails_without_retry(sqlite_database: Database) -> None:
    database, clock = sqlite_database, FakeClock(START)
    add_job(database, target="celery:cronplane_test.record", options={"max_attempts": 3})
    add_schedule(database, payload={})
    Dispatcher(database, clock, holder="d", occurrences=occurrences).tick()
    cronplane_worker(database, clock, CeleryTarget.from_environ({})).run_once()
    (row,) = items(database)
    assert row.status == "failed" and "CRONPLANE_CELERY_BROKER_URL is not set" in row.error


# -- payload and options mapping, pure -----------------------------------------


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({}, ([], {})),
        ({"batch": 1}, ([], {"batch": 1})),
        ({"args": [1, 2]}, ([1, 2], {})),
        ({"kwargs": {"a": 1}}, ([], {"a": 1})),
        ({"args": [1], "kwargs": {"a": 1}}, ([1], {"a": 1})),
    ],
)
def test_task_arguments(payload: dict[str, Any], expected: tuple[Any, Any]) -> None:
    assert task_arguments(payload) == expected


@pytest.mark.parametrize(
    "payload",
    [{"args": [1], "batch": 2}, {"args": "1"}, {"kwargs": [1]}],
)
def test_task_arguments_refuses_ambiguous_payloads(payload: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        task_arguments(payload)


def test_publish_options() -> None:
    assert publish_options(
        {
            "queue": "q",
            "routing_key": "r",
            "exchange": "x",
            "priority": 9,
            "expires": 60,
            "timeout": 3,
            "headers": {"origin": "beat"},
        }
    ) == {
        "queue": "q",
        "routing_key": "r",
        "exchange": "x",
        "priority": 9,
        "expires": 60.0,
        "headers": {"origin": "beat"},
    }
    for bad in (
        {"queue": ""},
        {"priority": 256},
        {"priority": True},
        {"expires": 0},
        {"headers": ["x"]},
        {"headers": {"cronplane": "forged"}},
    ):
        with pytest.raises(ValueError):
            publish_options(bad)
