"""Trust: what a folder's own configuration may do before its user agreed to it.

A cloned repository is written by someone else. Until the user trusts the folder, ram reads nothing from the
project's configuration that can run code, reach the network or widen permissions:

- hooks in `.claude/settings.json`, `.claude/settings.local.json` and `.agents/settings.json`;
- MCP servers in `.mcp.json`;
- allow rules and a `defaultMode` of `acceptEdits` in those settings files;
- `allowed-tools` in the project's custom commands.

What only narrows still applies untrusted: deny and ask rules, `defaultMode: plan`, the sandbox settings a project
file may tighten, and CLAUDE.md / AGENTS.md, memory, skills, commands and agents as text.

Each of those parts is a `TrustItem` with a digest of what it says (`items.py`). Trusting a folder records the
digests of its parts at that moment in the user's own config directory, never in the project (`store.py`), so a
`git pull` that adds a hook or changes a server's command line brings a part nobody approved: it is left out, and
the REPL asks about it at the next start. `TrustGate` (`gate.py`) is what the loaders ask, part by part, and it
remembers what it left out for the one line a session starts with. Every loader of project configuration imports
this package, so it imports none of them: listing a folder's parts for the REPL's question and `ram trust` (which
runs those loaders) is `trust_review/`, above them.

A user can also trust whole trees without being asked: `{"trustedFolders": ["~/work"]}` in the user settings
file trusts those folders and everything below them, whatever their configuration says (for CI machines and the
user's own projects).
"""
