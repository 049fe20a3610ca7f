"""Hosts: agent hosts (Claude Code, Codex): `setup`, the start-up text `prime`, the progress nudge
and its reminder memory."""
