"""Fixtures of the target tests: a Temporal dev server (tests/temporal_dev.py), and its
exit hooks (the SDK runs in this process here)."""

from temporal_dev import pytest_sessionfinish as pytest_sessionfinish
from temporal_dev import pytest_unconfigure as pytest_unconfigure
from temporal_dev import temporal_dev as temporal_dev
