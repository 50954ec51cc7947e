"""A tool call the server refused, turned into one the model is told about.

Groq checks each tool call against the tool's schema before it answers, and when the model's call does not parse or
does not match it refuses the whole answer (HTTP 400, or an `error` event mid-stream) with `code: "tool_use_failed"`
and the model's text in `failed_generation`. https://console.groq.com/docs/tool-use (its errors section). A second
try usually gets a valid call; when it does not, the loop gets a response holding the call as the model wrote it,
marked invalid (`ToolUseBlock.input_error`), so it answers the call with an error result the model reads — "the
model's call was invalid: …" — and the model tries again, as after any call with bad arguments. Once: when the
request that fails already carries such a call (the model was told, and failed again), the error ends the turn,
in the server's own words.

`failed_generation` is what the model wrote: `{"name": …, "arguments": {…}}` (also in a list), Llama's
`<function=NAME>{…}</function>`, or plain text; the call's name and arguments are read from it where they can be.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from typing import Any

from ..events import ModelResponse
from ..messages import Message, ToolUseBlock, Usage

INVALID_CALL = "the model's call was invalid"
UNNAMED = "invalid_tool_call"
"""The name a call gets when its name cannot be read from what the model wrote."""
_FUNCTION_TAG = re.compile(r"<function[=\s]*([A-Za-z0-9_.:-]+)\s*>?\s*(.*?)\s*(?:</function>|$)", re.DOTALL)


def invalid_call_response(failed_generation: str, reason: str, id_prefix: str = "call_") -> ModelResponse:
    """An assistant message with one tool call, as the model wrote it, marked invalid with `reason`."""
    name, arguments = read_call(failed_generation)
    shown = failed_generation.strip()
    error = f"{INVALID_CALL}: {shown[:2000] or '(the server quoted nothing)'} — {reason}"
    use = ToolUseBlock(id_prefix + os.urandom(12).hex(), name, arguments, input_error=error)
    return ModelResponse(Message("assistant", (use,)), "tool_use", Usage())


def already_told(messages: Sequence[Message]) -> bool:
    """The newest assistant message of `messages` is one of ours: a refused call the model has been told about."""
    for message in reversed(messages):
        if message.role == "assistant":
            return any(use.input_error.startswith(INVALID_CALL) for use in message.tool_uses)
    return False


def read_call(text: str) -> tuple[str, dict[str, Any]]:
    """The tool name and arguments in what the model wrote (`UNNAMED` and {} when there are none to read)."""
    stripped = text.strip()
    try:
        value = json.loads(stripped)
    except ValueError:
        value = None
    if isinstance(value, list) and value:
        value = value[0]
    if isinstance(value, dict):
        function = value.get("function")
        name = value.get("name") or (function.get("name") if isinstance(function, dict) else None)
        arguments = value.get("arguments", value.get("parameters", {}))
        if isinstance(arguments, str):
            arguments = _object(arguments)
        if isinstance(name, str) and name:
            return name, arguments if isinstance(arguments, dict) else {}
    found = _FUNCTION_TAG.search(stripped)
    if found:
        return found.group(1), _object(found.group(2))
    return UNNAMED, {}


def _object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
