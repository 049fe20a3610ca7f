"""Turkish throughout (issue 18): with --lang tr (or TASKFS_LANG, or LANG=tr_TR.UTF-8) the help
of every command, click's own usage errors, the hints inside messages and the summary lines
are Turkish. A test, not a translator: it finds no English sentence in what taskfs says, once
code names (commands, options, states, error codes), placeholders, quoted values and paths are
set aside."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from taskfs.cli.app import cli
from taskfs.cli.localize import walk
from tests.helpers import git, submit, taskfs, taskfs_process

# Common English words no Turkish sentence uses (Turkish words that are also English ones,
# such as "on", "an", "at", "son" or "not" (a note), are left out, and so is "tasks", the
# ledger's folder, named bare in some messages).
ENGLISH = frozenset(
    [
        "the",
        "and",
        "or",
        "of",
        "to",
        "is",
        "are",
        "with",
        "for",
        "this",
        "that",
        "from",
        "by",
        "in",
        "be",
        "it",
        "its",
        "what",
        "which",
        "when",
        "no",
        "as",
        "all",
        "any",
        "each",
        "every",
        "if",
        "then",
        "only",
        "you",
        "your",
        "has",
        "have",
        "was",
        "were",
        "will",
        "can",
        "may",
        "must",
        "should",
        "there",
        "here",
        "after",
        "before",
        "into",
        "than",
        "but",
        "so",
        "also",
        "does",
        "do",
        "done",
        "without",
        "give",
        "use",
        "name",
        "named",
        "run",
        "runs",
        "send",
        "show",
        "print",
        "make",
        "see",
        "found",
        "missing",
        "such",
        "invalid",
        "value",
        "values",
        "unsigned",
        "signed",
        "wrote",
        "nothing",
        "change",
        "quiet",
        "since",
        "held",
        "due",
        "now",
        "stale",
        "host",
        "note",
        "warning",
        "usage",
        "options",
        "commands",
        "try",
        "help",
        "error",
        "errors",
        "one",
        "none",
        "where",
        "who",
        "why",
        "how",
        "more",
        "most",
        "least",
        "already",
        "created",
        "installed",
        "kept",
        "task",
        "agent",
        "agents",
        "message",
        "messages",
        "file",
        "files",
        "folder",
        "default",
        "read",
        "write",
        "until",
        "once",
        "exit",
        "version",
        "language",
    ]
)


def command_names() -> set[str]:
    names: set[str] = {"taskfs"}
    for cmd in walk(cli):
        if cmd.name:
            names.add(cmd.name)
        if isinstance(cmd, click.Group):
            names.update(cmd.commands)
    return names


CODE = re.compile(
    r"'[^']*'|`[^`]*`|\"[^\"]*\"|\[[^\]]*\]|\$[A-Z_]+|--?[a-z][\w-]*|\{[^}]*\}"  # quoted, options
    r"|\S*[/.]\S*"  # paths, URLs, files, dotted names
    r"|\b\w*_\w*\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z][A-Z0-9_]+\b"  # code names, camelCase, METAVARS
    r"|error\[[a-z_]+\]|\b\w*\d\w*\b"  # error labels, names with digits (Agent2Agent, a2a)
)
# Turkish writes a suffix after an apostrophe (HEAD'in, NAME'in): not a quote.
SUFFIX = re.compile(r"(?<=\w)'[a-zçğıöşü]+\b")


def english_words(text: str) -> list[str]:
    names = command_names()
    found = []
    for line in text.splitlines():
        plain = CODE.sub(" ", SUFFIX.sub("", line))
        for word in re.findall(r"[^\W\d_]+", plain):
            if word in names:
                continue
            if word.lower() in ENGLISH:
                found.append(f"{word!r} in {line.strip()!r}")
    return found


def tr(*args: str) -> str:
    result = taskfs("--lang", "tr", *args)
    return result.stdout + result.stderr


def test_the_checker_finds_english(repo: Path) -> None:
    # It must be able to fail: the same help in English is full of English words.
    assert english_words(taskfs("claim", "--help").stdout)
    assert english_words("Error: No such option '--bogus'.")
    assert not english_words("Hata: '--bogus' diye bir seçenek yok.")


def test_every_commands_help_is_turkish(repo: Path) -> None:
    paths: list[list[str]] = [[]]

    def collect(group: click.Group, prefix: list[str]) -> None:
        for name, cmd in sorted(group.commands.items()):
            paths.append([*prefix, name])
            if isinstance(cmd, click.Group):
                collect(cmd, [*prefix, name])

    collect(cli, [])
    assert len(paths) > 40
    found = []
    for path in paths:
        result = taskfs("--lang", "tr", *path, "--help")
        assert result.code == 0, (path, result.stderr)
        assert "Kullanım:" in result.stdout
        found += [f"taskfs {' '.join(path)} --help: {w}" for w in english_words(result.stdout)]
    assert found == []


USAGE_ERRORS = [
    ["claim"],  # a missing argument
    ["claim", "t1", "--bogus"],  # no such option
    ["ls", "--state", "bogus"],  # not one of the choices
    ["nosuchcommand"],
    ["check", "t1", "--timeout", "x"],  # not a number
    ["move", "t1"],
    ["ls", "extra"],  # an unexpected extra argument
    ["reassign", "t1", "--agent", "planner"],  # a missing option
    ["show", "t1", "--agent"],  # an option that needs a value
]


@pytest.mark.parametrize("args", USAGE_ERRORS, ids=" ".join)
def test_usage_errors_are_turkish(repo: Path, args: list[str]) -> None:
    result = taskfs("--lang", "tr", *args)
    assert result.code == 2
    assert "Hata:" in result.stderr
    assert english_words(result.stderr) == []


def test_refusals_and_summary_lines_are_turkish(repo: Path, tmp_path: Path) -> None:
    said = [tr("init"), tr("validate")]
    task = submit(repo)
    said.append(tr("show", "nope"))
    said.append(tr("claim", task, "--agent", "builder"))
    said.append(tr("check", task, "--agent", "builder"))  # fails: the file is missing
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src" / "auth" / "login.py").write_text("ok = True\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "login")
    said.append(tr("check", task, "--agent", "builder"))
    said.append(tr("nudge", "--agent", "builder"))
    said.append(tr("nudge", "--agent", "nobody"))
    said.append(tr("audit"))
    said.append(tr("board", "--html", str(tmp_path / "board.html")))
    said.append(tr("setup", "codex", "--dry-run").split("\n", 1)[0])
    said.append("\n".join(tr("setup", "codex").splitlines()[-1:]))
    said.append(tr("reassign", task, "--to", "helper", "--agent", "planner"))
    said.append(tr("reassign", task, "--to", "helper", "--agent", "planner"))
    said.append(tr("owners", "src/auth/login.py", "README.md"))
    said.append(tr("lint"))
    said.append(tr("guard", "--agent", "builder"))
    said.append(tr("keys", "ls"))
    said.append(tr("send", task, "still on it", "--agent", "planner", "--to", "helper"))
    judged = ["--agent", "planner", "--verdict", "pass", "--source", "ayse", "--note", "iyi"]
    said.append(tr("evidence", "add", task, *judged))
    # Not `log` or `show`: they show the ledger's own text (reasons, commands), which is data
    # and never changes with the language.
    text = "\n".join(said)
    assert "dosya denetlendi" in text
    assert "helper ajanına submitted" in text
    assert "sözleşme denetlendi" in text
    assert "hazırlanmış değişiklikler" in text
    assert english_words(text) == [], "\n".join(english_words(text))


def test_the_locale_and_taskfs_lang_choose_turkish_too(repo: Path) -> None:
    for env in ({"LANG": "tr_TR.UTF-8", "LANGUAGE": "", "LC_ALL": ""}, {"TASKFS_LANG": "tr"}):
        result = taskfs_process("claim", "--help", cwd=repo, env=env)
        assert "Kullanım:" in result.stdout
        assert english_words(result.stdout) == []
        refused = taskfs_process("claim", cwd=repo, env=env)
        assert "Hata: Eksik argüman 'TASK_ID'." in refused.stderr
    # And a process that chose Turkish for one command speaks English again for the next.
    assert "Kullanım:" in tr("claim", "--help")
    assert "Usage:" in taskfs("claim", "--help").stdout
    assert "Take a submitted task" in taskfs("claim", "--help").stdout
