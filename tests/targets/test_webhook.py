"""`webhook:` targets through the real worker against a receiver on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from webhook_receiver import Answer, Receiver, running_receiver, signature_valid

from cronplane.clock import FakeClock
from cronplane.processes.dispatcher import Dispatcher
from cronplane.processes.worker import Worker
from cronplane.store.database import Database
from cronplane.targets import PermanentFailure, RunContext, Targets
from cronplane.targets.webhook import (
    EXCERPT_LIMIT,
    SIGNATURE_HEADER,
    SecretKeyring,
    WebhookTarget,
    secret_for,
    sign,
    verify_signature,
    webhook_timeout,
)
from firing_support import START, TENANT, add_job, add_schedule, items, occurrences

KEYRING = SecretKeyring(b"test-deployment-key-0123456789")
JOB_SECRET = KEYRING.job_secret(TENANT, "default", "job")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver() as started:
        yield started


@pytest.fixture
def target(clock: FakeClock) -> Iterator[WebhookTarget]:
    webhook = WebhookTarget(clock, KEYRING)
    yield webhook
    webhook.close()


def scheduled(
    database: Database, clock: FakeClock, url: str, payload: dict[str, Any], **options: Any
) -> None:
    """A webhook job, a schedule for it, and one fire of that schedule."""
    add_job(database, target=f"webhook:{url}", options=options)
    add_schedule(database, name="nightly", payload=payload)
    Dispatcher(database, clock, holder="d", occurrences=occurrences).tick()


def work(database: Database, clock: FakeClock, target: WebhookTarget) -> bool:
    worker = Worker(
        database,
        clock,
        name="w1",
        heartbeat=False,
        jitter=lambda: 0.0,
        targets=Targets({"webhook": target}),
    )
    return worker.run_once()


def test_success_posts_signed_payload_and_context(
    database: Database, clock: FakeClock, receiver: Receiver, target: WebhookTarget
) -> None:
    scheduled(database, clock, receiver.url, {"batch": 100})
    receiver.answer(Answer(200, b'{"accepted": true}'))
    assert work(database, clock, target)
    (item,) = items(database)
    assert item.status == "succeeded" and item.attempts == 1
    assert item.result["status"] == 200
    assert item.result["body"] == '{"accepted": true}'
    assert item.result["truncated"] is False
    (delivery,) = receiver.deliveries
    assert delivery.headers["Content-Type"] == "application/json"
    assert delivery.headers["X-Cronplane-Delivery"] == str(item.id)
    assert delivery.headers["X-Cronplane-Attempt"] == "1"
    # The receiver verifies with nothing but the secret and hmac.
    assert signature_valid(JOB_SECRET, delivery.headers[SIGNATURE_HEADER], delivery.body)
    assert not signature_valid("wrong", delivery.headers[SIGNATURE_HEADER], delivery.body)
    assert verify_signature(
        JOB_SECRET, delivery.headers[SIGNATURE_HEADER], delivery.body, START.timestamp()
    )
    document = delivery.document
    assert document["payload"] == {"batch": 100}
    assert document["context"] == {
        "tenant": TENANT,
        "stack": "default",
        "environment": "default",
        "job": "job",
        "schedule": "nightly",
        "schedule_id": str(item.schedule_id),
        "scheduled_for": START.isoformat(),
        "attempt": 1,
        "item_id": str(item.id),
        "source": "schedule",
    }


def test_server_error_is_retried_with_backoff_then_succeeds(
    database: Database, clock: FakeClock, receiver: Receiver, target: WebhookTarget
) -> None:
    scheduled(database, clock, receiver.url, {}, max_attempts=3, retry_base=30)
    receiver.answer(Answer(503, b"try later"), Answer(200, b"done"))
    assert work(database, clock, target)
    (item,) = items(database)
    assert item.status == "queued" and item.attempts == 1
    assert "HTTP 503" in item.error and "try later" in item.error
    assert (item.available_at - clock.now()).total_seconds() == 30
    assert not work(database, clock, target)  # not before the backoff
    clock.advance(30)
    assert work(database, clock, target)
    (item,) = items(database)
    assert item.status == "succeeded" and item.attempts == 2
    assert item.result["body"] == "done"
    first, second = receiver.deliveries
    assert first.headers["X-Cronplane-Delivery"] == second.headers["X-Cronplane-Delivery"]
    assert [first.headers["X-Cronplane-Attempt"], second.headers["X-Cronplane-Attempt"]] == [
        "1",
        "2",
    ]
    assert second.document["context"]["attempt"] == 2


def test_timeout_is_retried(
    database: Database, clock: FakeClock, receiver: Receiver, target: WebhookTarget
) -> None:
    scheduled(database, clock, receiver.url, {}, timeout=0.3, max_attempts=2, retry_base=10)
    receiver.answer(Answer(200, b"late", delay=1.0), Answer(200, b"in time"))
    assert work(database, clock, target)
    (item,) = items(database)
    # A timeout reads like a refusal (no port scan through the error): see the next test.
    assert item.status == "queued" and item.error.endswith(
        f"webhook: no answer from 127.0.0.1:{receiver.url.split(':')[2].split('/')[0]} within 0.3s "
        "(could not connect, or the connection failed)"
    )
    clock.advance(10)
    assert work(database, clock, target)
    (item,) = items(database)
    assert item.status == "succeeded" and item.result["body"] == "in time"


def test_client_error_fails_at_once_with_status_and_body(
    database: Database, clock: FakeClock, receiver: Receiver, target: WebhookTarget
) -> None:
    scheduled(database, clock, receiver.url, {}, max_attempts=5)
    receiver.answer(Answer(422, b'{"error": "batch must be positive"}'))
    assert work(database, clock, target)
    (item,) = items(database)
    assert item.status == "failed" and item.attempts == 1
    assert item.error.startswith("webhook answered HTTP 422 Unprocessable Entity")
    assert "batch must be positive" in item.error
    assert len(receiver.deliveries) == 1


def test_too_many_requests_is_retried(
    database: Database, clock: FakeClock, receiver: Receiver, target: WebhookTarget
) -> None:
    scheduled(database, clock, receiver.url, {}, max_attempts=2)
    receiver.answer(Answer(429, b"slow down"))
    work(database, clock, target)
    (item,) = items(database)
    assert item.status == "queued" and "HTTP 429" in item.error


def test_redirect_is_not_followed(
    database: Database, clock: FakeClock, receiver: Receiver, target: WebhookTarget
) -> None:
    scheduled(database, clock, receiver.url, {})
    receiver.answer(Answer(302, b"", headers={"Location": "http://127.0.0.1:9/elsewhere"}))
    work(database, clock, target)
    (item,) = items(database)
    assert item.status == "failed" and "HTTP 302" in item.error
    assert len(receiver.deliveries) == 1


def test_connection_refused_is_retried(
    database: Database, clock: FakeClock, target: WebhookTarget
) -> None:
    with running_receiver() as gone:
        url = gone.url  # a port that was ours a moment ago, closed now
    scheduled(database, clock, url, {}, max_attempts=2, timeout=0.3)
    work(database, clock, target)
    (item,) = items(database)
    port = url.rsplit(":", 1)[1].split("/")[0]
    assert item.status == "queued" and item.error.endswith(
        f"webhook: no answer from 127.0.0.1:{port} within 0.3s "
        "(could not connect, or the connection failed)"
    )


def test_response_body_is_capped(
    database: Database, clock: FakeClock, receiver: Receiver, target: WebhookTarget
) -> None:
    scheduled(database, clock, receiver.url, {})
    receiver.answer(Answer(200, b"x\x1b[31m" + b"x" * 20_000))
    work(database, clock, target)
    (item,) = items(database)
    assert item.status == "succeeded" and "\x1b" not in item.result["body"]
    assert len(item.result["body"]) == EXCERPT_LIMIT and item.result["truncated"] is True


def test_error_body_is_capped_within_the_error_column(
    database: Database, clock: FakeClock, receiver: Receiver, target: WebhookTarget
) -> None:
    scheduled(database, clock, receiver.url, {})
    receiver.answer(Answer(400, b"e" * 20_000))
    work(database, clock, target)
    (item,) = items(database)
    assert item.status == "failed" and item.error.endswith(" …")
    assert len(item.error) < EXCERPT_LIMIT + 100


def test_sealed_given_secret_signs(
    database: Database, clock: FakeClock, receiver: Receiver, target: WebhookTarget
) -> None:
    sealed = KEYRING.seal("the-receivers-own-secret")
    assert "the-receivers-own-secret" not in sealed
    scheduled(database, clock, receiver.url, {}, secret=sealed)
    work(database, clock, target)
    (delivery,) = receiver.deliveries
    header = delivery.headers[SIGNATURE_HEADER]
    assert signature_valid("the-receivers-own-secret", header, delivery.body)
    assert not signature_valid(JOB_SECRET, header, delivery.body)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"secret": "plain-text"}, "not sealed"),
        ({"secret": SecretKeyring(b"another-key-0123456789").seal("x")}, "not sealed with this"),
        ({"timeout": 0}, "options.timeout"),
        ({"secret_rotation": -1}, "secret_rotation"),
    ],
)
def test_bad_options_fail_without_delivery(
    database: Database,
    clock: FakeClock,
    receiver: Receiver,
    target: WebhookTarget,
    options: dict[str, Any],
    message: str,
) -> None:
    scheduled(database, clock, receiver.url, {}, max_attempts=3, **options)
    work(database, clock, target)
    (item,) = items(database)
    assert item.status == "failed" and message in item.error
    assert receiver.deliveries == []


def test_missing_secret_key_fails_without_delivery(
    database: Database, clock: FakeClock, receiver: Receiver
) -> None:
    scheduled(database, clock, receiver.url, {}, max_attempts=3)
    unkeyed = WebhookTarget.from_environ(clock, {})
    try:
        work(database, clock, unkeyed)
    finally:
        unkeyed.close()
    (item,) = items(database)
    assert item.status == "failed" and "CRONPLANE_SECRET_KEY is not set" in item.error
    assert receiver.deliveries == []


# -- secrets and signatures, without a server ----------------------------------


def test_derived_secrets_differ_per_job_and_rotation() -> None:
    secrets = {
        KEYRING.job_secret("a", "s", "j"),
        KEYRING.job_secret("b", "s", "j"),
        KEYRING.job_secret("a", "t", "j"),
        KEYRING.job_secret("a", "s", "k"),
        KEYRING.job_secret("a", "s", "j", rotation=1),
        SecretKeyring(b"another-key-0123456789").job_secret("a", "s", "j"),
    }
    assert len(secrets) == 6
    assert KEYRING.job_secret("a", "s", "j") == KEYRING.job_secret("a", "s", "j")
    assert secret_for(KEYRING, "a", "s", "j", {"secret_rotation": 1}) == KEYRING.job_secret(
        "a", "s", "j", 1
    )


def test_short_key_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 16"):
        SecretKeyring.from_environ({"CRONPLANE_SECRET_KEY": "short"})


def test_signature_rejects_tampering_and_replay() -> None:
    body = json.dumps({"payload": {}}).encode()
    header = sign("s", 1_700_000_000, body)
    assert verify_signature("s", header, body, 1_700_000_100)
    assert not verify_signature("s", header, body + b" ", 1_700_000_100)
    assert not verify_signature("s", header, body, 1_700_000_000 + 301)  # replayed later
    assert not verify_signature("s", "v1=abc", body, 1_700_000_000)  # no timestamp
    # Two v1 values (a receiver mid-rotation) pass when one matches.
    rotated = header + ",v1=" + "0" * 64
    assert verify_signature("s", rotated, body, 1_700_000_000)


def test_permanent_failure_is_an_exception_type() -> None:
    context = RunContext(
        tenant="t",
        stack="s",
        environment="e",
        job="j",
        item_id=__import__("uuid").uuid4(),
        schedule_id=None,
        schedule=None,
        scheduled_for=None,
        attempt=1,
        source="api",
    )
    target = WebhookTarget(FakeClock(START), None)
    with pytest.raises(PermanentFailure):
        target.run("http://127.0.0.1:9/", {}, context)
    target.close()


def test_the_items_timeout_is_the_request_timeout_capped_at_300() -> None:
    # A schedule's `timeout` travels with the item and replaces the job's option.
    assert webhook_timeout({"timeout": 5}, 42) == 42.0
    assert webhook_timeout({}, 3600) == 300.0
    assert webhook_timeout({"timeout": 5}, None) == 5.0
    assert webhook_timeout({}, None) == 10.0
