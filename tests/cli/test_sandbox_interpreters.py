"""The interpreters people have, in the sandbox: a python reached through a symlink under HOME.

pyenv, asdf, uv and conda keep their Pythons under HOME, and a project's virtual environment
links its `bin/python` there. The sandbox hides HOME, so without more the link dangles: the
check exits 127 or runs the system python. Each test makes a fake HOME holding such an install
(a folder linked to this machine's real Python) and runs a check through `taskfs check
--sandbox on`; the rest of HOME must stay hidden.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_containment import needs_bwrap
from tests.cli.test_evidence import check, evidence_of, make_task


def fake_install(home: Path) -> Path:
    """HOME/.pyenv/versions/9.9: this machine's Python, as a version manager keeps one (the
    folder is a symbolic link to the real prefix); its `bin/python3`."""
    versions = home / ".pyenv" / "versions"
    versions.mkdir(parents=True)
    (versions / "9.9").symlink_to(os.path.realpath(sys.base_prefix))
    python = versions / "9.9" / "bin" / "python3"
    assert python.exists(), python
    return python


def plant_secret(home: Path) -> Path:
    secret = home / ".ssh" / "id_ed25519"
    secret.parent.mkdir()
    secret.write_text("PRIVATE KEY\n")
    return secret


def home() -> Path:
    return Path(os.environ["HOME"])  # the fixture's own, under the test's temporary folder


@needs_bwrap
def test_a_worktree_venv_linked_to_a_python_under_home_runs_and_home_stays_hidden(
    repo: Path,
) -> None:
    python = fake_install(home())
    secret = plant_secret(home())
    subprocess.run([str(python), "-m", "venv", "--without-pip", ".venv"], cwd=repo, check=True)
    link = os.readlink(repo / ".venv" / "bin" / "python3")
    assert link.startswith(str(home())), link  # the situation: the venv leads into HOME
    task = make_task(
        repo, f".venv/bin/python -c 'import sys; print(sys.prefix)' && ! test -e {secret}"
    )
    ran = check(task, "--sandbox", "on")
    doc = evidence_of(repo, ran)
    assert ran.code == 0, doc["stderr"]
    assert doc["sandbox"]["kind"] == "bubblewrap"
    assert doc["stdout"].strip().endswith(".venv")


@needs_bwrap
def test_a_python_found_on_path_under_home_is_the_one_the_check_runs(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = fake_install(home())
    secret = plant_secret(home())
    bin_dir = home() / ".local" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python9").symlink_to(python)
    private = home() / ".local" / "share" / "keyrings" / "login.keyring"
    private.parent.mkdir(parents=True)
    private.write_text("KEYRING\n")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    task = make_task(
        repo,
        "python9 -c 'import sys; print(sys.version_info[0])' "
        f"&& ! test -e {secret} && ! test -e {private}",
    )
    ran = check(task, "--sandbox", "on")
    doc = evidence_of(repo, ran)
    assert ran.code == 0, doc["stderr"]
    assert doc["stdout"].strip() == "3"


@needs_bwrap
def test_a_failing_check_in_the_sandbox_still_says_why(repo: Path) -> None:
    """What the command printed reaches the answer from inside the sandbox too."""
    task = make_task(repo, "echo 'E   assert 1 == 2' >&2; exit 1")
    ran = check(task, "--sandbox", "on")
    assert ran.code == 1
    assert "assert 1 == 2" in ran.json["output"]["stderr"]
