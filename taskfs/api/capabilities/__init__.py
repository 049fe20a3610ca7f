"""Capabilities: who an agent is (its signing keys) and what it may do (`bind`)."""
