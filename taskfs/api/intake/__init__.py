"""Intake: envelope files dropped into the tasks folder become tasks (the watcher's intake)."""
