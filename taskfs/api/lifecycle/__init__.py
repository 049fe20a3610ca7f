"""Lifecycle: transitions (claim, move, refuse, complete) and who signs them, reassigning, what an
agent resumes, stuck work, and transitions superseded by forks."""
