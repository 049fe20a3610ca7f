"""The `taskfs` command. `--version`, the nudge hook and the listings (`ls`/`ready --json`)
answer before anything heavy is imported."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    if argv is not None:
        raise SystemExit(run(argv))
    code = run(sys.argv[1:])
    if _answered_fast:
        _end_now(code)
    raise SystemExit(code)


_answered_fast = False  # the fast path answered this command line (`taskfs.cli.fast`)


def _end_now(code: int) -> None:
    """End the `taskfs` process as soon as its output is out. A command of the fast path
    (ls, ready, show, claim, move, refuse, complete, new, send) leaves no thread, exit handler
    or open file behind, so tearing the interpreter down, freeing the ledger's rows and the
    models one object at a time, buys nothing and costs a short command up to a fifth of its
    time (issue 19). Anything unusual about the output (a closed pipe) takes Python's own
    exit, which says so."""
    import os

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        return
    os._exit(code)


def run(args: list[str]) -> int:
    """Run one command line; its exit status. The paths that skip click come first."""
    global _answered_fast  # noqa: PLW0603 - one command line at a time
    _answered_fast = False
    if args == ["--version"]:
        from taskfs import __version__

        sys.stdout.write(f"taskfs {__version__}\n")
        return 0
    if args[:1] == ["prime"] and "--hook" in args:
        # Run as every session starts: kept off the command-line framework, as the nudge.
        from taskfs.cli import hook

        code = hook.main(args[1:], "prime")
        if code is not None:
            return code
    if args[:1] in (["inbox"], ["prime"]) and "--hook" not in args:
        # An agent's view, asked on every turn: the answer stored the last time, when it holds.
        from taskfs.cli import answered

        code = answered.fast(args)
        if code is not None:
            _answered_fast = True
            return code
    if args[:1] == ["nudge"] and "--hook" in args:
        # Run after every tool call of an agent: kept off the command-line framework.
        from taskfs.cli import hook

        code = hook.main(args[1:])
        if code is not None:
            return code
    import gc

    from taskfs.cli import fast

    # A short command makes tens of thousands of objects (the ledger's rows) and no garbage
    # worth a collection: each collection would walk all of them again (a tenth of a `new` at
    # 5,000 tasks). Memory is given back by reference counting, and at exit.
    collecting = gc.isenabled()
    gc.disable()
    try:
        code = fast.run(args)
    finally:
        if collecting:
            gc.enable()
    if code is not None:
        _answered_fast = True
        return code
    from taskfs.cli.app import run as run_click

    return run_click(args)
