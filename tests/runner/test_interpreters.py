"""What a sandboxed check is shown of HOME: the installs its programs need, narrowly.

Built on fake trees (no sandbox needed): a version manager with shims, a virtual environment
under HOME, a script whose interpreter lives there, tools in HOME's shared folders.
"""

from __future__ import annotations

import os
from pathlib import Path

from taskfs.runner.interpreters import exposed


def executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def install(prefix: Path) -> Path:
    """A fake interpreter install: bin/python3 beside lib/."""
    (prefix / "lib" / "python3.99").mkdir(parents=True)
    return executable(prefix / "bin" / "python3", "\x7fELF\0binary")


def shown(home: Path, commands: list[str], *, cwd: Path, path: str, secret: Path) -> list[str]:
    return exposed(
        commands,
        cwd=str(cwd),
        path=path,
        hidden=[str(home)],
        secret=[str(secret)],
        visible=[str(cwd)],
    )


def test_a_shim_brings_its_version_manager_and_nothing_else(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    root = home / ".pyenv"
    install(root / "versions" / "3.99")
    manager = executable(root / "libexec" / "pyenv", "#!/bin/sh\nexit 0\n")
    shims = root / "plugins" / "extra" / "shims"
    executable(shims / "python", f'#!/bin/sh\nexport ROOT="{root}"\nexec "{manager}" exec "$@"\n')
    secret = home / ".config" / "taskfs"
    secret.mkdir(parents=True)
    found = shown(home, ["python -m pytest -q"], cwd=work, path=str(shims), secret=secret)
    assert found == [str(root)]


def test_a_venv_under_home_brings_itself_and_its_base_prefix(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    base = home / "conda" / "envs" / "py"
    install(base)
    venv = home / "venvs" / "tool"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {base / 'bin'}\n")
    executable(venv / "bin" / "python", "\x7fELF\0copied binary")  # a venv made with --copies
    script = executable(venv / "bin" / "pytest", f"#!{venv / 'bin' / 'python'}\nimport x\n")
    local = home / ".local" / "bin"
    local.mkdir(parents=True)
    (local / "pytest").symlink_to(script)
    secret = home / ".config" / "taskfs"
    secret.mkdir(parents=True)
    found = shown(home, ["pytest -q tests"], cwd=work, path=str(local), secret=secret)
    # The link in the shared folder alone (bwrap binds what it leads to), never .local whole.
    assert found == sorted([str(base), str(local / "pytest"), str(venv)])


def test_the_worktree_venv_is_followed_even_when_the_command_hides_it(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    real = install(home / ".local" / "share" / "uv" / "python" / "cpython-3.99")
    (work / ".venv" / "bin").mkdir(parents=True)
    (work / ".venv" / "pyvenv.cfg").write_text(f"home = {real.parent}\n")
    (work / ".venv" / "bin" / "python").symlink_to(real)
    secret = home / ".config" / "taskfs"
    secret.mkdir(parents=True)
    found = shown(home, ["make test"], cwd=work, path="/nonexistent", secret=secret)
    assert found == [str(real.parent.parent)]


def test_operator_files_stay_hidden_whatever_needs_them(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    secret = home / ".config" / "taskfs"
    tool = executable(secret / "bin" / "tool", "#!/bin/sh\n")
    (secret / "lib").mkdir()
    found = shown(home, [f"{tool} --version"], cwd=work, path="", secret=secret)
    assert found == []
    assert not any(str(home) == p or str(home).startswith(p + os.sep) for p in found)
