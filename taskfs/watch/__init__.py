"""`taskfs watch`: the tasks folder's changes turned into api calls.

Events from the file system are hints; the truth is a rescan of the tasks folder (at start,
after events, and periodically). `reconcile` is one such pass and holds no thread, so tests
drive it directly; `loop` runs passes when hints arrive, until a signal asks it to stop.
"""
