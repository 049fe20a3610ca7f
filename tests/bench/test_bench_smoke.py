"""The benchmark harness runs end to end, so that it cannot rot between the times it is used.

A tiny repository (20 tasks) and one run of every operation, against the development venv's
`taskfs` (building the harness's own venv would take a minute). Nothing here asserts a time:
only that every operation ran, answered what it should, and that the cache is reused.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "bench" / "run.py"


def _run(cache: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).parent / "taskfs"
    return subprocess.run(
        [
            sys.executable,
            str(RUN),
            "--sizes",
            "20",
            "--runs",
            "1",
            "--no-peers",
            "--cache",
            str(cache),
            "--taskfs",
            str(script),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_harness_measures_every_operation_on_a_tiny_repository(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    report = tmp_path / "RESULTS.md"
    first = _run(cache, "--markdown", str(report))
    assert first.returncode == 0, first.stderr
    assert "building a repository of 20 tasks" in first.stderr

    (raw,) = cache.glob("results-*.json")
    results = json.loads(raw.read_text())
    measured = results["sizes"]["20"]["taskfs"]
    for op in (
        "--version",
        "ls --json",
        "ready --json",
        "show ID",
        "claim",
        "new",
        "validate",
        "python -c pass",
        "git add+commit",
        "find tasks | wc -l",
    ):
        assert measured[op]["error"] is None, (op, measured[op]["error"])
        assert measured[op]["runs"] == 1
        assert measured[op]["median_ms"] > 0
        assert measured[op]["peak_mib"] > 0
    assert results["sizes"]["20"]["manifest"]["states"]["submitted"] >= 10
    assert results["machine"]["nproc"]
    assert "| ls --json |" in report.read_text()
    assert "### Targets" in report.read_text()

    # The repository is cached: asking again builds nothing and gives the same manifest.
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import generate

        built: list[str] = []
        _repo, manifest = generate.cached_repo(cache, 20, built.append)
    finally:
        sys.path.remove(str(ROOT / "bench"))
    assert built == []
    assert manifest["states"] == results["sizes"]["20"]["manifest"]["states"]


def test_markdown_tables_replace_only_what_lies_between_the_markers(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import run
    finally:
        sys.path.remove(str(ROOT / "bench"))
    notes = tmp_path / "RESULTS.md"
    notes.write_text(f"# Results\n\n{run.BEGIN}\nold table\n{run.END}\n\n## Diagnosis\nkept\n")
    run.write_markdown(notes, "new table\n")
    text = notes.read_text()
    assert "old table" not in text
    assert text.startswith("# Results\n")
    assert "new table" in text
    assert text.endswith("## Diagnosis\nkept\n")


def test_the_paired_bench_of_issue_19_runs_every_pair(tmp_path: Path) -> None:
    out = tmp_path / "paired.json"
    script = Path(sys.executable).parent / "taskfs"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "paired.py"),
            "--sizes",
            "200",
            "--runs",
            "1",
            "--no-peers",
            "--cache",
            str(tmp_path / "cache"),
            "--taskfs",
            str(script),
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    pairs = json.loads(out.read_text())["200"]
    assert set(pairs) == {
        "new / git add+commit",
        "claim / git add+commit",
        "move / git add+commit",
        "refuse / git add+commit",
        "first ls after claim / settled ls",
        "send / git add+commit",
        "check (command true) / git add+commit",
        "evidence add / git add+commit",
        "complete / git add+commit",
    }
    for name, figures in pairs.items():
        assert figures["failed_runs"] == 0, (name, proc.stdout)
        assert figures["ratio"] > 0


def test_the_history_bench_of_issue_17_runs_every_command(tmp_path: Path) -> None:
    script = str(Path(sys.executable).parent / "taskfs")
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "history_ab.py"),
            "--a",
            script,
            "--b",
            script,
            "--size",
            "20",
            "--runs",
            "1",
            "--cache",
            str(tmp_path / "cache"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["audit", "review", "log", "ls", "claim"]
    for line in lines[2:]:  # audit and review exit 1 where they find something: not a failure
        assert "FAILED RUNS" not in line, proc.stdout


def test_the_agent_views_bench_runs_on_a_tiny_repository(tmp_path: Path) -> None:
    """bench/agent_views.py (issue 38) end to end: every view paired, every pair answered."""
    script = Path(sys.executable).parent / "taskfs"
    out = tmp_path / "views.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "agent_views.py"), "--size", "20", "--runs", "1",
         "--cache", str(tmp_path / "cache"), "--taskfs", str(script), "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    for name in ("inbox --json", "prime", "prime --hook", "nudge --hook"):
        assert figures[name]["failed_runs"] == 0, name
        assert figures[name]["ratio"] > 0
    assert "largest steady ratio" in done.stdout
