"""Turkish throughout (issue 18): with --lang tr (or TASKFS_LANG, or LANG=tr_TR.UTF-8) the help
of every command, click's own usage errors, the hints inside messages and the summary lines
are Turkish. A test, not a translator: it finds no English sentence in what taskfs says, once
code names (commands, options, states, error codes), placeholders, quoted values and paths are
set aside."""

from __future__ import annotations

import re
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import anyio
import click
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from taskfs.cli.app import cli
from taskfs.cli.localize import walk
from taskfs.core import yamlio
from tests.helpers import configure, git, send, submit, taskfs, taskfs_process, write_envelope
from tests.mcp.test_server import server_env

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
    r"\b\w+\([^()]*\)|"  # calls: agent_reassign(task_id, to)
    r"'[^']*'|`[^`]*`|\"[^\"]*\"|\[[^\]]*\]|\$[A-Z_]+|--?[a-z][\w-]*|\{[^}]*\}"  # quoted, options
    r"|\S*[/.]\S*"  # paths, URLs, files, dotted names
    r"|\b\w*_\w*\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z][A-Z0-9_]+\b"  # code names, camelCase, METAVARS
    r"|(?:error|warning)\[[a-z_]+\]|\b\w*\d\w*\b"  # labels, names with digits (a2a)
    r"|<[\w-]+>"  # metavariables: interface:<name>
)
# Turkish writes a suffix after an apostrophe (HEAD'in, NAME'in): not a quote.
SUFFIX = re.compile(r"(?<=\w)'[a-zçğıöşü]+\b")
# Data in a line: a YAML key (`by: builder` of an evidence file) and the subject of a commit
# taskfs made in the ledger (`1e856dc planner: taskfs: t1 submitted by planner`), which the
# demo shows from `git log` and which never change with the language.
DATA = re.compile(r"^\s*(- )?[a-z][A-Za-z]*:(?=\s|$)|^[0-9a-f]{7,} [\w.-]+: taskfs: .*")


def english_words(text: str) -> list[str]:
    names = command_names()
    found = []
    for line in text.splitlines():
        plain = CODE.sub(" ", SUFFIX.sub("", DATA.sub("", line)))
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


# Everything else a person reads (issue 30): the start-up text, the inbox, the markdown of a
# task and of a range, the board, the demo and what `tools/list` tells a model. A Turkish team
# writes its contracts, reasons and messages in Turkish: the ledger's own text is data, and a
# Turkish one keeps the check about what taskfs itself says.

TURKISH_CONTRACT = {
    "objective": "Boş parolaların kabul edildiği giriş hatasını düzelt.",
    "outputFormat": "src/auth/login.py dosyasını değiştiren bir commit.",
    "toolAndSourceGuidance": "pytest kullan; src/auth klasörünü oku.",
    "boundaries": "Veritabanı şemasına dokunma.",
    "acceptanceCheck": {
        "passFailCommand": "test -f src/auth/login.py",
        "endToEndVerification": "Boş parolayla giriş yapmayı dene ve reddedildiğini gör.",
    },
    "contextID": "giris",
}


def turkish_task(repo: Path, name: str, owns: str, **changes: object) -> str:
    fields: dict[str, object] = {**TURKISH_CONTRACT, "id": name, "filesAndInterfaces": [owns]}
    return submit(repo, **{**fields, **changes})


