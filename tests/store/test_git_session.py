"""The history readers' GitPython session runs git in the same scrubbed environment as the rest
of `taskfs.store.git`: inside a git hook, `GIT_DIR` and friends point at another repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.helpers import submit, taskfs, taskfs_process


def test_review_inside_a_hook_of_another_repository_reads_this_one(
    repo: Path, tmp_path: Path
) -> None:
    first = submit(repo, id="first", filesAndInterfaces=["src/first.py"])
    assert taskfs("claim", first, "--agent", "builder").code == 0
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    plain = taskfs_process("review", "--json", "HEAD~2..HEAD", cwd=repo)
    assert plain.code == 0, plain.stdout + plain.stderr
    assert [t["id"] for t in plain.json["tasks"]] == [first]
    hooked = taskfs_process(
        "review",
        "--json",
        "HEAD~2..HEAD",
        cwd=repo,
        env={
            "GIT_DIR": str(other / ".git"),
            "GIT_WORK_TREE": str(other),
            "GIT_INDEX_FILE": str(other / ".git" / "index"),
            "GIT_OBJECT_DIRECTORY": str(other / ".git" / "objects"),
        },
    )
    assert (hooked.code, hooked.json) == (plain.code, plain.json)
