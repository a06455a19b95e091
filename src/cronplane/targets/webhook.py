"""`webhook:URL` — POST the payload and the run's context as signed JSON.

The request::

    POST <URL>
    Content-Type: application/json
    User-Agent: cronplane/<version>
    X-Cronplane-Delivery: <item id>            same on every attempt: an idempotency key
    X-Cronplane-Attempt: <n>
    X-Cronplane-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>." + body)>

    {"payload": {...}, "context": {"tenant", "stack", "environment", "job", "schedule",
     "schedule_id", "scheduled_for", "attempt", "item_id", "source"}}

Outcomes, by the receiver's answer:

| answer                                   | item                                      |
|------------------------------------------|-------------------------------------------|
| 2xx                                      | succeeded; result {status, body, …}       |
| 5xx, 408, 425, 429, timeout, no connect  | retried with backoff while attempts remain |
| other 4xx, 3xx (redirects not followed)  | failed at once (PermanentFailure)          |
| a denied address (cronplane.outbound)    | failed at once, X403270OUTDNY              |

What is recorded is the status and a viewer-safe excerpt of the body: at most
EXCERPT_LIMIT (512) characters, control characters replaced; both are also the
attempt's output (targets.output), for any status answered. Every connection
failure reads the same ("no answer from HOST:PORT within Ns …"), whether the
port refused, reset or never answered: a viewer of the item learns nothing
about the receiver's network. Connections go only to checked addresses of the
URL's host (cronplane.outbound: resolved once, every address judged against
CRONPLANE_OUTBOUND_ALLOW's rule, no proxy from the environment).

**Secrets.** Each job signs with its own secret. By default the secret is not
stored at all: it is derived, ``HMAC-SHA256(K, tenant/stack/job/rotation)``,
from the deployment's key K (`CRONPLANE_SECRET_KEY`). So it exists from the
job's registration on, survives every re-sync of a manifest unchanged (a
stored random secret would either be rewritten by sync or need a table of its
own), never sits in the database or a backup, and is rotated by bumping the
job's `secret_rotation` option. A receiver that already has a secret gives it
sealed: `options.secret: "sealed:v1:…"`, the output of `cronplane webhook
seal` (Fernet, keyed from K), so neither the manifest nor the database holds
it in clear. A secret in clear is refused when the job is registered
(`core.validation.validate_secret_option`), and no route answers one (job
reads show `(redacted)`). `cronplane webhook secret JOB` shows a job's
secret to an operator who holds K.

Job options read here: `timeout` (seconds, default 10, at most 300; for the
connection and for the whole response), `secret`, `secret_rotation`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import httpx
from cryptography.fernet import Fernet, InvalidToken

from cronplane import __version__, outbound
from cronplane.clock import Clock
from cronplane.core import validation
from cronplane.core.outbound import OutboundPolicy, url_host_port
from cronplane.errors import OutboundAddressDenied
from cronplane.settings import outbound_policy
from cronplane.targets import PermanentFailure, RunContext, outbound_http, output

SECRET_KEY_VARIABLE: Final = "CRONPLANE_SECRET_KEY"
SIGNATURE_HEADER: Final = "X-Cronplane-Signature"
DELIVERY_HEADER: Final = "X-Cronplane-Delivery"
ATTEMPT_HEADER: Final = "X-Cronplane-Attempt"
DEFAULT_TIMEOUT: Final = 10.0
MAX_TIMEOUT: Final = 300.0
RESULT_BODY_LIMIT: Final = 4096  # bytes read from an answer (the rest is not read)
EXCERPT_LIMIT: Final = 512  # characters of the body kept on the result or in the error
SIGNATURE_TOLERANCE: Final = 300  # seconds a receiver should accept between t and its clock
SEALED_PREFIX: Final = validation.SEALED_PREFIX
MIN_KEY_LENGTH: Final = 16
# 4xx answers that mean "not now" rather than "never": retried like a 5xx.
RETRYABLE_CLIENT_ERRORS: Final = frozenset({408, 425, 429})


class WebhookUnavailable(Exception):
    """The receiver could not take the delivery now (5xx, timeout, no connection): retried."""


@dataclass(frozen=True, slots=True)
class SecretKeyring:
    """The deployment key K and what is derived from it (per-job secrets, the sealing key)."""

    key: bytes

    def __post_init__(self) -> None:
        if len(self.key) < MIN_KEY_LENGTH:
            raise ValueError(f"{SECRET_KEY_VARIABLE} must be at least {MIN_KEY_LENGTH} bytes")

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> SecretKeyring | None:
        """The keyring from CRONPLANE_SECRET_KEY, or None when it is unset."""
        env = os.environ if environ is None else environ
        value = env.get(SECRET_KEY_VARIABLE, "")
        return cls(value.encode()) if value else None

    def _derive(self, label: str) -> bytes:
        # One key, several uses: each gets its own HMAC label so they never collide.
        return hmac.new(self.key, label.encode(), hashlib.sha256).digest()

    def job_secret(self, tenant: str, stack: str, job: str, rotation: int = 0) -> str:
        """The derived secret of one webhook job (`whsec_` + 64 hex digits)."""
        # NUL separators: names cannot contain NUL, so no two jobs share an input.
        label = f"cronplane/webhook-secret/v1\0{tenant}\0{stack}\0{job}\0{rotation}"
        return "whsec_" + self._derive(label).hex()

    def _fernet(self) -> Fernet:
        return self.sealer("cronplane/seal/v1")

    def sealer(self, label: str) -> Fernet:
        """A Fernet (encrypted and authenticated) keyed for one use, `label`: what one
        label seals, another cannot open (the console's OIDC cookies use their own)."""
        return Fernet(base64.urlsafe_b64encode(self._derive(label)))

    def seal(self, secret: str) -> str:
        """`sealed:v1:<token>`: a given secret, encrypted for a job's `secret` option."""
        if not secret:
            raise ValueError("an empty secret cannot be sealed")
        return SEALED_PREFIX + self._fernet().encrypt(secret.encode()).decode()

    def unseal(self, sealed: str) -> str:
        """The secret inside `sealed:v1:…`; ValueError when it is not sealed with this key."""
        if not sealed.startswith(SEALED_PREFIX):
            raise ValueError(f"the secret is not sealed (expected {SEALED_PREFIX}…)")
        try:
            return self._fernet().decrypt(sealed.removeprefix(SEALED_PREFIX).encode()).decode()
        except InvalidToken as error:
            raise ValueError(
                f"the secret was not sealed with this {SECRET_KEY_VARIABLE}"
            ) from error


def secret_for(
    keyring: SecretKeyring, tenant: str, stack: str, job: str, options: Mapping[str, Any]
) -> str:
    """A job's signing secret: its sealed `secret` option, else the derived one."""
    given = options.get("secret")
    if given is not None:
        if not isinstance(given, str):
            raise ValueError("options.secret must be a sealed string (cronplane webhook seal)")
        return keyring.unseal(given)
    rotation = options.get("secret_rotation", 0)
    if isinstance(rotation, bool) or not isinstance(rotation, int) or rotation < 0:
        raise ValueError("options.secret_rotation must be a whole number >= 0")
    return keyring.job_secret(tenant, stack, job, rotation)


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The signature header's value: `t=<timestamp>,v1=<hex HMAC-SHA256 of "t." + body>`."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"


def verify_signature(
    secret: str,
    header: str,
    body: bytes,
    now: float,
    tolerance: float = SIGNATURE_TOLERANCE,
) -> bool:
    """A receiver's check: some `v1` matches and `t` is within `tolerance` of `now` (seconds)."""
    timestamp: int | None = None
    candidates: list[str] = []
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t" and value.isdigit():
            timestamp = int(value)
        elif key == "v1":
            candidates.append(value)
    if timestamp is None or abs(now - timestamp) > tolerance:
        return False  # an old signature replayed, or a clock far off
    expected = sign(secret, timestamp, body).rpartition("v1=")[2]
    return any(hmac.compare_digest(expected, candidate) for candidate in candidates)


def webhook_timeout(options: Mapping[str, Any], item_timeout: float | None = None) -> float:
    """The request timeout in seconds: the item's (a schedule's own `timeout` overrides the
    job's option), at most 300; else the job's `timeout` option (default 10, within (0, 300])."""
    if item_timeout is not None and item_timeout > 0:
        return float(min(item_timeout, MAX_TIMEOUT))
    value = options.get("timeout", DEFAULT_TIMEOUT)
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not 0 < value <= MAX_TIMEOUT
    ):
        raise ValueError(f"options.timeout must be seconds in (0, {MAX_TIMEOUT:g}]")
    return float(value)


