"""The lines of Claude Code's stream-json output, built from our events (pure functions, no I/O).

Field names and shapes follow what the real Claude Code CLI prints and what the Claude Agent SDK's parser
requires (`../shared/reference/claude-code-sdk-protocol.md` §4): `assistant` lines carry `message.model`,
every line a `session_id`, messages a `uuid` and `parent_tool_use_id`, error results an `errors` list. One
`assistant` line per assistant message (Claude Code writes one per block; the SDK accepts both).

`PartialMessages` turns the deltas of one model call into Anthropic streaming events (`stream_event` lines,
under `--include-partial-messages`): editors behind claude-code-acp show text only from these.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from ..events import AssistantTurn, StopReason, Terminal, TextDelta, ThinkingDelta
from ..ids import as_uuid, new_uuid
from ..kit.init_info import InitInfo as InitInfo  # the line's content, worked out by the kit
from ..messages import Message, TextBlock, ToolUseBlock, Usage, message_to_dict


def dumps(line: dict[str, Any]) -> str:
    """One line of output (no newline)."""
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"))


def _message_uuid(message: Message) -> str:
    return as_uuid(message.id) if message.id else new_uuid()


def _wire_content(message: Message) -> list[dict[str, Any]]:
    """Our blocks without the transcript-only keys; successful tool results say `is_error: false` as Claude
    Code's do."""
    out = []
    for block in message_to_dict(message)["content"]:
        if block.get("type") == "tool_result":
            block.setdefault("is_error", False)
        block.pop("provider_data", None)  # what an OpenAI-compatible server attached, kept to send back to it
        out.append(block)
    return out


def assistant_line(
    message: Message,
    *,
    session_id: str,
    model: str,
    usage: Usage | None = None,
    stop_reason: StopReason | None = None,
    parent_tool_use_id: str | None = None,
) -> dict[str, Any]:
    """An `assistant` line: the whole message the model wrote (`parent_tool_use_id`: the Agent call whose
    subagent wrote it)."""
    body: dict[str, Any] = {
        "id": f"msg_{message.id}" if message.id else f"msg_{new_uuid()}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _wire_content(message),
        "stop_reason": stop_reason,
        "stop_sequence": None,
    }
    if usage is not None:
        body["usage"] = usage.to_dict()
    return {
        "type": "assistant",
        "message": body,
        "parent_tool_use_id": parent_tool_use_id,
        "session_id": session_id,
        "uuid": _message_uuid(message),
    }


def user_line(message: Message, *, session_id: str, parent_tool_use_id: str | None = None) -> dict[str, Any]:
    """A `user` line: tool results (and anything placed after them) the agent sent back to the model."""
    return {
        "type": "user",
        "message": {"role": "user", "content": _wire_content(message)},
        "parent_tool_use_id": parent_tool_use_id,
        "session_id": session_id,
        "uuid": _message_uuid(message),
    }


def system_line(subtype: str, session_id: str, **fields: Any) -> dict[str, Any]:
    """A `system` line of the given subtype."""
    return {"type": "system", "subtype": subtype, **fields, "session_id": session_id, "uuid": new_uuid()}


def init_line(info: InitInfo) -> dict[str, Any]:
    return system_line(
        "init",
        info.session_id,
        cwd=info.cwd,
        model=info.model,
        provider=info.provider,
        tools=list(info.tools),
        mcp_servers=list(info.mcp_servers),
        permissionMode=info.permission_mode,
        slash_commands=list(info.slash_commands),
        skills=list(info.skills),
        apiKeySource=info.api_key_source,
        claude_code_version=info.version,
        output_style="default",
        agents=list(info.agents),
        plugins=[],
    )


class TurnSummary(msgspec.Struct):
    """What a `result` line reports about one turn."""

    session_id: str
    model: str
    usage: Usage = msgspec.field(default_factory=Usage)
    result: str = ""
    """Text of the last assistant message."""
    stop_reason: StopReason | None = None
    """Why the last model call stopped."""
    duration_ms: int = 0
    duration_api_ms: int = 0
    total_cost_usd: float | None = None
    """At list price, when the model's price is known."""
    permission_denials: list[dict[str, Any]] = msgspec.field(default_factory=list)
    """Calls the permission check refused: `tool_name`, `tool_use_id`, `tool_input`."""
    max_turns: int = 0
    """The limit, for the max-turns error text."""
    over_budget: float | None = None
    """The `--max-budget-usd` limit the session's cost reached in this turn (the result is then
    `error_max_budget_usd`); None: not reached."""


def budget_error(limit: float) -> str:
    """The error text of a turn stopped by `--max-budget-usd`."""
    return f"Reached maximum budget (${limit:g})"


_SUBTYPES = {
    "completed": "success",
    "max_turns": "error_max_turns",
    "aborted": "error_during_execution",
    "error": "success",  # as Claude Code reports an API failure: `success` with is_error and the text in `result`
}


