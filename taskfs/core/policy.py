"""The runner policy: which acceptance commands the watcher may run on its own.

An envelope is untrusted input: whoever can write into the tasks folder can write any
`passFailCommand`. So the watcher runs a check only when the operator's policy, a file kept
outside the repository, allows that command; by default it allows nothing.

```yaml
allow:
  commands:                  # the commands the watcher may run
    - make check             # exactly this command
    - pytest tests/*         # pytest and one plain word: pytest tests/test_login.py
    - pytest -q **           # pytest -q and any plain words after it
  senders: [planner, lead]   # optional: and only for tasks whose envelope is from one of these
complete: false              # optional: true lets a passing check complete the task
```

A pattern without wildcards allows exactly that command (surrounding white space aside), shell
syntax and all. A pattern with wildcards (`*`, `?`, `[...]`) is compared word by word with a
*plain* command only, one made of letters, digits, white space, quotes and `- _ . / : = , + @ %`:
anything else (`;`, `&&`, `|`, `$(...)`, backquotes, redirections, globs, `~`, backslashes)
could make the shell run something the pattern never named. Within a word, `*` and `?` match
any characters (`/` included) and `[...]` a class; a word that is exactly `**` matches any
number of words. `senders` narrows the commands, never widens them: an envelope's `from` is
whatever the writer of the file typed, so it cannot be what grants a command.

Completing stays the holder's act: a passing check the watcher ran records evidence, and the
holder runs `taskfs complete`. Only `complete: true` lets the watcher complete the task on the
holder's behalf (through the same gates: the evidence must pass on committed work).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cache
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict, ValidationError

from taskfs.core import layout

ANY_WORDS = "**"
_WILDCARD = re.compile(r"[*?\[]")
_PLAIN = re.compile(r"[A-Za-z0-9 \t_\-./:=,+@%'\"]*")
_PLAIN_PATTERN = re.compile(r"[A-Za-z0-9 \t_\-./:=,+@%'\"*?\[\]!]*")


class PolicyError(ValueError):
    """A policy file that cannot be used; `reason` says why in one sentence."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _pattern(value: str) -> str:
    if not value.strip():
        raise ValueError("a command pattern must not be empty")
    if _WILDCARD.search(value):
        if not _PLAIN_PATTERN.fullmatch(value):
            raise ValueError(
                f"{value!r} has wildcards and shell syntax; a pattern with wildcards only "
                "matches plain commands, so write a command with shell syntax out exactly"
            )
        if _words(value) is None:
            raise ValueError(f"{value!r} has unbalanced quotes")
    return value


def _agent(value: str) -> str:
    if not layout.is_agent_name(value):
        raise ValueError(f"{value!r} is not an agent name")
    return value


class Allow(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    commands: tuple[Annotated[str, Strict(), AfterValidator(_pattern)], ...] = Field(
        default=(), description="Patterns of the acceptance commands the watcher may run."
    )
    senders: tuple[Annotated[str, Strict(), AfterValidator(_agent)], ...] | None = Field(
        default=None,
        description="When given, only tasks from these senders have their commands run.",
    )


class RunnerPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    allow: Allow = Field(default_factory=Allow)
    complete: Annotated[bool, Strict()] = Field(
        default=False,
        description="Whether a passing check the watcher ran completes the task (on behalf of "
        "its holder); otherwise the holder completes it.",
    )


NOTHING = RunnerPolicy()


def parse_policy(value: Any) -> RunnerPolicy:
    """The policy a YAML document holds (an empty document allows nothing)."""
    if value is None:
        return NOTHING
    if not isinstance(value, dict):
        raise PolicyError("the document is not a mapping")
    try:
        return RunnerPolicy.model_validate(value)
    except ValidationError as exc:
        reasons = []
        for error in exc.errors(include_url=False, include_input=False):
            where = ".".join(str(part) for part in error["loc"]) or "file"
            message = str(error["msg"]).removeprefix("Value error, ")
            reasons.append(f"{where}: {message}")
        raise PolicyError("; ".join(reasons)) from None


@dataclass(frozen=True)
class RunDecision:
    """Whether the watcher may run a command, the pattern that allowed it, or why not."""

    allowed: bool
    reason: str
    pattern: str | None = None


def decide_run(policy: RunnerPolicy, command: str, sender: str | None) -> RunDecision:
    allow = policy.allow
    if not allow.commands:
        return RunDecision(False, "the runner policy allows no command")
    pattern = next((p for p in allow.commands if command_matches(p, command)), None)
    if pattern is None:
        why = "no pattern of the runner policy matches the command"
        if not is_plain(command):
            why += " (it uses shell syntax, which only a pattern written out exactly allows)"
        return RunDecision(False, why)
    if allow.senders is not None and sender not in allow.senders:
        who = f"from {sender!r}" if sender else "from no named sender"
        return RunDecision(
            False, f"the task is {who}, and the runner policy trusts only its senders", pattern
        )
    return RunDecision(True, f"allowed by the pattern {pattern!r}", pattern)


def is_plain(command: str) -> bool:
    return _PLAIN.fullmatch(command) is not None and _words(command) is not None


def command_matches(pattern: str, command: str) -> bool:
    if not _WILDCARD.search(pattern):
        return pattern.strip() == command.strip()
    if not is_plain(command):
        return False
    wanted, words = _words(pattern), _words(command)
    if wanted is None or words is None:
        return False
    return _match_words(wanted, words)


def _words(text: str) -> tuple[str, ...] | None:
    try:
        return tuple(shlex.split(text, comments=False, posix=True))
    except ValueError:
        return None


def _match_words(wanted: tuple[str, ...], words: tuple[str, ...]) -> bool:
    @cache
    def match(i: int, j: int) -> bool:
        if i == len(wanted):
            return j == len(words)
        if wanted[i] == ANY_WORDS:
            return any(match(i + 1, k) for k in range(j, len(words) + 1))
        return j < len(words) and fnmatchcase(words[j], wanted[i]) and match(i + 1, j + 1)

    return match(0, 0)
