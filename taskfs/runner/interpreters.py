"""What a sandboxed check must see of the programs it runs, when they live where the sandbox
hides (the user's HOME, the host's /tmp).

People's interpreters live in HOME: pyenv, asdf, uv and conda install Pythons there, and a
project's virtual environment links its `bin/python` to one of them. In the sandbox HOME is an
empty folder, so the link dangles and the shell finds the system python instead (no pytest)
or nothing at all (exit 127). `exposed` follows, on the host, every program the command names
(and the worktree's virtual environments): each symbolic link on its way, the interpreter of a
script (`#!`), the base interpreter of a virtual environment (`pyvenv.cfg`), the tool a shim
runs; and answers what to bind back read-only, as narrowly as still works: a virtual
environment, an interpreter's install prefix, a version manager's root, else the file alone.
Never a folder holding what must stay hidden (the operator's keys and ledger), never HOME
itself nor its shared folders (`.local`, `.config`, `.cache`), where other programs keep
credentials.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable, Sequence

# Words that run the command after them (`env X=1 python ...`, `timeout 60 pytest`).
_WRAPPERS = frozenset({"env", "exec", "command", "nice", "nohup", "time", "timeout", "xvfb-run"})
_SEPARATORS = frozenset({";", "&&", "||", "&", "|", "|&", "(", ")", "\n"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.S)
# Interpreters named even when the command hides them in a script or a Makefile.
_ALWAYS = ("python3", "python")
_VENVS = (".venv", "venv", "env")
# Folders of HOME that hold other programs' data (credentials included), never bound whole.
_SHARED = (".local", ".config", ".cache", ".ssh", ".gnupg")
_MAX_LINKS = 40
_MAX_DEPTH = 3
_SCRIPT_BYTES = 64 * 1024
_ABSOLUTE = re.compile(r"""(?<![\w./-])(/[^\s"'`$;|&<>()\\]+)""")


def exposed(
    commands: Iterable[str],
    *,
    cwd: str,
    path: str,
    hidden: Sequence[str],
    secret: Sequence[str],
    visible: Sequence[str] = (),
) -> list[str]:
    """The paths to bind read-only so that `commands`, run in `cwd` with `$PATH` `path`, find
    what they find on the host. `hidden`: folders the sandbox empties (HOME, /tmp); `secret`:
    paths that must stay hidden whatever needs them; `visible`: paths bound anyway."""
    finder = _Finder(cwd, path, [_real(h) for h in hidden], [_real(s) for s in secret], visible)
    for command in commands:
        for word in _command_words(command):
            finder.program(word)
    for word in _ALWAYS:
        finder.program(word)
    for name in _VENVS:
        venv = os.path.join(cwd, name)
        if os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
            finder.program(os.path.join(venv, "bin", "python"))
    binds = sorted(finder.binds)
    # A bind inside another one adds nothing.
    return [b for b in binds if _within(b, [o for o in binds if o != b]) is None]


class _Finder:
    def __init__(
        self,
        cwd: str,
        path: str,
        hidden: list[str],
        secret: list[str],
        visible: Sequence[str],
    ) -> None:
        self.cwd = cwd
        self.path = [d for d in path.split(os.pathsep) if d and os.path.isabs(d)]
        self.hidden = hidden
        self.secret = secret
        self.visible = [os.path.normpath(v) for v in visible]
        self.binds: set[str] = set()
        self._seen: set[str] = set()

    def program(self, word: str, depth: int = 0) -> None:
        found = self._locate(word)
        if found is None or found in self._seen or depth > _MAX_DEPTH:
            return
        self._seen.add(found)
        for hop in _hops(found):
            self._need(hop)
            self._venv_base(hop, depth)
        real = os.path.realpath(found)
        if os.path.isfile(real):
            self._script(found, real, depth)

    def _locate(self, word: str) -> str | None:
        if not word or word.startswith("-"):
            return None
        if "/" in word:
            return os.path.normpath(os.path.join(self.cwd, word))
        for folder in self.path:
            candidate = os.path.join(folder, word)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return os.path.normpath(candidate)
        return None

    def _need(self, hop: str) -> None:
        """Bind what makes `hop` (a path the kernel walks) reachable, if it is hidden."""
        root = _within(hop, self.hidden)
        if root is None or _within(hop, self.visible) is not None:
            return
        if _within(hop, self.secret) is not None:
            return  # stays hidden: the command fails, and says what it could not find
        bind = self._prefix(hop, root)
        if bind not in self.binds and os.path.lexists(bind):
            self.binds.add(bind)

    def _prefix(self, hop: str, root: str) -> str:
        """The narrowest folder that makes `hop` work: its virtual environment, its version
        manager (a `shims` folder's parent), its install prefix (above `bin`, beside `lib`);
        else `hop` alone."""
        parts = os.path.relpath(hop, root).split(os.sep)
        candidates = []
        for i in range(len(parts) - 1, 0, -1):
            folder = os.path.join(root, *parts[:i])
            if os.path.isfile(os.path.join(folder, "pyvenv.cfg")):
                candidates.append(folder)
                break
        if "shims" in parts[:-1]:
            candidates.append(os.path.join(root, *parts[: parts.index("shims")]))
        folders = parts if os.path.isdir(hop) else parts[:-1]
        bins = [i for i, part in enumerate(folders) if part in ("bin", "sbin")]
        if bins:
            prefix = os.path.join(root, *parts[: max(bins)])
            if os.path.isdir(os.path.join(prefix, "lib")):
                candidates.append(prefix)
        for folder in candidates:
            if self._may_bind(folder, root):
                return folder
        return hop

    def _may_bind(self, folder: str, root: str) -> bool:
        folder = os.path.normpath(folder)
        if folder == root or not folder.startswith(root.rstrip("/") + "/"):
            return False
        parts = os.path.relpath(folder, root).split(os.sep)
        if parts[0] in _SHARED and len(parts) <= 2:  # .local, .local/share: never whole
            return False
        return not any(s == folder or s.startswith(folder + "/") for s in self.secret)

    def _venv_base(self, hop: str, depth: int) -> None:
        """A virtual environment's python starts from its `pyvenv.cfg`'s `home`: bring the
        base interpreter too (a venv made with --copies has no link to follow)."""
        folder = os.path.dirname(hop)
        for _ in range(2):
            config = os.path.join(folder, "pyvenv.cfg")
            if os.path.isfile(config):
                home = _venv_home(config)
                if home is not None:
                    for name in ("python3", "python"):
                        candidate = os.path.join(home, name)
                        if os.path.lexists(candidate):
                            self.program(candidate, depth + 1)
                            break
                    for inner in _hops(home):
                        self._need(inner)
                return
            folder = os.path.dirname(folder)

    def _script(self, found: str, real: str, depth: int) -> None:
        head = _head(real)
        if head.startswith(b"#!"):
            words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
            if words:
                interpreter = words[0]
                rest = [w for w in words[1:] if not w.startswith("-")]
                if os.path.basename(interpreter) == "env" and rest:
                    self.program(rest[0], depth + 1)
                else:
                    self.program(interpreter, depth + 1)
        if "shims" in found.split(os.sep):
            # A version manager's shim runs the manager by an absolute path it names.
            for named in _ABSOLUTE.findall(head.decode("utf-8", "replace")):
                if os.path.lexists(named):
                    for hop in _hops(os.path.normpath(named)):
                        self._need(hop)


def _command_words(command: str) -> list[str]:
    """The words in command position of a shell command (best effort: a construct it does not
    understand yields fewer words, never an error)."""
    words: list[str] = []
    for line in command.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>()")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        try:
            tokens = list(lexer)
        except ValueError:
            continue
        expecting = True
        for token in tokens:
            if token in _SEPARATORS:
                expecting = True
            elif expecting:
                if _ASSIGNMENT.fullmatch(token) or token in _WRAPPERS:
                    continue
                if token.startswith("-") or token.replace(".", "").isdigit():
                    continue  # a wrapper's option or number (`timeout 60`)
                words.append(token)
                expecting = False
    return words


def _hops(path: str) -> list[str]:
    """Every path the kernel walks to reach `path`: `path` and, after each symbolic link met
    on the way (in any of its folders), the path it leads to."""
    out = [path]
    current = path
    for _ in range(_MAX_LINKS):
        parts = current.split("/")
        for i in range(1, len(parts)):
            prefix = "/".join(parts[: i + 1]) or "/"
            if os.path.islink(prefix):
                target = os.readlink(prefix)
                joined = os.path.join(os.path.dirname(prefix), target, *parts[i + 1 :])
                current = os.path.normpath(joined)
                out.append(current)
                break
        else:
            return out
    return out


def _venv_home(config: str) -> str | None:
    try:
        with open(config, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key, eq, value = line.partition("=")
                if eq and key.strip() == "home" and os.path.isabs(value.strip()):
                    return os.path.normpath(value.strip())
    except OSError:
        return None
    return None


def _head(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            data = handle.read(_SCRIPT_BYTES)
    except OSError:
        return b""
    return data if b"\0" not in data[:512] else data[:0]


def _within(path: str, roots: Iterable[str]) -> str | None:
    """The longest of `roots` that `path` is in (or is)."""
    best = None
    for root in roots:
        base = root.rstrip("/") or "/"
        if (path == base or path.startswith(base.rstrip("/") + "/")) and (
            best is None or len(base) > len(best)
        ):
            best = base
    return best


def _real(path: str) -> str:
    return os.path.realpath(path)
