"""A force-push cannot overturn a won claim (issue 28, item 3). bob wins a claim with
`claim --sync`; mallory force-pushes a history without it, with her own claim. bob's next
`taskfs sync` (and `claim --sync`) notices that the remote dropped ledger commits his clone
had, keeps them, merges nothing and says `history_rewritten`; `audit` names it, in bob's clone
and in one that took the rewritten history with plain `git pull`. Real clones of a bare remote,
a real `git push --force`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_sync import clones, fixed_nonces, snapshot, state_of, sync
from tests.helpers import git, taskfs
from tests.remotes import make_remote, new_task


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    return make_remote(tmp_path)


def _won_then_overturned(
    remote: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path, Path, str]:
    """bob wins `task` with claim --sync; carol syncs it; mallory, who never fetched it, claims
    the task herself and force-pushes. Returns (bob, mallory, carol, task)."""
    bob, mallory, carol = clones(remote, "bob", "mallory", "carol")
    # Mallory's nonce sorts first: were the two claims settled as a fork, hers would win.
    fixed_nonces(monkeypatch, {bob: "zzzzzzz1", mallory: "00000000", carol: "mmmmmmmm"})
    task = new_task(bob, to=None, id="login")
    sync(bob)
    sync(mallory)
    sync(carol)
    assert taskfs("claim", task, "--agent", "bob", "--sync", cwd=bob).code == 0
    sync(carol)
    assert state_of(carol, task) == ("working", "bob")
    assert taskfs("claim", task, "--agent", "mallory", cwd=mallory).code == 0
    git(mallory, "push", "-q", "--force", "origin", "main")
    return bob, mallory, carol, task


def _codes(result: object) -> list[str]:
    return result.codes  # type: ignore[attr-defined, no-any-return]


def test_sync_refuses_to_adopt_a_history_that_dropped_a_won_claim(
    remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bob, _mallory, _carol, task = _won_then_overturned(remote, monkeypatch)
    before = snapshot(bob)
    result = taskfs("sync", "--json", cwd=bob)
    assert result.code == 1, result.stdout
    assert _codes(result) == ["history_rewritten"]
    error = result.json["errors"][0]
    assert error["remote"] == "origin"
    assert error["branch"] == "main"
    assert error["dropped"] >= 1
    # Nothing was merged or rewritten here: bob still holds the task he won.
    assert snapshot(bob) == before
    assert state_of(bob, task) == ("working", "bob")
    # And it stays refused: a second sync does not adopt what the first refused.
    assert _codes(taskfs("sync", "--json", cwd=bob)) == ["history_rewritten"]
    assert state_of(bob, task) == ("working", "bob")


def test_claim_sync_refuses_too(remote: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bob, mallory, _carol, _task = _won_then_overturned(remote, monkeypatch)
    other = new_task(mallory, to=None, id="other", filesAndInterfaces=["src/other.py"])
    git(mallory, "push", "-q", "origin", "main")
    result = taskfs("claim", other, "--agent", "bob", "--sync", "--json", cwd=bob)
    assert _codes(result) == ["history_rewritten"]


def test_audit_names_the_rewrite(remote: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bob, mallory, carol, task = _won_then_overturned(remote, monkeypatch)
    assert taskfs("sync", cwd=bob).code == 1  # the fetch saw the rewrite
    found = taskfs("audit", "--json", cwd=bob).json["findings"]
    assert ("history_rewritten", "refs/remotes/origin/main") in {
        (f["code"], f["path"]) for f in found
    }
    # carol takes the rewritten history with plain git: the fork rule now gives mallory the
    # task, and audit says why that cannot be trusted.
    git(carol, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    assert state_of(carol, task) == ("working", "mallory")
    found = taskfs("audit", "--json", cwd=carol).json["findings"]
    assert "history_rewritten" in {f["code"] for f in found}
    # mallory's own clone never had bob's claim: nothing there to compare.
    assert "history_rewritten" not in {
        f["code"] for f in taskfs("audit", "--json", cwd=mallory).json["findings"]
    }


def test_once_the_remote_holds_them_again_sync_goes_on(
    remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bob, _mallory, _carol, task = _won_then_overturned(remote, monkeypatch)
    refused = taskfs("sync", "--json", cwd=bob)
    assert _codes(refused) == ["history_rewritten"]
    # What the refusal says to do: push the history back over the rewrite.
    fetched = git(bob, "rev-parse", "origin/main")
    git(bob, "push", "-q", f"--force-with-lease=main:{fetched}", "origin", "HEAD:main")
    assert sync(bob)["integration"] == "none"
    assert state_of(bob, task) == ("working", "bob")
    assert "history_rewritten" not in {
        f["code"] for f in taskfs("audit", "--json", cwd=bob).json["findings"]
    }


def test_a_plain_fast_forward_is_no_rewrite(remote: Path) -> None:
    a, b = clones(remote, "a", "b")
    task = new_task(a, to=None)
    sync(a)
    sync(b)
    assert taskfs("claim", task, "--agent", "bob", "--sync", cwd=b).code == 0
    assert sync(a)["integration"] == "fast-forward"
    assert taskfs("audit", "--json", cwd=a).json["findings"] == []
