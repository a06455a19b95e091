"""Label selectors (issue 37): Kubernetes' syntax and meaning, a canonical text that
parses back to the same selector, and only the coded error out of the parser.

The example tables are Kubernetes' own cases, from kubernetes/apimachinery
`pkg/labels/selector_test.go` (TestSelectorParse, TestSetSelectorParser,
TestSelectorMatches, TestRequirementSelectorMatching; commit eed236ce), restated
as data here. Where cronplane differs it says so: `>` and `<` are refused (labels
are text), and `==` is written `=` in the canonical text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cronplane.core.labels import KEY_REGEX, VALUE_REGEX, validate_labels
from cronplane.core.selectors import (
    MAX_REQUIREMENTS,
    MAX_TEXT,
    OPS,
    SELECTOR_REGEX,
    Requirement,
    Selector,
    parse_selector,
)
from cronplane.errors import CronplaneError, InvalidRequest


def R(key: str, op: str, *values: str) -> Requirement:
    return Requirement(key, op, tuple(sorted(set(values))))  # type: ignore[arg-type]


# TestSelectorParse's good strings: each parses, and its canonical text is the
# input without spaces (Kubernetes' own check). Its `x>1` cases are left out (refused here).
K8S_GOOD = ["x=a,y=b,z=c", "", "x!=a,y=b", "x=", "x= ", "x=,z= ", "x= ,z= ", "!x"]
# TestSelectorParse's and TestSetSelectorParser's refused strings, and the two we add.
K8S_BAD = [
    "x=a||y=b",
    "x==a==b",
    "!x=a",
    "x<a",
    "x,,y",
    ",x,y",
    "x nott in (y)",
    "a in (xyz),",
    "a in (xyz)b notin ()",
    "a in (xyz abc)",
    "a notin(",
    "a (",
    "(",
]
REFUSED_HERE = ["x>1", "x>1,z<5", "x<7"]

# TestSetSelectorParser: text -> the requirements Kubernetes parses it to.
K8S_PARSED: list[tuple[str, list[Requirement]]] = [
    ("", []),
    ("\rx", [R("x", "exists")]),
    (
        "this-is-a-dns.domain.com/key-with-dash",
        [R("this-is-a-dns.domain.com/key-with-dash", "exists")],
    ),
    (
        "this-is-another-dns.domain.com/key-with-dash in (so,what)",
        [R("this-is-another-dns.domain.com/key-with-dash", "in", "so", "what")],
    ),
    (
        "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
        [R("0.1.2.domain/99", "notin", "10.10.100.1", "tick.tack.clock")],
    ),
    ("foo  in\t (abc)", [R("foo", "in", "abc")]),
    ("x notin\n (abc)", [R("x", "notin", "abc")]),
    ("x  notin\t\t\t(abc,def)", [R("x", "notin", "abc", "def")]),
    ("x in (abc,def)", [R("x", "in", "abc", "def")]),
    ("x in (abc,)", [R("x", "in", "abc", "")]),
    ("x in (abc,abc)", [R("x", "in", "abc")]),
    ("x in ()", [R("x", "in", "")]),
    ("x in (a,,)", [R("x", "in", "a", "")]),
    ("x in (a,,,,,,)", [R("x", "in", "a", "")]),
    ("x in (a,,a,,a,,a,,)", [R("x", "in", "a", "")]),
    (
        "x notin (abc,,def),bar,z in (),w",
        [R("bar", "exists"), R("w", "exists"), R("x", "notin", "abc", "", "def"), R("z", "in", "")],
    ),
    ("x,y in (a)", [R("x", "exists"), R("y", "in", "a")]),
    ("x=a", [R("x", "=", "a")]),
    ("x=a,y!=b", [R("x", "=", "a"), R("y", "!=", "b")]),
    ("x=a,y!=b,z in (h,i,j)", [R("x", "=", "a"), R("y", "!=", "b"), R("z", "in", "h", "i", "j")]),
    ("x notin ( )", [R("x", "notin", "")]),
    ("x notin (, a)", [R("x", "notin", "", "a")]),
    ("a ", [R("a", "exists")]),
    ("a in (x,y,notin, z,in)", [R("a", "in", "in", "notin", "x", "y", "z")]),
]

# TestSelectorMatches and TestRequirementSelectorMatching: (selector, labels, selected).
K8S_MATCHES: list[tuple[str, dict[str, str], bool]] = [
    ("", {"x": "y"}, True),
    ("x=y", {"x": "y"}, True),
    ("x=y,z=w", {"x": "y", "z": "w"}, True),
    ("x!=y,z!=w", {"x": "z", "z": "a"}, True),
    ("notin=in", {"notin": "in"}, True),
    ("x", {"x": "z"}, True),
    ("!x", {"y": "z"}, True),
    ("x=z", {}, False),
    ("x=y", {"x": "z"}, False),
    ("x=y,z=w", {"x": "w", "z": "w"}, False),
    ("x!=y,z!=w", {"x": "z", "z": "w"}, False),
    ("x", {"y": "z"}, False),
    ("!x", {"x": "z"}, False),
    ("foo=bar,baz=blah", {"foo": "bar", "baz": "blah"}, True),
    ("foo=blah", {"foo": "bar", "baz": "blah"}, False),
    ("foo=bar,foobar=bar,baz=blah", {"foo": "bar", "baz": "blah"}, False),
    ("x in (foo),y notin (alpha)", {"x": "foo", "y": "baz"}, True),
    ("x in (foo),y in (alpha)", {"x": "foo", "y": "baz"}, False),
    ("x notin (),y", {"y": ""}, True),
    ("!x,y", {"y": ""}, True),
    ("x notin (),!y", {"y": ""}, False),
    ("x in ()", {"y": "baz"}, False),
]


@pytest.mark.parametrize("text", K8S_GOOD)
def test_kubernetes_good_strings_parse_to_their_text_without_spaces(text: str) -> None:
    assert str(parse_selector(text)) == text.replace(" ", "")


@pytest.mark.parametrize("text", K8S_BAD + REFUSED_HERE)
def test_kubernetes_bad_strings_are_refused_naming_the_place(text: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        parse_selector(text)
    assert refused.value.detail["field"] == "selector"
    assert f"at character {refused.value.detail['position']}" in refused.value.message


@pytest.mark.parametrize(("text", "requirements"), K8S_PARSED)
def test_kubernetes_parse_table(text: str, requirements: list[Requirement]) -> None:
    assert parse_selector(text) == Selector(tuple(requirements))


@pytest.mark.parametrize(("text", "labels", "selected"), K8S_MATCHES)
def test_kubernetes_match_table(text: str, labels: dict[str, str], selected: bool) -> None:
    assert parse_selector(text).matches(labels) is selected


def test_the_order_of_requirements_does_not_matter() -> None:
    # TestDeterministicParse.
    assert str(parse_selector("x=a,a=x")) == str(parse_selector("a=x,x=a")) == "a=x,x=a"


def test_double_equals_is_equals_and_the_message_names_the_token() -> None:
    assert parse_selector("team==payments") == parse_selector(" team = payments ")
    with pytest.raises(InvalidRequest) as refused:
        parse_selector("team=payments, tier >1")
    assert refused.value.message.startswith(
        "selector 'team=payments, tier >1': at character 21, '>': numeric"
    )
    assert refused.value.detail == {"field": "selector", "position": 21}


def test_a_bad_key_or_value_is_refused_by_the_label_rules() -> None:
    with pytest.raises(InvalidRequest, match=r"at character 1, '-team'.*name must be"):
        parse_selector("-team=x")
    with pytest.raises(InvalidRequest, match=r"at character 6, 'a_'.*value 'a_'"):
        parse_selector("team=a_")
    with pytest.raises(InvalidRequest, match="at character 14, 'b-'"):
        parse_selector("team in (a , b-)")


def test_at_most_so_many_requirements() -> None:
    ok = ",".join(f"k{i}" for i in range(MAX_REQUIREMENTS))
    assert len(parse_selector(ok).requirements) == MAX_REQUIREMENTS
    with pytest.raises(InvalidRequest, match="at most"):
        parse_selector(ok + ",one-more")


ALNUM = "abcxyzABZ019"


def _names(middle: str) -> st.SearchStrategy[str]:
    """Texts of 1-63 characters beginning and ending with an alphanumeric."""
    ends = st.sampled_from(ALNUM)
    inner = st.text(alphabet=ALNUM + middle, max_size=61)
    return ends | st.builds(lambda a, m, b: a + m + b, ends, inner, ends)


keys = st.builds(
    lambda prefix, name: f"{prefix.lower()}/{name}" if prefix else name,
    st.none() | _names("-."),
    _names("-_."),
)
values = st.just("") | _names("-_.")


@st.composite
def requirements(draw: st.DrawFn) -> Requirement:
    op = draw(st.sampled_from(OPS))
    key = draw(keys)
    if op in ("exists", "!"):
        return Requirement(key, op)
    if op in ("=", "!="):
        return Requirement(key, op, (draw(values),))
    chosen = draw(st.lists(values, min_size=1, max_size=4))
    return Requirement(key, op, tuple(sorted(set(chosen))))


selectors = st.builds(Selector, st.lists(requirements(), max_size=6).map(tuple))


@given(keys, values)
def test_the_generated_labels_follow_the_rules(key: str, value: str) -> None:
    assert re.fullmatch(KEY_REGEX, key) and re.fullmatch(VALUE_REGEX, value)
    assert validate_labels({key: value}) == {key: value}


@given(selectors)
def test_the_canonical_text_parses_back_to_the_same_selector(selector: Selector) -> None:
    text = str(selector)
    assert parse_selector(text) == selector
    assert str(parse_selector(text)) == text


@given(st.text(alphabet=st.sampled_from("ab/.-_=!,() \tinotx<>é|"), max_size=40) | st.text())
def test_only_the_coded_error_escapes_the_parser(text: str) -> None:
    try:
        selector = parse_selector(text)
    except InvalidRequest as refused:
        assert isinstance(refused, CronplaneError)
        assert refused.detail["field"] == "selector"
    else:
        # Whatever parses has a canonical text that parses to it again.
        assert parse_selector(str(selector)) == selector


def _model(requirement: Requirement, labels: Mapping[str, str]) -> bool:
    """The meaning written another way: the label's value, None when absent."""
    value = labels.get(requirement.key)
    return {
        "=": lambda: value == requirement.values[0],
        "!=": lambda: value != requirement.values[0],
        "in": lambda: value in requirement.values,
        "notin": lambda: value not in requirement.values,
        "exists": lambda: value is not None,
        "!": lambda: value is None,
    }[requirement.op]()


