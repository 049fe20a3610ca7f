"""`show`'s text says how a task ended (the team day: it showed neither the artifacts a
completion named nor why a task failed, which only `--json`'s history and `--format markdown`
held): the artifacts, and the reason of a failure, refusal or cancellation with who gave it,
beside the failing run's last lines it already showed."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import git, submit, taskfs

FAILS = {"passFailCommand": "grep -q hello a.txt", "endToEndVerification": "cat a.txt"}


def _section(text: str, name: str) -> list[str]:
    """The lines of `show`'s section `# name`, up to the next section."""
    lines = text.splitlines()
    start = lines.index(f"# {name}") + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("# ")), len(lines))
    return [line for line in lines[start:end] if line]


def test_show_names_the_artifacts_of_a_completion(repo: Path) -> None:
    task = submit(repo, acceptanceCheck={"passFailCommand": "true", "endToEndVerification": "-"})
    assert taskfs("claim", task, "--agent", "builder").code == 0
    (repo / "src").mkdir()
    (repo / "src" / "login.py").write_text("x = 1\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "the work")
    assert taskfs("check", task, "--agent", "builder").code == 0
    done = taskfs(
        "complete", task, "--agent", "builder",
        "--artifact", "fix=src/login.py", "--artifact", "pr=https://example.invalid/pr/7",
    )  # fmt: skip
    assert done.code == 0, done.stdout
    shown = taskfs("--lang", "en", "show", task)
    assert shown.code == 0
    assert _section(shown.stdout, "artifacts") == [
        "  fix: src/login.py",
        "  pr: https://example.invalid/pr/7",
    ]
    # The document held them already, in the completion's history row.
    history = taskfs("show", task, "--json").json["history"]
    assert history[-1]["artifacts"] == [
        {"name": "fix", "location": "src/login.py"},
        {"name": "pr", "location": "https://example.invalid/pr/7"},
    ]


def test_show_says_why_a_task_failed_and_the_failing_run(repo: Path) -> None:
    task = submit(repo, acceptanceCheck=FAILS, filesAndInterfaces=["a.txt"])
    assert taskfs("claim", task, "--agent", "builder").code == 0
    assert taskfs("check", task, "--agent", "builder").code == 1
    why = "cannot: the boundaries forbid writing hello"
    assert taskfs("send", task, why, "--agent", "builder", "--status", "failed").code == 0
    shown = taskfs("--lang", "en", "show", task).stdout
    (line,) = _section(shown, "failed")
    assert line.startswith("  by builder at ")
    assert line.endswith(f": {why}")
    # The failing run's last lines stay in the evidence section.
    assert "a.txt: No such file or directory" in "\n".join(_section(shown, "evidence"))


def test_show_says_why_a_task_was_refused_or_canceled(repo: Path) -> None:
    refused = submit(repo, id="refused", filesAndInterfaces=["src/r/**"])
    assert taskfs("refuse", refused, "--agent", "builder", "--reason", "not mine").code == 0
    (line,) = _section(taskfs("--lang", "en", "show", refused).stdout, "rejected")
    assert (line.startswith("  by builder at "), line.endswith(": not mine")) == (True, True)
    canceled = submit(repo, id="canceled", filesAndInterfaces=["src/c/**"])
    assert taskfs("move", canceled, "canceled", "--agent", "planner", "--reason", "moot").code == 0
    (line,) = _section(taskfs("--lang", "en", "show", canceled).stdout, "canceled")
    assert line.endswith(": moot")
    # A task still open has no such section.
    live = submit(repo, id="live", filesAndInterfaces=["src/l/**"])
    text = taskfs("--lang", "en", "show", live).stdout
    assert "# artifacts" not in text
    assert all(f"# {s}" not in text for s in ("failed", "rejected", "canceled"))
