"""Hooks, the session's extension points: code that runs at fixed points of a session and may steer it, with
Claude Code's semantics. One package holds them all:

- `spec` declares every point once (as llm's `hookspecs.py`): its name — Claude Code's string events,
  `PreToolUse`, `PostToolUse`, `UserPromptSubmit`, `Stop`, ... — the fields its event carries (one struct each),
  what an answer may say there, and where it fires;
- `runner` — a session's registered hooks (`Hooks`, `HookEntry`), an answer (`HookOutput`), and how one event's
  answers combine (`HookVerdict`);
- `typed` — `AgentHooks`, the typed hook class a library caller subclasses (`Agent(hooks=...)`, as openai-agents'
  `RunHooksBase`): one method per point, its event as the struct `spec` declares;
- `command/` — the settings files' command hooks: reading them, running them, the files they run;
- `session` — a session's hooks put together, and the events fired through other parts' seams (PreCompact,
  Notification).

String-keyed hooks (settings files, the Claude Agent SDK's callbacks over stream-json) and typed ones all end up
as `HookEntry`s of one `Hooks`. The tool runner, the loop, the session and the host fire the events; the tool
runner is handed its `Hooks` and imports this package only for the type checker. The names most code needs are
here: `from react_agent_mini.hooks import Hooks, HookEntry, HookOutput`.
"""

from __future__ import annotations

from .runner import HookEntry, HookHandler, HookOutput, Hooks, HookVerdict
from .spec import DEFAULT_TIMEOUT, HOOK_EVENTS, HookEvent

__all__ = [
    "DEFAULT_TIMEOUT",
    "HOOK_EVENTS",
    "HookEntry",
    "HookEvent",
    "HookHandler",
    "HookOutput",
    "HookVerdict",
    "Hooks",
]
