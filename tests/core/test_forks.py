"""The fork settlement that keeps published transitions from being overturned (core/forks.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from taskfs.core.chain import Link, fork_key, resolve
from taskfs.core.forks import losses, settle
from taskfs.core.records import StatusRecord

DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
nonces = st.text(alphabet=DIGITS, min_size=8, max_size=8) | st.sampled_from(
    ["00000000", "zzzzzzzz", "zzzzzzzy"]
)
ROOT = "0001-submitted-rootroot.yaml"


def link(name: str, state: str, by: str, prev: str | None) -> Link:
    record = StatusRecord(task="t", state=state, by=by, at="2026-01-01T00:00:00Z", prev=prev)  # type: ignore[arg-type]
    return Link(name, record)


def root() -> Link:
    return link(ROOT, "submitted", "planner", None)


@given(
    published=st.lists(nonces, min_size=1, max_size=3, unique=True),
    mine=st.lists(nonces, min_size=1, max_size=3, unique=True),
    follow_up=st.booleans(),
)
def test_no_unpublished_transition_overturns_a_published_one(
    published: list[str], mine: list[str], follow_up: bool
) -> None:
    theirs = [root()] + [link(f"0002-working-{n}.yaml", "working", "them", ROOT) for n in published]
    ours = [link(f"0002-canceled-{n}.yaml", "canceled", "us", ROOT) for n in mine]
    if follow_up:
        ours.append(link("0003-failed-aaaaaaaa.yaml", "failed", "us", ours[0].name))
    plan = settle(theirs, ours)
    kept = []
    for mine_link in ours:
        if mine_link.name in plan.dropped:
            continue
        name = plan.renamed.get(mine_link.name, mine_link.name)
        record = plan.new_prev.get(mine_link.name, mine_link.record)
        kept.append(Link(name, record))
    chain = resolve("t", [*theirs, *kept])
    winner = min(theirs[1:], key=fork_key)
    assert chain.winner_after(ROOT) == winner
    assert {link.name for link in kept} <= {link.name for link in chain.superseded}
    assert not chain.problems
    # Only a winner at the very top of the nonce space can leave no free name above it.
    if plan.dropped:
        assert fork_key(winner)[0] in ("zzzzzzzz", "zzzzzzzy")
    if fork_key(winner)[0] == "zzzzzzzz":
        overturning = [o for o in ours if o.record.prev == ROOT and fork_key(o) < fork_key(winner)]
        assert set(plan.dropped) >= {o.name for o in overturning}
    assert {loss.winner for loss in losses(chain)} == ({winner} if chain.superseded else set())


def test_a_claim_to_withdraw_is_dropped_even_when_it_already_loses() -> None:
    theirs = [root(), link("0002-working-00000000.yaml", "working", "them", ROOT)]
    mine = link("0002-working-mmmmmmmm.yaml", "working", "us", ROOT)
    plan = settle(theirs, [mine], drop={mine.name})
    assert plan.dropped == [mine.name]
    assert [loss.winner for loss in plan.losses] == [theirs[1]]


def test_nothing_to_settle_without_a_published_sibling() -> None:
    theirs = [root()]
    mine = [link("0002-working-00000000.yaml", "working", "us", ROOT)]
    assert not settle(theirs, mine)


# -- siblings that were not concurrent (core/forks.late_siblings) -----------------------------


@given(
    nonce_a=nonces,
    nonce_b=nonces,
    relation=st.sampled_from(["concurrent", "a before b", "b before a", "one commit"]),
)
def test_only_a_sibling_whose_commit_held_the_other_is_late(
    nonce_a: str, nonce_b: str, relation: str
) -> None:
    from taskfs.core.forks import late_siblings

    a = link(f"0002-working-{nonce_a}.yaml", "working", "alice", ROOT)
    b = link(f"0002-canceled-{nonce_b}.yaml", "canceled", "bob", ROOT)
    commits = {
        "concurrent": ("ca", "cb"),
        "a before b": ("ca", "cb"),
        "b before a": ("ca", "cb"),
        "one commit": ("c", "c"),
    }[relation]
    history = {"a before b": {("ca", "cb")}, "b before a": {("cb", "ca")}}.get(relation, set())
    commit_of = {ROOT: "c0", a.name: commits[0], b.name: commits[1]}

    def precedes(x: str, y: str) -> bool:
        return x in (y, "c0") or (x, y) in history

    late = {
        (loss.link.name, loss.winner.name if loss.winner else None)
        for loss in late_siblings([root(), a, b], commit_of, precedes)
    }
    if relation == "concurrent":
        assert late == set()  # a real fork: the nonce rule settles it
    elif relation == "a before b":
        assert late == {(b.name, a.name)}  # whatever the nonces say
    elif relation == "b before a":
        assert late == {(a.name, b.name)}
    else:
        first, second = sorted([a, b], key=fork_key)
        assert late == {(second.name, first.name)}
