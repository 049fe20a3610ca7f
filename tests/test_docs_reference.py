"""The docs checked against the code: every command and option of the click tree has its place
in docs/commands.md, every code of the error catalogue its row (with its exit status) in
docs/errors.md, every MCP tool a real client lists is named in docs/mcp.md or docs/interlink.md,
every local link of README.md, CONTRIBUTING.md and docs/ resolves, and every `taskfs/...` path
the contributor's pages name exists.

Each check is a function of the code and the text, so that a planted command, option, code or
link shows it failing."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import anyio
import click
import pytest

from taskfs.cli.app import cli
from taskfs.cli.output import act
from taskfs.errors import MESSAGES, fail

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted(DOCS.glob("*.md"))]

FENCE = re.compile(r"^```.*?^```[ \t]*$", re.M | re.S)
HEADING = re.compile(r"^(#{1,6}) (.+?)[ \t]*$", re.M)
COMMAND_HEADING = re.compile(r"`(taskfs(?: [a-z0-9-]+)*)`")


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def prose(text: str) -> str:
    """The text with its fenced code blocks blanked (a `# comment` there is no heading), every
    offset kept."""
    return FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def sections(text: str) -> Iterator[tuple[str, str]]:
    """(heading, body up to the next heading of any level), code blocks kept in the body."""
    headings = list(HEADING.finditer(prose(text)))
    for here, after in zip(headings, [*headings[1:], None], strict=True):
        end = after.start() if after else len(text)
        yield here.group(2), text[here.end() : end]


# Commands and options


def walk(
    group: click.Command, path: tuple[str, ...] = ("taskfs",)
) -> Iterator[tuple[str, click.Command]]:
    yield " ".join(path), group
    if isinstance(group, click.Group):
        for name in sorted(group.commands):
            yield from walk(group.commands[name], (*path, name))


def option_names(command: click.Command) -> list[str]:
    return [
        name
        for param in command.params
        if isinstance(param, click.Option)
        for name in (*param.opts, *param.secondary_opts)
    ]


def command_sections(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for heading, body in sections(text):
        named = COMMAND_HEADING.fullmatch(heading.strip())
        if named:
            found[named.group(1)] = body
    return found


def mentions(body: str, option: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", body) is not None


def undocumented(group: click.Command, text: str) -> list[str]:
    """What the click tree has and the commands page does not: `taskfs X`, `taskfs X --opt`."""
    documented = command_sections(text)
    missing = []
    for name, command in walk(group):
        body = documented.get(name)
        if body is None:
            missing.append(name)
            continue
        missing += [f"{name} {opt}" for opt in option_names(command) if not mentions(body, opt)]
    return missing


def stale_commands(group: click.Command, text: str) -> list[str]:
    """Sections for commands the click tree does not have."""
    existing = {name for name, _command in walk(group)}
    return sorted(set(command_sections(text)) - existing)


def commands_page() -> str:
    return read(DOCS / "commands.md")


def test_every_command_and_option_has_its_place_in_the_commands_page() -> None:
    names = [name for name, _command in walk(cli)]
    assert {"taskfs check", "taskfs keys new", "taskfs a2a serve", "taskfs setup codex"} <= set(
        names
    )
    assert undocumented(cli, commands_page()) == [], "add these to docs/commands.md"
    assert stale_commands(cli, commands_page()) == [], "docs/commands.md names commands gone"


def planted_tree() -> click.Group:
    """The real tree, plus a command nobody documented and an option nobody documented."""
    check = cli.commands["check"]
    widened = click.Command(
        "check",
        params=[*check.params, click.Option(["--frobnicate"], is_flag=True)],
        callback=check.callback,
    )
    extra = click.Command("frobnicate", params=[click.Option(["--wobble"])])
    return click.Group(
        "taskfs",
        params=list(cli.params),
        commands={**cli.commands, "check": widened, "frobnicate": extra},
    )


def test_a_command_or_option_added_without_docs_is_named() -> None:
    assert undocumented(planted_tree(), commands_page()) == [
        "taskfs check --frobnicate",
        "taskfs frobnicate",
    ]
    gone = commands_page() + "\n### `taskfs frobnicate`\n\nNothing.\n"
    assert stale_commands(cli, gone) == ["taskfs frobnicate"]


def test_a_mention_is_the_whole_option_outside_the_section_of_another_command() -> None:
    # `--no-network` does not mention `--network`, and a heading ends a section.
    assert not mentions("`--no-network`", "--network")
    assert mentions("`--network`, `--no-network`", "--network")
    text = "### `taskfs a`\n\n- `--x`\n\n### `taskfs b`\n\nnothing\n"
    assert command_sections(text)["taskfs b"].strip() == "nothing"


# Error codes


ROW = re.compile(r"^\| `([a-z0-9_]+)` \| ([^|]+) \|", re.M)


def error_rows(text: str) -> list[tuple[str, str]]:
    return [(code, exit_cell.strip()) for code, exit_cell in ROW.findall(prose(text))]


# Codes that are never a refusal: a note leaves `audit` clean (taskfs/api/review/audit.py), a
# completion's warning leaves it done (taskfs/api/lifecycle/completion_warnings.py).
NOTES = {
    "runner_key_added": "0",
    "agent_key_revoked": "0",
    "config_changed": "0",
    "amendment_lapsed": "0",
    "owned_files_untouched": "0",
}


def refusal_exit(code: str, capsys: pytest.CaptureFixture[str]) -> int:
    """The exit status the command line gives a refusal carrying `code`."""

    def refused() -> None:
        raise fail(code)

    status = act(True, refused, lambda _result: ({}, ""))
    capsys.readouterr()
    return status


def misdocumented(
    messages: Mapping[str, str], text: str, exit_of: Callable[[str], int]
) -> list[str]:
    rows = error_rows(text)
    codes = [code for code, _exit in rows]
    problems = [f"{code}: no row" for code in messages if code not in codes]
    problems += [f"{code}: no such code" for code in codes if code not in messages]
    problems += [
        f"{code}: {codes.count(code)} rows" for code in set(codes) if codes.count(code) > 1
    ]
    for code, exit_cell in rows:
        if code not in messages:
            continue
        if code in NOTES:
            expected_ok = exit_cell == NOTES[code]
        else:
            expected_ok = str(exit_of(code)) in re.findall(r"\d+", exit_cell)
        if not expected_ok:
            problems.append(f"{code}: exit {exit_cell!r}")
    return sorted(problems)


def test_every_code_has_one_row_with_its_exit_status(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    errors = read(DOCS / "errors.md")
    assert refusal_exit("usage", capsys) == 2
    assert refusal_exit("task_not_found", capsys) == 1
    assert len(error_rows(errors)) == len(MESSAGES)
    assert misdocumented(MESSAGES, errors, lambda code: refusal_exit(code, capsys)) == []


def test_a_code_added_without_a_row_or_a_row_without_a_code_is_named() -> None:
    errors = read(DOCS / "errors.md")
    exit_of = {code: 2 if code == "usage" else 1 for code in MESSAGES}.get
    planted = {**MESSAGES, "frobnicated": "a template"}
    assert misdocumented(planted, errors, lambda code: exit_of(code) or 1) == [
        "frobnicated: no row"
    ]
    stale = errors + "| `wobbled` | 1 | never |\n| `usage` | 1 | wrong |\n"
    assert misdocumented(MESSAGES, stale, lambda code: exit_of(code) or 1) == [
        "usage: 2 rows",
        "usage: exit '1'",
        "wobbled: no such code",
    ]


# Links


LINK = re.compile(r"!?\[(?:[^\]]|\n)*?\]\(([^)\s]+)\)")
INLINE_CODE = re.compile(r"`[^`\n]*`")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    return {slug(heading) for heading, _body in sections(text)}


def broken_links(page: Path, text: str) -> list[str]:
    broken = []
    for target in LINK.findall(INLINE_CODE.sub("", prose(text))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue
        path, _hash, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        unanchored = bool(anchor) and where.suffix == ".md" and where.exists()
        if not where.exists() or (unanchored and anchor not in anchors(read(where))):
            broken.append(target)
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_local_link_resolves(page: Path) -> None:
    assert broken_links(page, read(page)) == []


def test_a_broken_link_or_anchor_is_named() -> None:
    page = DOCS / "commands.md"
    text = (
        "[ok](errors.md) [ok](#commands) [ok](../README.md) ![ok](board.png) "
        "[web](https://example.com/x.md) `[code](nowhere.md)`\n"
        "[gone](nowhere.md) [bad anchor](errors.md#no-such-heading) [here](#nowhere)\n"
        "# Commands\n"
    )
    assert broken_links(page, text) == ["nowhere.md", "errors.md#no-such-heading", "#nowhere"]
    assert slug("Zarf (Türkçe)") == "zarf-türkçe"
    assert slug("interlink's tools over MCP") == "interlinks-tools-over-mcp"
    assert slug("`taskfs keys new`") == "taskfs-keys-new"


def test_the_readme_opens_with_the_two_commands() -> None:
    readme = read(ROOT / "README.md")
    before = readme.split("\n## ", 1)[0]
    blocks = re.findall(r"^```sh\n(.*?)```", before, re.M | re.S)
    # First how to install without a clone (issue 38): from the repository's address, or a
    # wheel; then the checkout's two commands.
    assert "git+https://" in blocks[0]
    assert "pip install dist/taskfs-" in blocks[1]
    assert blocks[2:] == [
        "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/taskfs demo\n",
        "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/pytest -n auto\n",
    ]
    assert readme.index("```sh") < readme.index("\n## ")


# Paths the contributor's pages name


PATH = re.compile(r"(?<![\w./<>~-])taskfs/[\w./-]*[\w/]")


MODULE = re.compile(r"(?<![\w./-])taskfs(?:\.[a-z_][a-z0-9_]*)+")


def named_paths(text: str) -> set[str]:
    """Package paths (`taskfs/api/context.py`) and dotted modules (`taskfs.core.wire`)."""
    return set(PATH.findall(text)) | set(MODULE.findall(text))


def exists(named: str) -> bool:
    if "/" in named:
        return (ROOT / named).exists()
    # A dotted name is a module (or package), or an attribute of one.
    parts = named.split(".")
    base = ROOT.joinpath(*parts)
    if base.with_suffix(".py").exists() or base.is_dir():
        return True
    module = ROOT.joinpath(*parts[:-1])
    if not (module.with_suffix(".py").exists() or (module / "__init__.py").exists()):
        return False
    return hasattr(importlib.import_module(".".join(parts[:-1])), parts[-1])


def missing_paths(pages: list[Path]) -> list[str]:
    return sorted(
        f"{page.relative_to(ROOT)}: {path}"
        for page in pages
        for path in named_paths(read(page))
        if not exists(path)
    )


def test_the_path_finder_reads_package_paths_only() -> None:
    text = (
        "`taskfs/errors.py`, taskfs/api/tasks/. `~/.config/taskfs/keys` `.git/taskfs/x` "
        "<git dir>/taskfs/cache/ github.com/o/taskfs .taskfs/config.yaml taskfs check "
        "`taskfs.core.wire`, taskfs.api.lifecycle.forks.superseded_transitions(repo) x.taskfs.y"
    )
    assert named_paths(text) == {
        "taskfs/errors.py",
        "taskfs/api/tasks/",
        "taskfs.core.wire",
        "taskfs.api.lifecycle.forks.superseded_transitions",
    }
    assert exists("taskfs.core.wire")
    assert exists("taskfs.errors.MESSAGES")
    assert not exists("taskfs.core.nowhere")
    assert not exists("taskfs/nowhere.py")


def test_every_package_path_the_docs_name_exists() -> None:
    assert missing_paths([ROOT / "CONTRIBUTING.md", *sorted(DOCS.glob("*.md"))]) == []


# MCP tools, as a real client lists them


def undocumented_tools(names: set[str], text: str) -> list[str]:
    """Tools no page names in code (`agent_send`, or `send_message(...)` with its arguments)."""
    return sorted(n for n in names if not re.search(rf"`{re.escape(n)}[`(]", text))


def test_every_mcp_tool_is_named_in_the_mcp_or_interlink_page(repo: Path, tmp_path: Path) -> None:
    from tests.mcp.test_server import serve, server_env

    async def listed() -> set[str]:
        async with serve(repo, "planner", server_env(tmp_path)) as planner:
            return {tool.name for tool in (await planner.session.list_tools()).tools}

    names = anyio.run(listed)
    assert {"agent_send", "agent_check", "send_message"} <= names
    text = read(DOCS / "mcp.md") + read(DOCS / "interlink.md")
    assert undocumented_tools(names, text) == [], "name these in docs/mcp.md"
    assert undocumented_tools(names | {"agent_frobnicate"}, text) == ["agent_frobnicate"]
