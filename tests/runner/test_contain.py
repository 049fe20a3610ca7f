"""The runner's containment without a sandbox: orphans of a check are killed, nothing else is."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from taskfs.runner.process import run_command
from tests.cli.test_containment import marked, no_leftovers

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, prctl")


def test_a_check_orphans_die_and_our_other_children_live(tmp_path: Path) -> None:
    marker = f"taskfs-unit-{uuid.uuid4().hex}"
    # Ours, in a session of its own like a check's daemon, but started before the check.
    bystander = subprocess.Popen(
        ["sh", "-c", f"sleep 60; : {marker}-bystander"], start_new_session=True
    )
    try:
        with no_leftovers(marker):
            result = run_command(
                f"setsid sh -c 'sleep 300; : {marker}-orphan' & sleep 0.2",
                cwd=tmp_path,
                timeout=30,
            )
            assert result.passed
            assert result.leftover_killed
            assert marked(marker) == [bystander.pid]
            assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()