def team_ledger(repo: Path) -> dict[str, str]:
    """A day of a Turkish team's ledger: a task done on passing evidence (after a failing run
    and a judgement), one waiting for an answer, one refused and retried, one handed on, one
    held by a quiet agent, one blocked, a request not yet a task and one with a proposal."""
    root = git(repo, "rev-parse", "HEAD")
    done = turkish_task(repo, "t-bitti", "src/auth/login.py")
    asks = turkish_task(repo, "t-soru", "docs/**")
    refused = turkish_task(repo, "t-ret", "src/ret/**")
    moved = turkish_task(repo, "t-devir", "src/devir/**")
    quiet = turkish_task(repo, "t-sessiz", "src/sessiz/**")
    turkish_task(repo, "t-sonra", "src/sonra/**", dependsOn=[asks])
    for task in (done, asks, quiet):
        assert taskfs("claim", task, "--agent", "builder").code == 0
    task = done
    assert taskfs("check", task, "--agent", "builder").code == 1  # the file is missing
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src" / "auth" / "login.py").write_text("ok = True\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "giriş düzeltildi")
    judged = ["--verdict", "pass", "--source", "ayse", "--note", "iyi görünüyor"]
    assert taskfs("evidence", "add", task, "--agent", "planner", *judged).code == 0
    assert taskfs("check", task, "--agent", "builder").code == 0
    assert taskfs("complete", task, "--agent", "builder").code == 0
    send(asks, "builder", "planner", "Hangi ton kullanılsın?", status="needs_input")
    send(quiet, "planner", "builder", "Nasıl gidiyor?")
    refusal = ["--agent", "builder", "--reason", "Bu dosyalar bana ait değil."]
    assert taskfs("refuse", refused, *refusal).code == 0
    assert taskfs("retry", refused, "--agent", "planner").code == 0
    # Handed on by a Turkish speaker: the reason taskfs records is in their language.
    handed = ["--lang", "tr", "reassign", moved, "--to", "helper", "--agent", "planner"]
    assert taskfs(*handed).code == 0
    asked = taskfs("intake", "open", "lütfen ayrıntılı bir kip ekle", "--agent", "alice")
    assert asked.code == 0, asked.stderr
    request = taskfs(
        "intake", "open", "günlükler için bir ayrıştırıcı", "--agent", "planner", "--to", "builder"
    )
    assert request.code == 0, request.stderr
    proposal = repo / "oneri.yaml"
    proposal.write_text(yamlio.dump({**TURKISH_CONTRACT, "filesAndInterfaces": ["src/log/**"]}))
    wanted = taskfs("ls", "--state", "intake", "--json").json["tasks"]
    mine = [t["id"] for t in wanted if t["from"] == "planner"]
    assert taskfs("intake", "propose", *mine, str(proposal), "--agent", "builder").code == 0
    proposal.unlink()
    # This team calls a holder quiet, and stale, after a moment.
    configure(repo, "hemen durgun", nudge={"staleHours": 0.000001, "senderQuietMinutes": 0.00001})
    return {"root": root, "done": done, "retried": f"{refused}-r1", "moved": moved}


