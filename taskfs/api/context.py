"""The one way in: open the checkout as an agent (`open(start, agent) -> Context`).

The adapters (the command line and its hooks, the MCP server, the watcher, the A2A server, the
reports) reach the ledger through a `Context` and the other `taskfs.api` modules, never through
`taskfs.store` or `taskfs.runner`: what they used to take from there is here, named and typed.

Importing this module costs nothing: the store (and pydantic, YAML, git behind it) is loaded
only when a context is opened or a helper is called, so the fast paths stay fast. The types an
adapter annotates with (`Repository`, `LoadedPolicy`) are named here for the type checker only:
import them under `if TYPE_CHECKING:`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, NamedTuple

from taskfs.core import layout
from taskfs.errors import fail

if TYPE_CHECKING:
    from taskfs.store.policy import LoadedPolicy
    from taskfs.store.repository import Repository

# `Repository` and `LoadedPolicy` are named for the type checker only (see above).
__all__ = [
    "Context",
    "LoadedPolicy",
    "LockHeld",
    "Repository",
    "acting_agent",
    "leftover_temporaries",
    "open",
    "operator_file",
    "read_dropped",
    "read_input",
    "read_interlink_input",
    "read_message_text",
    "read_operator_yaml",
    "read_seed_file",
    "replace_file",
    "transitions_of",
    "write_output",
]


class LockHeld(Exception):
    """Another process holds a lock this one asked for (`owner`: who, as it wrote)."""

    def __init__(self, owner: str) -> None:
        super().__init__(owner)
        self.owner = owner


def acting_agent(agent: str | None, *, required: bool = True) -> str | None:
    """The --agent value (or TASKFS_AGENT), checked to be a valid agent name. An empty name
    given is `invalid_agent`, as any other that is no name: it never means "anyone" (an empty
    TASKFS_AGENT is no name given, as click reads it)."""
    if agent is None:
        if required:
            raise fail("agent_required")
        return None
    if not layout.is_agent_name(agent):
        raise fail("invalid_agent", value=agent)
    return agent


class Context(NamedTuple):
    """An open checkout and the agent acting on it (as given: checked when it is asked for,
    so that a command names its errors in the order it always did)."""

    repo: Repository
    given_agent: str | None = None

    @property
    def root(self) -> Path:
        return self.repo.root

    def agent(self) -> str:
        """The acting agent; `agent_required` or `invalid_agent` when there is none fit."""
        return acting_agent(self.given_agent) or ""

    def maybe_agent(self) -> str | None:
        """The acting agent when one is named (`invalid_agent` when it is no agent name)."""
        return acting_agent(self.given_agent, required=False)

    def policy(self) -> LoadedPolicy:
        """The operator's runner policy for this checkout (allow-nothing when there is none)."""
        from taskfs.store.policy import load_policy

        return load_policy(self.repo.root)

    @contextmanager
    def sole_lock(self, name: str, owner: str) -> Iterator[None]:
        """Hold the checkout's private lock file `name` for the block; `LockHeld` at once when
        another process holds it."""
        from taskfs.store import fs

        try:
            with fs.sole_lock(self.repo.state_dir() / name, owner):
                yield
        except fs.LockHeld as held:
            raise LockHeld(held.owner) from None


def open(start: Path | None = None, agent: str | None = None) -> Context:
    """The checkout holding `start` (the current directory when None) as `agent`;
    `not_a_repository` (or the store's other named errors) when there is none."""
    from taskfs.store.repository import Repository

    return Context(Repository.open(start if start is not None else Path.cwd()), agent)


def transitions_of(repo: Repository, task_id: str) -> list[str]:
    """The names of a task's status files, oldest first (none for a folder not yet a task)."""
    from taskfs.core.layout import STATUS

    return repo.list_dir(task_id, STATUS)


def read_input(label: str, stdin: BinaryIO | None = None) -> bytes:
    """The bytes of an envelope file named on the command line (or of `stdin` for `-`),
    refusing what cannot be an envelope (`taskfs.store.inputs`: never more than the limit, never
    a FIFO or a device)."""
    from taskfs.store.repository import read_input as read

    return read(label, stdin)


def read_seed_file(label: str) -> bytes:
    """An interlink secret key file's bytes (at most `inputs.SEED_FILE_LIMIT`)."""
    from taskfs.store import inputs

    return inputs.read_limited(label, inputs.SEED_FILE_LIMIT)


def read_interlink_input(label: str, stdin: BinaryIO | None = None) -> bytes:
    """interlink messages to import, from a file or stdin (`-`), at most
    `inputs.INTERLINK_IMPORT_LIMIT`."""
    from taskfs.store import inputs

    return inputs.read_limited(label, inputs.INTERLINK_IMPORT_LIMIT, stdin=stdin)


def read_message_text(stdin: BinaryIO) -> str:
    """A message's text piped in (`send -`): at most `inputs.MESSAGE_TEXT_LIMIT`, UTF-8."""
    from taskfs.store import inputs

    data = inputs.read_limited("-", inputs.MESSAGE_TEXT_LIMIT, stdin=stdin)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail("invalid_value", field="text", reason=f"it is not UTF-8 ({exc})") from None


def read_dropped(root: Path, rel: str) -> bytes | None:
    """The bytes of a file dropped into the tasks folder (never through a link, never more
    than one byte past the envelope size limit); None when it is gone."""
    from taskfs.store.repository import read_dropped as read

    return read(root, rel)


def replace_file(target: Path, data: bytes, mode: int | None = None) -> None:
    """Write `target` atomically, replacing what was there."""
    from taskfs.store import fs

    fs.replace(target, data, mode)


def write_output(target: Path, data: bytes, mode: int | None = None) -> None:
    """Write a path the user named for output (`taskfs.store.fs.write_output`): a regular
    file is replaced atomically, anything else (a FIFO, a device, a link to one) written
    through."""
    from taskfs.store import fs

    fs.write_output(target, data, mode)


def leftover_temporaries(target: Path) -> list[Path]:
    """The temporary files a writer of `target` killed midway may have left beside it."""
    from taskfs.store import fs

    return fs.temporaries(target)


def operator_file(variable: str, default: str) -> Path:
    """An operator's file outside every repository: `$variable`, else `default` in the
    operator's configuration folder."""
    from taskfs.store.operator import operator_path

    return operator_path(variable, default)


def read_operator_yaml(path: Path, root: Path, *, unsafe: str, invalid: str) -> object:
    """What the operator's YAML file at `path` holds; None when there is no such file.
    Refused with `unsafe` when it lies inside the working tree at `root`, `invalid` when it
    cannot be read or is no YAML."""
    from taskfs.store.operator import read_yaml

    value: object = read_yaml(path, root, unsafe=unsafe, invalid=invalid)
    return value
