"""Evidence: running the acceptance check (and in which sandbox), recording judgements, what
completion rests on, and check requests answered by the watcher."""
