"""What a transcript keeps of each model call: its usage, and what its request carried, part by part.

The recorder writes one `{"type": "call", ...}` record as each call ends (`ram usage` adds them up, `ram view`
draws them):
- `kind`: `turn` (the loop's calls: the record follows the assistant message it produced, whose id is
  `message`), `summary` (the side call of a summary; its `compact` record follows) or `page` (WebFetch's page
  reader);
- `model` and `usage` (the provider's counts, under Anthropic's names): what the call cost;
- `stop`: why the answer ended (turn calls);
- `context`: the request's estimated tokens by part (compact/tokens.py): `system` (our instructions and the
  environment), `project` (AGENTS.md / CLAUDE.md), `memory`, `skills` (the catalogue, and skill bodies loaded into
  the conversation), `tools` (the schemas), `user` (what the user typed), `injected` (what the agent put in the
  conversation: hook context, mentions, a summary, compaction's notes), `assistant`, and `results`, by tool;
- `sent`: the request's `messages`, and of its tool results those compaction `cleared` (a placeholder) or `cut`
  (a note says so); `notes`, the messages compaction added (the dropped-turns note). The history at that call
  (the messages before the record's), less the messages sent that are not notes, is what was left out.
Only what a request added since the previous one costs work (running totals, memo.PrefixMemo), never the
whole session; the system prompt and the schemas are measured once each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from .compact.budget import MIDDLE_CUT, PLACEHOLDER_PREFIX, TRUNCATION_NOTE
from .compact.economy import DROPPED_NOTE
from .compact.estimate import json_chars
from .compact.tokens import (
    MESSAGE_OVERHEAD_TOKENS,
    TOOL_BLOCK_OVERHEAD_TOKENS,
    estimate_message_tokens,
    estimate_tokens,
    result_tokens,
)
from .memo import PrefixMemo
from .messages import Message, TextBlock, ToolResultBlock, Usage
from .providers.base import ModelRequest

if TYPE_CHECKING:
    from .events import AssistantTurn
    from .tools.spec import ToolSpec

SECTIONS = (
    ("project", "\n\n# Project instructions\n"),
    ("memory", "\n\n# Memory\n"),
    ("skills", "\n\n# Skills\n"),
)
"""Where the system prompt's sections begin (context/system_prompt.py); before the first: our instructions and the
environment."""
SKILL_BODY = "Base directory for this skill: "
"""How a skill body loaded into the conversation begins (tools/builtin/skill.py)."""


def call_fields(usage: Usage, model: str, turn: AssistantTurn | None = None, kind: str | None = None) -> dict[str, Any]:
    """The call record's fields (the transcript adds its type and time); `kind` defaults to `turn` for the
    loop's calls (`turn` given) and `summary` otherwise."""
    kind = kind or ("turn" if turn is not None else "summary")
    counts: dict[str, Any] = usage.to_dict()
    if usage.cost_usd is not None:  # what the provider billed for this call (OpenRouter reports it)
        counts["cost_usd"] = usage.cost_usd
    fields: dict[str, Any] = {"kind": kind, "model": model, "usage": counts}
    if turn is None:
        return fields
    fields["message"] = turn.message.id
    fields["stop"] = turn.stop_reason
    request = turn.request
    if isinstance(request, ModelRequest):
        context, sent = _messages(request.messages)
        system = _system(request.system)
        fields["context"] = {**system, "tools": _tools(request.tools), **context}
        fields["context"]["skills"] += system["skills"]
        fields["sent"] = sent
    return fields


def context_parts(system: str, tools: Sequence[ToolSpec], messages: Sequence[Message]) -> dict[str, Any]:
    """A request's estimated tokens by part, as a call record's `context` holds them (`/context` shows them for
    the next request); skill bodies loaded into the conversation count under `skills` with the catalogue."""
    context, _sent = _messages(messages)
    parts = _system(system)
    fields: dict[str, Any] = {**parts, "tools": _tools(tools), **context}
    fields["skills"] += parts["skills"]
    return fields


