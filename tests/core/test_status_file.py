"""Transitions write status files without the model; the model must accept each unchanged."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taskfs.core import yamlio
from taskfs.core.records import StatusRecord
from taskfs.core.status_file import status_document, status_text

CASES: list[dict[str, Any]] = [
    {
        "task": "t1",
        "state": "submitted",
        "by": "planner",
        "at": "2026-01-01T00:00:00.000000Z",
        "prev": None,
    },
    {
        "task": "t1",
        "state": "working",
        "by": "builder",
        "at": "2026-01-01T00:00:01.000000Z",
        "prev": "0001-submitted-abcdefgh.yaml",
    },
    {
        "task": "t1",
        "state": "failed",
        "by": "builder",
        "at": "2026-01-01T00:00:02.000000Z",
        "prev": "0002-working-abcdefgh.yaml",
        "reason": "the API is gone",
    },
    {
        "task": "t1",
        "state": "completed",
        "by": "builder",
        "at": "2026-01-01T00:00:03.000000Z",
        "prev": "0002-working-abcdefgh.yaml",
        "evidence": "20260101T000000.000000Z-abcdefgh.yaml",
        "artifacts": [{"name": "fix", "location": "src/a.py"}, {"name": "pr", "location": "#7"}],
    },
    {
        "task": "t1",
        "state": "input_required",
        "by": "builder",
        "at": "2026-01-01T00:00:04.000000Z",
        "prev": "0002-working-abcdefgh.yaml",
        "message": "t1/20260101T000004.000000Z-abcdefgh",
    },
]


@pytest.mark.parametrize("fields", CASES)
def test_the_model_reads_what_transitions_write_unchanged(fields: dict[str, Any]) -> None:
    document = status_document(**fields)
    assert StatusRecord.model_validate(document).to_document() == document
    assert list(StatusRecord.model_validate(document).to_document()) == list(document)


WORDS = [
    "yes",
    "No",
    "TRUE",
    "off",
    "null",
    "Null",
    "~",
    "y",
    "n",
    "yEs",
    "1e5",
    "1e+5",
    "0x1f",
    "0b101",
    "0o17",
    "017",
    "1_000",
    "123",
    "1.5",
    "12:30",
    "2026-01-01",
    "2026-01-01T00:00:00Z",
    "t1",
    "01e8ck5pya",
    "0001-submitted-abcdefgh.yaml",
    "a/b",
    "@x",
    "x@y",
    "-x",
    "x-",
    ".inf",
    "a b",
    "a: b",
    "a #b",
    "",
    " ",
    "é",
    "1g",
    "9z",
]


@pytest.mark.parametrize("value", WORDS)
def test_the_plain_text_is_what_the_yaml_library_writes_or_nothing(value: str) -> None:
    document = {"task": value, "state": "working", "by": value, "prev": value}
    text = status_text(document)
    if text is not None:
        assert text == yamlio.dump(document)
        assert yamlio.load(text.encode()) == document


@given(
    st.dictionaries(
        st.sampled_from(["task", "state", "by", "at", "prev", "reason"]),
        st.one_of(
            st.text(alphabet="0123456789abefxtzABEFXTZgkpsy._@/-: ", max_size=14),
            st.from_regex(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z", fullmatch=True),
            st.text(max_size=6),
            st.integers(),
        ),
        min_size=1,
    )
)
def test_any_document_is_written_as_the_yaml_library_would_or_left_to_it(
    document: dict[str, Any],
) -> None:
    text = status_text(document)
    if text is not None:
        assert text == yamlio.dump(document)
        assert yamlio.load(text.encode()) == document


def test_a_claim_is_written_without_the_yaml_library() -> None:
    document = status_document(**CASES[1])
    assert status_text(document) == yamlio.dump(document)


def test_a_time_in_other_scripts_digits_is_left_to_the_yaml_library() -> None:
    # Found by the property test above: `\d` matches any script's digits, YAML's [0-9] only.
    document = {"at": "0000-00-00T00:00:0\u0660.000000Z"}
    assert status_text(document) is None


def test_a_signed_claim_is_written_without_the_yaml_library() -> None:
    import os

    from taskfs.core import signing
    from taskfs.core.transition_signing import sign_document, verifies

    pair = signing.generate_keypair()
    for _ in range(200):  # signatures differ in which base64 characters they hold
        fields = {**CASES[1], "by": f"b{os.urandom(3).hex()}"}
        document = sign_document(status_document(**fields), pair.private)
        assert list(document)[-1] == "sig"
        text = status_text(document)
        assert text is not None
        assert text == yamlio.dump(document)
        assert StatusRecord.model_validate(yamlio.load(text.encode())).to_document() == document
        assert verifies(document, pair.public)
        assert not verifies({**document, "state": "canceled"}, pair.public)


@given(st.text(alphabet="ed25519:ABCxyz+/=0 -", max_size=100))
def test_any_sig_text_is_written_as_the_yaml_library_would_or_left_to_it(value: str) -> None:
    document = {"task": "t1", "sig": value}
    text = status_text(document)
    if text is not None:
        assert text == yamlio.dump(document)
        assert yamlio.load(text.encode()) == document
