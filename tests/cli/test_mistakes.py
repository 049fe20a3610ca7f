"""Twenty-odd mistakes users and their agents make, each answered with what to do next.

Each case is run through the real command line against a repository where builder holds
three tasks (`tests.cli.test_prime.held_repo`: t-work working, t-waits waiting for planner's
answer, t-stopped canceled) and is offered three more (t-free, t-blocker, t-blocked). A case
names the mistake, the command, the exit status and what the answer must say.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli.test_prime import held_repo
from tests.helpers import Result, taskfs, write_envelope


@dataclass(frozen=True)
class Mistake:
    run: Callable[[Path, dict[str, str]], Result]
    code: int
    says: tuple[str, ...]  # what the answer (stdout and stderr) must contain
    then: Callable[[dict[str, str]], None] | None = None  # how the ledger must look after


def cli(*args: str) -> Callable[[Path, dict[str, str]], Result]:
    return lambda repo, ids: taskfs(*args)


def state_of(task: str) -> str:
    return str(taskfs("show", task, "--json").json["state"])


def is_working(task: str) -> Callable[[dict[str, str]], None]:
    def check(ids: dict[str, str]) -> None:
        assert state_of(task) == "working"

    return check


def answer_with(token: Callable[[dict[str, str]], str]) -> Callable[[Path, dict[str, str]], Result]:
    def run(repo: Path, ids: dict[str, str]) -> Result:
        return taskfs(
            "send", "t-waits", "No warning.", "--agent", "planner", "--in-reply-to", token(ids)
        )

    return run


def stem_of_question(repo: Path) -> str:
    names = sorted(p.stem for p in (repo / "tasks" / "t-waits" / "messages").glob("*.yaml"))
    return names[-1]


def weak_envelope(repo: Path, ids: dict[str, str]) -> Result:
    path = write_envelope(
        repo / "weak.yaml",
        id="t-weak",
        objective="Fix it.",
        filesAndInterfaces=["weak/**"],
        acceptanceCheck={"passFailCommand": "true", "endToEndVerification": "Run it."},
    )
    return taskfs("new", str(path))


def new_json(repo: Path, ids: dict[str, str]) -> Result:
    path = write_envelope(
        repo / "weak.yaml",
        id="t-weak2",
        filesAndInterfaces=["weak2/**"],
        acceptanceCheck={"passFailCommand": "true", "endToEndVerification": "Run it."},
    )
    result = taskfs("new", str(path), "--json")
    assert result.stderr == ""  # --json: the warnings are in the document, not on stderr
    codes = [w["code"] for w in result.json["warnings"]]
    return Result(result.code, " ".join(codes), "")


MISTAKES: dict[str, Mistake] = {
    "id-in-wrong-case": Mistake(
        cli("claim", "T-FREE", "--agent", "builder"), 1, ("did you mean 't-free'?", "taskfs ls")
    ),
    "id-with-a-typo": Mistake(cli("show", "t-wrok"), 1, ("did you mean 't-work'?", "taskfs ls")),
    "unknown-id": Mistake(cli("show", "qqqqqq"), 1, ("no task 'qqqqqq'", "taskfs ls")),
    "state-done": Mistake(
        cli("move", "t-work", "done", "--agent", "builder"), 2, ("did you mean 'completed'?",)
    ),
    "state-finished": Mistake(
        cli("move", "t-work", "finished", "--agent", "builder"), 2, ("did you mean 'completed'?",)
    ),
    "state-closed": Mistake(
        cli("move", "t-work", "closed", "--agent", "builder"), 2, ("did you mean 'completed'?",)
    ),
    "state-cancelled-british": Mistake(
        cli("move", "t-work", "cancelled", "--agent", "builder"), 2, ("did you mean 'canceled'?",)
    ),
    "state-in-progress": Mistake(
        cli("move", "t-free", "in_progress", "--agent", "builder"), 2, ("did you mean 'working'?",)
    ),
    "state-in-capitals": Mistake(
        cli("move", "t-work", "Failed", "--agent", "builder"), 2, ("did you mean 'failed'?",)
    ),
    "edge-not-in-the-table": Mistake(
        cli("move", "t-free", "completed", "--agent", "planner"),
        1,
        ("allowed from submitted: working, failed, canceled, rejected",),
    ),
    "moving-a-terminal-task": Mistake(
        cli("move", "t-stopped", "working", "--agent", "planner"),
        1,
        ("allowed from canceled: none",),
    ),
    "missing-agent": Mistake(cli("claim", "t-free"), 1, ("--agent or TASKFS_AGENT",)),
    "claim-twice": Mistake(
        cli("claim", "t-work", "--agent", "builder"), 0, ("already yours (working)",)
    ),
    "answer-without-in-reply-to": Mistake(
        cli("send", "t-waits", "No warning.", "--agent", "planner"),
        0,
        ("input_required -> working",),
        is_working("t-waits"),
    ),
    "in-reply-to-last": Mistake(
        answer_with(lambda ids: "last"), 0, ("input_required -> working",), is_working("t-waits")
    ),
    "in-reply-to-a-short-prefix": Mistake(
        answer_with(lambda ids: ids["question"][:6]),
        0,
        ("input_required -> working",),
        is_working("t-waits"),
    ),
    "in-reply-to-the-file-stem": Mistake(
        lambda repo, ids: answer_with(lambda _ids: stem_of_question(repo))(repo, ids),
        0,
        ("input_required -> working",),
        is_working("t-waits"),
    ),
    "in-reply-to-an-unknown-message": Mistake(
        answer_with(lambda ids: "zz-not-a-message"), 1, ("taskfs messages TASK",)
    ),
    "fail-with-empty-text": Mistake(
        cli("send", "t-work", "", "--agent", "builder", "--status", "failed"),
        1,
        ('taskfs send t-work --status failed "why" (the text is the reason)',),
    ),
    "refuse-without-reason": Mistake(
        cli("refuse", "t-free", "--agent", "builder"), 1, ('--reason "why"',)
    ),
    "complete-before-checking": Mistake(
        cli("complete", "t-work", "--agent", "builder"), 1, ("taskfs check",)
    ),
    "result-sent-to-the-wrong-party": Mistake(
        cli("send", "t-work", "Done.", "--agent", "builder", "--status", "result", "--to", "rev"),
        1,
        ("message is addressed to 'rev', not 'planner'",),
    ),
    "weak-contract-submitted": Mistake(
        weak_envelope, 0, ("warning[check_cannot_fail]", "warning[objective_too_short]")
    ),
    "weak-contract-submitted-json": Mistake(new_json, 0, ("check_cannot_fail",)),
}


@pytest.mark.parametrize("name", list(MISTAKES))
def test_a_mistake_is_answered_with_what_to_do_next(repo: Path, name: str) -> None:
    ids = held_repo(repo)
    mistake = MISTAKES[name]
    result = mistake.run(repo, ids)
    said = result.stdout + result.stderr
    assert result.code == mistake.code, said
    for words in mistake.says:
        assert words in said, said
    assert "Traceback" not in said
    if mistake.then is not None:
        mistake.then(ids)


def test_there_are_at_least_twenty_named_mistakes() -> None:
    assert len(MISTAKES) >= 20
