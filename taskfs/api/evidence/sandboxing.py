"""Which sandbox a check runs in: the command line, then the operator's environment, then the
repository's setting (`check.sandbox` in `.taskfs/config.yaml`), then `auto`.

Switching the sandbox off and letting a check reach the network are the operator's choices
(`--sandbox off`, `--network`, `TASKFS_SANDBOX=off`, `TASKFS_CHECK_NETWORK=1`): the committed
configuration can only ask for more containment, since every collaborator writes it, and an
envelope never grants either.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from taskfs.errors import fail
from taskfs.runner import interpreters
from taskfs.runner import sandbox as sandboxes
from taskfs.store.git import Git
from taskfs.store.repository import Repository

SANDBOX_ENV = "TASKFS_SANDBOX"
NETWORK_ENV = "TASKFS_CHECK_NETWORK"
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")


@dataclass(frozen=True)
class Placement:
    """Where a check runs: the sandbox (None: unconfined) and what the evidence says of it."""

    sandbox: sandboxes.Sandbox | None
    mode: sandboxes.Mode
    network: bool
    reason: str | None

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": sandboxes.KIND if self.sandbox is not None else "none",
            "mode": self.mode,
            "network": self.network if self.sandbox is not None else True,
        }
        if self.reason is not None:
            out["reason"] = self.reason
        return out

    @property
    def fell_back(self) -> bool:
        return self.sandbox is None and self.mode == "auto"


def requested_mode(repo: Repository, mode: str | None, environ: dict[str, str]) -> sandboxes.Mode:
    if mode is None:
        mode = environ.get(SANDBOX_ENV) or None
        if mode is not None and mode not in sandboxes.MODES:
            reason = f"{mode!r} is not auto, on or off"
            raise fail("invalid_value", field=SANDBOX_ENV, reason=reason)
    if mode is None:
        mode = repo.check_settings()[1]
    for known in sandboxes.MODES:
        if mode == known:
            return known
    raise fail("usage", reason=f"--sandbox {mode!r}: choose auto, on or off")


def network_allowed(network: bool | None, environ: dict[str, str]) -> bool:
    if network is not None:
        return network
    value = environ.get(NETWORK_ENV, "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise fail("invalid_value", field=NETWORK_ENV, reason=f"{value!r} is not 1 or 0")


def place(
    repo: Repository,
    git: Git,
    *,
    mode: str | None,
    network: bool | None,
    environ: dict[str, str],
) -> Placement:
    """Where a check of the worktree of `git` runs; refused with `sandbox_unavailable` when
    the sandbox is required and cannot be had (before anything is run or written)."""
    chosen_mode = requested_mode(repo, mode, environ)
    allowed = network_allowed(network, environ)
    choice = sandboxes.choose(
        chosen_mode,
        network=allowed,
        writable=[str(git.root)],
        # A hook or `core.fsmonitor` planted in the git dir would run later, outside.
        readonly=sorted({str(git.git_dir), str(git.common_dir)}),
        hidden=_operator_files(),
        path=environ.get("PATH"),
        git_dir=str(repo.git_dir),
    )
    if choice.sandbox is None and chosen_mode == "on":
        raise fail("sandbox_unavailable", reason=choice.reason or "unknown")
    return Placement(choice.sandbox, chosen_mode, allowed, choice.reason)


def with_interpreters(placement: Placement, commands: Sequence[str], cwd: str) -> Placement:
    """`placement`, its sandbox seeing the interpreters `commands` run where it would hide
    them (a virtual environment linked to a python under HOME: `taskfs.runner.interpreters`),
    read-only; the operator's files stay hidden whatever needs them."""
    box = placement.sandbox
    if box is None:
        return placement
    home = os.path.realpath(os.path.expanduser("~"))
    hidden = [p for p in (home, "/tmp", "/run", *box.hidden) if p not in ("", "/")]
    extra = interpreters.exposed(
        commands,
        cwd=cwd,
        path=os.environ.get("PATH", ""),
        hidden=hidden,
        secret=box.hidden,
        visible=[*box.writable, *box.readonly, *sandboxes.toolchains()],
    )
    if not extra:
        return placement
    return replace(placement, sandbox=replace(box, readonly=(*box.readonly, *extra)))


def _operator_files() -> list[str]:
    from taskfs.readmodel import seal
    from taskfs.store import capability_ledger, keys, operator, policy

    return [
        str(operator.config_home()),
        seal.key_path(),  # the key the caches are sealed with: a check must not forge them
        str(keys.key_dir()),
        str(keys.trust_list_path()),
        str(policy.policy_path()),
        str(capability_ledger.ledger_path()),
    ]
