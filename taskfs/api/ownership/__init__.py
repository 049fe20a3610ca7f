"""Ownership: who owns which paths (`owners`), the commit guard and its git hook."""
