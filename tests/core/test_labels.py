"""Labels (issue 37): Kubernetes' rules for keys and values, at most 32, a refusal naming
the label; the CLI's and the console's `KEY=VALUE` texts read back as what they show."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cronplane.core.labels import labels_text, parse_pairs, parse_text, validate_labels
from cronplane.errors import CronplaneError, InvalidRequest

# Keys and values Kubernetes' documentation gives as valid, and some it refuses.
GOOD = {
    "app.kubernetes.io/name": "mysql",
    "example.com/tier": "",
    "team": "payments",
    "tier": "batch_2027.v1",
    "a": "b",
    "x" * 63: "y" * 63,
}
BAD_KEYS = ["", "-team", "team-", "team/", "/team", "Example.com/tier", "a" * 64, "a b", "t@m"]
BAD_VALUES = ["-x", "x-", "a" * 64, "a b", "é"]


def test_kubernetes_examples_are_taken_as_they_are() -> None:
    assert validate_labels(GOOD) == GOOD
    assert list(validate_labels(GOOD)) == sorted(GOOD)


@pytest.mark.parametrize("key", BAD_KEYS)
def test_a_bad_key_is_refused_naming_it(key: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        validate_labels({key: "v", "ok": "v"})
    assert refused.value.detail == {"field": "labels", "label": key[:80]}


@pytest.mark.parametrize("value", BAD_VALUES)
def test_a_bad_value_is_refused_naming_its_key(value: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        validate_labels({"team": value})
    assert refused.value.detail["label"] == "team"


def test_at_most_32_and_only_text() -> None:
    assert len(validate_labels({f"k{n}": "v" for n in range(32)})) == 32
    for bad in ({f"k{n}": "v" for n in range(33)}, ["team=x"], {"team": 1}, "team=x"):
        with pytest.raises(InvalidRequest):
            validate_labels(bad)


def test_pairs_and_text_read_back_as_shown() -> None:
    assert parse_pairs(["team=payments", "tier = batch", "team=ops"]) == {
        "team": "ops",
        "tier": "batch",
    }
    assert parse_text("team=payments, example.com/tier=") == {
        "example.com/tier": "",
        "team": "payments",
    }
    assert parse_text("  ") == {} and labels_text({}) == "-"
    with pytest.raises(InvalidRequest, match="not KEY=VALUE"):
        parse_pairs(["team"])


@given(st.dictionaries(st.text(max_size=70), st.text(max_size=70), max_size=40))
def test_only_ever_the_coded_error_and_what_passes_reads_back(labels: dict[str, str]) -> None:
    try:
        checked = validate_labels(labels)
    except CronplaneError as error:
        assert error.code.text == "X400007REQINV"
        return
    assert checked == labels
    assert parse_text(labels_text(checked) if checked else "") == checked
