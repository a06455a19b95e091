"""The closed sets of values a record's fields take (a leaf: imported by the model, the
checks and the field table alike)."""

from __future__ import annotations

from typing import Final, Literal

Source = Literal["app", "user", "system"]
Overlap = Literal["skip", "allow", "buffer_one", "cancel_running"]
JobStatus = Literal["active", "inactive"]

SOURCES: Final = ("app", "user", "system")
OVERLAPS: Final = ("skip", "allow", "buffer_one", "cancel_running")
OVERLAP_NOTES: Final = {
    "skip": "at most one run at a time",
    "allow": "runs may overlap",
    "buffer_one": "one run waits behind the running one",
    "cancel_running": "a new run stops the running one",
}
DEFAULT_ZONE: Final = "UTC"
