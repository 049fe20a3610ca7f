"""The capability ledger file: where it is, and reading it only from where senders cannot write.

`$TASKFS_LEDGER`, else `$XDG_CONFIG_HOME/taskfs/ledger.yaml` (default
`~/.config/taskfs/ledger.yaml`). A path inside the repository's working tree, as named or once
symbolic links are resolved, is refused with `ledger_unsafe`: every sender can write there.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from taskfs.errors import fail
from taskfs.store.operator import operator_path, read_yaml

if TYPE_CHECKING:
    from taskfs.core.capabilities import CapabilityLedger


def ledger_path() -> Path:
    return operator_path("TASKFS_LEDGER", "ledger.yaml")


def load_ledger(root: Path) -> CapabilityLedger | None:
    """The ledger, or None when there is no ledger file (then nothing is granted by binding)."""
    from pydantic import ValidationError  # the model only where a ledger is read: a check

    from taskfs.core.capabilities import CapabilityLedger  # names where the ledger lies only

    path = ledger_path()
    value = read_yaml(path, root, unsafe="ledger_unsafe", invalid="file_invalid")
    if value is None and not path.exists():
        return None
    try:
        return CapabilityLedger.model_validate(value)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "file"
        raise fail("file_invalid", path=str(path), reason=f"{where}: {first['msg']}") from None
