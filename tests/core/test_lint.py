"""The lint rules, table by table: what each one flags and, as important, what it leaves alone."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taskfs.core import lint
from taskfs.core.envelope import Envelope, validate_envelope
from tests.helpers import ENVELOPE

CANNOT_FAIL = [
    "true",
    ":",
    "/bin/true",
    "/usr/bin/true",
    "exit 0",
    "exit",
    "echo ok",
    "printf 'done\\n'",
    "true && true",
    "true; true",
    "pytest || true",
    "pytest || exit 0",
    "pytest; true",
    "pytest; exit 0",
    "exit 0; pytest",
    "pytest | tee log.txt",
    "pytest 2>&1 | tee log.txt",
    "pytest | cat",
    "pytest &",
    "FOO=1 true",
    "  true  ",
    "true # a comment",
    "pytest\ntrue",
    "false || true",
    "echo start && echo ok",
    "echo done",
    "printf 'if then fi'",
    "pytest \\\n  || true",
]
CAN_FAIL = [
    "pytest",
    "pytest tests/test_login.py",
    "true && pytest",
    "false || pytest",
    "pytest && echo ok",
    "test -f src/auth/login.py",
    "exit 1",
    "false",
    "pytest 2>&1",
    "pytest | cat out.txt",
    "pytest | grep passed",
    "echo start; pytest",
    "pytest &&\n true",
    "make check",
    "FOO=1 pytest",
    "pytest & wait",
    # shell the rule does not model: it stays silent rather than guess
    "if true; then :; fi",
    "for f in a; do true; done",
    "! pytest",
    "[[ -f x ]] || true && pytest",
    "(true)",
    "{ true; }",
    "bash -c 'exit 0'",
    "set +e; pytest; true",
    "echo $(true)",
    'echo "unclosed',
]


@pytest.mark.parametrize("command", CANNOT_FAIL)
def test_commands_that_cannot_fail_are_flagged(command: str) -> None:
    assert lint.cannot_fail(command) is True


@pytest.mark.parametrize("command", CAN_FAIL)
def test_commands_that_can_fail_are_left_alone(command: str) -> None:
    assert lint.cannot_fail(command) is False


WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=3, max_size=12).filter(
    lambda w: (
        w not in {"true", "echo", "exit", "false", "printf", "cat", "tee", "head", "tail", "set"}
        and w not in {"if", "then", "else", "fi", "for", "while", "until", "do", "done", "case"}
        and w not in {"esac", "function", "trap", "eval", "exec", "source"}
    )
)


@given(WORDS, WORDS)
def test_any_command_can_fail_until_its_status_is_thrown_away(first: str, second: str) -> None:
    command = f"{first} --flag {second}"
    assert lint.cannot_fail(command) is False
    assert lint.cannot_fail(f"{command} || true") is True
    assert lint.cannot_fail(f"{command}; exit 0") is True
    assert lint.cannot_fail(f"true && {command}") is False
    assert lint.cannot_fail(f"{command} | {second}") is False


OWNED = ["src/auth/login.py", "tests/test_login.py"]
MENTIONS = [
    ("pytest tests/test_login.py", OWNED, True),
    ("pytest tests/", OWNED, True),
    ("python -m pytest -k login", OWNED, True),
    ("mypy src/auth", OWNED, True),
    ("pytest", OWNED, False),
    ("make check", OWNED, False),
    ("npm test", ["web/app.ts"], False),
    ("npm test -- app", ["web/app.ts"], True),
    ("pytest tests/unit", ["src/**"], False),
    ("pytest src", ["src/**"], True),
    ("make", ["interface:auth-api"], True),  # nothing owned can be named: nothing to ask
    ("make", ["**"], True),
    ("make", ["*.py"], True),
    ("go test ./pkg/...", ["pkg/*/x.go"], True),
]


@pytest.mark.parametrize(("command", "entries", "expected"), MENTIONS)
def test_a_check_should_name_something_the_task_owns(
    command: str, entries: list[str], expected: bool
) -> None:
    assert lint.mentions_owned(command, entries) is expected


EVERYTHING = [
    ("**", True),
    ("*", True),
    ("**/*", True),
    ("**/*.py", True),
    ("*/**", True),
    ("./**", True),
    ("src/**", False),
    ("*.md", False),
    ("src/*.py", False),
    ("docs/**/*.md", False),
    ("interface:everything", False),
]


@pytest.mark.parametrize(("entry", "expected"), EVERYTHING)
def test_ownership_across_the_whole_repository(entry: str, expected: bool) -> None:
    assert lint.owns_everything(entry) is expected


VAGUE = [
    ("none", True),
    ("None.", True),
    ("N/A", True),
    ("n/a", True),
    ("be careful", True),
    ("Be careful!", True),
    ("  TBD ", True),
    ("Use common sense.", True),
    ("Don't break anything", True),
    ("-", True),
    ("Do not change the database schema.", False),
    ("No force pushes.", False),
    ("Do not touch other modules; no new dependencies.", False),
]


@pytest.mark.parametrize(("text", "expected"), VAGUE)
def test_boundaries_that_say_nothing(text: str, expected: bool) -> None:
    assert lint.is_vague(text) is expected


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Fix bug", 2),
        ("Fix the login bug.", 4),
        ("Fix the login-page bug in src/auth/login.py, please.", 7),
        ("   ", 0),
        ("Don't accept empty passwords", 4),
    ],
)
def test_word_count(text: str, words: int) -> None:
    assert lint.word_count(text) == words


def envelope(**changes: Any) -> Envelope:
    data = {**ENVELOPE, **changes}
    found, problems = validate_envelope(data)
    assert found is not None, problems
    return found


GOOD_CHECK = {
    "passFailCommand": "pytest tests/test_login.py",
    "endToEndVerification": "Log in with an empty password and see it refused.",
}

# (changes to a good envelope, contexts of other tasks, the codes expected)
CASES: list[tuple[dict[str, Any], dict[str, str], list[str]]] = [
    ({}, {}, []),
    ({"acceptanceCheck": {**GOOD_CHECK, "passFailCommand": "true"}}, {}, ["check_cannot_fail"]),
    (
        {"acceptanceCheck": {**GOOD_CHECK, "passFailCommand": "pytest"}},
        {},
        ["check_ignores_owned_files"],
    ),
    ({"filesAndInterfaces": ["**"]}, {}, ["owns_everything"]),
    (
        {"filesAndInterfaces": ["src/auth/login.py", "**/*.py"]},
        {},
        ["owns_everything"],
    ),
    ({"boundaries": "none"}, {}, ["boundaries_vague"]),
    ({"objective": "Fix login"}, {}, ["objective_too_short"]),
    ({"dependsOn": ["other"]}, {"other": "billing"}, ["dependency_other_context"]),
    ({"dependsOn": ["other"]}, {"other": "auth-hardening"}, []),
    ({"dependsOn": ["not-yet-there"]}, {}, []),
    (
        {
            "objective": "Fix",
            "boundaries": "n/a",
            "filesAndInterfaces": ["**"],
            "acceptanceCheck": {**GOOD_CHECK, "passFailCommand": "echo ok"},
        },
        {},
        ["check_cannot_fail", "owns_everything", "boundaries_vague", "objective_too_short"],
    ),
]


@pytest.mark.parametrize(("changes", "contexts", "codes"), CASES)
def test_lint_envelope(changes: dict[str, Any], contexts: dict[str, str], codes: list[str]) -> None:
    found = lint.lint_envelope(
        envelope(**{"acceptanceCheck": GOOD_CHECK, **changes}), subject="t1", contexts=contexts
    )
    assert [p.code for p in found] == codes
    assert all(p.data["subject"] == "t1" and p.field for p in found)
    assert set(codes) <= set(lint.LINT_CODES)


def test_settings_disable_codes_and_set_the_objective_length() -> None:
    weak = envelope(objective="Fix the login bug", boundaries="none", acceptanceCheck=GOOD_CHECK)
    assert [p.code for p in lint.lint_envelope(weak, subject="t")] == ["boundaries_vague"]
    strict = lint.Settings(objective_min_words=5)
    assert [p.code for p in lint.lint_envelope(weak, subject="t", settings=strict)] == [
        "boundaries_vague",
        "objective_too_short",
    ]
    quiet = lint.Settings(disable=frozenset({"boundaries_vague"}))
    assert lint.lint_envelope(weak, subject="t", settings=quiet) == []


def test_every_code_has_a_message() -> None:
    from taskfs.errors import MESSAGES

    assert set(lint.LINT_CODES) <= set(MESSAGES)
