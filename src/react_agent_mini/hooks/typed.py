"""Typed hooks for library callers: subclass `AgentHooks`, override the events you care about, and pass an instance
as `Agent(hooks=...)` (as openai-agents' `RunHooksBase`).

    class Guard(AgentHooks):
        async def on_pre_tool_use(self, call: PreToolUseInput) -> HookOutput | None:
            if call.tool_name == "Bash" and "rm -rf" in call.tool_input.get("command", ""):
                return HookOutput(block=True, reason="Not here: move the files to trash/ instead.")
            return None

Each method gets its event as the struct `hooks.spec` declares for it and answers with a `HookOutput`
(`hooks.runner`; the fields that count there are `hooks.spec.EVENTS[event].answers`) or None: no opinion, the
session goes on as without the hook. Only the methods a subclass overrides are registered, so an event it does not
answer costs nothing. They are hooks like the settings files' command hooks and the SDK's callbacks, and run beside
them with the same semantics: each may take `timeout` seconds (60 by default), one that raises or answers something
else costs one warning line, and inside a subagent they get its events too (`agent_id` set, `on_subagent_stop`
instead of `on_stop`).
"""

from __future__ import annotations

from typing import Any

import msgspec

from .runner import HookEntry, HookHandler, HookOutput
from .spec import (
    DEFAULT_TIMEOUT,
    EVENTS,
    EventSpec,
    NotificationInput,
    PostToolUseInput,
    PreCompactInput,
    PreToolUseInput,
    SessionEndInput,
    SessionStartInput,
    StopInput,
    UserPromptSubmitInput,
)


class AgentHooks:
    """Override the `on_*` methods of the events to answer; each is a coroutine (`async def`)."""

    timeout: float = DEFAULT_TIMEOUT
    """Seconds each of these hooks may take before it is stopped (with one warning line)."""

    async def on_pre_tool_use(self, call: PreToolUseInput) -> HookOutput | None:
        """Before a tool call runs: its input is valid, the permission check comes next. Block it (`block=True`,
        `reason` for the model), decide its permission (`permission` `allow`, `ask` or `deny`, with
        `permission_reason`; deny rules still win over allow), run it with other input (`updated_input`), add text for
        the model after its result (`additional_context`), or end the turn (`continue_=False`, `stop_reason`)."""
        return None

    async def on_post_tool_use(self, call: PostToolUseInput) -> HookOutput | None:
        """After a tool call succeeded (`call.tool_response`). Replace what the model reads (`updated_output`), add
        to it (`additional_context`), object to it (`block=True`, `reason`: the model reads the objection), or end
        the turn (`continue_=False`, `stop_reason`)."""
        return None

    async def on_user_prompt_submit(self, prompt: UserPromptSubmitInput) -> HookOutput | None:
        """Before a prompt is sent. Add context before it (`additional_context`), or keep it from being sent
        (`block=True` or `continue_=False`, with `reason` or `stop_reason` for the user)."""
        return None

    async def on_stop(self, stop: StopInput) -> HookOutput | None:
        """The model answered without a tool call and the turn would end. `block=True` with a `reason` makes it go
        on, the reason as the next prompt (`stop.stop_hook_active` is then True, so answer None to let it end);
        `continue_=False` ends it whatever another hook says."""
        return None

    async def on_subagent_stop(self, stop: StopInput) -> HookOutput | None:
        """A subagent answered without a tool call (its report would be returned): as `on_stop`, for the subagent."""
        return None

    async def on_session_start(self, start: SessionStartInput) -> HookOutput | None:
        """A session starts (`start.source`: `startup`, `resume`, `clear`, or `compact` after a summary). Its
        `additional_context` goes before the first prompt (after the summary, for `compact`)."""
        return None

    async def on_session_end(self, end: SessionEndInput) -> HookOutput | None:
        """The session closes (`end.reason`); only a `system_message` counts (a line for the user)."""
        return None

    async def on_pre_compact(self, compact: PreCompactInput) -> HookOutput | None:
        """A summary is about to replace the history (`compact.trigger`: `manual` or `auto`); only a
        `system_message` counts."""
        return None

    async def on_notification(self, notification: NotificationInput) -> HookOutput | None:
        """Something to tell the user (`notification.notification_type`: `permission_prompt`, `idle_prompt`). It
        runs in the background: nothing waits for it; a `system_message` is shown at the next chance."""
        return None


def hook_entries(hooks: AgentHooks) -> list[HookEntry]:
    """One hook per event whose method `hooks` overrides."""
    entries: list[HookEntry] = []
    for event, spec in EVENTS.items():
        if getattr(type(hooks), spec.method) is getattr(AgentHooks, spec.method):
            continue
        label = f"{type(hooks).__name__}.{spec.method}"
        entries.append(HookEntry(event, _handler(hooks, spec), timeout=hooks.timeout, label=label))
    return entries


def _handler(hooks: AgentHooks, spec: EventSpec) -> HookHandler:
    method = getattr(hooks, spec.method)

    async def handler(payload: dict[str, Any]) -> HookOutput:
        answer: object = await method(msgspec.convert(payload, spec.payload))
        if answer is None:
            return HookOutput()
        if not isinstance(answer, HookOutput):
            raise TypeError(f"it answered {type(answer).__name__}, not a HookOutput or None")
        return answer

    return handler
