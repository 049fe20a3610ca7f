"""The forgery matrix (issue 35): every row of the authority table (`taskfs.core.ledger_kinds`),
forged with plain git in each way a party who may not could (a file added, edited, removed;
the commit authored as the party the file claims, or as the forger), is named by `audit` with a
code of its row, citing its row's rule, and moves no decision its row lists.

The cells are generated from the table: a row with no forger here fails the suite, and so does
a file taskfs commits that is of no row (`test_every_file_taskfs_commits_is_of_a_kind`). The
parties have keys: an act in the name of an agent without one, authored as that agent, is what
no one can tell from the real thing (docs/trust.md), so the matrix forges in the names of agents
that have keys. What a decision cannot check without replaying history (an agent key edited
or removed by hand) is said in its row (`Kind.live`) and named by audit.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from taskfs.core import ledger_kinds, yamlio
from taskfs.core.ledger_kinds import KINDS, Kind
from taskfs.store import readmodel_store
from tests.helpers import IDENTITY, commit_as, git, taskfs, write_envelope

AT = "'2026-01-01T00:00:00.000000Z'"
TRUE = {"passFailCommand": "true", "endToEndVerification": "it runs"}
FAILS = {"passFailCommand": "test -f src/work/ok", "endToEndVerification": "it runs"}
MALLORY = "mallory"
PEER = "CZZWn2Kuz2I5y4dnRxjntKDA8jRhsvl-nwwrqUmCijo"


@dataclass
class Ledger:
    """A ledger holding a file of every kind, made by the command line (`_build`)."""

    root: Path
    keys: Path  # the team's key folder: planner's, builder's, the operator's, the runner's
    trust: Path  # the operator's runner trust list, outside the repository
    facts: dict[str, str] = field(default_factory=dict)  # ids a forger needs

    def files(self, kind: Kind) -> list[str]:
        """The committed files of `kind`, in order."""
        return [
            p for p in git(self.root, "ls-files").splitlines() if ledger_kinds.kind_of(p) is kind
        ]

    def run(self, *args: str) -> Any:
        return taskfs(*args, cwd=self.root)

    def ok(self, *args: str) -> Any:
        result = self.run(*args, "--json")
        assert result.code == 0, (args, result.stdout, result.stderr)
        return result.json


def _env(base: Path, keys: Path, trust: Path) -> dict[str, str]:
    return {
        **IDENTITY,
        "HOME": str(base / "home"),
        "XDG_CONFIG_HOME": str(base / "home" / ".config"),
        "TASKFS_KEY_DIR": str(keys),
        "TASKFS_TRUSTED_RUNNERS": str(trust),
        "TASKFS_SANDBOX": "off",
    }


def _build(base: Path) -> Ledger:
    root, keys, trust = base / "repo", base / "keys", base / "trusted-runners.yaml"
    root.mkdir()
    keys.mkdir(mode=0o700)
    ledger = Ledger(root, keys, trust)
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("a project\n")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "initial")
    assert ledger.run("init").code == 0
    trust.write_text("runners: {}\n")
    for agent in ("planner", "builder", "operator"):
        ledger.ok("keys", "new", "--agent", agent)
    runner = ledger.ok("keys", "new", "--runner", "ci")
    trust.write_text(f"runners:\n  ci: {runner['publicKey']}\n")

    def new(task_id: str, **changes: Any) -> None:
        path = write_envelope(base / f"{task_id}.yaml", id=task_id, **changes)
        ledger.ok("new", str(path))

    # gone: canceled and archived (the only task then); needs-gone depends on it.
    new("gone", filesAndInterfaces=["src/gone/**"])
    ledger.ok("move", "gone", "canceled", "--agent", "planner", "--reason", "moot")
    ledger.ok("archive", "--older-than", "0", "--agent", "operator")
    new("needs-gone", dependsOn=["gone"], filesAndInterfaces=["src/needs-gone/**"])

    # done: worked to completion (envelope, status, evidence, a message read, one unread).
    new("done", acceptanceCheck=TRUE, filesAndInterfaces=["src/done/**"])
    ledger.ok("claim", "done", "--agent", "builder")
    said = ledger.ok("send", "done", "on it", "--agent", "builder", "--status", "update")
    ledger.ok("read", said["msg_id"], "--agent", "planner")
    ledger.ok("check", "done", "--agent", "builder")
    ledger.ok("complete", "done", "--agent", "builder")
    # work: held by builder, its check failing; waits depends on it.
    new("work", acceptanceCheck=FAILS, filesAndInterfaces=["src/work/**"])
    ledger.ok("claim", "work", "--agent", "builder")
    assert ledger.run("check", "work", "--agent", "builder").code == 1
    unread = ledger.ok("send", "work", "nearly", "--agent", "builder", "--status", "update")
    ledger.facts["unread"] = unread["msg_id"]
    new("waits", dependsOn=["work"], filesAndInterfaces=["src/waits/**"])
    # dep: failed; waits-dep depends on it.
    new("dep", filesAndInterfaces=["src/dep/**"])
    ledger.ok("claim", "dep", "--agent", "builder")
    ledger.ok("move", "dep", "failed", "--agent", "builder", "--reason", "too hard")
    new("waits-dep", dependsOn=["dep"], filesAndInterfaces=["src/waits-dep/**"])
    # open1: for builder, submitted.
    new("open1", filesAndInterfaces=["src/open1/**"])
    # amended: for builder, its contract amended by planner before anyone claimed it.
    new("amended", filesAndInterfaces=["src/amended/**"])
    clearer = write_envelope(base / "amended.yaml", id="amended", objective="Fix it, clearly.",
                             filesAndInterfaces=["src/amended/**"])  # fmt: skip
    ledger.ok("amend", "amended", str(clearer), "--agent", "planner", "--reason", "clearer")
    # asked: planner's request to builder, with builder's proposal.
    ledger.ok("intake", "open", "fix the login bug", "--agent", "planner", "--to", "builder",
              "--id", "asked")  # fmt: skip
    proposal = base / "proposal.yaml"
    proposal.write_text(yamlio.dump({
        "objective": "Fix the login bug.", "outputFormat": "A commit.",
        "toolAndSourceGuidance": "pytest.", "boundaries": "Nothing else.",
        "filesAndInterfaces": ["src/asked/**"], "acceptanceCheck": TRUE, "contextID": "auth",
    }))  # fmt: skip
    proposed = ledger.ok("intake", "propose", "asked", str(proposal), "--agent", "builder")
    ledger.facts["proposal"] = proposed["proposalDigest"]
    # helper: a peer's key, admitted and revoked by the operator.
    ledger.ok("keys", "add", "--agent", "helper", "--public", PEER)
    ledger.ok("keys", "remove", "--agent", "helper", "--by", "operator")
    audited = ledger.run("audit", "--json").json
    assert audited["findings"] == [], audited
    return ledger


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ledger]:
    base = tmp_path_factory.mktemp("template")
    with pytest.MonkeyPatch.context() as patch:
        for key, value in _env(base, base / "keys", base / "trusted-runners.yaml").items():
            patch.setenv(key, value)
        yield _build(base)
    readmodel_store.close()


@pytest.fixture
def ledger(template: Ledger, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Ledger:
    """A copy of the template for one cell, its derived state left behind."""
    root, keys = tmp_path / "repo", tmp_path / "keys"
    shutil.copytree(template.root, root, symlinks=True)
    shutil.copytree(template.keys, keys)  # a cell may make keys of its own
    readmodel_store.close()
    shutil.rmtree(root / ".git" / "taskfs", ignore_errors=True)
    for key, value in _env(tmp_path, keys, template.trust).items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(root)
    return Ledger(root, keys, template.trust, dict(template.facts))


# -- forging -----------------------------------------------------------------------------------


def _commit(ledger: Ledger, author: str, paths: list[str]) -> None:
    commit_as(ledger.root, author, "forged", *paths)


def _on_mallorys_machine(ledger: Ledger, monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on, taskfs runs where no one's private key is."""
    empty = ledger.root.parent / "mallory-keys"
    empty.mkdir(mode=0o700, exist_ok=True)
    monkeypatch.setenv("TASKFS_KEY_DIR", str(empty))


