"""Properties of the capability grant: never wider than the request or the ledger."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from taskfs.core.capabilities import BoundEnvelope, CapabilityLedger, bind_envelope, intersect
from taskfs.core.envelope import validate_envelope
from tests.helpers import ENVELOPE

tools = st.lists(st.sampled_from(["bash", "edit", "read", "web", "Bash", "pytest", "git"]))
maybe_tools = st.none() | tools


@given(maybe_tools, maybe_tools)
def test_the_grant_is_exactly_the_tools_both_sides_name(
    requested: list[str] | None, held: list[str] | None
) -> None:
    granted = intersect(requested, held)
    assert set(granted) == set(requested or ()) & set(held or ())
    assert len(granted) == len(set(granted))


@given(maybe_tools, maybe_tools)
def test_the_grant_is_never_wider_than_either_side(
    requested: list[str] | None, held: list[str] | None
) -> None:
    granted = set(intersect(requested, held))
    assert granted <= set(requested or ())
    assert granted <= set(held or ())


@given(maybe_tools)
def test_an_empty_or_absent_request_grants_nothing(held: list[str] | None) -> None:
    assert intersect(None, held) == ()
    assert intersect([], held) == ()
    assert intersect(held, None) == ()


@given(tools, tools)
def test_the_grant_keeps_the_order_of_the_request(requested: list[str], held: list[str]) -> None:
    granted = list(intersect(requested, held))
    positions = [requested.index(tool) for tool in granted]
    assert positions == sorted(positions)


@given(maybe_tools, tools)
def test_a_bound_copy_validates_and_leaves_the_envelope_as_it_was(
    requested: list[str] | None, held: list[str]
) -> None:
    envelope, problems = validate_envelope(
        {**ENVELOPE, "toolsAllowed": requested, "x-team": "auth"}
    )
    assert envelope is not None, problems
    before = envelope.to_document()
    ledger = CapabilityLedger.model_validate({"agents": {"builder": held}})
    granted = intersect(envelope.tools_allowed, ledger.held("builder"))
    bound = bind_envelope(envelope, granted)
    assert isinstance(bound, BoundEnvelope)
    assert bound.to_document() == {**before, "toolsGranted": list(granted)}
    assert envelope.to_document() == before
    assert ledger.held("nobody") == ()
