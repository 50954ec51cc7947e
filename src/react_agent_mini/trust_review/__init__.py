"""Reviewing a folder's trust: what trusting it would enable, shown for the REPL's question and `ram trust`.

The inventory (`inventory.py`) runs the loaders of project configuration — permissions, hooks, MCP servers,
custom commands — with a gate that approves nothing, so it sits above all of them; `trust/` (the items, the gate
they ask, the store) sits below them. `cli.py` is `ram trust`.
"""
