"""Label selectors (issue 37): Kubernetes' syntax, for naming a set of schedules.

    parse_selector("team=payments,tier!=batch") -> Selector
    Selector.matches({"team": "payments"}) -> bool
    str(selector) -> the canonical text (requirements sorted, `==` written `=`)

A selector is requirements joined by commas (all must hold):

    k=v  k==v   the label k is present with the value v
    k!=v        k is absent, or its value is not v
    k in (a,b)  k is present with one of the values
    k notin (a,b)   k is absent, or its value is none of them
    k           k is present (any value)
    !k          k is absent

Whitespace between tokens is free; keys and values follow core.labels' rules
(a value may be empty: `k=` and `k in (a,)` name the empty value, as in
Kubernetes). Kubernetes' numeric `k>1` / `k<1` are refused: labels here are
text. A malformed selector is InvalidRequest with detail
`{"field": "selector", "position": N}` and a message naming the character
and the token; nothing else escapes `parse_selector`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from cronplane.core.labels import KEY_REGEX, VALUE_REGEX, validate_labels
from cronplane.errors import InvalidRequest

Op = Literal["=", "!=", "in", "notin", "exists", "!"]
OPS: Final[tuple[Op, ...]] = ("=", "!=", "in", "notin", "exists", "!")
MAX_TEXT: Final = 2048
MAX_REQUIREMENTS: Final = 32
_SPECIAL: Final = ",()=!<>"
_END: Final = ""

# The grammar as one regular expression, for the OpenAPI document (api.schemas):
# a client or fuzzer generates from it only selectors the parser accepts (a test
# holds the two together). The parser, not this, is what refuses: its message
# names the place.
_KEY: Final = KEY_REGEX[1:-1]
_VALUE: Final = VALUE_REGEX[1:-1]
_WS: Final = "[ \\t]*"
_TERM: Final = (
    f"(?:!{_WS}{_KEY}|{_KEY}(?:{_WS}(?:==?|!=){_WS}{_VALUE}"
    f"|[ \\t]+(?:in|notin){_WS}\\({_WS}{_VALUE}(?:{_WS},{_WS}{_VALUE})*{_WS}\\))?)"
)
_TERMS: Final = f"{_WS}{_TERM}{_WS}(?:,{_WS}{_TERM}{_WS}){{0,{MAX_REQUIREMENTS - 1}}}"
SELECTOR_REGEX: Final = f"^(?:{_TERMS})?$"
# At least one requirement: a selector that names rows (an action's).
REQUIREMENTS_REGEX: Final = f"^{_TERMS}$"


@dataclass(frozen=True, slots=True, order=True)
class Requirement:
    """One term: a key, an operator and its values (sorted, none for exists / !)."""

    key: str
    op: Op
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a row with these labels satisfies this term (Kubernetes' meaning)."""
        present = self.key in labels
        if self.op == "exists":
            return present
        if self.op == "!":
            return not present
        inside = present and labels[self.key] in self.values
        return inside if self.op in ("=", "in") else not inside

    def __str__(self) -> str:
        if self.op == "exists":
            return self.key
        if self.op == "!":
            return f"!{self.key}"
        if self.op in ("=", "!="):
            return f"{self.key}{self.op}{self.values[0]}"
        return f"{self.key} {self.op} ({','.join(self.values)})"


def _sort_key(requirement: Requirement) -> tuple[str, int, tuple[str, ...]]:
    return requirement.key, OPS.index(requirement.op), requirement.values


