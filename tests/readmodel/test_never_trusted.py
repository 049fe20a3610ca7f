"""Everything derived is never trusted (issue 36): the read model's store and every cache under
`<git dir>/taskfs/cache/` (the stored answers of `show`, `inbox` and `prime`, the completion
gate's facts, the settings memos, the nudge hook's memory) can be deleted, truncated, filled
with garbage, have a byte flipped or be rewritten by hand (a row that says a dependency
completed, a verdict that says pass, a signature standing that says valid, a trigger planted in
the store), and no answer and no decision changes: `ls`, `ready`, `show`, `claim` and `complete`
answer exactly as they do on a freshly rebuilt store, and none of them ends in an internal
error.

The damage is done the way an attacker or a torn write does it, to whatever files the caches
are, without knowing their format: byte for byte, or through SQLite for the store's values.
"""

from __future__ import annotations

import io
import marshal
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_evidence import new_runner
from tests.helpers import git, submit, taskfs

TRUE = {"passFailCommand": "true", "endToEndVerification": "it runs"}
FALSE = {"passFailCommand": "false", "endToEndVerification": "it runs"}
# Volatile fields of a document: who committed when, and the commit and file names it made.
VOLATILE = {"commit", "file", "status_file", "at", "ts", "startedAt", "durationSeconds"}


def cache_dir(repo: Path) -> Path:
    return Path(git(repo, "rev-parse", "--absolute-git-dir")) / "taskfs" / "cache"


def cache_files(repo: Path) -> list[Path]:
    """Every file taskfs keeps under `<git dir>/taskfs/`: the store and its caches (SQLite's
    own side files included), and the writers' lock beside them."""
    return sorted(p for p in cache_dir(repo).parent.rglob("*") if p.is_file())


def stores(repo: Path) -> list[Path]:
    return [p for p in cache_files(repo) if p.suffix == ".sqlite"]


def _ledger(repo: Path) -> None:
    """dep (submitted) <- waiting; failing (working, its check failed); passing (working, its
    check passed); free (submitted, nothing in its way)."""
    submit(repo, id="dep", filesAndInterfaces=["src/dep/**"])
    submit(repo, id="waiting", filesAndInterfaces=["src/waiting/**"], dependsOn=["dep"])
    submit(repo, id="failing", filesAndInterfaces=["src/failing/**"], acceptanceCheck=FALSE)
    submit(repo, id="passing", filesAndInterfaces=["src/passing/**"], acceptanceCheck=TRUE)
    submit(repo, id="free", filesAndInterfaces=["src/free/**"])
    for task in ("failing", "passing"):
        assert taskfs("claim", task, "--agent", "builder").code == 0
        taskfs("check", task, "--json")


READS = (
    ("ls", "--json"),
    ("ls", "--json", "--state", "submitted"),
    ("ready", "--json"),
    ("ready", "--json", "--agent", "builder"),
    ("show", "dep", "--json"),
    ("show", "waiting"),
    ("show", "failing", "--json"),
    ("show", "passing", "--json"),
    ("inbox", "--json", "--agent", "builder"),  # answers stored (issue 38's agent views)
    ("prime", "--agent", "builder"),
    ("nudge", "--hook", "claude", "--agent", "builder"),  # the hook's memory
)
DECISIONS = (
    ("claim", "waiting", "--agent", "builder", "--json"),
    ("complete", "failing", "--agent", "builder", "--json"),
    ("claim", "free", "--agent", "builder", "--json"),
    ("complete", "passing", "--agent", "builder", "--json"),
)


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def answers(repo: Path) -> list[tuple[int, Any]]:
    """What the reads and then the decisions answer, in order (each decision changes the
    ledger the next one meets), and what the reads answer afterwards."""
    out: list[tuple[int, Any]] = []
    for args in (*READS, *DECISIONS, *READS):
        result = taskfs(*args, cwd=repo)
        assert "internal_error" not in result.stdout + result.stderr, (args, result.stdout)
        body = _clean(result.json) if "--json" in args else result.stdout
        out.append((result.code, body))
    return out


