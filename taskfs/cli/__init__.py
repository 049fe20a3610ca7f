"""The `taskfs` command. `--version` answers before anything heavy is imported."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        from taskfs import __version__

        sys.stdout.write(f"taskfs {__version__}\n")
        raise SystemExit(0)
    from taskfs.cli.app import run

    raise SystemExit(run(args))
