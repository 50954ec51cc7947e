"""The hooks of one session (`Hooks`): the registered handlers, and running those of an event to one verdict.

A hook is a handler registered for an event (`hooks.spec` declares them: `PreToolUse`, `PostToolUse`, `Stop`, ...)
with a matcher on tool names. It receives the event's JSON (Claude Code's field names: `session_id`, `cwd`,
`hook_event_name`, `tool_name`, `tool_input`, ...) and answers with Claude Code's hook output (`continue`,
`stopReason`, `decision`, `reason`, `systemMessage`, `hookSpecificOutput` with `permissionDecision`,
`updatedInput`, `additionalContext`). Handlers come from whoever drives the session — command hooks from
settings files (`hooks.command`), the Claude Agent SDK's hook callbacks over stream-json, a library's
`AgentHooks` (`hooks.typed`) — and all feed this one mechanism. Matching handlers of one event run concurrently;
their answers are combined into one `HookVerdict` (deny beats ask beats allow; any block blocks). A handler that
fails or exceeds its timeout costs one warning and has no effect. Every text an answer carries (context, reasons,
messages) is cut to `Hooks.text_tokens()` as it comes in: a hook may print megabytes, and what it says reaches the
model's window and every later request (compact/hook_context.py).
"""

from __future__ import annotations

import asyncio
import copy
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, TypeAlias

import msgspec

from .spec import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
from .spec import HOOK_EVENTS as HOOK_EVENTS
from .spec import HookEvent as HookEvent

PermissionVerdict: TypeAlias = Literal["allow", "deny", "ask", ""]


class HookOutput(msgspec.Struct, frozen=True):
    """One handler's answer, read from Claude Code's JSON hook output."""

    continue_: bool = True
    """False: stop the agent (`stop_reason` is shown)."""
    stop_reason: str = ""
    block: bool = False
    """`decision: "block"` (or a command hook's exit code 2): refuse what the event is about."""
    reason: str = ""
    """Why (the model reads it for tool events and Stop; the user for UserPromptSubmit)."""
    system_message: str = ""
    """A line for the user."""
    permission: PermissionVerdict = ""
    """PreToolUse's `permissionDecision`."""
    permission_reason: str = ""
    updated_input: Mapping[str, Any] | None = None
    """PreToolUse: the input the tool runs with instead."""
    additional_context: str = ""
    """Text added for the model (after a tool result, or before the user's prompt)."""
    updated_output: str | None = None
    """PostToolUse: the tool result the model sees instead."""

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> HookOutput:
        """Claude Code's hook output object; unknown fields are ignored, wrong types treated as absent."""
        specific = raw.get("hookSpecificOutput")
        specific = specific if isinstance(specific, Mapping) else {}
        decision = specific.get("permissionDecision")
        legacy = raw.get("decision")  # older PreToolUse hooks said approve/block here
        permission: PermissionVerdict = decision if decision in ("allow", "deny", "ask") else ""
        if not permission and legacy == "approve":
            permission = "allow"
        updated_input = specific.get("updatedInput")
        updated_output = specific.get("updatedToolOutput", specific.get("updatedMCPToolOutput"))
        if updated_output is not None and not isinstance(updated_output, str):
            import json

            updated_output = json.dumps(updated_output, ensure_ascii=False)
        return cls(
            continue_=raw.get("continue") is not False,
            stop_reason=_text(raw.get("stopReason")),
            block=legacy == "block",
            reason=_text(raw.get("reason")),
            system_message=_text(raw.get("systemMessage")),
            permission=permission,
            permission_reason=_text(specific.get("permissionDecisionReason")),
            updated_input=dict(updated_input) if isinstance(updated_input, Mapping) else None,
            additional_context=_text(specific.get("additionalContext")),
            updated_output=updated_output,
        )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


HookHandler: TypeAlias = Callable[[dict[str, Any]], Awaitable[HookOutput]]
"""Runs one hook: the event's JSON in, its answer out."""


class HookEntry(msgspec.Struct, frozen=True):
    """One registered hook."""

    event: HookEvent
    handler: HookHandler
    matcher: str = ""
    """Tool-name pattern for tool events: empty or `*` matches all, `Edit|Write` exact alternatives, else a regex
    searched for in the name (Claude Code's `RegExp.test`: `^mcp__` matches every MCP tool)."""
    timeout: float = DEFAULT_TIMEOUT
    label: str = "hook"
    """How warnings name it (`SDK hook hook_0`, a command line)."""
    source: str = ""
    """Where it was defined, for listings (`.claude/settings.json`, `SDK`); empty: the caller's own."""

    def matches(self, tool_name: str | None) -> bool:
        if tool_name is None or self.matcher in ("", "*"):
            return True
        if re.fullmatch(r"[\w|-]+", self.matcher):
            return tool_name in self.matcher.split("|")
        try:
            return re.search(self.matcher, tool_name) is not None
        except re.error:
            return False


class HookVerdict(msgspec.Struct):
    """The combined answer of every hook that ran for one event."""

    ran: int = 0
    block: bool = False
    reasons: list[str] = msgspec.field(default_factory=list)
    """The reasons of the answers that blocked (a reason without a block explains nothing)."""
    permission: PermissionVerdict = ""
    permission_reason: str = ""
    updated_input: Mapping[str, Any] | None = None
    context: list[str] = msgspec.field(default_factory=list)
    stop: bool = False
    stop_reason: str = ""
    messages: list[str] = msgspec.field(default_factory=list)
    """Lines for the user (system messages, warnings about failed hooks)."""
    updated_output: str | None = None

    @property
    def reason(self) -> str:
        return " ".join(self.reasons)

    def add(self, output: HookOutput) -> None:
        self.ran += 1
        if output.block:
            self.block = True
            if output.reason:
                self.reasons.append(output.reason)
        rank = {"": 0, "allow": 1, "ask": 2, "deny": 3}
        if rank[output.permission] > rank[self.permission]:
            self.permission = output.permission
            self.permission_reason = output.permission_reason or output.reason
        if output.updated_input is not None:
            self.updated_input = output.updated_input
        if output.additional_context:
            self.context.append(output.additional_context)
        if not output.continue_:
            self.stop = True
            self.stop_reason = self.stop_reason or output.stop_reason
        if output.system_message:
            self.messages.append(output.system_message)
        if output.updated_output is not None:
            self.updated_output = output.updated_output


