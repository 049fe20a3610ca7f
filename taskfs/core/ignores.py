"""The usual build outputs: what `taskfs init --gitignore` adds to `.gitignore`, and what the
completion gate recognises in a list of uncommitted files, so that its advice is to ignore them
rather than commit them (issue 38: `__pycache__/*.pyc` under an owned glob).

Pure: texts in, texts out. A pattern ending in `/` names a folder (any of a path's folders), the
others a file name, as `.gitignore` reads them.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

BUILD_OUTPUTS: tuple[str, ...] = (
    "__pycache__/",
    "*.py[cod]",
    ".pytest_cache/",
    ".mypy_cache/",
    ".ruff_cache/",
    ".tox/",
    "*.egg-info/",
    ".venv/",
    "node_modules/",
    "dist/",
    "build/",
    "target/",
    ".coverage",
)


def is_build_output(path: str) -> bool:
    """Whether a repository-relative path lies in a usual build output, or is one."""
    parts = path.strip("/").split("/")
    for pattern in BUILD_OUTPUTS:
        if pattern.endswith("/"):
            if any(fnmatchcase(part, pattern[:-1]) for part in parts[:-1]):
                return True
        elif fnmatchcase(parts[-1], pattern):
            return True
    return False


def missing(gitignore: str) -> list[str]:
    """The usual build outputs a `.gitignore` with this text does not name, line for line."""
    named = {line.strip() for line in gitignore.splitlines()}
    return [p for p in BUILD_OUTPUTS if p not in named and p.rstrip("/") not in named]
