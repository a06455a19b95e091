"""The one YAML loader of manifests and importers: PyYAML's safe loader, bounded.

Limits are checked while the stream is composed, before an object is built
from it, and each refusal is coded and names the limit and the line:

| limit                 | maximum    | why                                                     |
|-----------------------|------------|---------------------------------------------------------|
| nesting depth         | 64         | 5,000 `[` exhausted the recursion                       |
| aliases               | 1,000      | a document needs a handful                              |
| nodes, aliases expanded | 1,000,000 | an alias bomb ("billion laughs") is refused at its first alias over it |
| documents in a stream | 10,000     | `---` repeated is cheap to write, not to hold           |
| integer literal       | 100 digits | Python refuses to print an int of over 4,300 digits     |

A recursive alias is refused, and so is a mapping that names a key twice
(YamlDuplicateKey; PyYAML keeps the last silently). Syntax errors stay
``yaml.YAMLError`` for the caller to word. libyaml's parser (``CParser``)
reads the events when it is installed; the limits are counted in a first
pass over its events (nothing built, so a refusal is cheap), the document is
built in a second.
"""

from __future__ import annotations

from typing import Any, Final

import yaml
from yaml.composer import Composer
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode
from yaml.resolver import Resolver

from cronplane.errors import YamlDuplicateKey, YamlOverLimit

MAX_DEPTH: Final = 64  # a payload may nest 32 levels, under jobs.NAME.payload
MAX_ALIASES: Final = 1_000
MAX_NODES: Final = 1_000_000  # counting each alias as the size of what it repeats
MAX_DOCUMENTS: Final = 10_000
MAX_INT_DIGITS: Final = 100
MERGE_TAG: Final = "tag:yaml.org,2002:merge"
# What PyYAML's constructors raise on odd scalars instead of a YAMLError.
BUILD_ERRORS: Final = (ValueError, TypeError, IndexError, KeyError, OverflowError, AttributeError)


def _line(mark: Any) -> int | None:
    """The 1-based line of a mark (None when the event has none)."""
    return None if mark is None else int(mark.line) + 1


class _Limits:
    """The source's name and what the stream has used so far."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.aliases = 0
        self.nodes = 0
        self.documents = 0

    def refuse(self, limit: str, maximum: int, problem: str, mark: Any) -> YamlOverLimit:
        line = _line(mark)
        where = f"{self.source}, line {line}" if line is not None else self.source
        return YamlOverLimit(
            f"{where}: YAML {problem} (limit: {limit} {maximum})",
            {"source": self.source, "limit": limit, "maximum": maximum, "line": line},
        )

    def count(self, size: int, event: yaml.Event) -> None:
        """Add `size` nodes; YamlOverLimit past MAX_NODES."""
        self.nodes += size
        if self.nodes > MAX_NODES:
            raise self.refuse(
                "nodes",
                MAX_NODES,
                f"expands to more than {MAX_NODES} nodes (aliases included)",
                event.start_mark,
            )

    def alias(self, event: yaml.AliasEvent, open_anchors: set[str]) -> None:
        """Count an alias; YamlOverLimit past MAX_ALIASES or inside the node it names."""
        self.aliases += 1
        if self.aliases > MAX_ALIASES:
            raise self.refuse(
                "aliases", MAX_ALIASES, f"has more than {MAX_ALIASES} aliases", event.start_mark
            )
        if event.anchor in open_anchors:
            raise self.refuse(
                "aliases",
                MAX_ALIASES,
                f"alias *{event.anchor} refers to a node that contains it",
                event.start_mark,
            )

    def document(self, event: yaml.Event) -> None:
        """Count a document; YamlOverLimit past MAX_DOCUMENTS."""
        self.documents += 1
        if self.documents > MAX_DOCUMENTS:
            raise self.refuse(
                "documents",
                MAX_DOCUMENTS,
                f"stream has more than {MAX_DOCUMENTS} documents",
                event.start_mark,
            )


class _BoundedConstructor(SafeConstructor):
    """The safe constructor, refusing duplicate keys and over-long integer literals."""

    limits: _Limits

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        # Merged (`<<`) pairs may be overridden; the mapping's own keys must differ.
        for key_node, _ in node.value:
            if key_node.tag == MERGE_TAG:
                continue
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
            except TypeError:
                continue  # unhashable: the base class refuses it with its mark
            if duplicate:
                line = _line(key_node.start_mark)
                raise YamlDuplicateKey(
                    f"{self.limits.source}, line {line}: key {str(key)[:80]!r} appears twice "
                    "in one mapping (the first would be dropped)",
                    {"source": self.limits.source, "key": str(key)[:200], "line": line},
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: ScalarNode) -> int:
        digits = str(node.value).replace("_", "").lstrip("+-")
        if len(digits) > MAX_INT_DIGITS:
            raise self.limits.refuse(
                "integer digits",
                MAX_INT_DIGITS,
                f"integer literal has {len(digits)} digits",
                node.start_mark,
            )
        return super().construct_yaml_int(node)

    def construct_object(self, node: Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)
        except BUILD_ERRORS as error:  # `!!int ""`, `2024-02-30`: PyYAML's own crashes
            raise ConstructorError(
                None, None, f"cannot read {str(node.value)[:80]!r} as {node.tag}", node.start_mark
            ) from error


_BoundedConstructor.add_constructor("tag:yaml.org,2002:int", _BoundedConstructor.construct_yaml_int)  # type: ignore[type-var]


class _PythonParser(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
    """PyYAML's own reader, scanner and parser, with the flow depth stopped in the scanner."""

    limits: _Limits

    def __init__(self, stream: str | bytes) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)

    def fetch_flow_collection_start(self, TokenClass: type) -> None:
        # The scanner reads a run of `[`/`{` whole before the first event (each may
        # start a key), quadratically: 2,000 of them took seconds. Stop it here.
        if self.flow_level >= MAX_DEPTH:
            raise self.limits.refuse(
                "depth", MAX_DEPTH, f"is nested deeper than {MAX_DEPTH} levels", self.get_mark()
            )
        super().fetch_flow_collection_start(TokenClass)


