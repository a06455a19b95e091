"""`system:deliver` — send one alert notification on one channel.

The payload (written by `cronplane.service.alerting`) names the tenant, the
channel, the kind (opened, repeated, recovered), a one-line summary and the
alert. The channel is read at delivery time and its sealed secret unsealed
with the deployment key (`CRONPLANE_SECRET_KEY`, the webhook target's keyring):

- `webhook`: POST `{"kind", "summary", "alert", "console_url"}` as JSON,
  signed exactly as a webhook target signs (`X-Cronplane-Signature`,
  `X-Cronplane-Delivery` = the delivery item's id, same on every attempt);
- `slack`: POST `{"text": summary + a link to the console}` to the sealed
  incoming-webhook URL;
- `email`: one message over SMTP (STARTTLS when configured, verified against
  `ca_file` or the system's CAs; login, only after it, with the sealed password
  when a username is set).

A receiver that fails (5xx, 408/425/429, no connection, SMTP temporary error)
raises: the worker retries with backoff (`DELIVER_OPTIONS`). A 4xx, a missing
channel or an unsealable secret fails at once. Either way the attempt is
recorded in the tenant's ledger (`V200303ALTSNT` / `X200304ALTDLF`). Error
texts never carry the secret (the Slack URL included): they name the channel.

Every connection (HTTP and SMTP) goes only to checked addresses of its host
(cronplane.outbound, CRONPLANE_OUTBOUND_ALLOW): a denied one fails the delivery
at once with X403270OUTDNY, the Slack URL's host included (it is sealed, so it
is first judged here, at send). A connection that fails reads the same whatever
failed (refused, reset, timed out).
"""

from __future__ import annotations

import json
import os
import smtplib
import ssl
from email.message import EmailMessage
from typing import Any, Final
from uuid import UUID

import httpx

from cronplane import __version__, outbound
from cronplane import events as ev
from cronplane.clock import Clock
from cronplane.core.alerts import Channel, ChannelKind
from cronplane.core.outbound import OutboundPolicy
from cronplane.errors import OutboundAddressDenied
from cronplane.settings import outbound_policy
from cronplane.store import alert_deliveries
from cronplane.store import alert_rules as rules_store
from cronplane.store.database import Database
from cronplane.store.events import append_event
from cronplane.targets import PermanentFailure, RunContext, outbound_http
from cronplane.targets.webhook import (
    ATTEMPT_HEADER,
    DELIVERY_HEADER,
    RETRYABLE_CLIENT_ERRORS,
    SECRET_KEY_VARIABLE,
    SIGNATURE_HEADER,
    SecretKeyring,
    sign,
)

PUBLIC_URL_VARIABLE: Final = "CRONPLANE_PUBLIC_URL"
TIMEOUT: Final = 10.0
ACTOR: Final = "alerts"


def _attempts(context: RunContext) -> int:
    """How many attempts the delivery item has (its job's options; DELIVER_OPTIONS)."""
    value = context.options.get("max_attempts")
    return value if isinstance(value, int) and value > 0 else 1


class DeliveryUnavailable(Exception):
    """The receiver could not take the notification now: retried by the queue."""


def console_link(channel: Channel, tenant: str) -> str | None:
    """Where people look at the tenant's open alerts: the channel's `console_url`, else
    CRONPLANE_PUBLIC_URL; None when neither is set (a guessed address, such as the
    server's own, is wrong for whoever reads the message elsewhere)."""
    base = channel.config.get("console_url") or os.environ.get(PUBLIC_URL_VARIABLE)
    if not base:
        return None
    return f"{str(base).rstrip('/')}/alerts?tenant={tenant}"


