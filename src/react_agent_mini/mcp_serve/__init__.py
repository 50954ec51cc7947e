"""`ram mcp serve`: ram as an MCP server over stdio, as `claude mcp serve` and `codex mcp-server` are — a front end
built only on the session host and its kit (`host`, `kit/`).

- `main`: the command line and the stdio server's life.
- `server`: the two tools — `ram` (run a task in a new session) and `ram_reply` (continue one by its id).
- `runs`: one turn on a host, as the tool's result.
- `asker`: permission questions asked of the client by MCP elicitation.
"""
