"""`taskfs.api.context`, the one way in: opening a checkout as an agent, and what that costs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from taskfs.api import context
from taskfs.errors import TaskfsError
from tests.helpers import taskfs

HEAVY = ("pydantic", "yaml", "git", "taskfs.store", "taskfs.runner")
PROBE = (
    "import json, sys\n"
    "import taskfs.api.context\n"
    "print(json.dumps(sorted({m.split('.')[0] if not m.startswith('taskfs.') else "
    "'.'.join(m.split('.')[:2]) for m in sys.modules})))\n"
)


def test_importing_the_context_loads_neither_the_store_nor_anything_heavy() -> None:
    # The command line imports it for every command, the fast paths included.
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = set(json.loads(out.stdout))
    assert "taskfs.api" in loaded  # the probe did see taskfs's own modules
    assert loaded.isdisjoint(HEAVY), loaded & set(HEAVY)


def test_open_finds_the_checkout_from_a_folder_inside_it_and_names_the_agent(repo: Path) -> None:
    inner = repo / "tasks"
    opened = context.open(inner, "builder")
    assert opened.root == repo.resolve()
    assert opened.agent() == "builder"
    assert opened.maybe_agent() == "builder"
    assert context.open().root == repo.resolve()  # None: the current directory


def test_the_agent_is_checked_when_asked_for_with_the_codes_the_command_line_names(
    repo: Path,
) -> None:
    nobody = context.open(repo, None)
    assert nobody.maybe_agent() is None
    with pytest.raises(TaskfsError) as missing:
        nobody.agent()
    assert missing.value.codes == ["agent_required"]
    with pytest.raises(TaskfsError) as bad:
        context.open(repo, "no spaces allowed").agent()
    assert bad.value.codes == ["invalid_agent"]
    # The same codes through the command line, which resolves the agent the same way.
    refused = taskfs("claim", "some-task", "--agent", "no spaces allowed", "--json")
    assert refused.json["errors"][0]["code"] == "invalid_agent"


def test_open_outside_any_checkout_is_a_named_refusal(tmp_path: Path) -> None:
    with pytest.raises(TaskfsError) as outside:
        context.open(tmp_path, "builder")
    assert outside.value.codes == ["not_a_repository"]


def test_the_state_lock_refuses_a_second_holder_naming_the_first(repo: Path) -> None:
    opened = context.open(repo, "builder")
    with (
        opened.sole_lock("probe.lock", "pid 1"),
        pytest.raises(context.LockHeld) as held,
        opened.sole_lock("probe.lock", "pid 2"),
    ):
        pass
    assert held.value.owner == "pid 1"
    with opened.sole_lock("probe.lock", "pid 2"):  # released: free again
        pass
