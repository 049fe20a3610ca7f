"""The capability ledger file: where it is, and reading it only from where senders cannot write.

`$TASKFS_LEDGER`, else `$XDG_CONFIG_HOME/taskfs/ledger.yaml` (default
`~/.config/taskfs/ledger.yaml`). A path inside the repository's working tree, as named or once
symbolic links are resolved, is refused with `ledger_unsafe`: every sender can write there.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import ValidationError

from taskfs.core import yamlio
from taskfs.core.capabilities import CapabilityLedger
from taskfs.errors import fail


def ledger_path() -> Path:
    configured = os.environ.get("TASKFS_LEDGER")
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "taskfs" / "ledger.yaml"


def load_ledger(root: Path) -> CapabilityLedger | None:
    """The ledger, or None when there is no ledger file (then nothing is granted by binding)."""
    path = ledger_path()
    if _unsafe(path, root):
        raise fail("ledger_unsafe", path=str(path))
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise fail("file_unreadable", path=str(path), reason=exc.strerror or str(exc)) from None
    try:
        value = yamlio.load(data)
    except yamlio.YamlError as exc:
        raise fail("file_invalid", path=str(path), reason=exc.reason) from None
    try:
        return CapabilityLedger.model_validate(value)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "file"
        raise fail("file_invalid", path=str(path), reason=f"{where}: {first['msg']}") from None


def _unsafe(path: Path, root: Path) -> bool:
    named = Path(os.path.abspath(path))
    roots = {Path(os.path.abspath(root)), root.resolve()}
    return any(_within(candidate, top) for candidate in (named, path.resolve()) for top in roots)


def _within(path: Path, top: Path) -> bool:
    return path == top or top in path.parents
