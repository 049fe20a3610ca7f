"""The merge rules of `taskfs setup`: taskfs's entries go in once, come out cleanly, and
whatever else a user's file holds is never touched."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from taskfs.core import hostconfig
from taskfs.core.hostconfig import Wanted

ALL = frozenset({"mcp", "hooks", "env"})
keys = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=10,
)
user_hook = st.fixed_dictionaries(
    {
        "matcher": st.sampled_from(["Edit", "*", "Bash"]),
        "hooks": st.just([{"type": "command", "command": "lint"}]),
    }
)
# A user's settings: other servers, other hooks, other variables (each container non-empty:
# setup drops the containers it empties, and a user's empty one is no different).
documents = st.fixed_dictionaries(
    {},
    optional={
        "model": values,
        "mcpServers": st.dictionaries(
            keys.filter(lambda k: k != "taskfs"), values, min_size=1, max_size=2
        ),
        "hooks": st.fixed_dictionaries(
            {"Stop": st.lists(user_hook, min_size=1, max_size=1)},
            optional={"PostToolUse": st.lists(user_hook, min_size=1, max_size=2)},
        ),
        "env": st.dictionaries(
            keys.filter(lambda k: k != "TASKFS_AGENT"), st.text(max_size=5), min_size=1, max_size=2
        ),
    },
)


@given(documents, st.sampled_from([None, "builder"]))
def test_apply_is_idempotent_and_revert_restores_the_document(
    doc: dict[str, Any], agent: str | None
) -> None:
    original = copy.deepcopy(doc)
    wanted = Wanted("claude", agent)
    assert hostconfig.apply(doc, ALL, wanted, "json") != []
    once = copy.deepcopy(doc)
    assert hostconfig.apply(doc, ALL, wanted, "json") == []
    assert doc == once
    for key, value in original.items():
        if key not in ("mcpServers", "hooks", "env"):
            assert doc[key] == value
    hostconfig.revert(doc, ALL, agent, "json")
    assert doc == original


def test_json_keeps_order_and_indentation() -> None:
    text = '{\n\t"b": 1,\n\t"a": {"x": [1, 2]}\n}\n'
    doc = hostconfig.parse(text, "json")
    hostconfig.apply(doc, frozenset({"mcp"}), Wanted("claude"), "json")
    out = hostconfig.render(doc, "json", text)
    assert out.startswith('{\n\t"b": 1,\n\t"a": {')
    assert list(json.loads(out)) == ["b", "a", "mcpServers"]


def test_toml_keeps_comments_and_takes_out_only_its_own_hook() -> None:
    text = (
        '# mine\n[[hooks.PostToolUse]]\nmatcher = "Bash"  # keep\n'
        '[[hooks.PostToolUse.hooks]]\ntype = "command"\ncommand = "lint"\n'
    )
    doc = hostconfig.parse(text, "toml")
    parts = frozenset({"mcp", "hooks", "shell_env"})
    changes = hostconfig.apply(doc, parts, Wanted("codex", "builder"), "toml")
    assert len(changes) == 4
    written = hostconfig.render(doc, "toml", text)
    assert written.startswith('# mine\n[[hooks.PostToolUse]]\nmatcher = "Bash"  # keep\n')
    again = hostconfig.parse(written, "toml")
    assert hostconfig.apply(again, parts, Wanted("codex", "builder"), "toml") == []
    hostconfig.revert(again, parts, "builder", "toml")
    assert again.unwrap() == hostconfig.parse(text, "toml").unwrap()  # type: ignore[attr-defined]
