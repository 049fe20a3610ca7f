"""Where the operator keeps the runner policy, and reading it.

The policy lives next to the capability ledger, outside the repository: `$TASKFS_POLICY`, or
`policy.yaml` in taskfs's configuration folder (`$XDG_CONFIG_HOME/taskfs`, default
`~/.config/taskfs`). One inside the repository's working tree is refused (`policy_unsafe`):
there, any sender could grant itself the right to run its own command.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from taskfs.core import yamlio
from taskfs.core.policy import NOTHING, PolicyError, RunnerPolicy, parse_policy
from taskfs.errors import fail


@dataclass(frozen=True)
class LoadedPolicy:
    path: Path
    policy: RunnerPolicy
    found: bool


def policy_path() -> Path:
    configured = os.environ.get("TASKFS_POLICY")
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "taskfs" / "policy.yaml"


def load_policy(root: Path) -> LoadedPolicy:
    """The operator's policy for the repository at `root`; allow-nothing when there is none."""
    path = policy_path()
    if _inside(path, root):
        raise fail("policy_unsafe", path=str(path))
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return LoadedPolicy(path, NOTHING, found=False)
    except OSError as exc:
        raise fail("policy_invalid", path=str(path), reason=exc.strerror or str(exc)) from None
    if not data.strip():
        return LoadedPolicy(path, NOTHING, found=True)
    try:
        return LoadedPolicy(path, parse_policy(yamlio.load(data)), found=True)
    except (yamlio.YamlError, PolicyError) as exc:
        raise fail("policy_invalid", path=str(path), reason=exc.reason) from None


def _inside(path: Path, root: Path) -> bool:
    # Resolved, so a link from outside into the working tree is caught too.
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True