try:
    from yaml._yaml import CParser as _Parser
except ImportError:  # PyYAML built without libyaml
    _Parser = _PythonParser  # type: ignore[misc,assignment]


class _Events(_Parser):
    """The first pass's parser: events only."""

    def __init__(self, stream: str | bytes, limits: _Limits) -> None:
        _Parser.__init__(self, stream)
        self.limits = limits


class _Loader(_Parser, Composer, _BoundedConstructor, Resolver):
    """The second pass: what libyaml composes (PyYAML's Python composer when absent)."""

    def __init__(self, stream: str | bytes, limits: _Limits) -> None:
        _Parser.__init__(self, stream)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self.limits = limits


def check_limits(text: str | bytes, source: str = "YAML") -> None:
    """The first pass: the parser's events counted, nothing built; YamlOverLimit when over.

    Each node counts 1 and an alias the size of the node it names, so the count
    is the stream's size with aliases expanded, and a bomb is refused at its
    first alias over the limit. Memory: the open collections and the anchors.
    """
    limits = _Limits(source)
    parser = _Events(text, limits)
    open_nodes: list[tuple[str | None, int]] = []  # (anchor, nodes before it), outermost first
    open_anchors: set[str] = set()
    sizes: dict[str, int] = {}  # anchor -> expanded size of its node, in this document
    try:
        while parser.check_event():
            event: Any = parser.get_event()
            kind = type(event)
            if kind is yaml.ScalarEvent:
                limits.count(1, event)
                if event.anchor is not None:
                    sizes[event.anchor] = 1
            elif kind is yaml.SequenceStartEvent or kind is yaml.MappingStartEvent:
                if len(open_nodes) >= MAX_DEPTH:
                    raise limits.refuse(
                        "depth",
                        MAX_DEPTH,
                        f"is nested deeper than {MAX_DEPTH} levels",
                        event.start_mark,
                    )
                open_nodes.append((event.anchor, limits.nodes))
                limits.count(1, event)
                if event.anchor is not None:
                    open_anchors.add(event.anchor)
            elif kind is yaml.SequenceEndEvent or kind is yaml.MappingEndEvent:
                anchor, before = open_nodes.pop()
                if anchor is not None:
                    open_anchors.discard(anchor)
                    sizes[anchor] = limits.nodes - before
            elif kind is yaml.AliasEvent:
                limits.alias(event, open_anchors)
                limits.count(sizes.get(event.anchor, 1), event)
            elif kind is yaml.DocumentStartEvent:
                limits.document(event)
                sizes.clear()
    except yaml.YAMLError as error:
        over = _depth_of_parser(error, source)
        if over is None:
            raise
        raise over from error
    finally:
        parser.dispose()


def _depth_of_parser(error: yaml.YAMLError, source: str) -> YamlOverLimit | None:
    """libyaml's own nesting limit (its scanner reads ahead of the events) as ours."""
    if "maximum nesting depth" not in str(error):
        return None
    mark = getattr(error, "problem_mark", None)
    return _Limits(source).refuse(
        "depth", MAX_DEPTH, f"is nested deeper than {MAX_DEPTH} levels", mark
    )


def load_one(text: str | bytes, source: str = "YAML") -> Any:
    """The one document of `text` (None when empty); a coded error over a limit or for a
    duplicate key, yaml.YAMLError when it is not YAML."""
    return _load(text, source, single=True)


def load_all(text: str | bytes, source: str = "YAML") -> list[Any]:
    """Every document of `text`, under the same limits (MAX_DOCUMENTS of them)."""
    documents: list[Any] = _load(text, source, single=False)
    return documents


def _load(text: str | bytes, source: str, *, single: bool) -> Any:
    check_limits(text, source)
    loader = _Loader(text, _Limits(source))
    try:
        if single:
            return loader.get_single_data()
        documents = []
        while loader.check_data():  # type: ignore[no-untyped-call]
            documents.append(loader.get_data())
        return documents
    except BUILD_ERRORS as error:  # a backstop: construct_object words these
        raise ConstructorError(None, None, f"cannot read: {error}", None) from error
    except RecursionError as error:  # a backstop: the first pass stops depth before this
        raise _Limits(source).refuse("depth", MAX_DEPTH, "is nested too deeply", None) from error
    finally:
        loader.dispose()
