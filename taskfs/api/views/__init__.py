"""Views: answers shaped for people and agents: task documents, agent rows, entries, reports."""