@dataclass(frozen=True)
class Forged:
    """What a cell forged: the path audit must name, the codes it may name it with, the rule
    it must cite, and the decision that must not move (it raises when it moved)."""

    path: str
    codes: tuple[str, ...]
    rule: str
    notes: bool = False  # named by a note: the row lets anyone, and audit tells
    decision: Callable[[Ledger], None] | None = None


def _status(task: str, name: str, **fields: str) -> str:
    lines = [f"task: {task}", *(f"{k}: {v}" for k, v in fields.items())]
    return "\n".join(lines) + "\n"


def _claim_refused(task: str) -> Callable[[Ledger], None]:
    def check(ledger: Ledger) -> None:
        result = ledger.run("claim", task, "--agent", "builder", "--json")
        assert result.code == 1, result.stdout
        assert "dependencies_unresolved" in result.codes, result.stdout
        assert {e.get("rule") for e in result.json["errors"]} == {"status"}, result.stdout

    return check


def _complete_refused(ledger: Ledger) -> None:
    result = ledger.run("complete", "work", "--agent", "builder", "--json")
    assert result.code == 1, result.stdout
    assert "completion_requires_evidence" in result.codes, result.stdout
    assert {e.get("rule") for e in result.json["errors"]} == {"evidence"}, result.stdout


