"""The module prefixes `python:` targets may name in the tests (CRONPLANE_PYTHON_TARGETS).

One list: conftest.py sets the variable for the test process (and so for the worker and
server processes tests start), cli_process.py for the `cronplane` subprocesses, which start
from a clean CRONPLANE_* environment. The handler modules the workers under test import,
and the short made-up names tests register jobs under but never run.
"""

from __future__ import annotations

HANDLER_MODULES = (
    "alert_handlers",
    "control_handlers",
    "serve_handlers",
    "ui_handlers",
    "worker_handlers",
    "demo_jobs",
)
# Jobs that are registered and listed, never run (python:m:f, python:billing.jobs:…).
NAMES_NEVER_RUN = ("a", "app", "billing", "h", "handlers", "m", "pkg", "shop", "x")

ALLOWED = HANDLER_MODULES + NAMES_NEVER_RUN
VALUE = ",".join(ALLOWED)
