"""The HTTP doors (`a2a serve`, `mcp --http`): who may call them (`tokens`), which requests get
in (`guard`, on `taskfs.core.doors`), and where they listen (`listening`)."""
