"""What two commits changed, read the same way by both git transports (plain git on the
listings' path, GitPython's session in sync), whatever the files are named."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskfs.store.git.session import open_session
from taskfs.store.repository import Repository
from tests.helpers import git, submit

# git quotes these in a plain listing ("\303\251", "\"", "\n"); a NUL-separated one does not.
ODD = ["évidence.yaml", 'say "hi".yaml', "two\nlines.yaml", "tab\there.yaml"]


@pytest.mark.parametrize("name", ODD, ids=["non-ascii", "quote", "newline", "tab"])
def test_changed_paths_name_an_oddly_named_file_as_it_is(repo: Path, name: str) -> None:
    task = submit(repo)
    old = git(repo, "rev-parse", "HEAD")
    target = repo / "tasks" / task / "evidence" / name
    target.parent.mkdir(exist_ok=True)
    target.write_text("hand-written\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "an oddly named file")
    new = git(repo, "rev-parse", "HEAD")
    expected = [f"tasks/{task}/evidence/{name}"]

    opened = Repository.open(repo)
    assert opened.git.changed_paths(old, new, "tasks") == expected
    with open_session(opened.git) as session:
        assert session.changed_paths(old, new, "tasks") == expected
