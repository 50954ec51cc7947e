"""The OpenAI Responses API on the wire, for the peers benchmark: a scripted reply as the SSE stream that
`POST /v1/responses` with `"stream": true` sends, and what a request's `input` says so far.

`tests/fakes/fake_llm.py` speaks Chat Completions and Anthropic Messages only; Codex speaks the Responses API, so
this module turns the same `Reply` scripts into the Responses events (OpenAI's documented streaming events, with
the fields Codex's parser reads, `codex-rs/codex-api/src/sse/responses.rs`):

    response.created, response.in_progress
    per text reply:  response.output_item.added (message) → response.content_part.added →
                     response.output_text.delta … → response.output_text.done → response.content_part.done →
                     response.output_item.done
    per tool call:   response.output_item.added (function_call, empty arguments) →
                     response.function_call_arguments.delta … → response.function_call_arguments.done →
                     response.output_item.done (the whole call: call_id, name, arguments)
    response.completed (the response with its output and usage: input/output/total tokens and their details)

Every event is `event: <type>` + `data: <json>` with a `sequence_number`; no `[DONE]` line ends the stream (the
Responses API sends none: the client stops at response.completed). Codex acts on output_item.done, the text
deltas and response.completed; a stream that ends before response.completed is an error to it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from tests.fakes.fake_llm import Reply


def _event(kind: str, seq: int, fields: dict[str, Any]) -> bytes:
    data = json.dumps({"type": kind, "sequence_number": seq, **fields}, separators=(",", ":"), ensure_ascii=False)
    return f"event: {kind}\ndata: {data}\n\n".encode()


def _fragments(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


def responses_events(reply: Reply, request: dict[str, Any], next_id: Callable[[], int]) -> list[bytes]:
    """The SSE events of one streamed Responses API answer to `request`, scripted by `reply`."""
    response_id = f"resp_fake{next_id():08d}"
    base: dict[str, Any] = {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": "in_progress",
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "model": request.get("model"),
        "output": [],
        "parallel_tool_calls": bool(request.get("parallel_tool_calls", False)),
        "previous_response_id": None,
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": [],
        "usage": None,
    }
    events: list[bytes] = []
    seq = 0

    def emit(kind: str, **fields: Any) -> None:
        nonlocal seq
        events.append(_event(kind, seq, fields))
        seq += 1

    emit("response.created", response=base)
    emit("response.in_progress", response=base)
    output: list[dict[str, Any]] = []
    size = reply.chunk_size
    if reply.text or not reply.tool_calls:
        index = len(output)
        item_id = f"msg_fake{next_id():08d}"
        opening = {"id": item_id, "type": "message", "status": "in_progress", "role": "assistant", "content": []}
        emit("response.output_item.added", output_index=index, item=opening)
        part = {"type": "output_text", "text": "", "annotations": []}
        emit("response.content_part.added", item_id=item_id, output_index=index, content_index=0, part=part)
        for fragment in _fragments(reply.text, size):
            emit(
                "response.output_text.delta",
                item_id=item_id,
                output_index=index,
                content_index=0,
                delta=fragment,
                logprobs=[],
            )
        emit(
            "response.output_text.done",
            item_id=item_id,
            output_index=index,
            content_index=0,
            text=reply.text,
            logprobs=[],
        )
        whole = {"type": "output_text", "text": reply.text, "annotations": []}
        emit("response.content_part.done", item_id=item_id, output_index=index, content_index=0, part=whole)
        item = {**opening, "status": "completed", "content": [whole]}
        emit("response.output_item.done", output_index=index, item=item)
        output.append(item)
    for call in reply.tool_calls:
        index = len(output)
        item_id = f"fc_fake{next_id():08d}"
        call_id = call.id if call.id is not None else f"call_fake{next_id():08d}"
        arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
        opening = {
            "id": item_id,
            "type": "function_call",
            "status": "in_progress",
            "arguments": "",
            "call_id": call_id,
            "name": call.name,
        }
        emit("response.output_item.added", output_index=index, item=opening)
        for fragment in _fragments(arguments, size):
            emit("response.function_call_arguments.delta", item_id=item_id, output_index=index, delta=fragment)
        emit("response.function_call_arguments.done", item_id=item_id, output_index=index, arguments=arguments)
        item = {**opening, "status": "completed", "arguments": arguments}
        emit("response.output_item.done", output_index=index, item=item)
        output.append(item)
    u = reply.usage
    usage = {
        "input_tokens": u.input_tokens + u.cache_read_tokens,
        "input_tokens_details": {"cached_tokens": u.cache_read_tokens},
        "output_tokens": u.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": u.input_tokens + u.cache_read_tokens + u.output_tokens,
    }
    emit("response.completed", response={**base, "status": "completed", "output": output, "usage": usage})
    return events


def output_text(value: Any) -> str:
    """A function_call_output's `output` as text: a string, or a list of content items (input_text …)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(str(part.get("text", "")) for part in value if isinstance(part, dict))
    if isinstance(value, dict):
        return str(value.get("content", value.get("text", "")))
    return ""


def tool_outputs(request: dict[str, Any]) -> list[str]:
    """The text of every function_call_output (and custom_tool_call_output) in the request's `input`, in order."""
    items = request.get("input")
    if not isinstance(items, list):
        return []
    kinds = ("function_call_output", "custom_tool_call_output")
    return [output_text(i.get("output")) for i in items if isinstance(i, dict) and i.get("type") in kinds]
