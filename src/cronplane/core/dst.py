"""A schedule's DST policy: what a fixed time does in a spring gap, which passes of a
repeated autumn hour run (docs/cron.md, "DST policy").

    DstPolicy(gap="shift", repeat=None)     Debian cron's rules, the default (SPEC §3)

- `gap`: `shift` — a fixed time the forward jump skips fires once, at the
  first instant after the jump (several collapse into that one); `skip` — it
  does not fire that day. A wildcard or stepped minute or hour keeps its
  cadence in real time, so the gap has nothing of it to move: neither policy
  fires it there. `later` — for any expression, the first matching wall time
  the jump skips fires the gap's length later (the wall time read with the
  offset before the jump: RFC 5545's reading, Python's fold=0, what Celery
  beat does), and the schedule goes on from that instant's wall time, so the
  other skipped matches, and the real ones before it, do not fire.
- `repeat`: `first`, `second` or `both` passes of a repeated wall time; None
  is Debian's choice by the expression: a fixed time runs on the first pass,
  a wildcard or stepped minute or hour on both.

Pure values; the search (`cron_search`) applies them.
"""

from __future__ import annotations

from typing import Final, Literal, NamedTuple

Gap = Literal["shift", "skip", "later"]
Repeat = Literal["first", "both", "second"]
GAPS: Final = ("shift", "skip", "later")
REPEATS: Final = ("first", "both", "second")
GAP_NOTES: Final = {
    "shift": "a skipped fixed time runs at the first instant after the jump",
    "skip": "a skipped fixed time does not run that day",
    "later": "the first skipped wall time runs the gap's length later (as Celery beat)",
}
REPEAT_NOTES: Final = {
    "first": "a repeated wall time runs on its first pass only",
    "both": "a repeated wall time runs on both passes",
    "second": "a repeated wall time runs on its second pass only",
}


class DstPolicy(NamedTuple):
    """The two choices; the defaults are Debian cron's rules."""

    gap: str = "shift"
    repeat: str | None = None

    def passes(self, fixed_time: bool) -> str:
        """Which passes of a repeated wall time run: `first`, `second` or `both`."""
        if self.repeat is not None:
            return self.repeat
        return "first" if fixed_time else "both"


DEBIAN: Final = DstPolicy()