def tool_tokens(tools: Sequence[ToolSpec]) -> int:
    """The schemas' estimated tokens (as a call record counts them; not remembered)."""
    return sum(
        TOOL_BLOCK_OVERHEAD_TOKENS
        + estimate_tokens(spec.name)
        + estimate_tokens(spec.description)
        + json_chars(dict(spec.input_schema)) // 3
        for spec in tools
    )


_systems: dict[str, dict[str, int]] = {}
"""The last few system prompts measured (a session's and its subagents')."""


def _system(system: str) -> dict[str, int]:
    """The system prompt's tokens by section (measured once per prompt: it rarely changes)."""
    known = _systems.get(system)
    if known is not None:
        return known
    parts = {"system": 0, "project": 0, "memory": 0, "skills": 0}
    starts = sorted((at, name) for name, marker in SECTIONS if (at := system.find(marker)) >= 0)
    bounds = [(0, "system"), *starts, (len(system), "")]
    for (start, name), (end, _next) in pairwise(bounds):
        parts[name] += estimate_tokens(system[start:end])
    if len(_systems) >= 8:
        _systems.clear()
    _systems[system] = parts
    return parts


_last_tools: list[tuple[Sequence[ToolSpec], int]] = []


def _tools(tools: Sequence[ToolSpec]) -> int:
    """The schemas' tokens (measured once per set of tools)."""
    if _last_tools and len(_last_tools[0][0]) == len(tools) and all(map(_same, _last_tools[0][0], tools)):
        return _last_tools[0][1]
    total = tool_tokens(tools)
    _last_tools[:] = [(tuple(tools), total)]
    return total


def _same(a: object, b: object) -> bool:
    return a is b


class _Tally:
    """The running totals up to one message of a request."""

    __slots__ = ("assistant", "cleared", "cut", "injected", "messages", "notes", "results", "skills", "user")

    def __init__(self) -> None:
        self.user = self.injected = self.assistant = self.skills = 0
        self.results: Mapping[str, int] = {}
        self.messages = self.cleared = self.cut = self.notes = 0

    def copy(self) -> _Tally:
        other = _Tally()
        for name in _Tally.__slots__:
            setattr(other, name, getattr(self, name))
        return other


def _messages(messages: Sequence[Message]) -> tuple[dict[str, Any], dict[str, int]]:
    tallies = _running(messages, _step)
    tally = tallies[-1] if tallies else _Tally()
    context = {
        "user": tally.user,
        "injected": tally.injected,
        "assistant": tally.assistant,
        "skills": tally.skills,
        "results": dict(tally.results),
    }
    sent = {"messages": tally.messages, "cleared": tally.cleared, "cut": tally.cut, "notes": tally.notes}
    return context, sent


def _step(messages: Sequence[Message], index: int, done: Sequence[_Tally]) -> _Tally:
    tally = done[index - 1].copy() if index else _Tally()
    message = messages[index]
    tally.messages += 1
    if message.role == "assistant":
        tally.assistant += estimate_message_tokens(message)
        return tally
    if message.id == DROPPED_NOTE.id:
        tally.notes += 1
    if not message.tool_results:
        kind = "user" if message.is_user_text and not message.meta else "injected"
        if message.text.startswith(SKILL_BODY):
            kind = "skills"
        setattr(tally, kind, getattr(tally, kind) + estimate_message_tokens(message))
        return tally
    names = {use.id: use.name for use in messages[index - 1].tool_uses} if index else {}
    results = dict(tally.results)
    overhead = MESSAGE_OVERHEAD_TOKENS  # the message's own framing goes with its first result
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            name = names.get(block.tool_use_id, "?")
            tokens = overhead + TOOL_BLOCK_OVERHEAD_TOKENS + result_tokens(block)
            results[name] = results.get(name, 0) + tokens
            overhead = 0
            if block.content.startswith(PLACEHOLDER_PREFIX):
                tally.cleared += 1
            elif TRUNCATION_NOTE in block.content or MIDDLE_CUT in block.content:
                tally.cut += 1
        elif isinstance(block, TextBlock):
            tokens = estimate_tokens(block.text)
            if block.text.startswith(SKILL_BODY):
                tally.skills += tokens
            else:
                tally.injected += tokens
    tally.results = results
    return tally


_running: PrefixMemo[Message, _Tally] = PrefixMemo()
