"""An envelope with one YAML mistake is refused, never kept as prose (team day, item 1).

A whole envelope whose `passFailCommand` line was indented with a tab is not YAML. `taskfs new`
refused it with `yaml_invalid` and the line; `taskfs intake open` (and MCP `agent_send`) kept it
as a prose request under a random id, addressed to nobody, with all eight fields "missing". Words
meant as an envelope (a line begins with an envelope key) that do not parse are refused the way
`new` refuses them, nothing written; prose, with colons or not, still opens a request.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers import ENVELOPE, git, taskfs, write_envelope


def tabbed(path: Path) -> Path:
    """The repro: a whole envelope whose acceptanceCheck line is indented with a tab."""
    write_envelope(path, id="t1")
    text = path.read_text().replace("\n  passFailCommand", "\n\tpassFailCommand")
    assert "\tpassFailCommand" in text
    path.write_text(text)
    return path


def test_a_whole_envelope_with_a_yaml_mistake_is_refused_not_kept_as_prose(repo: Path) -> None:
    file = tabbed(repo.parent / "tab.yaml")
    head = git(repo, "rev-parse", "HEAD")
    new = taskfs("new", str(file), "--json")
    assert (new.code, new.codes) == (1, ["yaml_invalid"])
    for args in (
        ("intake", "open", "--file", str(file)),
        ("intake", "open", file.read_text()),
    ):
        opened = taskfs(*args, "--agent", "planner", "--json")
        assert (opened.code, opened.codes) == (1, ["yaml_invalid"]), opened.stdout
        # Where the mistake is, as `new` says it.
        assert opened.json["errors"][0]["message"] == new.json["errors"][0]["message"]
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == ""
    assert not (repo / "tasks" / "t1").exists()
    assert taskfs("ls", "--json").json["tasks"] == []


def test_added_to_an_open_request_the_same_mistake_is_refused(repo: Path) -> None:
    words = "Make logins refuse empty passwords."
    task = taskfs("intake", "open", words, "--agent", "planner", "--json").json["id"]
    head = git(repo, "rev-parse", "HEAD")
    text = tabbed(repo.parent / "tab.yaml").read_text().replace("id: t1\n", f"id: {task}\n")
    added = taskfs("intake", "add", task, text, "--agent", "planner", "--json")
    assert (added.code, added.codes) == (1, ["yaml_invalid"]), added.stdout
    assert git(repo, "rev-parse", "HEAD") == head


def test_prose_with_colons_still_opens_a_request(repo: Path) -> None:
    for words in (
        # Not YAML at all (two colons on a line), and no line begins with an envelope key.
        "Fix the parser: it chokes on tabs: badly.\nThe objective is a clean run.",
        # YAML (a mapping), but of no envelope key: still a person's words.
        "Note: the login form lets empty passwords in.\nThanks: planner",
        "Plain words without a colon.",
    ):
        opened = taskfs("intake", "open", words, "--agent", "planner", "--to", "builder", "--json")
        assert opened.code == 0, opened.stdout + opened.stderr
        assert opened.json["state"] == "intake"
        assert "objective" in opened.json["missing"]


def test_a_partial_envelope_that_parses_is_still_a_request(repo: Path) -> None:
    opened = taskfs(
        "intake", "open", f"objective: {ENVELOPE['objective']}", "--agent", "planner", "--json"
    )
    assert opened.code == 0, opened.stdout + opened.stderr
    assert opened.json["state"] == "intake"
    assert "objective" not in opened.json["missing"]
