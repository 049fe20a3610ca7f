"""Review: what git history says about the ledger: `audit`, its checks of authority, and `review`
of a range of commits."""
