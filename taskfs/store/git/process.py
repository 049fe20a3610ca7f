"""Running git: the scrubbed environment, the errors, and what every other part stands on.

Every git process runs with a scrubbed environment: taskfs may itself run inside a git hook,
where `GIT_DIR`, `GIT_INDEX_FILE` and friends point somewhere else. And every one runs with the
settings that make git run a command of the configuration's choosing, and that taskfs never
needs, pinned off on its command line (`PINNED`, through `argv`: `git -c ...` outranks every
configuration file): a hook, `core.fsmonitor` or a pager planted in `.git` (by an acceptance
command run without a sandbox, say) never runs with the operator's environment. What taskfs
cannot pin without breaking what users rely on (filters such as git-lfs', `core.sshCommand`,
credential helpers, `gpg.program`) is guarded where it can be planted: a check's changes to
git's files are undone (`taskfs.store.git.planted`).
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from taskfs.core.layout import find_git_dir
from taskfs.errors import TaskfsError, fail

# Variables git sets for hooks or users set for plumbing; any of them would redirect our git.
_KEEP_GIT_VARS = frozenset(
    {
        "GIT_EXEC_PATH",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_SSL_CAINFO",
        "GIT_SSL_NO_VERIFY",
        "GIT_ASKPASS",
        "GIT_TERMINAL_PROMPT",
        "GIT_HTTP_PROXY_AUTHMETHOD",
        "GIT_ALLOW_PROTOCOL",
        "GIT_CONFIG_NOSYSTEM",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_TRACE",
    }
)
# Settings that make git run a command, pinned for every git taskfs runs. Hooks included:
# taskfs's git is plumbing (it writes its commits itself) and its pushes and checkouts are its
# own; `core.hooksPath` names a folder that holds nothing.
PINNED = (
    "core.fsmonitor=false",
    f"core.hooksPath={os.devnull}",
    "core.pager=cat",
    "core.editor=:",
    "sequence.editor=:",
    "protocol.ext.allow=never",
)


def argv(*args: str, pins: Iterable[str] = PINNED) -> list[str]:
    """The command line of `git ARGS` with the settings that run commands pinned (`PINNED`)."""
    return ["git", *(word for setting in pins for word in ("-c", setting)), *args]


# How long a command that writes the index waits for another git process's `index.lock` (an
# editor's or an IDE's `git status` holds it for a moment) before it fails with git's message.
INDEX_LOCK_WAIT_SECONDS = 10.0


def scrubbed_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not dropped_var(k, os.environ)}
    env["LC_ALL"] = "C"
    env["GIT_TERMINAL_PROMPT"] = "0"
    # Reading commands (`status`) must not take the index lock to refresh it: that would make
    # a user's `git commit`, or another taskfs writer's `git add`, fail for a moment.
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["GIT_PAGER"] = "cat"  # a pager git would run: none (see PINNED)
    if extra:
        env.update(extra)
    return env


def dropped_var(name: str, environ: Mapping[str, str]) -> bool:
    """Whether `scrubbed_env` leaves the variable `name` out of git's environment."""
    if not name.startswith("GIT_") or name in _KEEP_GIT_VARS:
        return False
    if name.startswith("GIT_CONFIG_KEY_"):
        return "GIT_CONFIG_COUNT" not in environ
    return not name.startswith("GIT_CONFIG_")