class AlertDelivery:
    """Delivers `system:deliver` items (one notification, one channel)."""

    def __init__(
        self,
        database: Database,
        clock: Clock,
        keyring: SecretKeyring | None,
        policy: OutboundPolicy | None = None,
    ) -> None:
        self.database = database
        self.clock = clock
        self.keyring = keyring
        self.policy = outbound_policy() if policy is None else policy

    def deliver(self, payload: dict[str, Any], context: RunContext) -> dict[str, Any]:
        """Send, record the outcome in the tenant's ledger, and return or raise it."""
        tenant, name = str(payload["tenant"]), str(payload["channel"])
        with self.database.read() as conn:
            channel = rules_store.get_channel(conn, tenant, name)
        try:
            if channel is None:
                raise PermanentFailure(f"alert channel {name!r} no longer exists")
            result = self._send(channel, payload, context)
        except OutboundAddressDenied as error:
            self._record(payload, context, error=str(error), final=True)
            raise PermanentFailure(str(error)) from None
        except Exception as error:
            final = isinstance(error, PermanentFailure) or context.attempt >= _attempts(context)
            self._record(payload, context, error=f"{type(error).__name__}: {error}", final=final)
            raise
        self._record(payload, context, error=None)
        return result

    def _record(
        self, payload: dict[str, Any], context: RunContext, error: str | None, final: bool = False
    ) -> None:
        """The attempt in the tenant's ledger (on the alert's schedule, so its history shows
        it) and on the alert itself: sent, retrying (the queue tries again) or failed."""
        alert = payload.get("alert") or {}
        code = ev.ALERT_SENT if error is None else ev.ALERT_UNSENT
        verb = "delivered" if error is None else f"not delivered ({error})"
        state = "sent" if error is None else "failed" if final else "retrying"
        now = self.clock.now()
        with self.database.begin() as conn:
            schedule_id = None
            if alert.get("id"):
                schedule_id = alert_deliveries.record_delivery(
                    conn, UUID(str(alert["id"])), str(payload["channel"]), state, now, error
                )
            append_event(
                conn,
                code,
                tenant=str(payload["tenant"]),
                stack=alert.get("stack"),
                environment=alert.get("environment"),
                schedule_id=schedule_id,
                schedule_name=alert.get("schedule"),
                item_id=context.item_id,
                actor=ACTOR,
                now=now,
                message=f"alert {payload['kind']} on channel {payload['channel']}: {verb}",
                detail={
                    "channel": payload["channel"],
                    "kind": payload["kind"],
                    "alert_id": alert.get("id"),
                    "attempt": context.attempt,
                    "delivery": state,
                    **({} if error is None else {"error": error}),
                },
            )

    def _secret(self, channel: Channel) -> str:
        if self.keyring is None:
            raise PermanentFailure(f"{SECRET_KEY_VARIABLE} is not set: channel secrets are sealed")
        if channel.secret is None:
            raise PermanentFailure(f"alert channel {channel.name!r} has no secret")
        try:
            return self.keyring.unseal(channel.secret)
        except ValueError as error:
            raise PermanentFailure(f"alert channel {channel.name!r}: {error}") from error

    def _send(
        self, channel: Channel, payload: dict[str, Any], context: RunContext
    ) -> dict[str, Any]:
        link = console_link(channel, str(payload["tenant"]))
        if channel.kind == ChannelKind.WEBHOOK:
            secret = self._secret(channel)
            body = json.dumps(
                {
                    "kind": payload["kind"],
                    "summary": payload["summary"],
                    "alert": payload["alert"],
                    "console_url": link,
                },
                separators=(",", ":"),
            ).encode()
            headers = {
                "Content-Type": "application/json",
                DELIVERY_HEADER: str(context.item_id),
                ATTEMPT_HEADER: str(context.attempt),
                SIGNATURE_HEADER: sign(secret, int(self.clock.now().timestamp()), body),
            }
            return self._post(channel, str(channel.config["url"]), body, headers)
        if channel.kind == ChannelKind.SLACK:
            text = str(payload["summary"])
            if link is not None:
                text += f"\n<{link}|Open alerts in the cronplane console>"
            body = json.dumps({"text": text}).encode()
            headers = {"Content-Type": "application/json"}
            return self._post(channel, self._secret(channel), body, headers)
        return self._mail(channel, payload, link)

    def _post(
        self, channel: Channel, url: str, body: bytes, headers: dict[str, str]
    ) -> dict[str, Any]:
        headers["User-Agent"] = f"cronplane/{__version__}"
        try:
            with outbound_http.http_client(self.policy) as client:
                response = client.post(url, content=body, headers=headers, timeout=TIMEOUT)
        except httpx.HTTPError:
            # The exception text may quote the URL (a Slack URL is the secret), and its kind
            # tells a port scanner refused from reset: one text, naming only the channel.
            raise DeliveryUnavailable(
                f"channel {channel.name!r}: no answer within {TIMEOUT:g}s "
                "(could not connect, or the connection failed)"
            ) from None
        status = response.status_code
        if 200 <= status < 300:
            return {"channel": channel.name, "status": status}
        message = f"channel {channel.name!r} answered HTTP {status}"
        if status >= 500 or status in RETRYABLE_CLIENT_ERRORS:
            raise DeliveryUnavailable(message)
        raise PermanentFailure(message)

    @staticmethod
    def _no_answer(channel: Channel) -> DeliveryUnavailable:
        """Refused, reset or timed out: one text (no port scan through a channel's errors)."""
        host, port = str(channel.config["host"]), int(channel.config["port"])
        return DeliveryUnavailable(
            f"channel {channel.name!r}: SMTP failed: "
            + outbound.uniform_failure(host, port, TIMEOUT)
        )

    def _tls(self, channel: Channel) -> ssl.SSLContext:
        """Verify the server against `ca_file` when set, else the system's CAs (which
        OpenSSL reads from SSL_CERT_FILE / SSL_CERT_DIR when those are set)."""
        ca_file = channel.config.get("ca_file")
        if ca_file is None:
            return ssl.create_default_context()
        try:
            return ssl.create_default_context(cafile=str(ca_file))
        except (OSError, ssl.SSLError) as error:
            raise PermanentFailure(
                f"channel {channel.name!r}: config.ca_file unreadable: {type(error).__name__}"
            ) from None

    def _mail(self, channel: Channel, payload: dict[str, Any], link: str | None) -> dict[str, Any]:
        config = channel.config
        message = EmailMessage()
        message["Subject"] = str(payload["summary"])
        message["From"] = str(config["sender"])
        message["To"] = ", ".join(config["to"])
        alert = payload["alert"]
        lines = [str(payload["summary"]), ""]
        if link is not None:
            lines += [f"Console: {link}", ""]
        lines += [f"{key}: {alert[key]}" for key in sorted(alert) if key != "detail"]
        message.set_content("\n".join(lines))
        try:
            with outbound.PinnedSMTP(
                str(config["host"]), int(config["port"]), TIMEOUT, self.policy
            ) as smtp:
                if config.get("starttls"):
                    # Raises (no STARTTLS offered, an untrusted certificate) before any
                    # credential or message is sent: nothing goes out in clear.
                    smtp.starttls(context=self._tls(channel))
                if config.get("username"):
                    smtp.login(str(config["username"]), self._secret(channel))
                smtp.send_message(message)
        except smtplib.SMTPAuthenticationError as error:
            raise PermanentFailure(
                f"channel {channel.name!r}: SMTP login refused ({error.smtp_code})"
            ) from None
        except smtplib.SMTPConnectError:
            raise self._no_answer(channel) from None
        except (
            ssl.SSLError,
            smtplib.SMTPResponseException,
            smtplib.SMTPNotSupportedError,
            smtplib.SMTPRecipientsRefused,
        ) as error:
            # An SMTP server answered: what it refused says nothing about other ports.
            raise DeliveryUnavailable(
                f"channel {channel.name!r}: SMTP failed: {type(error).__name__}"
            ) from None
        except (smtplib.SMTPException, OSError):
            raise self._no_answer(channel) from None
        return {"channel": channel.name, "recipients": len(config["to"])}
