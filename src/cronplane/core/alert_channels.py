"""Alert channels' configuration, checked: what each kind needs, normalized."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from cronplane.core import validation
from cronplane.core.alerts import ChannelKind
from cronplane.core.outbound import url_host_port
from cronplane.errors import InvalidChannel

MAX_RECIPIENTS: Final = 20


def check_channel(kind: str, config: Mapping[str, Any], secret: str | None) -> dict[str, Any]:
    """The channel's config normalized; InvalidChannel (naming the field) otherwise.

    `secret` is already checked to be sealed (or absent) by the caller: the
    webhook's signing secret, the Slack URL, or the SMTP password.
    """

    def bad(message: str, name: str) -> InvalidChannel:
        return InvalidChannel(f"{kind} channel: {message}", {"field": name})

    def text(name: str, required: bool = True) -> str | None:
        value = config.get(name)
        if value is None and not required:
            return None
        if (
            not isinstance(value, str)
            or not 0 < len(value) <= 1024
            or not validation.storable_text(value)
        ):
            raise bad(f"config.{name} must be text of 1..1024 characters", f"config.{name}")
        return value

    allowed: dict[str, Sequence[str]] = {
        ChannelKind.WEBHOOK: ("url",),
        ChannelKind.SLACK: ("console_url",),
        ChannelKind.EMAIL: ("host", "port", "starttls", "ca_file", "username", "sender", "to"),
    }
    if kind not in allowed:
        raise bad(f"kind must be one of {', '.join(allowed)}", "kind")
    extra = sorted(set(config) - set(allowed[kind]))
    if extra:
        raise bad(f"unknown config key {extra[0]!r}", f"config.{extra[0]}")
    if kind == ChannelKind.WEBHOOK:
        url = text("url")
        if not str(url).startswith(("http://", "https://")):
            raise bad("config.url must be an http(s) URL", "config.url")
        if secret is None:
            raise bad("a webhook channel signs with a sealed secret", "secret")
        return {"url": url}
    if kind == ChannelKind.SLACK:
        if secret is None:
            raise bad("the incoming-webhook URL is the secret: give it sealed", "secret")
        console = text("console_url", required=False)
        return {} if console is None else {"console_url": console}
    port = config.get("port", 25)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise bad("config.port must be 1..65535", "config.port")
    starttls = config.get("starttls", False)
    if not isinstance(starttls, bool):
        raise bad("config.starttls must be true or false", "config.starttls")
    recipients = config.get("to")
    if (
        not isinstance(recipients, list)
        or not 0 < len(recipients) <= MAX_RECIPIENTS
        or not all(
            isinstance(r, str) and "@" in r and len(r) <= 320 and validation.storable_text(r)
            for r in recipients
        )
    ):
        raise bad("config.to must be a list of addresses", "config.to")
    out: dict[str, Any] = {
        "host": text("host"),
        "port": port,
        "starttls": starttls,
        "sender": text("sender"),
        "to": list(recipients),
    }
    # A PEM bundle on the delivering worker's disk: the only CAs trusted for STARTTLS.
    ca_file = text("ca_file", required=False)
    if ca_file is not None:
        if not starttls:
            raise bad("config.ca_file needs starttls", "config.ca_file")
        out["ca_file"] = ca_file
    username = text("username", required=False)
    if username is not None:
        out["username"] = username
        if secret is None:
            raise bad("a username needs a sealed password", "secret")
    return out


def channel_endpoint(kind: str, config: Mapping[str, Any]) -> tuple[str, int] | None:
    """Where a checked channel connects (host, port): a webhook's URL, an email
    channel's SMTP server; None for Slack (its URL is the sealed secret, judged at send)."""
    if kind == ChannelKind.WEBHOOK:
        try:
            return url_host_port(str(config["url"]))
        except ValueError:
            return None
    if kind == ChannelKind.EMAIL:
        return str(config["host"]), int(config["port"])
    return None