def _object_format(common_dir: Path) -> str:
    """`sha256` when the repository's config says so (extensions.objectFormat), else sha1."""
    try:
        config = (common_dir / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "sha1"
    found = re.search(r"(?im)^\s*objectformat\s*=\s*(\w+)", config)
    return found.group(1).lower() if found else "sha1"


class Process:
    """A git working tree, driven through the git command line: the plumbing every part of
    `taskfs.store.git` runs on, and the questions answered by one `rev-parse` or `config`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        # Read from the files git keeps, not by running git: every ledger write opens a Git.
        self.git_dir = find_git_dir(root)
        commondir = self.git_dir / "commondir"
        self.common_dir = (
            (self.git_dir / commondir.read_text().strip()).resolve()
            if commondir.is_file()
            else self.git_dir
        )
        self.last_commit: tuple[str | None, str] | None = None  # (parent, commit) of ours
        sha256 = _object_format(self.common_dir) == "sha256"
        self._hash = hashlib.sha256 if sha256 else hashlib.sha1
        self.zero = "0" * self._hash().digest_size * 2

    @staticmethod
    def init(root: Path) -> None:
        proc = subprocess.run(
            argv("init", "--quiet", str(root)),
            capture_output=True,
            env=scrubbed_env(),
            stdin=subprocess.DEVNULL,
            check=False,
        )
        if proc.returncode != 0:
            raise git_error(("init",), proc)

    def run(
        self,
        *args: str,
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
        check: bool = True,
    ) -> str:
        proc = self.run_raw(*args, input=input, env=env)
        if check and proc.returncode != 0:
            raise git_error(args, proc)
        return proc.stdout.decode("utf-8", "replace").strip()

    def run_raw(
        self,
        *args: str,
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
        pins: Iterable[str] = PINNED,
    ) -> subprocess.CompletedProcess[bytes]:
        try:
            return subprocess.run(
                argv(*args, pins=pins),
                cwd=self.root,
                input=input,
                stdin=None if input is not None else subprocess.DEVNULL,
                capture_output=True,
                env=scrubbed_env(env),
                check=False,
            )
        except OSError as exc:
            raise fail("git_failed", command=args[0], reason=str(exc)) from None

    def run_checked(self, *args: str, env: Mapping[str, str] | None = None) -> bytes:
        """git's stdout as bytes; `git_failed` when it fails."""
        proc = self.run_raw(*args, env=env)
        if proc.returncode != 0:
            raise git_error(args, proc)
        return proc.stdout

    def run_index(
        self, *args: str, env: Mapping[str, str] | None = None, input: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        """A git command that writes the index, run again while another git process holds
        the index lock (git fails at once then, having changed nothing), for up to
        `INDEX_LOCK_WAIT_SECONDS`."""
        deadline = time.monotonic() + INDEX_LOCK_WAIT_SECONDS
        delay = 0.01
        while True:
            proc = self.run_raw(*args, env=env, input=input)
            if proc.returncode == 0 or b"index.lock" not in proc.stderr:
                return proc
            if time.monotonic() + delay > deadline:
                return proc
            time.sleep(delay)
            delay = min(delay * 2, 0.2)

    # -- one-line questions --------------------------------------------------------------

    def head(self) -> str | None:
        """The commit HEAD points at, or None on a branch with no commits yet."""
        proc = self.run_raw("rev-parse", "--verify", "--quiet", "HEAD^{commit}")
        return proc.stdout.decode().strip() or None

    def head_guess(self) -> str | None:
        """HEAD read from git's files without running git (loose or packed refs); `head()`
        when the files say nothing clear. Only for a compare-and-swap that checks it."""
        try:
            text = (self.git_dir / "HEAD").read_text().strip()
            if not text.startswith("ref: "):
                return text if len(text) == len(self.zero) else self.head()
            ref = text[len("ref: ") :]
            loose = self.common_dir / ref
            if loose.is_file():
                return loose.read_text().strip()
            for line in (self.common_dir / "packed-refs").read_text().splitlines():
                oid, _space, name = line.partition(" ")
                if name == ref:
                    return oid
        except OSError:
            pass
        return self.head()

    def verify(self, revision: str) -> str | None:
        """The commit a revision names, or None."""
        if revision.startswith("-"):
            return None
        proc = self.run_raw("rev-parse", "--verify", "--quiet", "--end-of-options", revision)
        return proc.stdout.decode().strip() or None

    def branch(self) -> str | None:
        """The branch HEAD is on; None when HEAD is detached."""
        proc = self.run_raw("symbolic-ref", "--quiet", "--short", "HEAD")
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def config(self, key: str) -> str | None:
        proc = self.run_raw("config", "--get", key)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def author_name(self) -> str | None:
        """The author name the next commit would get (git sets `GIT_AUTHOR_NAME` for hooks)."""
        passed = {
            k: os.environ[k] for k in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL") if k in os.environ
        }
        proc = self.run_raw("var", "GIT_AUTHOR_IDENT", env=passed)
        ident = proc.stdout.decode("utf-8", "replace").strip()
        name = ident.split(" <", 1)[0].strip() if proc.returncode == 0 else ""
        return name or passed.get("GIT_AUTHOR_NAME") or None

    def hook_path(self, name: str) -> Path:
        """Where the user's git looks for hook `name` (their core.hooksPath respected: the
        question runs nothing, so the pin that keeps taskfs's own git from hooks is left out)."""
        pins = [setting for setting in PINNED if not setting.startswith("core.hooksPath=")]
        proc = self.run_raw("rev-parse", "--git-path", f"hooks/{name}", pins=pins)
        if proc.returncode != 0:
            raise git_error(("rev-parse",), proc)
        return self.root / proc.stdout.decode("utf-8", "replace").strip()


def nul_list(data: bytes) -> list[str]:
    """The names of a `-z` listing."""
    return [p for p in data.decode("utf-8", "surrogateescape").split("\0") if p]


def git_error(args: Iterable[str], proc: subprocess.CompletedProcess[bytes]) -> TaskfsError:
    args = tuple(args)
    reason = proc.stderr.decode("utf-8", "replace").strip() or f"exit status {proc.returncode}"
    return fail("git_failed", command=args[0] if args else "", reason=reason)
