"""Warnings for contracts that are valid but weak: the rules of `taskfs lint`, as values.

Pure: an envelope and the facts it is compared with (the contexts of other tasks, the
repository's settings) are passed in; the answer is a list of named problems whose codes are
the `LintCode`s below. A warning never refuses anything by itself; `--strict` makes it fail.

The rules err on the side of silence: a check they cannot understand (a shell construct they do
not model) is not flagged, so that a warning is worth reading.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Iterator, Mapping
from typing import Literal, NamedTuple, get_args

from taskfs.core import globs
from taskfs.core.envelope import Envelope
from taskfs.errors import Problem, problem

LintCode = Literal[
    "check_cannot_fail",
    "check_ignores_owned_files",
    "owns_everything",
    "boundaries_vague",
    "objective_too_short",
    "dependency_other_context",
    "dependency_unknown",
    "dependency_final",
]
LINT_CODES: tuple[str, ...] = get_args(LintCode)
DEFAULT_OBJECTIVE_MIN_WORDS = 4


class Settings(NamedTuple):
    """What a repository chose (`lint:` in .taskfs/config.yaml)."""

    disable: frozenset[str] = frozenset()
    objective_min_words: int = DEFAULT_OBJECTIVE_MIN_WORDS


def lint_envelope(
    envelope: Envelope,
    *,
    subject: str,
    contexts: Mapping[str, str] | None = None,
    settings: Settings | None = None,
    dependencies: Mapping[str, tuple[str, str]] | None = None,
) -> list[Problem]:
    """Every warning about one contract. `subject` names it (a task id, or a file not yet
    submitted); `contexts` maps the ids of known tasks to their contextID; `dependencies`
    (when the ledger is known) maps each known task to the one standing for it now and that
    one's state (a task reassigned or retried lives on in its successor: `core.lineage`)."""
    settings = settings or Settings()
    found: list[Problem] = []
    command = envelope.acceptance_check.pass_fail_command
    if cannot_fail(command):
        found.append(
            _warn("check_cannot_fail", subject, "acceptanceCheck.passFailCommand", command=command)
        )
    elif not mentions_owned(command, envelope.files_and_interfaces):
        paths = [e for e in envelope.files_and_interfaces if not e.startswith("interface:")]
        found.append(
            _warn(
                "check_ignores_owned_files",
                subject,
                "acceptanceCheck.passFailCommand",
                command=command,
                owned=paths,
                owned_text=", ".join(paths),
            )
        )
    for i, raw in enumerate(envelope.files_and_interfaces):
        if owns_everything(raw):
            found.append(_warn("owns_everything", subject, f"filesAndInterfaces[{i}]", entry=raw))
    if is_vague(envelope.boundaries):
        found.append(
            _warn("boundaries_vague", subject, "boundaries", boundaries=envelope.boundaries.strip())
        )
    words = word_count(envelope.objective)
    if words < settings.objective_min_words:
        found.append(
            _warn(
                "objective_too_short",
                subject,
                "objective",
                words=words,
                minimum=settings.objective_min_words,
            )
        )
    for i, dep in enumerate(envelope.depends_on):
        other = (contexts or {}).get(dep)
        if other is not None and other != envelope.context_id:
            found.append(
                _warn(
                    "dependency_other_context",
                    subject,
                    f"dependsOn[{i}]",
                    dependency=dep,
                    context=envelope.context_id,
                    other_context=other,
                )
            )
    found = [p for p in found if p.code not in settings.disable]
    if dependencies is not None:
        found += dependency_warnings(envelope, subject, dependencies, settings)
    return found


def dependency_warnings(
    envelope: Envelope,
    subject: str,
    dependencies: Mapping[str, tuple[str, str]],
    settings: Settings | None = None,
) -> list[Problem]:
    """A dependency no task is yet (a misspelt id waits for ever), or one that ended without
    completing and was not retried: the task could never be claimed. `dependencies`: as
    `lint_envelope`'s."""
    disabled = (settings or Settings()).disable
    found = []
    for i, dep in enumerate(envelope.depends_on):
        where = f"dependsOn[{i}]"
        if dep not in dependencies:
            found.append(_warn("dependency_unknown", subject, where, dependency=dep))
            continue
        standing, state = dependencies[dep]
        if state in _NEVER_COMPLETES:
            now = f" (now {standing})" if standing != dep else ""
            found.append(
                _warn(
                    "dependency_final",
                    subject,
                    where,
                    dependency=dep,
                    state=state,
                    standing=standing,
                    now_text=now,
                )
            )
    return [p for p in found if p.code not in disabled]


