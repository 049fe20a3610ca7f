"""`taskfs a2a`: the repository as an Agent2Agent (A2A 1.0) agent, and tasks delegated to one.

Built on the official `a2a-sdk`, so the wire is the standard's. Nothing here holds a rule of
the ledger: every call becomes the same `taskfs.api` call as the command line's. Imported
only by the `a2a` commands, never on another command's start-up path.
"""