def _unverified(task: str, text: str) -> Callable[[Ledger], None]:
    def check(ledger: Ledger) -> None:
        shown = ledger.ok("messages", task)["messages"]
        assert [m["verified"] for m in shown if m["text"] == text] == [False], shown

    return check


def _still_unread(ledger: Ledger) -> None:
    box = ledger.ok("inbox", "--agent", "planner")
    assert ledger.facts["unread"] in [m["msg_id"] for m in box["unread"]], box["unread"]


def _accept_refused(ledger: Ledger) -> None:
    proposal = ledger.facts.get("forged_proposal", ledger.facts["proposal"])
    result = ledger.run("intake", "accept", "asked", "--proposal", proposal, "--agent",
                        "planner", "--json")  # fmt: skip
    assert result.code == 1, result.stdout
    assert {e.get("rule") for e in result.json["errors"]} == {"intake"}, result.stdout
    assert ledger.run("show", "asked", "--json").json["state"] == "intake"


def _mallory_cannot_claim_open1(ledger: Ledger) -> None:
    result = ledger.run("claim", "open1", "--agent", MALLORY, "--json")
    assert result.code == 1, result.stdout


def _mallory_cannot_claim_amended(ledger: Ledger) -> None:
    """The contract in force is still planner's own amendment, for builder."""
    assert ledger.ok("show", "amended")["to"] == "builder"
    result = ledger.run("claim", "amended", "--agent", MALLORY, "--json")
    assert result.code == 1, result.stdout


def _signature_required(ledger: Ledger) -> None:
    result = ledger.run("move", "open1", "canceled", "--agent", "planner", "--json")
    assert (result.code, result.codes) == (1, ["signature_required"]), result.stdout
    assert result.json["errors"][0]["rule"] == "status"


def _untrusted_runner(ledger: Ledger) -> None:
    """A passing run signed by the runner key anyone added completes nothing: only the
    operator's trust list says which runner keys count."""
    (ledger.root / "src/work").mkdir(parents=True)
    (ledger.root / "src/work/ok").write_text("ok\n")
    git(ledger.root, "add", "src")
    git(ledger.root, "commit", "-q", "-m", "the work")
    os.environ["TASKFS_RUNNER"] = "forged"
    try:
        ran = ledger.run("check", "work", "--agent", "builder", "--json")
    finally:
        del os.environ["TASKFS_RUNNER"]
    assert ran.json.get("verdict") == "pass", ran.stdout
    _complete_refused(ledger)


def _policy_refused(ledger: Ledger) -> None:
    result = ledger.run("watch", "--once")
    assert result.code == 1, result.stdout + result.stderr
    assert "policy_unsafe" in result.stderr


Forger = Callable[[Ledger, str, pytest.MonkeyPatch], Forged]


