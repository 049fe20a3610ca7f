"""Finding a git working tree and its git dir from the files git keeps, without running git
(every command does this first)."""

from __future__ import annotations

from pathlib import Path

from taskfs.errors import fail


def find_worktree(start: Path) -> Path | None:
    """The top of the git working tree holding `start`, found without running git."""
    here = start.resolve()
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def find_git_dir(root: Path) -> Path:
    """The git dir of the working tree at `root` (a linked worktree's own), read from `.git`
    without running git."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    try:
        text = dot_git.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise fail("not_a_repository", path=str(root)) from exc
    if not text.startswith("gitdir:"):
        raise fail("not_a_repository", path=str(root))
    return (root / text[len("gitdir:") :].strip()).resolve()
