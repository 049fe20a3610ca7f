"""Render the board of the demo repository in headless Chromium and keep a screenshot.

Run: `python bench/board_screenshot.py [OUT]` (default docs/board.png). It builds the demo
repository (`taskfs demo --keep`, grown by tests/demo_board.py into ten tasks in seven
states: ready, blocked, dead and stale ones, one failing its check, one handed on), writes
`taskfs board --html`, and has Chromium take the picture in a window 1400 px wide, the width
the board is made to fit. Needs chromium (apt-get install chromium) or $TASKFS_CHROMIUM.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import browser, demo_board  # noqa: E402  (after the path is set)


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "board.png"
    repo = demo_board.build()
    try:
        page = repo.parent / "board.html"
        subprocess.run(
            [sys.executable, "-m", "taskfs", "board", "--html", str(page)], cwd=repo, check=True
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        browser.screenshot(page, out, width=1400, height=1100)
    finally:
        demo_board.remove(repo)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
