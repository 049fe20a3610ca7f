"""The Model Context Protocol server (`taskfs mcp`); imported only by that command."""
