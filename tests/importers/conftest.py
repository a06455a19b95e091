"""Fixtures of the importer tests: a Temporal dev server (tests/temporal_dev.py)."""

from temporal_dev import temporal_dev as temporal_dev
