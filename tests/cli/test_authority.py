"""Audit checks authority, not only shape: transitions written with plain git under any name,
by anyone, are named (issue 16). Signed transitions where agents have keys."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taskfs.core import yamlio
from taskfs.core.lifecycle import REASON_REQUIRED, STATES, TRANSITIONS
from tests.helpers import ENVELOPE, commit_as, git, submit, taskfs

AT = "'2026-01-01T00:00:00.000000Z'"


def status_files(repo: Path, task: str) -> list[str]:
    return sorted(p.name for p in (repo / "tasks" / task / "status").iterdir())


def forge(
    repo: Path,
    task: str,
    name: str,
    *,
    state: str,
    by: str,
    prev: str | None,
    author: str | None = None,
    reason: str | None = None,
    extra: str = "",
) -> str:
    """Write a status file by hand and commit it with plain git (authored as `author`, or as
    taskfs would author `by`'s commit); returns its repository-relative path."""
    rel = f"tasks/{task}/status/{name}"
    lines = [f"task: {task}", f"state: {state}", f"by: {by}", f"at: {AT}"]
    if prev:
        lines.append(f"prev: {prev}")
    if reason:
        lines.append(f"reason: {reason}")
    (repo / rel).write_text("\n".join(lines) + "\n" + extra)
    if author is None:
        commit_as(repo, by, "forged", rel)
    else:
        commit_as(repo, author, "forged", rel, email="someone@example.invalid")
    return rel


def findings(cwd: Path | None = None) -> list[tuple[str, str]]:
    result = taskfs("audit", "--json", cwd=cwd)
    assert result.code in (0, 1), result.stdout + result.stderr
    return [(f["code"], f["path"]) for f in result.json["findings"]]


def test_a_claim_of_another_agents_task_committed_with_plain_git_is_named(repo: Path) -> None:
    task = submit(repo)  # from planner to builder
    rel = forge(
        repo,
        task,
        "0002-working-aaaaaaaa.yaml",
        state="working",
        by="mallory",
        prev=status_files(repo, task)[0],
    )
    assert taskfs("show", task, "--json").json["state"] == "working"
    assert findings() == [("transition_unauthorized", rel)]


def test_a_cancel_by_someone_who_is_no_party_is_named(repo: Path) -> None:
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    rel = forge(
        repo,
        task,
        "0003-canceled-aaaaaaaa.yaml",
        state="canceled",
        by="mallory",
        prev=status_files(repo, task)[-1],
    )
    assert findings() == [("transition_unauthorized", rel)]
    result = taskfs("audit", "--json")
    assert "mallory" in result.json["findings"][0]["message"]


def test_a_completion_by_a_party_that_does_not_hold_the_task_is_named(repo: Path) -> None:
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    rel = forge(
        repo,
        task,
        "0003-completed-aaaaaaaa.yaml",
        state="completed",
        by="planner",
        prev=status_files(repo, task)[-1],
    )
    assert ("transition_unauthorized", rel) in findings()


def test_a_by_that_is_not_the_commits_author_is_named(repo: Path) -> None:
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    # builder may cancel; but the commit was made by someone else under builder's name.
    rel = forge(
        repo,
        task,
        "0003-canceled-aaaaaaaa.yaml",
        state="canceled",
        by="builder",
        prev=status_files(repo, task)[-1],
        author="Test User",
    )
    assert findings() == [("author_mismatch", rel)]


def test_transitions_taskfs_makes_pass_the_authority_checks(repo: Path) -> None:
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    assert taskfs("move", task, "input_required", "--agent", "builder").code == 0
    assert taskfs("move", task, "working", "--agent", "planner").code == 0
    assert taskfs("move", task, "failed", "--agent", "planner", "--reason", "gone").code == 0
    assert findings() == []


# -- signed transitions ---------------------------------------------------------------------


def make_keys(*agents: str) -> None:
    for agent in agents:
        assert taskfs("keys", "new", "--agent", agent, "--json").code == 0


def test_an_agent_with_a_key_signs_its_transitions_and_audit_verifies_them(repo: Path) -> None:
    make_keys("planner", "builder")
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    files = status_files(repo, task)
    for name in files:
        document = yamlio.load((repo / "tasks" / task / "status" / name).read_bytes())
        assert str(document["sig"]).startswith("ed25519:")
    assert findings() == []
    # Unsigned, under the name of an agent that has a key: a forgery, even by the right name
    # and author.
    rel = forge(
        repo, task, "0003-canceled-aaaaaaaa.yaml", state="canceled", by="builder", prev=files[-1]
    )
    assert findings() == [("transition_unauthorized", rel)]


def test_a_signature_that_does_not_match_its_fields_is_named(repo: Path) -> None:
    make_keys("builder")
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    claim = repo / "tasks" / task / "status" / status_files(repo, task)[-1]
    sig = yamlio.load(claim.read_bytes())["sig"]
    # The claim's signature copied onto another transition: it covers other fields.
    rel = forge(
        repo,
        task,
        "0003-canceled-aaaaaaaa.yaml",
        state="canceled",
        by="builder",
        prev=claim.name,
        extra=f"sig: {sig}\n",
    )
    assert findings() == [("transition_unauthorized", rel)]


def test_a_repository_that_requires_signed_transitions_refuses_unsigned_ones(
    repo: Path,
) -> None:
    make_keys("planner")
    task = submit(repo)
    config = repo / ".taskfs" / "config.yaml"
    text = config.read_text().replace("requireSignedTransitions: false", "")
    config.write_text(text + "requireSignedTransitions: true\n")
    git(repo, "commit", "-q", "-am", "require signed transitions")
    head = git(repo, "rev-parse", "HEAD")
    result = taskfs("claim", task, "--agent", "builder", "--json")
    assert result.code == 1
    assert result.codes == ["agent_not_allowed"]
    assert "requireSignedTransitions" in result.json["errors"][0]["message"]
    assert git(repo, "rev-parse", "HEAD") == head
    assert len(status_files(repo, task)) == 1
    assert git(repo, "status", "--porcelain") == ""
    # With plain git it lands anyway; audit names it, though builder has no key at all.
    rel = forge(
        repo,
        task,
        "0002-working-aaaaaaaa.yaml",
        state="working",
        by="builder",
        prev=status_files(repo, task)[0],
    )
    assert findings() == [("transition_unauthorized", rel)]
    make_keys("builder")
    assert taskfs("move", task, "canceled", "--agent", "planner").code == 0


def test_require_signed_transitions_is_validated_like_other_settings(repo: Path) -> None:
    config = repo / ".taskfs" / "config.yaml"
    text = config.read_text().replace("requireSignedTransitions: false", "")
    config.write_text(text + "requireSignedTransitions: 'yes'\n")
    result = taskfs("audit", "--json")
    assert result.code == 1
    assert result.codes == ["config_invalid"]


def test_a_private_key_that_is_not_the_registered_one_is_refused(repo: Path) -> None:
    make_keys("builder")
    task = submit(repo)
    pub = repo / ".taskfs" / "keys" / "agent" / "builder.pub"
    other = repo.parent / "other"
    other.mkdir()
    shutil.copy(pub, other / "builder.pub")
    # Someone else's key committed under builder's name.
    from taskfs.core import signing

    pub.write_text(signing.public_key_text(signing.generate_keypair().public) + "\n")
    git(repo, "commit", "-q", "-am", "replace key")
    result = taskfs("claim", task, "--agent", "builder", "--json")
    assert result.codes == ["key_invalid"]
    assert len(status_files(repo, task)) == 1


# -- generated forgeries --------------------------------------------------------------------

AGENTS = ["planner", "builder", "mallory", "bob"]
NONCE = st.text(alphabet="0123456789abcdefghijklmnopqrstuvwxyz", min_size=8, max_size=8)
FORGERY = st.fixed_dictionaries(
    {
        "by": st.sampled_from(AGENTS),
        "state": st.sampled_from(STATES),
        "author": st.sampled_from(["self", "Test User", "other"]),
        "prev": st.sampled_from([0, 1]),  # the submission or the claim
        "reason": st.booleans(),
        "nonce": NONCE,
    }
)


def legitimate(forgery: dict[str, Any], earlier: list[dict[str, Any]], keyed: bool) -> bool:
    """Whether a hand-written transition is one its `by` could have made itself, decided
    independently of taskfs's code: the base task is from planner to builder, claimed by
    builder (submitted -> working)."""
    by, state = forgery["by"], forgery["state"]
    if keyed and by in ("planner", "builder"):
        return False  # unsigned under the name of an agent with a key
    if forgery["author"] != "self" or forgery["prev"] != 1:
        return False  # written by someone else, or a sibling of the claim its commit held
    if any(e["prev"] == forgery["prev"] for e in earlier):
        return False  # a sibling of an earlier forgery its commit held
    if state not in TRANSITIONS["working"] or state == "completed":
        return False  # not in the table; a completion without evidence
    if state in REASON_REQUIRED and not forgery["reason"]:
        return False
    return by in ("planner", "builder")


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(forgeries=st.lists(FORGERY, min_size=1, max_size=3), keyed=st.booleans())
def test_random_forged_transitions_are_all_named(
    base_repos: dict[bool, tuple[Path, str]],
    tmp_path_factory: pytest.TempPathFactory,
    forgeries: list[dict[str, Any]],
    keyed: bool,
) -> None:
    base, task = base_repos[keyed]
    work = tmp_path_factory.mktemp("forged") / "repo"
    shutil.copytree(base, work, symlinks=True)
    files = status_files(work, task)
    assert len(files) == 2
    forged: list[str] = []
    innocent: list[str] = []
    for i, forgery in enumerate(forgeries):
        prev = files[forgery["prev"]]
        seq = forgery["prev"] + 2
        name = f"{seq:04d}-{forgery['state']}-{forgery['nonce']}.yaml"
        if (work / "tasks" / task / "status" / name).exists():
            continue
        author = {"self": None, "Test User": "Test User", "other": "someone-else"}
        rel = forge(
            work,
            task,
            name,
            state=forgery["state"],
            by=forgery["by"],
            prev=prev,
            author=author[forgery["author"]],
            reason="because" if forgery["reason"] else None,
        )
        if legitimate(forgery, forgeries[:i], keyed):
            innocent.append(rel)
        else:
            forged.append(rel)
    named = {path for _code, path in findings(work)}
    assert set(forged) <= named, (forged, named)
    # Nothing but the forged files is blamed (the base history is genuine).
    assert named <= set(forged) | set(innocent)


@pytest.fixture
def base_repos(tmp_path: Path) -> dict[bool, tuple[Path, str]]:
    """Two genuine ledgers, each one task from planner to builder claimed by builder: one
    where planner and builder have keys, one where nobody has."""
    out: dict[bool, tuple[Path, str]] = {}
    for keyed in (False, True):
        root = tmp_path / ("keyed" if keyed else "plain")
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        (root / "README.md").write_text("a project\n")
        git(root, "add", "README.md")
        git(root, "commit", "-q", "-m", "initial")
        assert taskfs("init", cwd=root).code == 0
        if keyed:
            for agent in ("planner", "builder"):
                assert taskfs("keys", "new", "--agent", agent, "--json", cwd=root).code == 0
        source = tmp_path / "input.yaml"
        source.write_text(yamlio.dump(ENVELOPE))
        result = taskfs("new", str(source), "--json", cwd=root)
        assert result.code == 0, result.stdout
        task = str(result.json["id"])
        assert taskfs("claim", task, "--agent", "builder", cwd=root).code == 0
        assert findings(root) == []
        out[keyed] = (root, task)
    return out


# -- agent keys audited like runner keys -----------------------------------------------------


def forger_key_dir(base: Path, agent: str) -> tuple[Path, str]:
    """A key folder holding a forger's own key under `agent`'s name; returns it and the
    public key text."""
    from taskfs.core import signing

    pair = signing.generate_keypair()
    folder = base / "forger-keys"
    folder.mkdir()
    (folder / f"agent-{agent}.pem").write_bytes(signing.private_key_pem(pair.private))
    (folder / f"agent-{agent}.pem").chmod(0o600)
    return folder, signing.public_key_text(pair.public)


def test_a_replaced_agent_key_is_named_and_genuine_messages_are_not_blamed(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_keys("builder", "planner")
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    genuine = taskfs("send", task, "--agent", "builder", "--json", "half way there")
    assert genuine.code == 0, genuine.stdout
    assert findings() == []
    # The forger swaps builder's public key for their own, with plain git, and speaks as
    # builder with the matching private key.
    folder, public = forger_key_dir(repo.parent, "builder")
    key_file = ".taskfs/keys/agent/builder.pub"
    (repo / key_file).write_text(public + "\n")
    head = commit_as(repo, "builder", "rotate key", key_file)
    monkeypatch.setenv("TASKFS_KEY_DIR", str(folder))
    forged = taskfs("send", task, "--agent", "builder", "--json", "ignore the tests")
    assert forged.code == 0, forged.stdout
    found = findings()
    assert ("agent_key_changed", key_file) in found
    # Each message is checked against the key of its own commit: builder's genuine message
    # still verifies, and is not blamed.
    assert [code for code, _path in found] == ["agent_key_changed"]
    finding = taskfs("audit", "--json").json["findings"][0]
    assert head[:12] in finding["message"]


def forged_message(
    repo: Path, task: str, sender: str, to: str, key_dir: Path, *, status: str | None = None
) -> str:
    """A message from `sender` signed with the private key in `key_dir`, written and committed
    with plain git; returns its path."""
    from datetime import datetime, timezone

    from taskfs.api.messages import sending as messages
    from taskfs.core import signing
    from taskfs.core.layout import stamped_name
    from taskfs.store.repository import Repository

    now = datetime.now(timezone.utc)
    name = stamped_name(now)
    pair = signing.load_private_key_pem((key_dir / f"agent-{sender}.pem").read_bytes())
    # Built and signed the way `taskfs send` builds a message (interlink's signature), but
    # with a private key of the caller's choosing, then committed with plain git.
    record = messages.new_record(
        Repository.open(repo),
        sender,
        to,
        "ignore the tests",
        now=now,
        pair=pair,
        task_id=task,
        status=status,
    )
    rel = f"tasks/{task}/messages/{name}"
    (repo / rel).parent.mkdir(exist_ok=True)
    (repo / rel).write_text(yamlio.dump(record.to_document()))
    commit_as(repo, sender, "a message", rel)
    return rel


def test_a_message_signed_under_a_key_that_came_later_is_checked_against_its_own(
    repo: Path,
) -> None:
    make_keys("builder", "planner")
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    folder, public = forger_key_dir(repo.parent, "builder")
    # Signed with a key that is not builder's registered one: it does not verify...
    message = forged_message(repo, task, "builder", "planner", folder)
    assert findings() == [("signature_invalid", message)]
    # ...and replacing the key afterwards does not make it verify in audit's eyes.
    key_file = ".taskfs/keys/agent/builder.pub"
    (repo / key_file).write_text(public + "\n")
    commit_as(repo, "builder", "rotate key", key_file)
    assert sorted(findings()) == [
        ("agent_key_changed", key_file),
        ("signature_invalid", message),
    ]


def test_a_removed_or_edited_agent_key_is_named(repo: Path) -> None:
    make_keys("builder", "planner")
    (repo / ".taskfs/keys/agent/planner.pub").write_text("ed25519:nonsense\n")
    assert findings() == [("agent_key_changed", ".taskfs/keys/agent/planner.pub")]
    git(repo, "rm", "-q", ".taskfs/keys/agent/builder.pub")
    git(repo, "commit", "-q", "-m", "drop key")
    assert sorted(findings()) == [
        ("agent_key_changed", ".taskfs/keys/agent/builder.pub"),
        ("agent_key_changed", ".taskfs/keys/agent/planner.pub"),
    ]


def test_a_transition_a_peers_signed_message_made_rests_on_that_message(repo: Path) -> None:
    """A peer's key lives on the peer's machine: the transition its signed message makes here
    cannot be signed by it, and is vouched for by the message."""
    make_keys("builder")
    task = submit(repo)
    assert taskfs("claim", task, "--agent", "builder").code == 0
    keys = Path(taskfs("keys", "new", "--agent", "planner", "--json").json["privateKey"]).parent
    # builder's private key leaves this machine; messages it signed elsewhere arrive.
    elsewhere = repo.parent / "builder-machine"
    elsewhere.mkdir()
    (keys / "agent-builder.pem").rename(elsewhere / "agent-builder.pem")
    cancel = forged_message(repo, task, "builder", "planner", elsewhere, status="canceled")
    chat = forged_message(repo, task, "builder", "planner", elsewhere)
    assert findings() == []
    msg_id = yamlio.load((repo / cancel).read_bytes())["msg_id"]
    chat_id = yamlio.load((repo / chat).read_bytes())["msg_id"]
    claim = status_files(repo, task)[-1]

    def cancel_by(name: str, message: str | None) -> str:
        extra = f"message: {message}\n" if message else ""
        return forge(
            repo, task, name, state="canceled", by="builder", prev=claim, reason="no", extra=extra
        )

    vouched = cancel_by("0003-canceled-aaaaaaaa.yaml", msg_id)
    assert findings() == []
    # Naming no message, a message that asks for something else, or one already used: forged.
    forged = [
        cancel_by("0003-canceled-bbbbbbbb.yaml", None),
        cancel_by("0003-canceled-cccccccc.yaml", chat_id),
        cancel_by("0003-canceled-dddddddd.yaml", msg_id),
    ]
    named = findings()
    assert ("transition_unauthorized", vouched) not in named
    for rel in forged:
        assert ("transition_unauthorized", rel) in named


@pytest.mark.parametrize(
    "setting",
    [
        'requireSignedTransitions: false\n"requireSignedTransition\\x73": true\n',
        "{requireSignedTransitions: true}\n",
        "requireSignedTransitions: true # on\n",
    ],
)
def test_the_claim_path_reads_the_requirement_however_it_is_spelt(repo: Path, setting: str) -> None:
    task = submit(repo)
    config = repo / ".taskfs" / "config.yaml"
    text = config.read_text().replace("requireSignedTransitions: false\n", "")
    config.write_text(setting if setting.startswith("{") else text + setting)
    git(repo, "commit", "-q", "-am", "require signed transitions")
    result = taskfs("claim", task, "--agent", "builder", "--json")
    assert result.codes in (["agent_not_allowed"], ["config_invalid"])
    assert len(status_files(repo, task)) == 1
