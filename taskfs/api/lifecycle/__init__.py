"""Lifecycle: transitions (claim, move, refuse, complete) and who signs them, reassigning and
retrying, what an agent resumes, stuck work and the sender's view of it, and transitions
superseded by forks."""
