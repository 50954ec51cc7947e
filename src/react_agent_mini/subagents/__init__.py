"""Subagents: the `Agent` tool (Claude Code's `Task`), which runs a fresh loop with its own context for one task and
hands its final report back as the tool result.

- `definitions`: the agent types — the built-in `general-purpose` and read-only `Explore`, Claude Code's
  `.claude/agents/*.md` and `.agents/agents/*.md` (and the user's `agents/`), and those a driving program gives.
- `tool`: the Agent tool the model calls (`Task` is accepted as its name too).
- `run`: one subagent's run — its tools (a subset of the session's, never Agent itself: depth 1), the session's
  permission policy and asker, its hooks (SubagentStop when it stops), its transcript beside the session's, its
  events passed on as `ToolProgress`.
"""