_NEVER_COMPLETES = frozenset({"failed", "rejected", "canceled"})


def _warn(code: str, subject: str, field: str, **data: object) -> Problem:
    return problem(code, field=field, subject=subject, **data)


# -- an acceptance command that cannot fail -------------------------------------------------

# Commands whose exit status is 0 whatever happens (for our purposes: printing cannot fail).
_ALWAYS_SUCCEED = frozenset(
    {"true", ":", "/bin/true", "/usr/bin/true", "echo", "/bin/echo", "printf", "/usr/bin/printf"}
)
# At the end of a pipeline (whose status is its last command's), these swallow the status of
# what runs before them: `pytest | tee log` passes whatever pytest said.
_SINKS = frozenset({"cat", "tee", "head", "tail"})
_SEPARATORS = frozenset({";", "&&", "||", "&", "\n"})
_UNMODELLED = re.compile(r"[(){}`]|\$\(|<<")
# Command names that start shell the rule does not model (compound commands, shell state).
_UNMODELLED_WORDS = frozenset(
    {
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "for",
        "while",
        "until",
        "do",
        "done",
        "case",
        "esac",
        "function",
        "set",
        "trap",
        "eval",
        "exec",
        "source",
        ".",
        "!",
        "[[",
        "select",
    }
)

Outcome = tuple[int, bool]  # (exit status: 0 or 1, whether the shell has exited)


def cannot_fail(command: str) -> bool:
    """Whether a shell command's exit status is 0 on every path (`true`, `exit 0`,
    `echo ok`, `pytest || true`, `pytest; true`, `pytest | tee log`, `pytest &`...)."""
    lists = _shell_lists(command)
    if lists is None:
        return False
    outcomes: set[Outcome] = {(0, False)}
    for operator, pipeline in lists:
        outcomes = {after for before in outcomes for after in _step(before, operator, pipeline)}
    return all(status == 0 for status, _ in outcomes)


def _shell_lists(command: str) -> list[tuple[str, list[list[str]]]] | None:
    """The command as (operator before it, pipeline) pairs; None for shell we do not model."""
    tokens = _tokens(command)
    if tokens is None:
        return None
    out: list[tuple[str, list[list[str]]]] = []
    operator = ";"
    pipeline: list[list[str]] = []
    words: list[str] = []
    for token in tokens:
        if token in ("|", "|&"):
            pipeline.append(words)
            words = []
        elif token in _SEPARATORS:
            if words or pipeline:
                out.append((operator, [*pipeline, words]))
                pipeline, words = [], []
                operator = token
            elif token != "\n":  # a newline after && or || continues the list
                operator = token
            if token == "&":
                out.append(("&", []))
                operator = ";"
        elif set(token) <= set(";&|"):
            return None  # `;;`, `&&&` and friends: not a list we understand
        else:
            words.append(token)  # a word, or a redirection (`2>&1`, `&>`), part of its command
    return None if _unmodelled_commands(out) else out


def _tokens(command: str) -> list[str] | None:
    if not command.strip() or _UNMODELLED.search(command):
        return None
    tokens: list[str] = []
    for line in command.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>")
        lexer.commenters = "#"
        lexer.whitespace_split = True
        try:
            tokens += [*lexer, "\n"]
        except ValueError:  # an unclosed quote
            return None
    return tokens


def _unmodelled_commands(lists: list[tuple[str, list[list[str]]]]) -> bool:
    for _operator, commands in lists:
        for words in commands:
            rest = _without_assignments(words)
            if rest and rest[0] in _UNMODELLED_WORDS:
                return True
    return False


def _step(before: Outcome, operator: str, pipeline: list[list[str]]) -> Iterator[Outcome]:
    status, exited = before
    if exited:
        yield before
    elif operator == "&":  # the pipeline before it went to the background: status 0
        yield (0, False)
    elif (operator == "&&" and status != 0) or (operator == "||" and status == 0):
        yield before
    else:
        yield from _run(pipeline, status)


