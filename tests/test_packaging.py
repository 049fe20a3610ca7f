"""taskfs installs without a clone (issue 38, item 13): `.ci/package`, which CI runs, builds the
sdist and, from it, the wheel, installs the wheel in a fresh virtual environment outside the
checkout and runs the demo there. Here it runs offline: the wheel's dependencies are read from
this environment's site-packages, never taskfs itself."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_installs_in_a_fresh_environment_and_runs_the_demo(tmp_path: Path) -> None:
    out = tmp_path / "dist"
    env = {
        **os.environ,
        "TASKFS_PACKAGE_SITE": sysconfig.get_paths()["purelib"],
        "TASKFS_PACKAGE_PYTHON": sys.executable,
    }
    done = subprocess.run(
        [str(ROOT / ".ci" / "package"), str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "audit clean" in done.stdout
    assert "the wheel installs and runs the demo" in done.stdout
    (wheel,) = out.glob("taskfs-*.whl")
    (sdist,) = out.glob("taskfs-*.tar.gz")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "taskfs/locale/tr/LC_MESSAGES/taskfs.mo" in names  # Turkish, installed
    assert "taskfs/py.typed" in names
    with tarfile.open(sdist) as archive:
        members = archive.getnames()
    assert any(m.endswith("/pyproject.toml") for m in members)


def test_the_ci_runs_it_and_the_readme_says_how_to_install_without_a_clone() -> None:
    assert ".ci/package" in (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "pip install 'taskfs @ git+https://" in readme
    assert "pip install dist/taskfs-" in readme
