"""Both wire adapters, without the network: our messages out, their stream chunks in."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import msgspec

from react_agent_mini.events import ModelResponse, TextDelta, ThinkingDelta
from react_agent_mini.messages import (
    ImageData,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    block_from_dict,
    block_to_dict,
    user_text,
)
from react_agent_mini.providers.anthropic import (
    AnthropicProvider,
    AnthropicStreamAssembler,
    to_anthropic_messages,
)
from react_agent_mini.providers.base import ModelRequest
from react_agent_mini.providers.http_provider import HttpProvider
from react_agent_mini.providers.openai_compat import (
    OpenAICompatProvider,
    OpenAIStreamAssembler,
    parse_usage,
    to_openai_messages,
)
from react_agent_mini.tools.base import ModelTool, ToolRegistry
from react_agent_mini.tools.builtin.echo import EchoTool

from ..test_loop import TouchTool

CALL = ToolUseBlock("call_1", "Echo", {"message": "hi"})
HISTORY = [
    user_text("task"),
    Message("assistant", (ThinkingBlock("I should echo", "sig"), TextBlock("Echoing."), CALL)),
    Message("user", (ToolResultBlock("call_1", "hi"), TextBlock("Base directory for this skill: /x"))),
    Message("assistant", (TextBlock("done"),)),
    Message("user", (ToolResultBlock("call_2", "no such file", is_error=True),)),
]


def test_openai_messages() -> None:
    assert to_openai_messages("sys", HISTORY) == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "task"},
        {
            "role": "assistant",
            "content": "Echoing.",
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "Echo", "arguments": '{"message": "hi"}'}}
            ],
            "reasoning_content": "I should echo",
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "hi"},
        {"role": "user", "content": "Base directory for this skill: /x"},
        {"role": "assistant", "content": "done"},
        {"role": "tool", "tool_call_id": "call_2", "content": "Error: no such file"},
    ]


def test_openai_reasoning_is_not_sent_back_without_tool_calls() -> None:
    msg = Message("assistant", (ThinkingBlock("thought"), TextBlock("answer")))
    assert to_openai_messages("", [msg]) == [{"role": "assistant", "content": "answer"}]


def test_openai_tool_schema_is_full_json_schema() -> None:
    provider = OpenAICompatProvider("k", "http://x/v1", "m")
    tools = ToolRegistry([EchoTool(), TouchTool()]).specs()
    body = provider.build_body(ModelRequest("s", [user_text("hi")], tools))
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    echo = body["tools"][0]["function"]
    assert echo["name"] == "Echo"
    assert echo["parameters"] == {
        "type": "object",
        "properties": {"message": {"type": "string", "description": "The text to echo back."}},
        "required": ["message"],
    }


def feed_openai(chunks: list[dict[str, Any]]) -> tuple[list[Any], ModelResponse]:
    asm = OpenAIStreamAssembler()
    deltas = [d for c in chunks for d in asm.feed(c)]
    return deltas, asm.finish()


def delta(**d: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": d, "finish_reason": None}]}


def test_openai_stream_assembles_split_tool_arguments_and_keeps_text() -> None:
    chunks = [
        delta(role="assistant", content=""),
        delta(reasoning_content="think"),
        delta(content="Let me "),
        delta(content="check."),
        delta(
            tool_calls=[{"index": 0, "id": "call_a", "type": "function", "function": {"name": "Echo", "arguments": ""}}]
        ),
        delta(
            tool_calls=[
                {"index": 1, "id": "call_b", "type": "function", "function": {"name": "Echo", "arguments": '{"mess'}}
            ]
        ),
        delta(tool_calls=[{"index": 0, "function": {"arguments": '{"message": "o'}}]),
        delta(tool_calls=[{"index": 0, "function": {"arguments": 'ne"}'}}]),
        delta(tool_calls=[{"index": 1, "function": {"arguments": 'age": "two"}'}}]),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {
            "choices": [],
            "usage": {
                "prompt_tokens": 120,
                "completion_tokens": 30,
                "prompt_cache_hit_tokens": 100,
                "prompt_cache_miss_tokens": 20,
            },
        },
    ]
    deltas, response = feed_openai(chunks)
    assert deltas == [ThinkingDelta("think"), TextDelta("Let me "), TextDelta("check.")]
    assert response.message.content == (
        ThinkingBlock("think"),
        TextBlock("Let me check."),
        ToolUseBlock("call_a", "Echo", {"message": "one"}),
        ToolUseBlock("call_b", "Echo", {"message": "two"}),
    )
    assert response.stop_reason == "tool_use"
    assert response.usage == Usage(input_tokens=20, output_tokens=30, cache_read_input_tokens=100)


def test_openai_usage_field_variants() -> None:
    openai_style = {"prompt_tokens": 50, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 40}}
    assert parse_usage(openai_style) == Usage(10, 5, 40)
    assert parse_usage({"prompt_tokens": 7, "completion_tokens": 1}) == Usage(7, 1, 0)


def test_openai_cut_tool_call_is_marked_not_run() -> None:
    chunks = [
        delta(tool_calls=[{"index": 0, "id": "c", "function": {"name": "Write", "arguments": '{"content": "abc'}}]),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]},
    ]
    _, response = feed_openai(chunks)
    assert response.stop_reason == "max_tokens"
    (use,) = response.message.tool_uses
    assert use.input == {} and "cut off by the output limit" in use.input_error


def test_openai_stream_without_finish_is_incomplete() -> None:
    import pytest

    from react_agent_mini.providers.errors import StreamInterrupted

    asm = OpenAIStreamAssembler()
    list(asm.feed(delta(content="half")))
    with pytest.raises(StreamInterrupted):
        asm.finish()


def test_anthropic_messages_cache_the_tail_and_keep_thinking() -> None:
    wire = to_anthropic_messages(HISTORY)
    assert wire[1]["content"][0] == {"type": "thinking", "thinking": "I should echo", "signature": "sig"}
    assert wire[2]["content"][0] == {"type": "tool_result", "tool_use_id": "call_1", "content": "hi"}
    assert wire[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert sum("cache_control" in b for m in wire for b in m["content"]) == 1
    assert wire[-1]["content"][-1]["is_error"] is True


def test_images_in_tool_results_go_to_anthropic_and_round_trip() -> None:
    image = ImageData("image/png", "iVBORw0KGgo=")
    result = ToolResultBlock("call_9", "[image: image/png, 8 bytes]", images=(image,))
    wire = to_anthropic_messages([Message("user", (result,))], cache_tail=False)
    assert wire[0]["content"][0]["content"] == [
        {"type": "text", "text": "[image: image/png, 8 bytes]"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
    ]
    assert block_from_dict(block_to_dict(result)) == result  # transcripts keep the image
    assert to_openai_messages("", [Message("user", (result,))])[0] == {
        "role": "tool",
        "tool_call_id": "call_9",
        "content": "[image: image/png, 8 bytes]",
    }


def test_anthropic_drops_what_the_api_would_reject() -> None:
    history = [
        user_text("hi"),
        Message("assistant", (ThinkingBlock("unsigned, from another provider"), TextBlock(""), TextBlock("ok"))),
        Message("assistant", ()),
    ]
    assert to_anthropic_messages(history, cache_tail=False) == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
    ]


def test_anthropic_body_has_three_cache_breakpoints() -> None:
    provider = AnthropicProvider("k", "http://x", "claude-x")
    tools = ToolRegistry([EchoTool(), TouchTool()]).specs()
    body = provider.build_body(ModelRequest("system rules", HISTORY, tools))
    assert body["system"] == [{"type": "text", "text": "system rules", "cache_control": {"type": "ephemeral"}}]
    assert "cache_control" not in body["tools"][0] and body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert json.dumps(body).count('"cache_control"') == 3
    assert body["max_tokens"] == 8192 and body["stream"] is True
    assert provider.headers()["x-api-key"] == "k" and provider.headers()["anthropic-version"] == "2023-06-01"


def test_anthropic_stream_assembles_blocks_and_usage() -> None:
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "usage": {
                    "input_tokens": 12,
                    "cache_read_input_tokens": 900,
                    "cache_creation_input_tokens": 30,
                    "output_tokens": 1,
                }
            },
        },
        {"type": "ping"},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "hmm"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "SIG"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking", "data": "opaque"}},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "Reading"}},
        {"type": "content_block_stop", "index": 2},
        {
            "type": "content_block_start",
            "index": 3,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Echo", "input": {}},
        },
        {"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": ""}},
        {
            "type": "content_block_delta",
            "index": 3,
            "delta": {"type": "input_json_delta", "partial_json": '{"message": "'},
        },
        {"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": 'x"}'}},
        {"type": "content_block_stop", "index": 3},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 42}},
        {"type": "message_stop"},
    ]
    asm = AnthropicStreamAssembler()
    deltas = [d for e in events for d in asm.feed(e)]
    response = asm.finish()
    assert deltas == [ThinkingDelta("hmm"), TextDelta("Reading")]
    assert response.message.content == (
        ThinkingBlock("hmm", "SIG"),
        RedactedThinkingBlock("opaque"),
        TextBlock("Reading"),
        ToolUseBlock("toolu_1", "Echo", {"message": "x"}),
    )
    assert response.stop_reason == "tool_use"
    assert response.usage == Usage(12, 42, 900, 30)


class RichArgs(msgspec.Struct):
    path: Annotated[str, msgspec.Meta(description="Where to look.")]
    mode: Annotated[Literal["files", "content", "count"], msgspec.Meta(description="What to return.")] = "files"
    ignore_case: Annotated[bool, msgspec.Meta(description="Match case-insensitively.")] = False
    globs: Annotated[list[str], msgspec.Meta(description="Only these files.")] = msgspec.field(default_factory=list)
    limit: Annotated[Annotated[int, msgspec.Meta(ge=1)] | None, msgspec.Meta(description="At most this many.")] = None


class RichTool(ModelTool[RichArgs]):
    name = "Rich"
    description = "schema test"
    args_model = RichArgs


def test_tool_schemas_keep_booleans_enums_arrays_and_descriptions() -> None:
    (spec,) = ToolRegistry([RichTool()]).specs()
    props = spec.input_schema["properties"]
    assert spec.input_schema["required"] == ["path"]
    assert props["mode"] == {
        "type": "string",
        "enum": ["content", "count", "files"],
        "default": "files",
        "description": "What to return.",
    }
    assert props["ignore_case"] == {"type": "boolean", "default": False, "description": "Match case-insensitively."}
    assert props["globs"]["type"] == "array" and props["globs"]["items"] == {"type": "string"}
    assert props["limit"]["description"] == "At most this many."
    assert props["limit"] == {"type": "integer", "minimum": 1, "description": "At most this many."}  # no null branch
    # and the same schema reaches both wires unchanged
    openai = OpenAICompatProvider("k", "http://x", "m").build_body(ModelRequest("", [user_text("q")], [spec]))
    anthropic = AnthropicProvider("k", "http://x", "m").build_body(ModelRequest("", [user_text("q")], [spec]))
    assert openai["tools"][0]["function"]["parameters"] == spec.input_schema
    assert anthropic["tools"][0]["input_schema"] == spec.input_schema


def test_both_wire_formats_share_one_provider_part() -> None:
    """Credentials, base URL, limits and the idle timeout are the same part under either wire format; the key
    never shows in a repr, and each format sends the credentials its own way."""
    for cls in (OpenAICompatProvider, AnthropicProvider):
        provider = cls("sk-secret", "http://x", "m", 100, idle_timeout=5.0)
        assert isinstance(provider, HttpProvider)
        assert (provider.max_tokens, provider.idle_timeout, provider.auth_token) == (100, 5.0, "")
        assert repr(provider) == f"{cls.__name__}(base_url='http://x', model='m')"
    assert OpenAICompatProvider("k", "http://x", "m").headers()["authorization"] == "Bearer k"
    assert OpenAICompatProvider("k", "http://x", "m", auth_token="t").headers()["authorization"] == "Bearer t"
    gateway = AnthropicProvider("", "http://x", "m", auth_token="t").headers()
    assert gateway["authorization"] == "Bearer t" and "x-api-key" not in gateway
    assert (OpenAICompatProvider.name, AnthropicProvider.name) == ("openai", "anthropic")