def _lone_envelope(ledger: Ledger, author: str, _patch: pytest.MonkeyPatch) -> Forged:
    """A contract with no submission."""
    (ledger.root / "tasks/lone").mkdir()
    write_envelope(ledger.root / "tasks/lone/envelope.yaml", id="lone",
                   filesAndInterfaces=["src/lone/**"])  # fmt: skip
    _commit(ledger, author, ["tasks/lone"])
    return Forged("tasks/lone", ("chain_broken",), "envelope")


def _completion(ledger: Ledger, author: str, _patch: pytest.MonkeyPatch) -> Forged:
    """A completion in builder's name, unsigned, on the failing run."""
    root = ledger.root
    claim = sorted((root / "tasks/work/status").iterdir())[-1].name
    failing = sorted((root / "tasks/work/evidence").iterdir())[-1].name
    rel = "tasks/work/status/0003-completed-aaaaaaaa.yaml"
    (root / rel).write_text(_status("work", rel, state="completed", by="builder", at=AT,
                                    prev=claim, evidence=failing))  # fmt: skip
    _commit(ledger, author, [rel])
    codes = ("transition_unauthorized", "author_mismatch", "completion_requires_evidence")
    return Forged(rel, codes, "status", decision=_claim_refused("waits"))


def _passing_run(ledger: Ledger, author: str, _patch: pytest.MonkeyPatch) -> Forged:
    """A passing run no trusted runner signed."""
    root = ledger.root
    source = sorted((root / "tasks/work/evidence").iterdir())[-1]
    data = yamlio.load(source.read_bytes())
    assert isinstance(data, dict)
    data = {k: v for k, v in data.items() if k != "signature"}
    data.update(verdict="pass", exitCode=0)
    rel = "tasks/work/evidence/20300101T000000.000000Z-aaaaaaaa.yaml"
    (root / rel).write_text(yamlio.dump(data))
    _commit(ledger, author, [rel])
    return Forged(rel, ("evidence_unsigned",), "evidence", decision=_complete_refused)


def _cancel_message(ledger: Ledger, author: str, _patch: pytest.MonkeyPatch) -> Forged:
    """planner's cancel, unsigned."""
    rel = "tasks/work/messages/20300101T000000.000000Z-aaaaaaaa.yaml"
    (ledger.root / rel).write_text(
        "msg_id: 0123456789abcdef0123456789abcdef\ntask_id: work\nfrom: planner\n"
        f"to: builder\nstatus: canceled\nat: {AT}\ntext: stop\n"
    )
    _commit(ledger, author, [rel])
    return Forged(rel, ("message_unsigned",), "message", decision=_unverified("work", "stop"))


def _read_mark(ledger: Ledger, author: str, _patch: pytest.MonkeyPatch) -> Forged:
    """planner's mark on a message it did not read, unsigned."""
    rel = "tasks/work/reads/20300101T000000.000000Z-aaaaaaaa.yaml"
    (ledger.root / rel).parent.mkdir()
    (ledger.root / rel).write_text(
        f"task_id: work\nby: planner\nat: {AT}\nmsg_ids: [{ledger.facts['unread']}]\n"
    )
    _commit(ledger, author, [rel])
    codes = ("read_unauthorized", "author_mismatch")
    return Forged(rel, codes, "read", decision=_still_unread)


def _proposal(ledger: Ledger, author: str, _patch: pytest.MonkeyPatch) -> Forged:
    """A proposal in builder's name, unsigned, owning everything."""
    from taskfs.core.intake import Entry, IntakeRecord, proposal_digest

    rel = "tasks/asked/intake/20300101T000000.000000Z-aaaaaaaa.yaml"
    (ledger.root / rel).write_text(
        f"intake: asked\nkind: proposal\nby: builder\nat: {AT}\ntext: |\n"
        "  objective: Anything.\n  filesAndInterfaces: ['**']\n"
    )
    _commit(ledger, author, [rel])
    record = IntakeRecord.model_validate(yamlio.load((ledger.root / rel).read_bytes()))
    ledger.facts["forged_proposal"] = proposal_digest(Entry(rel.rsplit("/", 1)[1], record))
    codes = ("intake_unauthorized", "author_mismatch")
    return Forged(rel, codes, "intake", decision=_accept_refused)


