"""The operator's files: kept outside every repository, where no sender can write.

The capability ledger, the runner policy, the runner trust list and private keys all live
under `~/.config/taskfs` (or `$XDG_CONFIG_HOME/taskfs`), each with an environment variable to
put it elsewhere. A path that lies inside the repository's working tree, as named or once
symbolic links are resolved, is refused by the caller with its own code: there, any agent that
can write a file could grant itself tools, allow its own commands or trust its own key.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from taskfs.core import layout
from taskfs.errors import fail


def config_home() -> Path:
    return Path(layout.operator_home())


def operator_path(variable: str, default: str) -> Path:
    """`$variable` when it is set, else `default` under `config_home()`."""
    return Path(layout.operator_file(variable, default))


def inside(path: Path, root: Path) -> bool:
    """Whether `path` lies in the working tree at `root`, as named or through links."""
    named = Path(os.path.abspath(path))
    roots = {Path(os.path.abspath(root)), root.resolve()}
    return any(
        candidate == top or top in candidate.parents
        for candidate in (named, path.resolve())
        for top in roots
    )


def read_yaml(path: Path, root: Path, *, unsafe: str, invalid: str) -> Any:
    """What the operator's YAML file at `path` holds; None when there is no such file.
    Refused with `unsafe` when it lies inside the working tree, `invalid` when unreadable."""
    from taskfs.core import yamlio

    if inside(path, root):
        raise fail(unsafe, path=str(path))
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise fail(invalid, path=str(path), reason=exc.strerror or str(exc)) from None
    try:
        return yamlio.load(data)
    except yamlio.YamlError as exc:
        raise fail(invalid, path=str(path), reason=exc.reason) from None