def _run(pipeline: list[list[str]], status: int) -> Iterator[Outcome]:
    words = _without_assignments(pipeline[-1])
    if not words:
        yield (0, False)  # only variable assignments
    elif words[0] == "exit":
        code = words[1] if len(words) > 1 else None
        yield (status if code is None else (0 if code == "0" else 1), True)
    elif words[0] in ("false", "/bin/false", "/usr/bin/false"):
        yield (1, False)
    elif words[0] in _ALWAYS_SUCCEED or (len(pipeline) > 1 and _is_sink(words)):
        yield (0, False)
    else:
        yield from ((0, False), (1, False))


def _without_assignments(words: list[str]) -> list[str]:
    i = 0
    while i < len(words) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[i], re.S):
        i += 1
    return words[i:]


def _is_sink(words: list[str]) -> bool:
    if words[0] not in _SINKS:
        return False
    # `cat FILE` or `head FILE` read a file, which can fail; `tee FILE` writes one (rarely fails).
    return words[0] == "tee" or all(w.startswith("-") for w in words[1:])


# -- an acceptance command that exercises none of what the task owns -------------------------

_MIN_NAME = 3


def mentions_owned(command: str, entries: Iterable[str]) -> bool:
    """Whether the command names one of the owned paths, a folder above one, its file name or
    its stem (`login` covers `tests/test_login.py`). True when nothing owned can be named
    (only interfaces, or globs with no literal part): then the rule has nothing to ask for."""
    names = [n for raw in entries for n in _mentionable(raw)]
    if not names:
        return True
    return any(name in command for name in names)


def _mentionable(raw: str) -> list[str]:
    try:
        entry = globs.parse_entry(raw)
    except globs.EntryError:
        return []
    if entry.kind != "path":
        return []
    literal: list[str] = []
    for segment in entry.text.split("/"):
        if any(ch in segment for ch in "*?["):
            break
        literal.append(segment)
    names = ["/".join(literal[:n]) for n in range(1, len(literal) + 1)]
    if len(literal) == len(entry.text.split("/")) and literal:
        leaf = literal[-1]
        names += [leaf, leaf.rsplit(".", 1)[0]]
    return [n for n in names if len(n) >= _MIN_NAME]


# -- ownership of the whole repository --------------------------------------------------------

_EVERY_TOP_FILE = globs.parse_entry("*")


def owns_everything(raw: str) -> bool:
    """Whether an entry reaches across the whole repository: `**`, `*`, `**/*.py`, `*/**`..."""
    try:
        entry = globs.parse_entry(raw)
    except globs.EntryError:
        return False
    if entry.kind != "path":
        return False
    first = entry.text.split("/", 1)[0]
    if not any(mark in first for mark in "*?["):
        return False  # it holds one top-level name, and `*` matches any other
    return first in ("**", "*") or globs.covers(entry, _EVERY_TOP_FILE)


# -- words that say nothing -------------------------------------------------------------------

_VAGUE = frozenset(
    {
        "",
        "none",
        "n/a",
        "na",
        "no",
        "nothing",
        "nil",
        "null",
        "tbd",
        "todo",
        "-",
        "careful",
        "be careful",
        "be safe",
        "use common sense",
        "common sense",
        "use good judgement",
        "use good judgment",
        "use your judgement",
        "use your judgment",
        "as needed",
        "whatever",
        "anything goes",
        "no boundaries",
        "no restrictions",
        "no limits",
        "nothing special",
        "don't break anything",
        "do not break anything",
        "dont break anything",
        "don't break stuff",
        "do not break stuff",
        "the usual",
        "standard",
        "see above",
    }
)


def is_vague(text: str) -> bool:
    """Boundaries that forbid nothing in particular: `none`, `n/a`, `be careful`..."""
    normal = re.sub(r"\s+", " ", text.strip().lower()).strip(" .!;:")
    return normal in _VAGUE


def word_count(text: str) -> int:
    return len(re.findall(r"[^\W_][\w'\u2019./-]*", text))