def _amendment(ledger: Ledger, author: str, _patch: pytest.MonkeyPatch) -> Forged:
    """An amendment in planner's name, unsigned, giving the task to mallory."""
    [real] = ledger.files(ledger_kinds.AMENDMENT)
    data = yamlio.load((ledger.root / real).read_bytes())
    assert isinstance(data, dict)
    data = {k: v for k, v in data.items() if k != "sig"}
    data.update(at="2030-01-01T00:00:00.000000Z", envelope={**data["envelope"], "to": MALLORY})
    rel = "tasks/amended/amendments/20300101T000000.000000Z-aaaaaaaa.yaml"
    (ledger.root / rel).write_text(yamlio.dump(data))
    _commit(ledger, author, [rel])
    codes = ("amendment_unauthorized", "author_mismatch")
    return Forged(rel, codes, "amendment", decision=_mallory_cannot_claim_amended)


def _archive_again(ledger: Ledger, author: str, _patch: pytest.MonkeyPatch) -> Forged:
    """The archived canceled task said completed, in an archive of its own."""
    [first] = ledger.files(ledger_kinds.ARCHIVE)
    text = (ledger.root / first).read_text().replace('"canceled"', '"completed"')
    text = "\n".join(line for line in text.splitlines() if not line.startswith("sig:"))
    rel = ".taskfs/archive/20300101T000000.000000Z-aaaaaaaa.yaml"
    (ledger.root / rel).write_text(text + "\n")
    _commit(ledger, author, [rel])
    codes = ("archive_unauthorized", "archive_row_false", "archive_not_terminal")
    return Forged(rel, codes, "archive", decision=_claim_refused("needs-gone"))


def _key_in_place(ledger: Ledger, author: str, _patch: pytest.MonkeyPatch) -> Forged:
    """builder's key removed, and another put in its place."""
    rel = ".taskfs/keys/agent/builder.pub"
    git(ledger.root, "rm", "-q", rel)
    _commit(ledger, author, [".taskfs"])
    (ledger.root / rel).write_text(PEER + "\n")
    _commit(ledger, author, [rel])
    return Forged(rel, ("agent_key_changed",), "agent-key")


def _revocation(ledger: Ledger, author: str, patch: pytest.MonkeyPatch) -> Forged:
    """planner's key revoked by a record its rule does not let hold."""
    key = (ledger.root / ".taskfs/keys/agent/planner.pub").read_text().strip()
    rel = ".taskfs/keys/revoked/agent/planner-0000000000000000.yaml"
    (ledger.root / rel).write_text(f"name: planner\nkey: {key}\nkeyId: 0000000000000000\n"
                                   f"by: {author}\nat: {AT}\n")  # fmt: skip
    git(ledger.root, "rm", "-q", ".taskfs/keys/agent/planner.pub")
    _commit(ledger, author, [".taskfs"])
    _on_mallorys_machine(ledger, patch)
    return Forged(".taskfs/keys/agent/planner.pub", ("agent_key_changed",), "agent-key",
                  decision=_signature_required)  # fmt: skip


def _runner_key(ledger: Ledger, author: str, _patch: pytest.MonkeyPatch) -> Forged:
    """Anyone may add one: noted, and trusted by no one the operator did not name."""
    made = ledger.ok("keys", "new", "--runner", "forged")
    return Forged(made["path"], ("runner_key_added",), "runner-key", notes=True,
                  decision=_untrusted_runner)  # fmt: skip


def _settings(ledger: Ledger, author: str, _patch: pytest.MonkeyPatch) -> Forged:
    """Anyone may change them: noted."""
    config = ledger.root / ".taskfs/config.yaml"
    text = config.read_text().replace("checkTimeoutSeconds: 600", "checkTimeoutSeconds: 60")
    config.write_text(text)
    _commit(ledger, author, [".taskfs/config.yaml"])
    return Forged(".taskfs/config.yaml", ("config_changed",), "config", notes=True)


