"""The tools an agent makes progress with, as each host names them in a hook's `tool_name`.

The progress nudge runs after these only: setup writes them as the hook's matcher
(`taskfs.core.hostconfig`), and the hook itself answers any other tool at once
(`taskfs.cli.hook`), before it imports anything more, since it runs after every such call.
Claude Code's edit and shell tools; Codex's shell (`Bash`) and its edit tool, `apply_patch`.
"""

from __future__ import annotations

PROGRESS_TOOLS: dict[str, tuple[str, ...]] = {
    "claude": ("Edit", "MultiEdit", "Write", "NotebookEdit", "Bash"),
    "codex": ("Bash", "apply_patch"),
}
