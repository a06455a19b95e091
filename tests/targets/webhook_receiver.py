"""A scripted HTTP receiver on 127.0.0.1 (ephemeral port, own thread) for webhook tests.

Each request takes the next scripted answer (status, body, delay); once the
script runs out every request gets 200. The receiver checks each delivery's
signature itself, with nothing but `hmac` and the secret, as the docs tell a
receiver to.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Answer:
    """What the receiver answers to one request."""

    status: int = 200
    body: bytes = b"ok"
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Delivery:
    """One request as received."""

    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def document(self) -> Any:
        return json.loads(self.body)


def signature_valid(secret: str, header: str, body: bytes) -> bool:
    """The receiver's check, written from the docs: HMAC-SHA256(secret, "<t>." + body)."""
    parts = dict(part.split("=", 1) for part in header.split(","))
    expected = hmac.new(
        secret.encode(), parts["t"].encode() + b"." + body, hashlib.sha256
    ).hexdigest()
    return hmac.compare_digest(expected, parts["v1"])


class Receiver:
    """The server, its script and what it received."""

    def __init__(self) -> None:
        self.script: list[Answer] = []
        self.deliveries: list[Delivery] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                with receiver._lock:
                    receiver.deliveries.append(Delivery(self.path, dict(self.headers), body))
                    answer = receiver.script.pop(0) if receiver.script else Answer()
                if answer.delay:
                    time.sleep(answer.delay)  # bounded: the scripts use well under 2 s
                try:
                    self.send_response(answer.status)
                    for name, value in answer.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(answer.body)))
                    self.end_headers()
                    self.wfile.write(answer.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        # A short poll interval: shutdown() waits for one, once per test.
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}/hook"

    def answer(self, *answers: Answer) -> None:
        with self._lock:
            self.script.extend(answers)


@contextmanager
def running_receiver() -> Iterator[Receiver]:
    """A started receiver, shut down afterwards."""
    receiver = Receiver()
    receiver.thread.start()
    try:
        yield receiver
    finally:
        receiver.server.shutdown()
        receiver.server.server_close()
        receiver.thread.join(timeout=5)