def context_document(context: RunContext) -> dict[str, Any]:
    """The `context` object of the request body."""
    return {
        "tenant": context.tenant,
        "stack": context.stack,
        "environment": context.environment,
        "job": context.job,
        "schedule": context.schedule,
        "schedule_id": None if context.schedule_id is None else str(context.schedule_id),
        "scheduled_for": None
        if context.scheduled_for is None
        else context.scheduled_for.isoformat(),
        "attempt": context.attempt,
        "item_id": str(context.item_id),
        "source": context.source,
    }


def excerpt(data: bytes, limit: int = EXCERPT_LIMIT) -> tuple[str, bool]:
    """At most `limit` characters of a response body as text a viewer may see (control
    characters but newline and tab replaced), and whether it was cut."""
    text = data.decode("utf-8", errors="replace")
    safe = "".join(
        char if char in "\n\t" or (char.isprintable() and char != "\ufffd") else "\ufffd"
        for char in text[:limit]
    )
    return safe, len(text) > limit


class WebhookTarget:
    """Delivers `webhook:` targets; one pooled HTTP client per worker process."""

    def __init__(
        self, clock: Clock, keyring: SecretKeyring | None, policy: OutboundPolicy | None = None
    ) -> None:
        self.clock = clock
        self.keyring = keyring
        # None: CRONPLANE_OUTBOUND_ALLOW's rule (read once, where the worker is made).
        self.policy = outbound_policy() if policy is None else policy
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    def client(self) -> httpx.Client:
        """The pooled client, made on first delivery (building its TLS context is not free)."""
        with self._lock:
            if self._client is None:
                # Redirects are not followed: a signed POST goes to the job's URL, or fails;
                # connections only to checked addresses, never through a proxy.
                self._client = outbound_http.http_client(self.policy)
            return self._client

    @classmethod
    def from_environ(cls, clock: Clock, environ: Mapping[str, str] | None = None) -> WebhookTarget:
        """A target keyed by CRONPLANE_SECRET_KEY (deliveries fail while it is unset)."""
        return cls(clock, SecretKeyring.from_environ(environ), outbound_policy(environ))

    def close(self) -> None:
        """Close the pooled connections."""
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def run(self, spec: str, payload: dict[str, Any], context: RunContext) -> Any:
        """POST one delivery; the result records the answer's status and capped body."""
        if self.keyring is None:
            # Unsigned deliveries would teach receivers to skip verification; refuse instead.
            raise PermanentFailure(f"{SECRET_KEY_VARIABLE} is not set: webhooks cannot be signed")
        try:
            secret = secret_for(
                self.keyring, context.tenant, context.stack, context.job, context.options
            )
            timeout = webhook_timeout(context.options, context.timeout)
        except ValueError as error:
            raise PermanentFailure(f"webhook job {context.job!r}: {error}") from error
        body = json.dumps(
            {"payload": payload, "context": context_document(context)},
            separators=(",", ":"),
            ensure_ascii=False,
        ).encode()
        timestamp = int(self.clock.now().timestamp())
        headers = {
            "Content-Type": "application/json",
            "User-Agent": f"cronplane/{__version__}",
            DELIVERY_HEADER: str(context.item_id),
            ATTEMPT_HEADER: str(context.attempt),
            SIGNATURE_HEADER: sign(secret, timestamp, body),
        }
        started = self.clock.monotonic()
        try:
            status, reason, data = self._post(spec, body, headers, timeout, started)
        except OutboundAddressDenied as error:
            raise PermanentFailure(str(error)) from None
        except httpx.HTTPError:
            # One text for refused, reset and timed out (no port scan through the error).
            try:
                host, port = url_host_port(spec)
            except ValueError:
                host, port = "the webhook's host", 0
            raise WebhookUnavailable(
                "webhook: " + outbound.uniform_failure(host, port, timeout)
            ) from None
        elapsed_ms = round((self.clock.monotonic() - started) * 1000)
        text, truncated = excerpt(data)
        # The attempt's output (targets.output), a refusal's as a success's.
        output.note(status=status, body=text, truncated=truncated)
        if 200 <= status < 300:
            return {
                "status": status,
                "body": text,
                "truncated": truncated,
                "elapsed_ms": elapsed_ms,
            }
        message = f"webhook answered HTTP {status} {reason}: {text}{' …' if truncated else ''}"
        if status >= 500 or status in RETRYABLE_CLIENT_ERRORS:
            raise WebhookUnavailable(message)
        raise PermanentFailure(message)

    def _post(
        self, url: str, body: bytes, headers: dict[str, str], timeout: float, started: float
    ) -> tuple[int, str, bytes]:
        """POST and read at most RESULT_BODY_LIMIT + 1 bytes, within `timeout` overall."""
        with self.client().stream(
            "POST", url, content=body, headers=headers, timeout=httpx.Timeout(timeout)
        ) as response:
            data = bytearray()
            # httpx's timeout bounds each read; the deadline bounds a receiver that drips.
            for chunk in response.iter_bytes():
                data.extend(chunk)
                if len(data) > RESULT_BODY_LIMIT:
                    break
                if self.clock.monotonic() - started > timeout:
                    raise httpx.ReadTimeout("response exceeded the job's timeout")
            return response.status_code, response.reason_phrase, bytes(data)
