"""Folder names a user may configure, checked without pydantic (used on every command)."""

from __future__ import annotations


def relative_folder(value: str) -> str:
    """`value` as a folder inside the repository (`tasks`), or ValueError saying why not."""
    parts = value.strip("/").split("/")
    if value.startswith("/") or not value.strip() or any(p in ("", ".", "..") for p in parts):
        raise ValueError("must be a folder inside the repository, like 'tasks'")
    if parts[0] in (".git", ".taskfs"):
        raise ValueError("must not be inside .git or .taskfs")
    return "/".join(parts)