class Hooks:
    """The hooks of one session, and the fields every event's JSON carries."""

    def __init__(self, entries: Sequence[HookEntry] = (), base: Callable[[], dict[str, Any]] | None = None) -> None:
        self.entries: list[HookEntry] = list(entries)
        self.base = base or dict
        """The common fields (`session_id`, `transcript_path`, `cwd`, `permission_mode`)."""
        self.late: list[str] = []
        """Lines for the user from hooks that ran in the background (Notification), shown at the next chance."""
        self.background: set[asyncio.Future[HookVerdict]] = set()
        self.text_tokens: Callable[[], int] = _default_text_tokens
        """Estimated tokens each text of an answer may have (the session sets it from the model's window)."""

    def derived(self, **fields: Any) -> Hooks:
        """The same hooks (registered now or later) whose events also carry `fields` (a subagent's `agent_id`)."""
        view = Hooks(base=lambda: {**self.base(), **fields})
        view.entries = self.entries
        view.late = self.late
        view.background = self.background
        view.text_tokens = lambda: self.text_tokens()
        return view

    def take_late(self) -> list[str]:
        """The lines of `late`, removed."""
        lines = list(self.late)
        del self.late[:]
        return lines

    def fire(self, event: HookEvent, fields: Mapping[str, Any], tool_name: str | None = None) -> None:
        """Run `event`'s hooks in the background, waited for by nothing (a desktop notifier must not hold up the
        prompt it announces); what they say joins `late`. Needs a running event loop."""
        if not self.active(event, tool_name):
            return
        task = asyncio.ensure_future(self.run(event, fields, tool_name))
        self.background.add(task)
        task.add_done_callback(self._fired)

    def _fired(self, task: asyncio.Future[HookVerdict]) -> None:
        self.background.discard(task)
        if not task.cancelled() and task.exception() is None:
            self.late.extend(task.result().messages)

    def cancel_background(self) -> None:
        """Stop the hooks still running in the background (the session is closing)."""
        for task in list(self.background):
            task.cancel()

    def add(self, entry: HookEntry) -> None:
        self.entries.append(entry)

    def active(self, event: HookEvent, tool_name: str | None = None) -> bool:
        return any(e.event == event and e.matches(tool_name) for e in self.entries)

    async def run(self, event: HookEvent, fields: Mapping[str, Any], tool_name: str | None = None) -> HookVerdict:
        """Run every hook of `event` that matches `tool_name`, concurrently; their combined verdict. For events
        without a tool, `tool_name` is what their matchers match instead: SessionStart's source, PreCompact's
        trigger, Notification's type (None: every hook of the event)."""
        verdict = HookVerdict()
        matching = [e for e in self.entries if e.event == event and e.matches(tool_name)]
        if not matching:
            return verdict
        payload = {**self.base(), "hook_event_name": event, **fields}
        # each handler gets its own copy, as a command hook gets JSON: what one does to it reaches neither the
        # others nor the history (a tool_input shares its lists and dicts with the tool_use block)
        outcomes = await asyncio.gather(*(_run_one(e, copy.deepcopy(payload)) for e in matching))
        from ..compact.hook_context import fit  # not at the top: compact/ imports tools/, which import hooks

        tokens = self.text_tokens()
        for outcome in outcomes:
            if isinstance(outcome, str):
                verdict.messages.append(fit(outcome, tokens))
            else:
                verdict.add(_fitted(outcome, tokens))
        return verdict


def _default_text_tokens() -> int:
    """The budget for the default window (a session sets its model's)."""
    from ..compact.hook_context import budget_tokens
    from ..compact.tokens import DEFAULT_CONTEXT_WINDOW

    return budget_tokens(DEFAULT_CONTEXT_WINDOW)


def _fitted(output: HookOutput, tokens: int) -> HookOutput:
    """`output` with each text it carries for the model or the user cut to `tokens` (the same object when none
    is over: the common case costs a length check)."""
    from ..compact.hook_context import fit

    fields = ("stop_reason", "reason", "system_message", "permission_reason", "additional_context")
    changed = {name: fitted for name in fields if (fitted := fit(text := getattr(output, name), tokens)) is not text}
    return msgspec.structs.replace(output, **changed) if changed else output


async def _run_one(entry: HookEntry, payload: dict[str, Any]) -> HookOutput | str:
    """The handler's output, or a warning line when it failed."""
    failed = f"warning: {entry.event} {entry.label} failed"
    try:
        output = await asyncio.wait_for(entry.handler(payload), entry.timeout)
    except TimeoutError:
        return f"warning: {entry.event} {entry.label} took longer than {entry.timeout:g} s and was stopped"
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is None or task.cancelling():
            raise  # we are being cancelled (the turn was interrupted): so are the hooks
        return f"{failed}: it was cancelled"  # something inside the handler was cancelled, not us
    except Exception as exc:  # a broken hook costs one line, never the session
        return f"{failed}: {type(exc).__name__}: {exc}"
    if not isinstance(output, HookOutput):  # e.g. a library hook that only logs and returns None
        return f"{failed}: it answered {type(output).__name__}, not a HookOutput"
    return output