class Seen(HTMLParser):
    """The text of a page a person reads: its words and the hints a browser shows (titles,
    labels), never its styles or scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.words: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._hidden += tag in ("style", "script")
        self.words += [v for k, v in attrs if k in ("title", "aria-label", "alt") and v]

    def handle_endtag(self, tag: str) -> None:
        self._hidden -= tag in ("style", "script")

    def handle_data(self, data: str) -> None:
        if not self._hidden and data.strip():
            self.words.append(data.strip())


def board_text(html: str) -> str:
    seen = Seen()
    seen.feed(html)
    return "\n".join(seen.words)


def test_prime_inbox_review_markdown_and_the_board_are_turkish(repo: Path, tmp_path: Path) -> None:
    ids = team_ledger(repo)
    said = {
        "prime": tr("prime"),
        "prime builder": tr("prime", "--agent", "builder"),
        "prime planner": tr("prime", "--agent", "planner"),
        "prime planner --mcp": tr("prime", "--agent", "planner", "--mcp"),
        "prime builder --mcp": tr("prime", "--agent", "builder", "--mcp"),
        "prime alice": tr("prime", "--agent", "alice"),
        "inbox builder": tr("inbox", "--agent", "builder"),
        "inbox planner": tr("inbox", "--agent", "planner"),
        "inbox alice": tr("inbox", "--agent", "alice"),
        "show done": tr("show", ids["done"], "--format", "markdown"),
        "show retried": tr("show", ids["retried"], "--format", "markdown"),
        "review": tr("review", f"{ids['root']}..HEAD"),
        "review last": tr("review", "HEAD~3"),
    }
    html = tmp_path / "board.html"
    assert taskfs("--lang", "tr", "board", "--html", str(html)).code == 0
    said["board"] = board_text(html.read_text(encoding="utf-8"))
    said["board in a terminal"] = tr("board")
    # It reads what matters: each piece is there, in Turkish.
    assert "Önce sürdür" in said["prime builder"]
    assert "Sonraki adımlar" in said["prime planner --mcp"]
    assert ids["retried"] in said["inbox builder"]
    assert "öneriyi kabul edin" in said["inbox planner"]
    assert "Kanıt" in said["show done"]
    assert "Sonuç" in said["review"]
    # The board says what waits for whose decision, what is next, and the day's count.
    for where in ("board", "board in a terminal"):
        assert "karar bekliyor" in said[where]
        assert "sizi bekliyor" in said[where]
        assert "sıradaki" in said[where]
        assert "bugün" in said[where]
    found = [f"{name}: {w}" for name, text in said.items() for w in english_words(text)]
    assert found == [], "\n".join(found)
    # English stays English.
    assert "Resume first, the tasks you hold:" in taskfs("prime", "--agent", "builder").stdout


def test_the_demo_is_turkish(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    result = taskfs("--lang", "tr", "demo")
    assert result.code == 0, result.stdout + result.stderr
    assert "denetim" in result.stdout
    found = english_words(result.stdout + result.stderr)
    assert found == [], "\n".join(found)
    assert list(tmp_path.iterdir()) == []


def test_the_mcp_tool_descriptions_are_turkish(repo: Path, tmp_path: Path) -> None:
    async def look(env: dict[str, str]) -> tuple[str, list[str]]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "taskfs", "mcp", "--agent", "planner"],
            cwd=repo,
            env=env,
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            started = await client.initialize()
            tools = (await client.list_tools()).tools
        said = [t.description or "" for t in tools]
        said += [
            p["description"]
            for t in tools
            for p in t.input_schema.get("properties", {}).values()
            if "description" in p
        ]
        return started.instructions or "", said

    env = server_env(tmp_path)
    english, english_tools = anyio.run(look, env)
    turkish, turkish_tools = anyio.run(look, {**env, "TASKFS_LANG": "tr"})
    assert english_words(english)
    assert english_words("\n".join(english_tools))
    assert len(turkish_tools) == len(english_tools) > 40
    found = [w for text in (turkish, *turkish_tools) for w in english_words(text)]
    assert found == [], "\n".join(found)


def test_the_refusals_issue_38_found_english_are_turkish(repo: Path) -> None:
    """Issue 38, item 11: the archive and retry permission refusals, a refused transition's
    detail and pydantic's own words inside a validation error were English under --lang tr."""
    said = []
    configure(repo, "only the operator archives", archive={"by": ["operator"]})
    said.append(tr("archive", "--agent", "builder"))
    task = submit(repo)
    said.append(tr("claim", task, "--agent", "helper"))  # addressed to builder
    assert taskfs("refuse", task, "--agent", "builder", "--reason", "hayır").code == 0
    said.append(tr("retry", task, "--agent", "builder"))  # only its sender retries
    said.append(tr("claim", task, "--agent", "builder"))  # rejected: a terminal state
    bad = repo / "kotu.yaml"
    body = {**TURKISH_CONTRACT, "filesAndInterfaces": ["a/**"], "priority": 9}
    body["acceptanceCheck"] = {**TURKISH_CONTRACT["acceptanceCheck"], "timeoutSeconds": 0}
    bad.write_text(yamlio.dump({**body, "labels": ["iki kelime", "x", "x"]}))
    said.append(tr("new", str(bad)))
    said.append(tr("validate", str(bad)))
    text = "\n".join(said)
    for code in ("agent_not_allowed", "transition_not_allowed", "invalid_value"):
        assert code in text or code in taskfs("--lang", "tr", "new", str(bad), "--json").stdout
    found = english_words(text)
    assert found == [], "\n".join(found)


