"""taskfs: task envelopes for delegating work between agents, kept as files in git."""

__version__ = "0.1.0"
