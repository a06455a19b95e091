"""The closed sets of values a record's fields take (a leaf: imported by the model, the
checks and the field table alike)."""

from __future__ import annotations

from typing import Final, Literal

Source = Literal["app", "user", "system"]
Overlap = Literal["skip", "allow", "buffer_one", "cancel_running"]
JobStatus = Literal["active", "inactive"]

SOURCES: Final = ("app", "user", "system")
OVERLAPS: Final = ("skip", "allow", "buffer_one", "cancel_running")
DEFAULT_ZONE: Final = "UTC"
