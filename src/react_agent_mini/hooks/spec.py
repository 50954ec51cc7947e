"""Every hook point of a session, declared once: its name, the fields its event carries, what an answer may say
there, and where it fires (as llm's `hookspecs.py` declares its plugin hooks).

Claude Code names the points by strings (`"PreToolUse"`, ...): the settings files' command hooks and the Claude
Agent SDK's hook callbacks register under those names and get the event as JSON (a dict with the fields below).
A library caller may instead subclass `hooks.typed.AgentHooks` and get each event as one of the structs below
(`PreToolUseInput`, ...). Both end up as `HookEntry`s of one `Hooks` (`hooks.runner`), and every answer is a
`HookOutput` (`hooks.runner`), whoever gave it.

Every event carries `session_id`, `transcript_path`, `cwd`, `permission_mode` and `hook_event_name`; inside a
subagent also `agent_id`, `agent_type` and `agent_transcript_path`. The events and where they fire:

| event            | its own fields                            | a matcher matches | fired by                          |
|------------------|-------------------------------------------|-------------------|-----------------------------------|
| PreToolUse       | tool_name, tool_input, tool_use_id        | the tool's name   | the tool runner, before the call  |
| PostToolUse      | ... and tool_response (content, is_error) | the tool's name   | the tool runner, after a success  |
| UserPromptSubmit | prompt                                    | (nothing)         | the session, before the prompt    |
| Stop             | stop_hook_active                          | (nothing)         | the loop, when the model stops    |
| SubagentStop     | stop_hook_active                          | (nothing)         | a subagent's loop, when it stops  |
| SessionStart     | source: startup, resume, clear, compact   | the source        | the host; `compact`: after summary|
| SessionEnd       | reason: clear, prompt_input_exit, other   | the reason        | the host, when it closes          |
| PreCompact       | trigger: manual, auto; custom_instructions| the trigger       | the compaction, before a summary  |
| Notification     | message, notification_type                | the type          | a permission prompt; REPL idle    |

What an answer says counts only where `EVENTS[event].answers` names it; the rest is ignored there.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec

HookEvent: TypeAlias = Literal[
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
]
HOOK_EVENTS: tuple[HookEvent, ...] = (
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
)
DEFAULT_TIMEOUT = 60.0
"""Seconds a hook may take (Claude Code's default)."""


# ---- what each event carries ----


class HookInput(msgspec.Struct, frozen=True, kw_only=True):
    """The fields every event carries (Claude Code's names)."""

    hook_event_name: HookEvent
    session_id: str = ""
    transcript_path: str = ""
    """The session's transcript (JSONL); empty when it writes none."""
    cwd: str = ""
    """The workspace."""
    permission_mode: str = ""
    """`default`, `acceptEdits`, `plan` or `bypassPermissions`."""
    agent_id: str = ""
    """Inside a subagent: its id (empty in the session itself)."""
    agent_type: str = ""
    """Inside a subagent: its agent type (`general-purpose`, `Explore`, a `.claude/agents` name)."""
    agent_transcript_path: str = ""
    """Inside a subagent: its own transcript."""


class PreToolUseInput(HookInput, frozen=True, kw_only=True):
    """A tool call about to run: its input is valid for the tool; the permission check comes next."""

    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str


class ToolResponse(msgspec.Struct, frozen=True):
    """What a tool call produced, as the model would read it."""

    content: str
    is_error: bool = False


class PostToolUseInput(HookInput, frozen=True, kw_only=True):
    """A tool call that ran and succeeded."""

    tool_name: str
    tool_input: dict[str, Any]
    """The input it ran with (a PreToolUse hook's or the permission answer's, when they changed it)."""
    tool_use_id: str
    tool_response: ToolResponse


class UserPromptSubmitInput(HookInput, frozen=True, kw_only=True):
    """A prompt about to be sent to the model."""

    prompt: str


class StopInput(HookInput, frozen=True, kw_only=True):
    """The model answered without calling a tool: the turn (Stop) or the subagent's task (SubagentStop) ends."""

    stop_hook_active: bool = False
    """True when this turn already went on because a Stop hook blocked: a hook that always blocks loops."""


class SessionStartInput(HookInput, frozen=True, kw_only=True):
    """A session (or a new conversation in it) begins."""

    source: Literal["startup", "resume", "clear", "compact"]
    """`compact`: a summary has just replaced the history."""


class SessionEndInput(HookInput, frozen=True, kw_only=True):
    """The session closes (or `/clear` ends its conversation)."""

    reason: str
    """`clear`, `prompt_input_exit` (the REPL was left), or `other`."""


class PreCompactInput(HookInput, frozen=True, kw_only=True):
    """A summary is about to replace the history."""

    trigger: Literal["manual", "auto"]
    """`manual`: `/compact`; `auto`: the window is filling."""
    custom_instructions: str = ""
    """What the user asked the summary to focus on (`/compact <focus>`)."""


class NotificationInput(HookInput, frozen=True, kw_only=True):
    """Something the user may want to be told of; the session does not wait for the answer."""

    message: str
    notification_type: str
    """`permission_prompt` (a permission question is shown) or `idle_prompt` (the REPL waited for input)."""


# ---- what an answer may say, and where each event fires ----

Answer: TypeAlias = Literal[
    "continue_",
    "stop_reason",
    "block",
    "reason",
    "system_message",
    "permission",
    "permission_reason",
    "updated_input",
    "additional_context",
    "updated_output",
]
"""A field of `HookOutput`."""


class EventSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One hook point."""

    name: HookEvent
    method: str
    """The `AgentHooks` method that answers it."""
    payload: type[HookInput]
    """The struct of its event (the fields its JSON carries)."""
    matcher: str
    """What a matcher is matched against ("" : the event has none, every hook of it runs)."""
    fires: str
    """Where it fires."""
    answers: frozenset[Answer]
    """The fields of an answer that count here (`system_message` everywhere: a line for the user)."""
    exit_2_blocks: bool = False
    """A command hook's exit code 2 blocks (stderr is the reason); elsewhere it only shows stderr."""
    stdout_is_context: bool = False
    """A command hook's plain stdout (not a JSON object) is context for the model."""


_TOOL_STOP: frozenset[Answer] = frozenset({"continue_", "stop_reason", "system_message"})

EVENTS: dict[HookEvent, EventSpec] = {
    spec.name: spec
    for spec in (
        EventSpec(
            name="PreToolUse",
            method="on_pre_tool_use",
            payload=PreToolUseInput,
            matcher="tool_name",
            fires="the tool runner, after the input is validated and before the permission check (tools/runner.py)",
            answers=_TOOL_STOP
            | {"block", "reason", "permission", "permission_reason", "updated_input", "additional_context"},
            exit_2_blocks=True,
        ),
        EventSpec(
            name="PostToolUse",
            method="on_post_tool_use",
            payload=PostToolUseInput,
            matcher="tool_name",
            fires="the tool runner, after a call that succeeded (tools/runner.py)",
            answers=_TOOL_STOP | {"block", "reason", "additional_context", "updated_output"},
            exit_2_blocks=True,
        ),
        EventSpec(
            name="UserPromptSubmit",
            method="on_user_prompt_submit",
            payload=UserPromptSubmitInput,
            matcher="",
            fires="the session, before the prompt joins the history (session.py)",
            answers=frozenset({"block", "reason", "continue_", "stop_reason", "additional_context", "system_message"}),
            exit_2_blocks=True,
            stdout_is_context=True,
        ),
        EventSpec(
            name="Stop",
            method="on_stop",
            payload=StopInput,
            matcher="",
            fires="the loop, when the model answers without a tool call (loop.py)",
            answers=frozenset({"block", "reason", "continue_", "system_message"}),
            exit_2_blocks=True,
        ),
        EventSpec(
            name="SubagentStop",
            method="on_subagent_stop",
            payload=StopInput,
            matcher="",
            fires="a subagent's loop, when it answers without a tool call (loop.py, subagents/run.py)",
            answers=frozenset({"block", "reason", "continue_", "system_message"}),
            exit_2_blocks=True,
        ),
        EventSpec(
            name="SessionStart",
            method="on_session_start",
            payload=SessionStartInput,
            matcher="source",
            fires="the host when it starts, on /clear and /resume (host.py); after a summary (hooks/session.py)",
            answers=frozenset({"additional_context", "system_message"}),
            stdout_is_context=True,
        ),
        EventSpec(
            name="SessionEnd",
            method="on_session_end",
            payload=SessionEndInput,
            matcher="reason",
            fires="the host when it closes, and on /clear (host.py)",
            answers=frozenset({"system_message"}),
        ),
        EventSpec(
            name="PreCompact",
            method="on_pre_compact",
            payload=PreCompactInput,
            matcher="trigger",
            fires="the compaction, before a summary is made (hooks/session.py)",
            answers=frozenset({"system_message"}),
        ),
        EventSpec(
            name="Notification",
            method="on_notification",
            payload=NotificationInput,
            matcher="notification_type",
            fires="a permission prompt (hooks/session.py) and the REPL waiting for input (ui/repl.py); in the "
            "background",
            answers=frozenset({"system_message"}),
        ),
    )
}
"""Every hook point, by name (in `HOOK_EVENTS`' order)."""
