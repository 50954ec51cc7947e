"""What every front end needs of a `host.SessionHost`, so that a front end is only its wire.

- `commands`: what a line that starts with `/` does — a built-in (`/compact`, `/init`), a custom command, an MCP
  prompt or a skill — the same set, in the same order, everywhere; and the list of them to offer.
- `setup`: the setup lines to show and the fail-closed rule for settings files that cannot be understood.
- `tally`: the bookkeeping of a turn — denied calls, the budget, the `system/init` facts.

The host imports nothing of this package; front ends import it.
"""