small_keys = st.sampled_from(["team", "tier", "env", "example.com/region"])
small_values = st.sampled_from(["", "a", "b", "payments"])


@st.composite
def small_requirements(draw: st.DrawFn) -> Requirement:
    op = draw(st.sampled_from(OPS))
    key = draw(small_keys)
    if op in ("exists", "!"):
        return Requirement(key, op)
    if op in ("=", "!="):
        return Requirement(key, op, (draw(small_values),))
    return Requirement(key, op, tuple(sorted(set(draw(st.lists(small_values, min_size=1))))))


@given(
    st.lists(small_requirements(), max_size=4),
    st.dictionaries(small_keys, small_values, max_size=4),
)
def test_matches_agrees_with_a_model(terms: list[Requirement], labels: dict[str, str]) -> None:
    selector = parse_selector(str(Selector(tuple(terms))))
    assert selector.matches(labels) is all(_model(term, labels) for term in terms)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.from_regex(SELECTOR_REGEX, fullmatch=True).filter(lambda t: len(t) <= MAX_TEXT))
def test_the_documented_pattern_admits_only_what_parses(text: str) -> None:
    # api.schemas puts the pattern in the OpenAPI document for clients and the fuzzer,
    # beside the length bound (maxLength, MAX_TEXT) that the pattern does not carry.
    assert str(parse_selector(text)) == str(parse_selector(str(parse_selector(text))))


@pytest.mark.parametrize("text", [t for t, _ in K8S_PARSED] + K8S_GOOD)
def test_the_pattern_admits_kubernetes_examples_but_odd_whitespace(text: str) -> None:
    assert bool(re.fullmatch(SELECTOR_REGEX, text)) is (not re.search(r"[\r\n]", text))


def test_a_chip_adds_its_label_to_the_selector_once() -> None:
    from cronplane.core.selectors import with_label

    assert with_label("", "team", "pay") == "team=pay"
    assert with_label("tier in (a, b)", "team", "pay") == "team=pay,tier in (a,b)"
    assert with_label("team=pay", "team", "pay") == "team=pay"
    assert with_label("team=(", "team", "pay") == "team=pay"  # unparsable: the chip alone