@dataclass(frozen=True, slots=True)
class Selector:
    """Requirements that must all hold; none selects every row. Held sorted and
    without repeats, so two selectors that say the same are equal."""

    requirements: tuple[Requirement, ...] = field(default=())

    def __post_init__(self) -> None:
        canonical = tuple(sorted(set(self.requirements), key=_sort_key))
        object.__setattr__(self, "requirements", canonical)

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a row with these labels is selected."""
        return all(requirement.matches(labels) for requirement in self.requirements)

    def __bool__(self) -> bool:
        return bool(self.requirements)

    def __str__(self) -> str:
        return ",".join(str(requirement) for requirement in self.requirements)


def with_label(text: str, key: str, value: str) -> str:
    """The selector `text` with `key=value` added (a console chip's link), canonical; a
    `text` that does not parse gives way to the requirement alone."""
    try:
        selector = parse_selector(text)
    except InvalidRequest:
        selector = Selector()
    return str(Selector((*selector.requirements, Requirement(key, "=", (value,)))))


@dataclass(frozen=True, slots=True)
class _Token:
    text: str  # a word, one of the special tokens, or _END
    at: int
    word: bool = False


def _lex(text: str) -> Iterator[_Token]:
    i = 0
    while i < len(text):
        char = text[i]
        if char.isspace():
            i += 1
        elif char in _SPECIAL:
            pair = text[i : i + 2]
            if pair in ("==", "!="):
                yield _Token(pair, i)
                i += 2
            else:
                yield _Token(char, i)
                i += 1
        else:
            start = i
            while i < len(text) and not text[i].isspace() and text[i] not in _SPECIAL:
                i += 1
            yield _Token(text[start:i], start, word=True)
    yield _Token(_END, len(text))


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = list(_lex(text))
        self.i = 0

    def refuse(self, token: _Token, problem: str) -> InvalidRequest:
        found = "the end" if token.text == _END else repr(token.text[:40])
        return InvalidRequest(
            f"selector {self.text[:120]!r}: at character {token.at + 1}, {found}: {problem}",
            {"field": "selector", "position": token.at + 1},
        )

    def next(self) -> _Token:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def peek(self) -> _Token:
        return self.tokens[self.i]

    def label(self, token: _Token, key: str, value: str = "") -> None:
        try:
            validate_labels({key: value})
        except InvalidRequest as refused:
            raise self.refuse(token, refused.message) from None

    def key(self) -> tuple[_Token, str]:
        token = self.next()
        if not token.word:
            raise self.refuse(token, "expected a label key")
        self.label(token, token.text)
        return token, token.text

    def value(self, key: str) -> str:
        token = self.peek()
        if not token.word:
            return ""  # `k=` (then `,` or the end): the empty value
        self.next()
        self.label(token, key, token.text)
        return token.text

    def value_set(self, key: str) -> tuple[str, ...]:
        opening = self.next()
        if opening.text != "(":
            raise self.refuse(opening, "expected '(' and a list of values")
        values: set[str] = set()
        current: str | None = None
        while True:
            token = self.next()
            if token.word and current is None:
                self.label(token, key, token.text)
                current = token.text
            elif token.text in (",", ")"):
                values.add(current or "")
                current = None
                if token.text == ")":
                    return tuple(sorted(values))
            else:
                raise self.refuse(token, "expected a value, ',' or ')'")

    def requirement(self) -> Requirement:
        if self.peek().text == "!":
            self.next()
            _token, key = self.key()
            return Requirement(key, "!")
        _token, key = self.key()
        token = self.peek()
        if token.text in (",", _END):
            return Requirement(key, "exists")
        self.next()
        if token.text in ("=", "=="):
            return Requirement(key, "=", (self.value(key),))
        if token.text == "!=":
            return Requirement(key, "!=", (self.value(key),))
        if token.word and token.text in ("in", "notin"):
            return Requirement(key, "in" if token.text == "in" else "notin", self.value_set(key))
        if token.text in ("<", ">"):
            raise self.refuse(token, "numeric comparisons are not supported (labels are text)")
        raise self.refuse(token, "expected an operator: =, ==, !=, in, notin, ',' or the end")

    def selector(self) -> Selector:
        requirements: list[Requirement] = []
        if self.peek().text == _END:
            return Selector()
        while True:
            requirements.append(self.requirement())
            token = self.next()
            if token.text == _END:
                break
            if token.text != ",":
                raise self.refuse(token, "expected ',' or the end")
        if len(requirements) > MAX_REQUIREMENTS:
            raise InvalidRequest(
                f"selector has {len(requirements)} requirements: at most {MAX_REQUIREMENTS}",
                {"field": "selector"},
            )
        return Selector(tuple(requirements))


def parse_selector(text: str) -> Selector:
    """The selector a text says (blank: every row), or InvalidRequest naming where it fails."""
    if not isinstance(text, str):
        raise InvalidRequest("selector must be text", {"field": "selector"})
    if len(text) > MAX_TEXT:
        raise InvalidRequest(
            f"selector is longer than {MAX_TEXT} characters", {"field": "selector"}
        )
    return _Parser(text).selector()
