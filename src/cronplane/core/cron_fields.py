"""One cron field: its grammar, its names, `H` resolution, and compilation to values.

A field is a comma-separated list of items. Every item is one of

- `*`, `*/n`                      every value, or every n-th from the minimum;
- `v`, `v-w`, `v/n`, `v-w/n`      a value, a range, a start or range with a step
                                  (`v/n` runs from v to the field's maximum);
- `H`, `H/n`, `H(a-b)`, `H(a-b)/n` a value chosen by a stable hash of the seed
                                  (resolved to numbers before anything else);
- day-of-month only: `L`, `LW`, `nW`;  day-of-week only: `nL`, `n#k`.

Values are ASCII digits or (month, day-of-week) English names, any case.
Everything is pure: strings in, frozen values or `ScheduleSyntax` out.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, NoReturn

from cronplane.errors import ScheduleSyntax


@dataclass(frozen=True, slots=True, eq=False)  # identity: five singletons
class FieldKind:
    """The static facts of one of the five positions."""

    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()  # names[i] means value low + i (or i for day-of-week)
    hash_low: int | None = None  # `H` draws from [hash_low, hash_high]
    hash_high: int | None = None


MINUTE: Final = FieldKind("minute", 0, 59)
HOUR: Final = FieldKind("hour", 0, 23)
# `H` in day-of-month stays within 1-28 so a hashed day exists in every month.
DAY_OF_MONTH: Final = FieldKind("day-of-month", 1, 31, hash_low=1, hash_high=28)
MONTH: Final = FieldKind(
    "month",
    1,
    12,
    names=("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"),
)
# 0 and 7 are both Sunday; `H` draws 0-6 so a hash never prefers Sunday twice.
DAY_OF_WEEK: Final = FieldKind(
    "day-of-week", 0, 7, names=("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"), hash_high=6
)
FIELDS: Final = (MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK)

_DIGITS = re.compile(r"[0-9]+", re.ASCII)
_HASH_ITEM = re.compile(r"H(?:\(([^()]*)\))?(?:/(.*))?", re.ASCII)
_NTH = re.compile(r"([0-9A-Z]+)#([0-9]+)", re.ASCII)


@dataclass(frozen=True, slots=True)
class CompiledField:
    """The values one field allows, plus the day-field specials.

    `values` is sorted. For day-of-month, `last` is `L`, `last_weekday` is `LW`
    and `nearest_weekday` holds the n of each `nW`. For day-of-week, values are
    0-6 (7 folded onto 0), `last_of` holds the n of each `nL` and `nth` holds
    (weekday, k) for each `n#k`.
    """

    values: tuple[int, ...]
    star: bool  # the field's text starts with `*` (Vixie's day OR/AND rule)
    last: bool = False
    last_weekday: bool = False
    nearest_weekday: tuple[int, ...] = ()
    last_of: tuple[int, ...] = ()
    nth: tuple[tuple[int, int], ...] = ()


class FieldError(Exception):
    """Internal: a field's complaint, turned into `ScheduleSyntax` by the caller."""

    def __init__(self, kind: FieldKind, text: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.text = text
        self.reason = reason


def _fail(kind: FieldKind, text: str, reason: str) -> NoReturn:
    raise FieldError(kind, text, reason)


def reject(expression: str, field: str, reason: str) -> NoReturn:
    """Raise the parser's one error type, quoting the input and naming the field."""
    raise ScheduleSyntax(
        f"invalid schedule {expression!r}: {field}: {reason}",
        {"expression": expression, "field": field, "reason": reason},
    )


def _number(kind: FieldKind, field_text: str, token: str) -> int:
    """A value: ASCII digits or a name; checked against the field's range."""
    if _DIGITS.fullmatch(token):
        # Bound the length before int(): the input is capped, but keep messages sane.
        value = int(token) if len(token) <= 6 else kind.high + 1
    elif token in kind.names:
        value = kind.names.index(token) + (kind.low if kind is MONTH else 0)
    else:
        _fail(kind, field_text, f"{token!r} is not a number or a name")
    if not kind.low <= value <= kind.high:
        _fail(kind, field_text, f"{token} is out of range {kind.low}-{kind.high}")
    return value


def _step(kind: FieldKind, field_text: str, token: str) -> int:
    if not _DIGITS.fullmatch(token) or len(token) > 6:
        _fail(kind, field_text, f"step {token!r} is not a number")
    step = int(token)
    span = min(kind.high, 6) + 1 if kind is DAY_OF_WEEK else kind.high - kind.low + 1
    if not 1 <= step <= span:
        _fail(kind, field_text, f"step {token} is out of range 1-{span}")
    return step


def _hash(seed: str, kind: FieldKind, index: int, size: int) -> int:
    # sha256, not hash(): the same schedule must get the same minute in every process.
    digest = hashlib.sha256(f"{seed}\x00{kind.name}\x00{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % size


def resolve_hash(kind: FieldKind, field_text: str, seed: str | None) -> str:
    """Replace every `H` item of a field by the numbers it stands for."""
    if "H" not in field_text:
        return field_text
    items = field_text.split(",")
    out: list[str] = []
    for index, item in enumerate(items):
        match = _HASH_ITEM.fullmatch(item)
        if match is None:
            if item.startswith("H"):
                _fail(kind, field_text, f"{item!r} is not a valid H form (H, H/n, H(a-b))")
            out.append(item)
            continue
        if seed is None:
            _fail(kind, field_text, "H needs a seed (the schedule's identity); none was given")
        low = kind.low if kind.hash_low is None else kind.hash_low
        high = kind.high if kind.hash_high is None else kind.hash_high
        bounded = match[1] is not None
        if bounded:
            bounds = match[1].split("-")
            if len(bounds) != 2:
                _fail(kind, field_text, f"{item!r}: H(a-b) needs a range a-b")
            low = _number(kind, field_text, bounds[0])
            high = _number(kind, field_text, bounds[1])
            if high < low:
                _fail(kind, field_text, f"{item!r}: range {low}-{high} is reversed")
        if match[2] is None:
            out.append(str(low + _hash(seed, kind, index, high - low + 1)))
            continue
        step = _step(kind, field_text, match[2])
        start = low + _hash(seed, kind, index, min(step, high - low + 1))
        # `H/n` runs to the field's maximum like `a/n`; `H(a-b)/n` stays within a-b.
        out.append(f"{start}-{high}/{step}" if bounded else f"{start}/{step}")
    return ",".join(out)


def _range_item(kind: FieldKind, field_text: str, item: str) -> list[int]:
    """`*`, `v`, `v-w`, with an optional `/n`: the plain values they allow."""
    base, slash, step_text = item.partition("/")
    step = _step(kind, field_text, step_text) if slash else 1
    top = 6 if kind is DAY_OF_WEEK and base == "*" else kind.high
    if base == "*":
        low, high = kind.low, top
    elif "-" in base:
        first, _, second = base.partition("-")
        low = _number(kind, field_text, first)
        high = _number(kind, field_text, second)
        if high < low:
            _fail(kind, field_text, f"range {base} is reversed")
    else:
        low = _number(kind, field_text, base)
        high = top if slash else low
    return list(range(low, high + 1, step))


@lru_cache(maxsize=8192)  # the same few fields (`*`, `0`, `*/5`) recur across schedules
def compile_field(kind: FieldKind, field_text: str) -> CompiledField:
    """Compile one field (already upper-cased, `H` resolved) to its values.

    Raises FieldError with a reason that names the offending item.
    """
    if field_text == "":
        _fail(kind, field_text, "empty field")
    values: set[int] = set()
    last = last_weekday = False
    nearest: set[int] = set()
    last_of: set[int] = set()
    nth: set[tuple[int, int]] = set()
    for item in field_text.split(","):
        if item == "":
            _fail(kind, field_text, "empty list item")
        if kind is DAY_OF_MONTH and item in ("L", "LW"):
            last = last or item == "L"
            last_weekday = last_weekday or item == "LW"
        elif kind is DAY_OF_MONTH and item.endswith("W"):
            nearest.add(_number(kind, field_text, item[:-1]))
        elif kind is DAY_OF_WEEK and item.endswith("L"):
            if item == "L":
                _fail(kind, field_text, "L needs a weekday in this field (5L = last Friday)")
            last_of.add(_number(kind, field_text, item[:-1]) % 7)
        elif kind is DAY_OF_WEEK and "#" in item:
            match = _NTH.fullmatch(item)
            if match is None:
                _fail(kind, field_text, f"{item!r} is not weekday#n")
            weekday = _number(kind, field_text, match[1]) % 7
            k = int(match[2]) if len(match[2]) <= 2 else 0
            if not 1 <= k <= 5:
                _fail(kind, field_text, f"{item!r}: the n in #n must be 1-5")
            nth.add((weekday, k))
        else:
            picked = _range_item(kind, field_text, item)
            values.update({v % 7 for v in picked} if kind is DAY_OF_WEEK else picked)
    return CompiledField(
        values=tuple(sorted(values)),
        star=field_text.startswith("*"),
        last=last,
        last_weekday=last_weekday,
        nearest_weekday=tuple(sorted(nearest)),
        last_of=tuple(sorted(last_of)),
        nth=tuple(sorted(nth)),
    )
