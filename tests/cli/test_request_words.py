"""A request's words stay with it (issue 38, item 7): `show` of a request prints them (not only
`--json`), `log` does not cut them short, and a task born from a request says so in `show`,
`show --format markdown` and `review`: the words, the proposal, and who accepted it."""

from __future__ import annotations

from pathlib import Path

from taskfs.core import yamlio
from tests.helpers import ENVELOPE, git, taskfs

WORDS = (
    "The login form lets an empty password through when the user presses enter twice; "
    "please make it refuse that, keep the error message we show for a wrong password, "
    "and add a regression test next to the others in tests/test_login.py."
)


def request(repo: Path) -> str:
    opened = taskfs("intake", "open", WORDS, "--agent", "alice", "--to", "builder", "--json")
    assert opened.code == 0, opened.stdout + opened.stderr
    return str(opened.json["id"])


def test_show_and_log_of_a_request_keep_its_words(repo: Path) -> None:
    task = request(repo)
    assert WORDS in " ".join(taskfs("show", task).stdout.split())
    assert len(WORDS) > 120
    assert WORDS in " ".join(taskfs("log", task).stdout.split())
    rows = taskfs("log", task, "--json").json["timeline"]
    assert rows[0]["detail"] == WORDS


def test_a_task_born_from_a_request_says_so(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    task = request(repo)
    proposal = repo / "p.yaml"
    proposal.write_text(yamlio.dump({k: v for k, v in ENVELOPE.items() if k != "from"}))
    proposed = taskfs("intake", "propose", task, str(proposal), "--agent", "builder")
    assert proposed.code == 0, proposed.stdout + proposed.stderr
    assert taskfs("intake", "accept", task, "--agent", "alice").code == 0
    said = taskfs("show", task, "--json").json["request"]
    assert (said["from"], said["words"], said["proposedBy"], said["acceptedBy"]) == (
        "alice",
        [WORDS],
        "builder",
        "alice",
    )
    for text in (
        taskfs("show", task).stdout,
        taskfs("show", task, "--format", "markdown").stdout,
        taskfs("review", "main..HEAD").stdout,
    ):
        flat = " ".join(text.replace("\\", "").split())
        assert WORDS[:60] in flat, text
        assert "builder" in flat
        assert "accepted by alice" in flat, text
