"""Where the operator keeps the runner policy, and reading it.

The policy lives next to the capability ledger, outside the repository: `$TASKFS_POLICY`, or
`policy.yaml` in taskfs's configuration folder (`$XDG_CONFIG_HOME/taskfs`, default
`~/.config/taskfs`). One inside the repository's working tree is refused (`policy_unsafe`):
there, any sender could grant itself the right to run its own command.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from taskfs.errors import fail
from taskfs.store.operator import inside, operator_path, read_yaml

if TYPE_CHECKING:
    from taskfs.core.policy import RunnerPolicy


@dataclass(frozen=True)
class LoadedPolicy:
    path: Path
    policy: RunnerPolicy
    found: bool


def policy_path() -> Path:
    return operator_path("TASKFS_POLICY", "policy.yaml")


def load_policy(root: Path) -> LoadedPolicy:
    """The operator's policy for the repository at `root`; allow-nothing when there is none."""
    # The policy's model only where a policy is read: the sandbox asks only where it lies.
    from taskfs.core.policy import NOTHING, PolicyError, parse_policy

    path = policy_path()
    if not inside(path, root) and path.is_file() and not path.read_bytes().strip():
        return LoadedPolicy(path, NOTHING, found=True)
    value = read_yaml(path, root, unsafe="policy_unsafe", invalid="policy_invalid")
    if value is None and not path.exists():
        return LoadedPolicy(path, NOTHING, found=False)
    try:
        return LoadedPolicy(path, parse_policy(value), found=True)
    except PolicyError as exc:
        raise fail("policy_invalid", path=str(path), reason=exc.reason) from None
