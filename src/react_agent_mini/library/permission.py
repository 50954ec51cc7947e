"""The library's say in what runs: `can_use_tool(tool_name, tool_input)` answering `Allow()` or `Deny(...)`.

The callback is the session's asker, so it is consulted exactly where a person at the REPL would be asked: after
PreToolUse hooks, deny rules, ask rules, the permission mode and allow rules (the Claude Agent SDK's order). Reads
inside the workspace, calls an allow rule covers, and everything in bypassPermissions mode never reach it; a deny
rule or plan mode refuses before it is asked.

- `Allow()` runs the call; `Allow(updated_input={...})` runs it with that input instead (validated again).
- `Deny("reason")` refuses the call and the turn goes on: the model reads the reason as the call's result.
  `Deny("reason", interrupt=True)` also ends the turn (the calls after it are skipped).
- A callback that raises, or returns something else, denies that call with a message naming what happened; the
  turn goes on. A plain function runs in a worker thread (it may block, e.g. on `input()`); an async one is awaited.
- Without a callback, what would be asked is denied, as in headless runs, and the message says how to allow it.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeAlias

import msgspec

from ..function_tools import is_async_callable
from ..permissions import policy
from ..permissions.policy import Asker, PermissionRequest


class Allow(msgspec.Struct, frozen=True):
    """`can_use_tool`'s answer: run the call."""

    updated_input: Mapping[str, Any] | None = None
    """Run it with this input instead of the model's (checked against the tool's schema again); None: as sent."""


class Deny(msgspec.Struct, frozen=True):
    """`can_use_tool`'s answer: do not run the call."""

    message: str = ""
    """What the model reads as the call's result (why not, what to do instead)."""
    interrupt: bool = False
    """True: also end the turn (the remaining calls are skipped, the result says `aborted`)."""


PermissionResult: TypeAlias = Allow | Deny
CanUseTool: TypeAlias = Callable[[str, dict[str, Any]], PermissionResult | Awaitable[PermissionResult]]
"""`can_use_tool(tool_name, tool_input)`, sync or async."""


class PermissionAsked(msgspec.Struct, frozen=True):
    """Event: `can_use_tool` is being consulted about a call (the turn waits for its answer)."""

    tool_name: str
    tool_input: Mapping[str, Any]
    """The input as the model sent it (or as a PreToolUse hook changed it)."""
    tool_use_id: str
    summary: str
    """One line saying what would happen: `Edit src/app.py`, `Run: git push`, `Call notify {"to": "ops"}`."""
    reason: str
    """Why it needs asking: `it changes files`, `the ask rule Bash(git push:*) ... requires it`."""


class PermissionDecided(msgspec.Struct, frozen=True):
    """Event: `can_use_tool` answered (or failed, which denies)."""

    tool_name: str
    tool_use_id: str
    decision: PermissionResult
    """What was decided (for a callback that failed: the `Deny` the model reads)."""
    error: str = ""
    """Set when the callback raised or returned something other than Allow/Deny: what happened."""


Emit: TypeAlias = Callable[[PermissionAsked | PermissionDecided], None]


def callback_asker(callback: CanUseTool, emit: Emit) -> Asker:
    """The session's asker for a `can_use_tool` callback; `emit` is told before and after each consultation. The
    callback is asked one call at a time (subagents running in parallel must not make two `input()`s race)."""
    is_async = is_async_callable(callback)
    one_at_a_time = asyncio.Lock()

    async def ask(request: PermissionRequest) -> policy.Decision:
        async with one_at_a_time:
            return await consult(request)

    async def consult(request: PermissionRequest) -> policy.Decision:
        emit(PermissionAsked(request.tool, request.args, request.tool_use_id, request.summary, request.reason))
        tool_input = dict(request.args)  # the callback's own copy: changing it changes nothing
        try:
            if is_async:
                answer: object = await callback(request.tool, tool_input)  # type: ignore[misc]
            else:
                answer = await asyncio.to_thread(callback, request.tool, tool_input)
                if inspect.isawaitable(answer):
                    answer = await answer
            checked = _checked(answer, request)
        except Exception as exc:  # the callback's bug denies this call; the model and the events say so
            checked = f"the can_use_tool callback raised {type(exc).__name__}: {exc}"
        if isinstance(checked, str):
            denied = Deny(f"Permission check failed: {checked}. {request.summary} was not run.")
            emit(PermissionDecided(request.tool, request.tool_use_id, denied, checked))
            return policy.Deny(denied.message)
        emit(PermissionDecided(request.tool, request.tool_use_id, checked))
        if isinstance(checked, Allow):
            return policy.Allow(checked.updated_input)
        return policy.Deny(checked.message, end_turn=checked.interrupt)

    return ask


def _checked(answer: object, request: PermissionRequest) -> PermissionResult | str:
    """The callback's answer made whole (a Deny without a message gets one), or what is wrong with it."""
    if isinstance(answer, Allow):
        if answer.updated_input is None:
            return answer
        if not isinstance(answer.updated_input, Mapping):
            kind = type(answer.updated_input).__name__
            return f"the can_use_tool callback gave updated_input as {kind}, not a mapping"
        return Allow(dict(answer.updated_input))
    if isinstance(answer, Deny):
        return answer if answer.message else Deny(f"Permission to run {request.summary} was denied.", answer.interrupt)
    return f"the can_use_tool callback returned {type(answer).__name__}, not Allow() or Deny(...)"


async def deny_unasked(request: PermissionRequest) -> policy.Decision:
    """The asker when there is no callback: deny, saying how the program can allow such calls."""
    ways = []
    if request.always_rules:
        ways.append(f"allowed_tools=[{', '.join(repr(rule) for rule in request.always_rules)}]")
    if request.family == "edit" and not request.outside_workspace and "acceptEdits" not in request.reason:
        ways.append('permission_mode="acceptEdits"')
    ways.append("a can_use_tool callback")
    how = ", ".join(ways[:-1]) + " or " + ways[-1] if len(ways) > 1 else ways[0]
    return policy.Deny(
        f"Permission denied: {request.summary} needs approval ({request.reason}), and this agent has no "
        f"can_use_tool callback to ask. To allow it, give the Agent {how}."
    )
