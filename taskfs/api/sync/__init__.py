"""Sync: the ledger exchanged with other ledgers: a git remote (`sync`), and tasks mirrored over
A2A with their event streams."""
