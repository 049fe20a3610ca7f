"""The `taskfs` command. `--version`, the nudge hook and the listings (`ls`/`ready --json`)
answer before anything heavy is imported."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    raise SystemExit(run(sys.argv[1:] if argv is None else argv))


def run(args: list[str]) -> int:
    """Run one command line; its exit status. The paths that skip click come first."""
    if args == ["--version"]:
        from taskfs import __version__

        sys.stdout.write(f"taskfs {__version__}\n")
        return 0
    if args[:1] == ["nudge"] and "--hook" in args:
        # Run after every tool call of an agent: kept off the command-line framework.
        from taskfs.cli import hook

        code = hook.main(args[1:])
        if code is not None:
            return code
    from taskfs.cli import fast

    code = fast.run(args)
    if code is not None:
        return code
    from taskfs.cli.app import run as run_click

    return run_click(args)