def result_line(terminal: Terminal, summary: TurnSummary) -> dict[str, Any]:
    """The `result` line ending a turn, as Claude Code writes it (`errors` on every error result; no `result`
    text after max turns)."""
    out: dict[str, Any] = {
        "type": "result",
        "subtype": _SUBTYPES[terminal.reason],
        "is_error": terminal.reason != "completed",
        "duration_ms": summary.duration_ms,
        "duration_api_ms": summary.duration_api_ms,
        "num_turns": terminal.turns,
        "session_id": summary.session_id,
        "model": summary.model,
        "stop_reason": summary.stop_reason,
        "total_cost_usd": summary.total_cost_usd,
        "usage": summary.usage.to_dict(),
        "permission_denials": summary.permission_denials,
        "terminal_reason": terminal.reason,
        "uuid": new_uuid(),
    }
    if terminal.reason == "completed":
        out["result"] = summary.result
    elif terminal.reason == "max_turns":
        out["errors"] = [f"Reached maximum number of turns ({summary.max_turns or terminal.turns})"]
    elif terminal.reason == "aborted":
        out["result"] = summary.result
        out["errors"] = [terminal.error or "Interrupted by the user"]
        out["error"] = terminal.error or "interrupted"
    else:
        out["result"] = terminal.error
        out["errors"] = [terminal.error]
        out["error"] = terminal.error
    if summary.over_budget is not None:  # as Claude Code reports it: whatever the turn was doing when it stopped
        out.update(subtype="error_max_budget_usd", is_error=True, errors=[budget_error(summary.over_budget)])
        out.pop("result", None)
        out.pop("error", None)
    return out


class PartialMessages:
    """Anthropic streaming events for one model call at a time, made from our deltas.

    Text and thinking stream as `content_block_delta`s as they arrive; tool calls (which our providers deliver
    whole) become a start, one `input_json_delta` and a stop when the message is complete."""

    def __init__(self, session_id: str, model: str) -> None:
        self.session_id = session_id
        self.model = model
        self._started = False
        self._index = -1
        self._open: str | None = None
        """Type of the block being streamed (`text`, `thinking`), or None."""

    def _line(self, event: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "stream_event",
            "event": event,
            "parent_tool_use_id": None,
            "session_id": self.session_id,
            "uuid": new_uuid(),
        }

    def _start_message(self) -> list[dict[str, Any]]:
        if self._started:
            return []
        self._started = True
        message: dict[str, Any] = {
            "id": f"msg_{new_uuid()}",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": self.model,
            "stop_reason": None,
            "stop_sequence": None,
            "usage": Usage().to_dict(),
        }
        return [self._line({"type": "message_start", "message": message})]

    def _stop_block(self) -> list[dict[str, Any]]:
        if self._open is None:
            return []
        self._open = None
        return [self._line({"type": "content_block_stop", "index": self._index})]

    def _start_block(self, block: dict[str, Any]) -> list[dict[str, Any]]:
        self._index += 1
        self._open = str(block["type"])
        return [self._line({"type": "content_block_start", "index": self._index, "content_block": block})]

    def delta(self, event: TextDelta | ThinkingDelta) -> list[dict[str, Any]]:
        """Lines for one piece of text or reasoning."""
        kind = "text" if isinstance(event, TextDelta) else "thinking"
        lines = self._start_message()
        if self._open != kind:
            lines += self._stop_block()
            empty = {"type": "text", "text": ""} if kind == "text" else {"type": "thinking", "thinking": ""}
            lines += self._start_block(empty)
        delta = (
            {"type": "text_delta", "text": event.text}
            if kind == "text"
            else {"type": "thinking_delta", "thinking": event.text}
        )
        lines.append(self._line({"type": "content_block_delta", "index": self._index, "delta": delta}))
        return lines

    def finish(self, turn: AssistantTurn) -> list[dict[str, Any]]:
        """Lines closing the call: its tool calls, then `message_delta` and `message_stop`."""
        lines = self._start_message()
        lines += self._stop_block()
        if self._index < 0:  # nothing arrived as deltas (e.g. a retried stream): send the text whole
            for block in turn.message.content:
                if isinstance(block, TextBlock) and block.text:
                    lines += self._start_block({"type": "text", "text": ""})
                    delta = {"type": "text_delta", "text": block.text}
                    lines.append(self._line({"type": "content_block_delta", "index": self._index, "delta": delta}))
                    lines += self._stop_block()
        for use in turn.message.content:
            if isinstance(use, ToolUseBlock):
                lines += self._start_block({"type": "tool_use", "id": use.id, "name": use.name, "input": {}})
                partial = {"type": "input_json_delta", "partial_json": json.dumps(dict(use.input))}
                lines.append(self._line({"type": "content_block_delta", "index": self._index, "delta": partial}))
                lines += self._stop_block()
        closing: dict[str, Any] = {
            "type": "message_delta",
            "delta": {"stop_reason": turn.stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": turn.usage.output_tokens},
        }
        lines.append(self._line(closing))
        lines.append(self._line({"type": "message_stop"}))
        self.reset()
        return lines

    def reset(self) -> None:
        """Forget the call in progress (after a retry discarded it, or at its end)."""
        self._started = False
        self._index = -1
        self._open = None
