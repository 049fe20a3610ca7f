"""What a check records of the files a task owns (`owned_now`): found below the owned paths
alone, it says what `git diff HEAD` and `git ls-files --others` over the whole tree say of them
(issue 31), and fingerprints them as the completion gate does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from taskfs.core import globs
from taskfs.store.git import Git
from taskfs.store.owned_fingerprint import owned_files, owned_now
from tests.helpers import git

OWNED = ["src/auth/**", "docs/*.md", "bin/run", "tests/test_login.py"]
LEDGER = ["tasks", ".taskfs"]


def _reference(repo: Path, entries: list[str]) -> list[str]:
    """The rule as it was: every uncommitted path of the whole tree, filtered."""
    changed = git(repo, "diff", "HEAD", "--name-only", "--no-renames").splitlines()
    others = git(repo, "ls-files", "--others", "--exclude-standard").splitlines()
    patterns = [globs.parse_entry(e) for e in entries]
    return sorted(
        p
        for p in set(changed) | set(others)
        if not p.startswith(("tasks/", ".taskfs/")) and any(globs.matches(q, p) for q in patterns)
    )


def _write(repo: Path, rel: str, text: str, mode: int | None = None) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mode is not None:
        os.chmod(path, mode)


@pytest.fixture
def tree(repo: Path) -> Path:
    for rel in ("src/auth/login.py", "src/auth/deep/x.py", "src/other.py", "docs/a.md"):
        _write(repo, rel, f"{rel}\n")
    _write(repo, "bin/run", "#!/bin/sh\n", 0o755)
    _write(repo, ".gitignore", "*.log\n")
    os.symlink("login.py", repo / "src" / "auth" / "link.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "code")
    return repo


CHANGES = {
    "clean": lambda r: None,
    "edited": lambda r: _write(r, "src/auth/login.py", "changed\n"),
    "staged": lambda r: (_write(r, "docs/a.md", "staged\n"), git(r, "add", "docs/a.md")),
    "untracked": lambda r: _write(r, "src/auth/new.py", "new\n"),
    "ignored": lambda r: _write(r, "src/auth/debug.log", "log\n"),
    "deleted": lambda r: (r / "src/auth/deep/x.py").unlink(),
    "removed from the index": lambda r: git(r, "rm", "-q", "--cached", "src/auth/login.py"),
    "rm": lambda r: git(r, "rm", "-q", "docs/a.md"),
    "mode": lambda r: os.chmod(r / "bin/run", 0o644),
    "touched only": lambda r: os.utime(r / "src/auth/login.py", (1, 1)),
    "link retargeted": lambda r: (
        (r / "src/auth/link.py").unlink(),
        os.symlink("deep/x.py", r / "src/auth/link.py"),
    ),
    "outside": lambda r: _write(r, "src/other.py", "changed\n"),
    "in the ledger": lambda r: _write(r, "tasks/x/envelope.yaml", "x: 1\n"),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_owned_now_says_what_the_whole_tree_says(tree: Path, change: str) -> None:
    CHANGES[change](tree)
    fingerprint, dirty = owned_now(Git(tree), OWNED, LEDGER)
    assert dirty == _reference(tree, OWNED)
    assert fingerprint == owned_files(Git(tree), OWNED, LEDGER)
    if change not in ("clean", "ignored", "touched only", "outside", "in the ledger"):
        assert dirty, change  # a change the rule must see


def test_an_entry_without_a_literal_prefix_looks_at_the_whole_tree(tree: Path) -> None:
    _write(tree, "src/auth/login.py", "changed\n")
    _write(tree, "elsewhere/login.py", "new\n")
    entries = ["**/login.py"]
    assert owned_now(Git(tree), entries, LEDGER)[1] == _reference(tree, entries)
    assert owned_now(Git(tree), entries, LEDGER)[1] == ["elsewhere/login.py", "src/auth/login.py"]