def _schema(ledger: Ledger, author: str, _patch: pytest.MonkeyPatch) -> Forged:
    """Derived, free for anyone: nothing to name."""
    rel = ".taskfs/schema/other.schema.json"
    (ledger.root / rel).write_text("{}\n")
    _commit(ledger, author, [rel])
    return Forged(rel, (), "schema")


def _drop(ledger: Ledger, author: str, _patch: pytest.MonkeyPatch) -> Forged:
    """Free for anyone: the watcher's to take in."""
    rel = "tasks/dropped.yaml"
    write_envelope(ledger.root / rel, id="dropped", filesAndInterfaces=["src/dropped/**"])
    _commit(ledger, author, [rel])
    return Forged(rel, (), "drop")


def _policy(ledger: Ledger, author: str, patch: pytest.MonkeyPatch) -> Forged:
    """The operator's, never the repository's: one committed there is refused."""
    rel = "policy.yaml"
    (ledger.root / rel).write_text("commands: ['*']\ncomplete: true\n")
    _commit(ledger, author, [rel])
    patch.setenv("TASKFS_POLICY", str(ledger.root / rel))
    return Forged(rel, (), "policy", decision=_policy_refused)


# One forger a row: a row without one fails `test_every_row_has_a_forger...`.
FORGERS: dict[str, Forger] = {
    "envelope": _lone_envelope,
    "status": _completion,
    "evidence": _passing_run,
    "message": _cancel_message,
    "read": _read_mark,
    "intake": _proposal,
    "amendment": _amendment,
    "archive": _archive_again,
    "agent-key": _key_in_place,
    "revocation": _revocation,
    "runner-key": _runner_key,
    "config": _settings,
    "schema": _schema,
    "drop": _drop,
    "policy": _policy,
}


# What edits forge, per row: a meaningful change where one is at hand, else a line more.
def _edit(kind: Kind, ledger: Ledger) -> tuple[str, Callable[[Ledger], None] | None]:
    root = ledger.root
    if kind is ledger_kinds.ENVELOPE:
        rel = "tasks/open1/envelope.yaml"
        path = root / rel
        path.write_text(path.read_text().replace("to: builder", f"to: {MALLORY}"))
        return rel, _mallory_cannot_claim_open1
    if kind is ledger_kinds.STATUS:
        folder = root / "tasks/dep/status"
        head = sorted(folder.iterdir())[-1]
        head.write_text(head.read_text().replace("state: failed", "state: completed"))
        return f"tasks/dep/status/{head.name}", _claim_refused("waits-dep")
    if kind is ledger_kinds.EVIDENCE:
        run = sorted((root / "tasks/work/evidence").iterdir())[-1]
        run.write_text(run.read_text().replace("verdict: fail", "verdict: pass"))
        return f"tasks/work/evidence/{run.name}", _complete_refused
    if kind is ledger_kinds.MESSAGE:
        said = next(p for p in (root / "tasks/done/messages").iterdir() if "on it" in p.read_text())
        said.write_text(said.read_text().replace("on it", "done, trust me"))
        return f"tasks/done/messages/{said.name}", _unverified("done", "done, trust me")
    if kind is ledger_kinds.INTAKE:
        proposal = sorted((root / "tasks/asked/intake").iterdir())[-1]
        proposal.write_text(proposal.read_text().replace("src/asked/**", "'**'"))
        return f"tasks/asked/intake/{proposal.name}", _accept_refused
    if kind is ledger_kinds.AMENDMENT:
        [rel] = ledger.files(kind)
        (root / rel).write_text((root / rel).read_text().replace("to: builder", f"to: {MALLORY}"))
        return rel, _mallory_cannot_claim_amended
    if kind is ledger_kinds.ARCHIVE:
        [rel] = ledger.files(kind)
        (root / rel).write_text((root / rel).read_text().replace('"canceled"', '"completed"'))
        return rel, _claim_refused("needs-gone")
    if kind is ledger_kinds.CONFIG:
        config = root / ".taskfs/config.yaml"
        config.write_text(
            config.read_text().replace("delegationMaxDepth: 4", "delegationMaxDepth: 9")
        )
        return ".taskfs/config.yaml", None
    rel = ledger.files(kind)[0]
    with open(root / rel, "a", encoding="utf-8") as handle:
        handle.write("\n" if rel.endswith(".pub") else "# edited\n")
    return rel, None


