"""What one attempt of an item printed or answered: its output, kept with the attempt.

The worker opens a :class:`RunOutput` around each target call
(processes.item_runner) and makes it the *current* output of the running
thread through a context variable. What lands in it:

- `command:` targets note their exit code and both streams' tails
  (``stdout``/``stderr``, each at most 64 KiB, targets.command);
- `webhook:` targets note the answer's ``status`` and a ``body`` excerpt (at most
  512 characters, targets.webhook), for a 2xx and for a refusal alike;
- `python:` targets' log records: :class:`LogCapture`, one handler on the root
  logger, appends each record to the output current *in the thread that emitted
  it*. Several items run at once on a worker's threads; each thread's context
  holds its own item's output, so a record lands only in the item whose call
  emitted it. Records of threads the function starts itself are not captured.
  A `pool="process"` child captures its run the same way and sends the log
  back with its answer (targets.processes); a child killed at a timeout or a
  cancel sends nothing, so that attempt has no log. The log is a tail: at most
  LOG_LIMIT characters (64 Ki), whole records, behind a marker saying how many
  characters were cut. A record reaches the capture only if its logger lets it
  through: a logger without a level of its own takes the root's, WARNING under
  `cronplane worker` (INFO with `--verbose`); a target that sets its logger to
  INFO has its INFO records kept. The handler is added to the root logger on
  the first `python:` attempt, after `cronplane worker|serve` configured
  logging; a program embedding the Worker configures its logging first (or
  with ``basicConfig(force=True)``): ``basicConfig`` does nothing once the
  root logger has a handler, and a program with no handler of its own loses
  logging's last-resort stderr output once this one is there.

The document kept is a plain dict, e.g. ``{"exit_code": 0, "stdout": "…",
"stderr": ""}`` or ``{"log": "WARNING billing: …\\n"}``: the recorder stores
it with the attempt (store.attempts). Readers redact it (core.redact) before
anyone sees it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import deque
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any, Final

LOG_LIMIT: Final = 64 * 1024  # characters of log records kept per attempt (the tail)
LOG_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"

_current: ContextVar[RunOutput | None] = ContextVar("cronplane_run_output", default=None)


class RunOutput:
    """One attempt's output: fields its target noted, and (for python:) its log's tail."""

    def __init__(self, *, logs: bool = False, limit: int = LOG_LIMIT) -> None:
        self.logs = logs  # whether log records of this attempt are kept
        self.limit = limit
        self.fields: dict[str, Any] = {}
        self._lines: deque[str] = deque()
        self._size = 0
        self._cut = 0
        self._lock = threading.Lock()

    def note(self, **fields: Any) -> None:
        """Fields of the output (a target's streams, an answer's status and body)."""
        with self._lock:
            self.fields.update(fields)

    def add_line(self, line: str) -> None:
        """One formatted log record; the oldest lines go once past the limit."""
        with self._lock:
            self._lines.append(line)
            self._size += len(line)
            while self._size > self.limit and self._lines:
                dropped = self._lines.popleft()
                self._size -= len(dropped)
                self._cut += len(dropped)

    def document(self) -> dict[str, Any] | None:
        """The output as stored; None when nothing was noted or logged."""
        with self._lock:
            found = dict(self.fields)
            if self.logs and (self._lines or self._cut):
                text = "".join(self._lines)
                marker = f"[… {self._cut} characters cut …]\n" if self._cut else ""
                found["log"] = marker + text
        return found or None


def current() -> RunOutput | None:
    """The output of the attempt this thread is running (None: not in an attempt)."""
    return _current.get()


def note(**fields: Any) -> None:
    """Note fields on the current attempt's output (nothing outside an attempt)."""
    output = _current.get()
    if output is not None:
        output.note(**fields)


class LogCapture(logging.Handler):
    """A root handler that hands each record to the output current in its thread."""

    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.setFormatter(logging.Formatter(LOG_FORMAT))

    def emit(self, record: logging.LogRecord) -> None:
        output = _current.get()
        if output is None or not output.logs:
            return
        try:
            output.add_line(self.format(record) + "\n")
        except Exception:  # a record that cannot be formatted is the logging module's care
            self.handleError(record)


_installed: LogCapture | None = None
_install_lock = threading.Lock()


def install() -> LogCapture:
    """The one LogCapture on the root logger (added on first use)."""
    global _installed
    with _install_lock:
        if _installed is None:
            _installed = LogCapture()
            logging.getLogger().addHandler(_installed)
        return _installed


@contextlib.contextmanager
def capturing(output: RunOutput) -> Iterator[RunOutput]:
    """Make `output` the current one in this thread for the block."""
    if output.logs:
        install()
    token = _current.set(output)
    try:
        yield output
    finally:
        _current.reset(token)