@pytest.fixture
def warmed(repo: Path, tmp_path: Path) -> tuple[Path, list[tuple[int, Any]], Path]:
    """The ledger with every cache written, a pristine copy of it (caches included), and what a
    copy of it without any cache answers."""
    _ledger(repo)
    for args in READS:  # twice: the second time from the caches
        taskfs(*args)
        taskfs(*args)
    taskfs("complete", "failing", "--agent", "builder", "--json")  # the gate's cache, written
    assert stores(repo)
    assert any("gate" in p.parts for p in cache_files(repo))
    pristine = tmp_path / "pristine"
    shutil.copytree(repo, pristine, symlinks=True)
    fresh = tmp_path / "fresh"
    shutil.copytree(repo, fresh, symlinks=True)
    shutil.rmtree(cache_dir(fresh))
    return pristine, answers(fresh), fresh


def _restore(repo: Path, pristine: Path) -> None:
    os.chdir(pristine)
    shutil.rmtree(repo)
    shutil.copytree(pristine, repo, symlinks=True)
    os.chdir(repo)
    _forget_open_stores()


def _forget_open_stores() -> None:
    """As a new process finds the store: nothing of it kept open by this one."""
    import importlib

    for name in ("taskfs.readmodel.db", "taskfs.store.readmodel_store"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        close = getattr(module, "close", None)
        if callable(close):
            close()


# -- rewriting what the caches hold, without knowing their format --------------------------


def _walk(value: Any, change: Callable[[Any], Any]) -> Any:
    value = change(value)
    if isinstance(value, tuple):
        return tuple(_walk(v, change) for v in value)
    if isinstance(value, list):
        return [_walk(v, change) for v in value]
    if isinstance(value, dict):
        return {_walk(k, change): _walk(v, change) for k, v in value.items()}
    return value


def rewrite_marshalled(data: bytes, change: Callable[[Any], Any]) -> bytes | None:
    """`data` with the marshalled value it holds (after whatever header it starts with)
    rewritten by `change`, the header kept; None when no marshalled value is found in it."""
    for start in range(min(len(data), 96)):
        rest = io.BytesIO(data[start:])
        try:
            value = marshal.load(rest)
        except (EOFError, ValueError, TypeError):
            continue
        if rest.tell() != len(data) - start or not isinstance(value, tuple | list | dict):
            continue  # not the whole rest of the file
        return data[:start] + marshal.dumps(_walk(value, change))
    return None


def rewrite_store(path: Path, change: Callable[[str, tuple[Any, ...]], tuple[Any, ...]]) -> int:
    """Rewrite every row of every table of the SQLite file at `path` into
    `change(table, row)`; how many rows changed."""
    conn = sqlite3.connect(path, isolation_level=None)
    changed = 0
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        conn.execute("BEGIN")
        for table in tables:
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            for values in conn.execute(f"SELECT * FROM {table}").fetchall():
                new = tuple(change(table, tuple(values)))
                if new == tuple(values):
                    continue
                where = " AND ".join(f"{c} IS ?" for c in columns)
                sets = ", ".join(f"{c} = ?" for c in columns)
                conn.execute(f"UPDATE {table} SET {sets} WHERE {where}", (*new, *values))
                changed += 1
        conn.execute("COMMIT")
    finally:
        conn.close()
    return changed


def halves(_table: str, row: tuple[Any, ...]) -> tuple[Any, ...]:
    """Every value of a row that is bytes cut to half its length (what a torn write leaves)."""
    return tuple(v[: len(v) // 2] if isinstance(v, bytes) and len(v) > 1 else v for v in row)


def craft_dependency_completed(repo: Path) -> int:
    """The rows of the store that are task `dep`'s (a value of the row is its id) say
    `completed` wherever they said `submitted` (the same length: nothing else moves)."""

    def change(_table: str, row: tuple[Any, ...]) -> tuple[Any, ...]:
        if "dep" not in row:
            return row
        return tuple(
            v.replace(b"submitted", b"completed")
            if isinstance(v, bytes)
            else v.replace("submitted", "completed")
            if isinstance(v, str)
            else v
            for v in row
        )

    return sum(rewrite_store(store, change) for store in stores(repo))


def craft_verdict(repo: Path) -> int:
    """Every cached evidence fact that says `fail` says `pass` (and `unsigned` says `valid`)."""
    said = {"fail": "pass", "unsigned": "valid", "invalid": "valid"}
    changed = 0
    for path in cache_files(repo):
        if "gate" not in path.parts:
            continue
        data = path.read_bytes()
        new = rewrite_marshalled(data, lambda v: said.get(v, v) if isinstance(v, str) else v)
        if new is None:
            new = data.replace(b"fail", b"pass")
        if new != data:
            path.write_bytes(new)
            changed += 1
    return changed


def craft_answers(repo: Path) -> int:
    """Every stored answer of an agent view (`inbox`, `prime`) says there is nothing to claim,
    and the nudge hook's memory that nothing is due for a day."""
    changed = 0
    for path in cache_files(repo):
        if "answers" not in path.parts and "nudge" not in path.parts:
            continue
        data = path.read_bytes()

        def change(value: Any) -> Any:
            if isinstance(value, str):
                return value.replace("to claim", "to claim (none)")
            if isinstance(value, float):
                return value + 86400.0
            return value

        new = rewrite_marshalled(data, change)
        if new is None:
            new = data.replace(b"to claim", b"to clam!")
        if new != data:
            path.write_bytes(new)
            changed += 1
    return changed


def plant_trigger(repo: Path) -> None:
    """Triggers in the store: one that marks every task ready whenever anything is written
    (where a table says whether a task is ready), and on every other table one that undoes
    whatever is written to it."""
    for store in stores(repo):
        conn = sqlite3.connect(store, isolation_level=None)
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            for event in ("INSERT", "UPDATE", "DELETE"):
                action = (
                    f"UPDATE {table} SET ready = 1"
                    if "ready" in columns
                    else f"DELETE FROM {table} WHERE rowid = NEW.rowid"
                    if event == "INSERT" and "k" in columns
                    else "SELECT 1"
                )
                conn.execute(
                    f"CREATE TRIGGER evil_{table}_{event.lower()} AFTER {event} ON {table} "
                    f"BEGIN {action}; END"
                )
        conn.close()


# -- the decisions of issue 36, items 1 to 3 --------------------------------------------------


def test_a_crafted_row_saying_a_dependency_completed_decides_nothing(repo: Path) -> None:
    """Item 1: the dependency's row says completed, no commit does: `ready` does not offer the
    dependent, and `claim` refuses it, now and after later writes by others."""
    _ledger(repo)
    assert taskfs("ls", "--json").code == 0
    assert craft_dependency_completed(repo) > 0
    plant_trigger(repo)
    _forget_open_stores()
    ready = [t["id"] for t in taskfs("ready", "--json", "--agent", "builder").json["tasks"]]
    assert "waiting" not in ready
    claimed = taskfs("claim", "waiting", "--agent", "builder", "--json")
    assert claimed.codes == ["dependencies_unresolved"]
    # Others write on: the store is rebuilt, never taught by the planted trigger.
    submit(repo, id="later", filesAndInterfaces=["src/later/**"])
    assert taskfs("claim", "free", "--agent", "builder").code == 0
    ready = [t["id"] for t in taskfs("ready", "--json").json["tasks"]]
    assert ready == ["dep", "later"]
    assert taskfs("claim", "waiting", "--agent", "builder", "--json").codes == [
        "dependencies_unresolved"
    ]
    shown = {t["id"]: t["state"] for t in taskfs("ls", "--json").json["tasks"]}
    assert shown["dep"] == "submitted"


def test_a_crafted_verdict_buys_no_completion(repo: Path) -> None:
    """Item 2: the cached facts of a failing check rewritten to `pass`: `complete` refuses."""
    _ledger(repo)
    refused = taskfs("complete", "failing", "--agent", "builder", "--json")
    assert refused.codes == ["completion_requires_evidence"]
    assert craft_verdict(repo) > 0
    again = taskfs("complete", "failing", "--agent", "builder", "--json")
    assert again.codes == ["completion_requires_evidence"]
    assert taskfs("show", "failing", "--json").json["state"] == "working"


def test_a_crafted_signature_standing_lets_no_unsigned_evidence_through(repo: Path) -> None:
    """Item 2: where runner keys are required, the cached standing of unsigned evidence
    rewritten to `valid`: `complete` still refuses it."""
    submit(repo, id="work", filesAndInterfaces=["src/work/**"], acceptanceCheck=TRUE)
    assert taskfs("claim", "work", "--agent", "builder").code == 0
    assert taskfs("check", "work", "--json").json["signed"] is False  # no runner key yet
    new_runner("ci")  # from now on evidence must be signed by it
    refused = taskfs("complete", "work", "--agent", "builder", "--json")
    assert refused.codes == ["completion_requires_evidence"]
    assert craft_verdict(repo) > 0
    again = taskfs("complete", "work", "--agent", "builder", "--json")
    assert again.codes == ["completion_requires_evidence"]


def _flip(data: bytes) -> bytes:
    if not data:
        return b"\x01"
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :]


ROW_DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "cut in half": lambda v: v[: len(v) // 2],
    "another shape": lambda _v: marshal.dumps(("free", "working")),
    "flipped byte": _flip,
    "garbage": lambda _v: b"\x00\xffgarbage",
}


@pytest.mark.parametrize("shape", sorted(ROW_DAMAGE))
def test_a_damaged_row_is_rebuilt_not_an_internal_error(repo: Path, shape: str) -> None:
    """Item 3: the values of one task's rows damaged in place (a torn write cuts a row's blob
    in half; SQLite has no page checksums): `claim` of that task and the listings answer as
    on a rebuilt store, on every run, also after HEAD moves."""
    _ledger(repo)
    before = taskfs("ls", "--json").stdout

    def damage(_table: str, row: tuple[Any, ...]) -> tuple[Any, ...]:
        if "free" not in row:
            return row
        return tuple(ROW_DAMAGE[shape](v) if isinstance(v, bytes) and v else v for v in row)

    assert sum(rewrite_store(store, damage) for store in stores(repo)) > 0
    _forget_open_stores()
    assert taskfs("ls", "--json").stdout == before
    claimed = taskfs("claim", "free", "--agent", "builder", "--json")
    assert (claimed.code, claimed.json.get("state")) == (0, "working"), claimed.stdout
    git(repo, "commit", "-q", "--allow-empty", "-m", "HEAD moves")
    assert sum(rewrite_store(store, damage) for store in stores(repo)) > 0
    _forget_open_stores()
    listed = taskfs("ls", "--json")
    assert listed.code == 0, listed.stdout
    assert {t["id"]: t["state"] for t in listed.json["tasks"]}["free"] == "working"
    ready = taskfs("ready", "--json")
    assert ready.code == 0, ready.stdout
    assert taskfs("move", "free", "input_required", "--agent", "builder").code == 0


# -- the Done-when: every file damaged every way ------------------------------------------------


def _damage_file(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "deleted":
        path.unlink()
    elif how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "garbage":
        path.write_bytes(b"\x00\xffnot what taskfs wrote\x13" * 64)
    elif how == "flipped byte":
        path.write_bytes(_flip(data))


def _craft(repo: Path) -> None:
    assert craft_dependency_completed(repo) > 0
    assert craft_verdict(repo) > 0
    assert craft_answers(repo) > 0
    plant_trigger(repo)


DAMAGE = ("deleted", "truncated", "garbage", "flipped byte")


@pytest.mark.parametrize("how", DAMAGE)
def test_every_cache_file_damaged_changes_no_answer_and_no_decision(
    repo: Path, warmed: tuple[Path, list[tuple[int, Any]], Path], how: str
) -> None:
    pristine, expected, _fresh = warmed
    names = [p.relative_to(pristine) for p in cache_files(pristine)]
    below = [name.parts[name.parts.index("taskfs") + 1 :] for name in names]
    kinds = {rest[1] if rest[0] == "cache" and len(rest) > 2 else rest[-1] for rest in below}
    assert {"gate", "show", "settings", "answers", "nudge", "lock"} <= kinds, names
    assert any(name.suffix == ".sqlite" for name in names), names
    for name in names:
        _restore(repo, pristine)
        _damage_file(repo / name, how)
        assert answers(repo) == expected, (how, str(name))


def test_crafted_rows_change_no_answer_and_no_decision(
    repo: Path, warmed: tuple[Path, list[tuple[int, Any]], Path]
) -> None:
    pristine, expected, _fresh = warmed
    _restore(repo, pristine)
    _craft(repo)
    assert answers(repo) == expected


def test_every_cache_damaged_at_once_changes_nothing(
    repo: Path, warmed: tuple[Path, list[tuple[int, Any]], Path]
) -> None:
    pristine, expected, _fresh = warmed
    for how in DAMAGE:
        _restore(repo, pristine)
        for path in cache_files(repo):
            if path.exists():
                _damage_file(path, how)
        assert answers(repo) == expected, how


def test_a_damaged_store_in_another_process_is_no_internal_error(
    repo: Path, warmed: tuple[Path, list[tuple[int, Any]], Path]
) -> None:
    """The same through the installed command line, each command a process of its own."""
    pristine, _expected, _fresh = warmed
    _restore(repo, pristine)
    for store in stores(repo):
        rewrite_store(store, halves)
    for args in (["ls", "--json"], ["claim", "free", "--agent", "builder", "--json"]):
        proc = subprocess.run(
            [sys.executable, "-m", "taskfs", *args],
            cwd=repo,
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "internal_error" not in proc.stdout