def test_what_issue_38_added_is_turkish(repo: Path, tmp_path: Path) -> None:
    """Issue 38's new output under --lang tr: priorities and labels in the listings, a failed
    check's lines in the holder's inbox, `show` and `log`, a request's words and its origin,
    follow-ups, amendments, `lint RANGE`, `init`'s offer of an ignore file and the compact
    inbox. The team's own text (objectives, reasons, what a command printed) is Turkish."""
    git(repo, "checkout", "-q", "-b", "dal")
    failing = {"passFailCommand": "sh -c 'echo hedef yok >&2; exit 2'",
               "endToEndVerification": "Çalıştır ve gör."}  # fmt: skip
    task = turkish_task(repo, "t-kontrol", "src/kontrol/**", priority=0, labels=["hata"],
                        acceptanceCheck=failing)  # fmt: skip
    turkish_task(repo, "t-yeni", "src/yeni/**", labels=["arayüz"])
    assert taskfs("claim", task, "--agent", "builder").code == 0
    assert taskfs("check", task, "--agent", "planner").code == 1  # someone else's run fails
    found = taskfs("discover", task, "Dışa aktarma düğmesi de bozuk.", "--agent", "builder",
                   "--json")  # fmt: skip
    assert found.code == 0, found.stdout
    amended = tmp_path / "degisik.yaml"
    fields = {**TURKISH_CONTRACT, "filesAndInterfaces": ["src/kontrol/**"], "priority": 0,
              "labels": ["hata"], "acceptanceCheck": failing, "id": task, "from": "planner",
              "to": "builder",
              "boundaries": "Veritabanına ve oturum açma sayfasına dokunma."}  # fmt: skip
    amended.write_text(yamlio.dump(fields))
    said = {
        "amend": tr("amend", task, str(amended), "--agent", "planner", "--reason", "daha dar"),
        "ls": tr("ls"),
        "ready": tr("ready"),
        "ls label": tr("ls", "--label", "hata"),
        "inbox builder": tr("inbox", "--agent", "builder"),
        "inbox planner": tr("inbox", "--agent", "planner"),
        "show": tr("show", task),
        "show request": tr("show", str(found.json["id"])),
        "log": tr("log", task),
        "lint range": tr("lint", "main..HEAD"),
        "init": tr("init"),
        "sent": tr("sent", "--agent", "planner", "--label", "hata"),
        "review": tr("review", "main..HEAD"),
        "accept": tr("amend", task, "--accept", "--agent", "builder"),
    }
    assert "P0" in said["ls"], said["amend"]
    assert "hedef yok" in said["inbox builder"]
    assert "değişiklik" in said["show"].lower()
    found_english = [f"{name}: {w}" for name, text in said.items() for w in english_words(text)]
    assert found_english == [], "\n".join(found_english)


def test_the_progress_of_long_work_is_turkish(repo: Path, tmp_path: Path) -> None:
    from taskfs.core import progress
    from tests.terminal import plain, spawn

    count = progress.SHOWN_FROM + 1
    files = [
        str(
            write_envelope(
                tmp_path / f"e{n}.yaml",
                id=f"g-{n:03d}",
                filesAndInterfaces=[f"g/{n}/**"],
                acceptanceCheck={
                    "passFailCommand": f"test -d g/{n}",
                    "endToEndVerification": "Klasöre bak.",
                },
            )
        )
        for n in range(count)
    ]
    with spawn(["--lang", "tr", "new", *files], repo, stdout_tty=False) as terminal:
        assert terminal.finish() == 0
        shown = plain(terminal.text)
    assert f"{count} zarf okunuyor" in shown
    assert f"{count} görev yazılıyor" in shown
    found = english_words(shown)
    assert found == [], "\n".join(found)