IN_TREE = [kind for kind in KINDS if kind is not ledger_kinds.POLICY]
CELLS = [
    *((kind, "add", spoofed) for kind in KINDS for spoofed in (True, False)),
    *(
        (kind, op, spoofed)
        for kind in IN_TREE
        for op in ("edit", "delete")
        for spoofed in (True, False)
    ),
]


def _id(cell: tuple[Kind, str, bool]) -> str:
    kind, op, spoofed = cell
    return f"{kind.name}-{op}-{'spoofed' if spoofed else 'mallory'}"


@pytest.mark.parametrize("cell", CELLS, ids=[_id(c) for c in CELLS])
def test_a_forgery_is_named_and_moves_no_decision(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch, cell: tuple[Kind, str, bool]
) -> None:
    kind, op, spoofed = cell
    author = "planner" if spoofed else MALLORY
    if op == "add":
        forger = FORGERS.get(kind.name)
        assert forger is not None, f"no forger for the row {kind.name!r}: give it one here"
        forged = forger(ledger, _writer(kind) if spoofed else MALLORY, monkeypatch)
    elif op == "edit":
        rel, decision = _edit(kind, ledger)
        _commit(ledger, author, [rel])
        forged = _expected(kind, rel, kind.edited, decision)
    else:
        rel = ledger.files(kind)[0]
        git(ledger.root, "rm", "-q", rel)
        commit_as(ledger.root, author, "forged")
        forged = _expected(kind, rel, kind.deleted, None)
    audited = ledger.run("audit", "--json").json
    named = audited.get("notes", []) if forged.notes else audited["findings"]
    found = [f for f in named if f["path"] == forged.path]
    if not forged.codes:  # a row that lets anyone: nothing to name
        assert found == [], audited
        assert audited["findings"] == [], audited
    else:
        codes = {f["code"] for f in found}
        assert codes & set(forged.codes), (forged, audited)
        row = ledger_kinds.BY_NAME[forged.rule]
        assert codes <= set(row.named_by), found
        assert {f["rule"] for f in found} == {forged.rule}, found
        assert not audited["ok"] or forged.notes
    if forged.decision is not None:
        forged.decision(ledger)


def _writer(kind: Kind) -> str:
    """Who a spoofed commit of `kind` is authored as: the party its files name."""
    return {"evidence": "ci", "archive": "operator", "status": "builder", "intake": "builder",
            "agent-key": "builder", "runner-key": "ci"}.get(kind.name, "planner")  # fmt: skip


def _expected(kind: Kind, rel: str, code: str, decision: Callable[[Ledger], None] | None) -> Forged:
    if kind is ledger_kinds.CONFIG:
        return Forged(rel, ("config_changed",), "config", notes=True, decision=decision)
    if not kind.immutable:
        return Forged(rel, (), kind.name, decision=decision)
    return Forged(rel, (code,), kind.name, decision=decision)


def test_every_row_has_a_forger_and_every_file_taskfs_commits_is_of_a_kind(
    template: Ledger,
) -> None:
    """The kinds found in the code: every file a ledger made through the command line holds in
    its history is of a row (taskfs's writer refuses to commit one that is not:
    `Writer._known`), and every row is forged above."""
    paths = git(template.root, "log", "--all", "--format=", "--name-only").splitlines()
    ledger_paths = {p for p in paths if ledger_kinds.is_ledger_path(p)}
    found = {ledger_kinds.kind_of(p) for p in ledger_paths}
    assert None not in found, [p for p in ledger_paths if ledger_kinds.kind_of(p) is None]
    written = {k.name for k in found if k is not None}
    assert written == {k.name for k in KINDS if k is not ledger_kinds.POLICY}
    assert set(FORGERS) == {kind.name for kind in KINDS}
    for kind in KINDS:
        assert kind.named_by or not kind.ledger, kind.name
