"""The pure parts of the wire formats, one rule at a time: `<think>` tags however the chunks cut them, content parts,
OpenRouter's reasoning details, each server's error shapes and usage fields, which server a URL or an answer names,
and what each dialect sends back. (`test_wire_recordings.py` has the same rules end to end, on recorded bytes.)
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from react_agent_mini.events import TextDelta, ThinkingDelta
from react_agent_mini.messages import Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock, Usage, user_text
from react_agent_mini.providers import dialects
from react_agent_mini.providers.anthropic import AnthropicStreamAssembler
from react_agent_mini.providers.error_body import error_from_body
from react_agent_mini.providers.errors import (
    BadRequestError,
    ContextTooLong,
    ModelCallInvalid,
    RateLimitError,
    ServerError,
    error_in_stream,
)
from react_agent_mini.providers.invalid_call import INVALID_CALL, already_told, invalid_call_response, read_call
from react_agent_mini.providers.openai_messages import to_openai_messages
from react_agent_mini.providers.openai_parts import ReasoningDetails, content_pieces
from react_agent_mini.providers.openai_stream import OpenAIStreamAssembler
from react_agent_mini.providers.openai_usage import parse_usage
from react_agent_mini.providers.think_tags import ThinkTagSplitter, opens_reasoning

# ---- <think> tags ----

CONTENT = "Sure. <think>first thoughts</think>The answer<thought>more</thought> is 4 <b>ok</b> <thin"


def split(pieces: list[str], **options: Any) -> tuple[str, str]:
    splitter = ThinkTagSplitter(**options)
    out = [p for piece in pieces for p in splitter.feed(piece)] + list(splitter.flush())
    return "".join(t for reasoning, t in out if not reasoning), "".join(t for reasoning, t in out if reasoning)


@given(st.lists(st.integers(min_value=0, max_value=len(CONTENT)), max_size=8))
def test_tags_are_found_however_the_chunks_cut_them(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    pieces = [CONTENT[a:b] for a, b in zip([0, *points], [*points, len(CONTENT)], strict=True)]
    assert split(pieces) == ("Sure. The answer is 4 <b>ok</b> <thin", "first thoughtsmore")


def test_a_lone_closing_tag_says_the_content_began_inside_the_reasoning() -> None:
    splitter = ThinkTagSplitter()
    out = list(splitter.feed("weighing it</think>answer"))
    assert splitter.lone_close
    assert out == [(False, "weighing it"), (False, "answer")]  # the caller moves what went out as text
    assert split(["weighing it</think>answer"], open_at_start=True) == ("answer", "weighing it")


def test_a_splitter_that_assumed_open_reasoning_can_be_told_otherwise() -> None:
    splitter = ThinkTagSplitter(open_at_start=True)
    assert splitter.only_assumed
    splitter.drop_assumption()
    assert list(splitter.feed("plain")) == [(False, "plain")]
    assert opens_reasoning("Qwen/Qwen3-235B-A22B-Thinking-2507") and opens_reasoning("qwq-32b")
    assert not opens_reasoning("deepseek-chat") and not opens_reasoning("qwen3-32b")


def feed(chunks: list[dict[str, Any]], **options: Any) -> tuple[list[Any], Message]:
    assembler = OpenAIStreamAssembler(**options)
    events = [e for c in chunks for e in assembler.feed(c)] + list(assembler.end())
    return events, assembler.finish().message


def delta(**fields: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": fields, "finish_reason": None}]}


STOP = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}


def test_streamed_tags_become_thinking_deltas_and_a_thinking_block() -> None:
    events, message = feed([delta(content="<th"), delta(content="ink>plan</think>\n\nHi"), STOP])
    assert events == [ThinkingDelta("plan"), TextDelta("Hi")]
    assert message.content == (ThinkingBlock("plan", provider_data='{"via":"tags"}'), TextBlock("Hi"))


def test_a_server_assumed_to_open_the_reasoning_that_did_not_gets_its_text_back() -> None:
    events, message = feed([delta(content="Just text."), STOP], open_at_start=True)
    assert events == [ThinkingDelta("Just text."), TextDelta("Just text.")]
    assert message.content == (TextBlock("Just text."),)


# ---- content parts and reasoning fields ----


def test_content_parts_of_every_kind() -> None:
    parts = [
        {"type": "thinking", "thinking": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {"type": "text", "text": "T"},
        {"type": "refusal", "refusal": "No."},
        {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        {"type": "reference", "reference_ids": [1]},
    ]
    assert list(content_pieces(parts)) == [
        ("thinking", "ab"),
        ("text", "T"),
        ("text", "No."),
        ("text", "[image: https://x/y.png]"),
        ("text", "[image]"),
    ]
    assert list(content_pieces(None)) == [] and list(content_pieces("")) == []


def test_each_reasoning_field_is_read_once() -> None:
    both = delta(reasoning="R", reasoning_content="R", reasoning_details=[{"type": "reasoning.text", "text": "R"}])
    events, _ = feed([both, delta(content="A"), STOP])
    assert events == [ThinkingDelta("R"), TextDelta("A")]
    events, _ = feed([delta(reasoning_details=[{"type": "reasoning.summary", "summary": "S", "index": 0}]), STOP])
    assert events == [ThinkingDelta("S")]


def test_reasoning_details_pieces_are_put_together_by_index_and_type() -> None:
    details = ReasoningDetails()
    details.add([{"type": "reasoning.text", "text": "", "signature": "", "format": "anthropic-claude-v1", "index": 0}])
    details.add([{"type": "reasoning.text", "text": "Th", "format": "anthropic-claude-v1", "index": 0}])
    details.add([{"type": "reasoning.text", "text": "is", "index": 0}])
    details.add([{"type": "reasoning.text", "signature": "SIG", "index": 0}])
    details.add([{"type": "reasoning.encrypted", "data": "ENC", "id": "rs_1", "index": 0}])
    assert details.entries() == [
        {"type": "reasoning.text", "text": "This", "signature": "SIG", "format": "anthropic-claude-v1", "index": 0},
        {"type": "reasoning.encrypted", "data": "ENC", "id": "rs_1", "index": 0},
    ]


def test_tool_calls_without_index_are_told_apart_by_id() -> None:
    call = {"function": {"name": "Echo", "arguments": '{"message": "a"}'}, "id": "aaaaaaaaa"}
    other = {"function": {"name": "Echo", "arguments": '{"message": "b"}'}, "id": "bbbbbbbbb"}
    finish = {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
    _, message = feed([delta(tool_calls=[call]), delta(tool_calls=[other]), finish])
    assert [(u.id, u.input) for u in message.tool_uses] == [
        ("aaaaaaaaa", {"message": "a"}),
        ("bbbbbbbbb", {"message": "b"}),
    ]


def test_an_error_after_a_complete_answer_leaves_it_standing() -> None:
    late = {"error": {"code": 502, "message": "upstream went away"}, "choices": [], "usage": {"prompt_tokens": 3}}
    _, message = feed([delta(content="Hi"), STOP, late])
    assert message.content == (TextBlock("Hi"),)


# ---- errors ----


def test_every_servers_error_shape_gives_its_own_words() -> None:
    shapes = {
        b'[{"error": {"code": 400, "message": "too many", "status": "INVALID_ARGUMENT"}}]': "too many",
        b'{"object": "error", "message": "Unexpected role \'user\' after role \'tool\'", "code": "3230"}': (
            "Unexpected role 'user' after role 'tool'"
        ),
        b'{"object": "error", "message": {"detail": [{"loc": ["body", "messages"], "msg": "Field required"}]}}': (
            "messages: Field required"
        ),
        b'{"message": "Please reduce the length", "type": "invalid_request_error", "code": "x"}': (
            "Please reduce the length"
        ),
        b'{"detail": "Not Found"}': "Not Found",
        b'{"error": "Model is overloaded"}': "Model is overloaded",
        b"<html>bad gateway</html>": "<html>bad gateway</html>",
    }
    for body, message in shapes.items():
        assert error_from_body(body).message == message, body


def test_openrouter_relays_the_upstream_error_which_may_be_json_itself() -> None:
    raw = json.dumps({"object": "error", "message": "Unexpected role 'tool' after role 'user'", "code": "3230"})
    body = {
        "error": {
            "code": 400,
            "message": "Provider returned error",
            "metadata": {"raw": raw, "provider_name": "Mistral"},
        }
    }
    info = error_from_body(json.dumps(body).encode())
    assert info.message == "Provider returned error (Mistral: Unexpected role 'tool' after role 'user')"
    assert info.status == 400


def test_errors_in_a_stream_are_classified_as_their_status_would_be() -> None:
    assert isinstance(error_in_stream("x", provider="openai", status=429), RateLimitError)
    assert isinstance(error_in_stream("x", provider="openai", code="server_error"), ServerError)
    assert isinstance(error_in_stream("Token limit reached", provider="openai", status=400), BadRequestError)
    assert not error_in_stream("x", provider="openai", status=400).retryable
    assert isinstance(error_in_stream("x", provider="openai", code="context_length_exceeded"), ContextTooLong)
    invalid = error_in_stream("bad call", provider="openai", status=400, code="tool_use_failed", failed_generation="F")
    assert isinstance(invalid, ModelCallInvalid) and invalid.max_attempts == 2 and invalid.failed_generation == "F"
    assert isinstance(error_in_stream("who knows", provider="openai"), ServerError)  # as before: retried
    quota = error_in_stream("x", provider="openai", status=429, code="insufficient_quota")
    assert not quota.retryable


def test_a_refused_call_is_read_from_what_the_model_wrote() -> None:
    assert read_call('{"name": "Read", "arguments": {"file_path": "a"}}') == ("Read", {"file_path": "a"})
    assert read_call('[{"name": "Bash", "arguments": "{\\"command\\": \\"ls\\"}"}]') == ("Bash", {"command": "ls"})
    assert read_call('<function=Glob>{"pattern": "*.py"}</function>') == ("Glob", {"pattern": "*.py"})
    assert read_call("maybe") == ("invalid_tool_call", {})
    response = invalid_call_response('{"name": "Read", "arguments": {}}', "refused")
    [use] = response.message.tool_uses
    assert (
        use.input_error.startswith(INVALID_CALL) and use.id.startswith("call_") and response.stop_reason == "tool_use"
    )
    assert already_told([user_text("go"), response.message]) and not already_told([user_text("go")])


# ---- usage ----


def test_usage_fields_of_every_server() -> None:
    openrouter = {
        "prompt_tokens": 194,
        "completion_tokens": 2,
        "cost": 0.95,
        "prompt_tokens_details": {"cached_tokens": 50, "cache_write_tokens": 100},
    }
    assert parse_usage(openrouter) == Usage(44, 2, 50, 100, cost_usd=0.95)
    byok = {"prompt_tokens": 1, "cost": 0.01, "is_byok": True, "cost_details": {"upstream_inference_cost": 0.2}}
    assert parse_usage(byok).cost_usd == 0.01 + 0.2
    assert parse_usage({"prompt_tokens": 10, "cached_tokens": 4}) == Usage(6, 0, 4)  # Together, behind HF's router
    deepseek = {"prompt_tokens": 563, "prompt_cache_hit_tokens": 512, "prompt_cache_miss_tokens": 51}
    assert parse_usage(deepseek) == Usage(51, 0, 512)
    groq = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "x_groq": {"usage": {"prompt_tokens": 9}}}
    assembler = OpenAIStreamAssembler()
    list(assembler.feed(groq))
    assert assembler.finish().usage == Usage(9, 0)
    assert (Usage(cost_usd=0.5) + Usage() + Usage(cost_usd=0.25)).cost_usd == 0.75 and (
        Usage() + Usage()
    ).cost_usd is None


# ---- which server, and what goes back ----


def test_the_base_urls_host_names_the_server() -> None:
    cases = {
        "https://api.deepseek.com": "deepseek",
        "https://openrouter.ai/api/v1": "openrouter",
        "https://api.groq.com/openai/v1": "groq",
        "https://api.mistral.ai/v1": "mistral",
        "https://api.z.ai/api/paas/v4": "zai",
        "https://generativelanguage.googleapis.com/v1beta/openai/": "gemini",
        "https://router.huggingface.co/v1": "huggingface",
        "https://us.inference.heroku.com/v1": "heroku",
        "https://api.inference.crusoecloud.com/v1": "crusoe",
        "http://localhost:11434/v1": "ollama",
    }
    for url, name in cases.items():
        found = dialects.for_url(url)
        assert found is not None and found.name == name, url
    assert dialects.for_url("http://127.0.0.1:8000/v1") is None


def test_an_answer_names_the_server_by_a_field_only_it_sends() -> None:
    assert dialects.seen({"x_groq": {"id": "req"}}) == "groq"
    assert dialects.seen({"usage": {"prompt_cache_hit_tokens": 0}}) == "deepseek"
    assert dialects.seen({"id": "gen-1", "provider": "Google"}) == "openrouter"
    assert dialects.seen({"time_info": {}}) == "cerebras"
    assert dialects.seen({"id": "x", "choices": [{"delta": {"content": "hi"}}]}) == ""


CALL = ToolUseBlock("call_7f3a9c2e1b4d8f6a0c5e9b1d", "Echo", {"message": "hi"})


def turn(*blocks: Any) -> list[Message]:
    return [
        user_text("go"),
        Message("assistant", tuple(blocks)),
        Message("user", (ToolResultBlock(CALL.id, "hi"), TextBlock("skill body"))),
    ]


def sent(messages: list[Message], name: str) -> dict[str, Any]:
    wire = to_openai_messages("", messages, dialects.DIALECTS[name])
    [assistant] = [m for m in wire if m["role"] == "assistant"]
    return assistant


def test_deepseek_gets_reasoning_content_on_every_tool_call_turn() -> None:
    assert sent(turn(ThinkingBlock("why"), CALL), "deepseek")["reasoning_content"] == "why"
    assert sent(turn(CALL), "deepseek")["reasoning_content"] == ""  # its API refuses a tool-call turn without one
    assert "reasoning_content" not in sent([Message("assistant", (ThinkingBlock("why"), TextBlock("a")))], "deepseek")


def test_reasoning_that_came_as_reasoning_or_tags_goes_back_to_no_one() -> None:
    for via in ("reasoning", "tags", "parts"):
        block = ThinkingBlock("why", provider_data=dialects.thinking_data(via))
        for name in ("generic", "zai", "groq", "cerebras", "ollama", "mistral"):
            assert set(sent(turn(block, CALL), name)) == {"role", "content", "tool_calls"}, (via, name)


def test_openrouter_details_and_gemini_signatures_go_back_where_taken() -> None:
    details = [{"type": "reasoning.encrypted", "data": "ENC", "index": 0}]
    block = ThinkingBlock("", provider_data=dialects.thinking_data("reasoning", details))
    assert sent(turn(block, CALL), "openrouter")["reasoning_details"] == details
    assert "reasoning_details" not in sent(turn(block, CALL), "groq")
    signed = ToolUseBlock(CALL.id, "Echo", {}, provider_data='{"extra_content":{"google":{"thought_signature":"S"}}}')
    assert sent(turn(signed), "gemini")["tool_calls"][0]["extra_content"] == {"google": {"thought_signature": "S"}}
    assert "extra_content" not in sent(turn(signed), "mistral")["tool_calls"][0]


def test_mistral_gets_nine_character_call_ids_and_no_user_message_after_a_tool_result() -> None:
    wire = to_openai_messages("", turn(CALL), dialects.DIALECTS["mistral"])
    assert [m["role"] for m in wire] == ["user", "assistant", "tool"]
    short = wire[1]["tool_calls"][0]["id"]
    assert len(short) == 9 and short.isalnum() and wire[2]["tool_call_id"] == short
    assert wire[2]["content"] == "hi\n\nskill body"
    assert dialects.short_call_id("gSIMJiOkT") == "gSIMJiOkT"  # Mistral's own ids stay as they are


# ---- Anthropic: whole messages and errors as JSON ----


def test_an_anthropic_message_object_drops_server_tool_blocks() -> None:
    message = {
        "type": "message",
        "role": "assistant",
        "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
            {"type": "text", "text": "Found it."},
            {"type": "tool_use", "id": "toolu_1", "name": "Echo", "input": {"message": "x"}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 5, "output_tokens": 2, "cache_read_input_tokens": 1},
    }
    assembler = AnthropicStreamAssembler()
    assert list(assembler.feed(message)) == [TextDelta("Found it.")]
    response = assembler.finish()
    assert response.message.content == (TextBlock("Found it."), ToolUseBlock("toolu_1", "Echo", {"message": "x"}))
    assert response.usage == Usage(5, 2, 1) and response.stop_reason == "tool_use"


def test_an_anthropic_error_object_is_classified() -> None:
    for kind, error_type in (("overloaded_error", ServerError), ("invalid_request_error", BadRequestError)):
        assembler = AnthropicStreamAssembler()
        try:
            list(assembler.feed({"type": "error", "error": {"type": kind, "message": "m"}}))
        except error_type as exc:
            assert exc.message == f"anthropic API error in stream: {kind}: m"
        else:
            raise AssertionError(kind)


def test_the_provider_learns_the_server_from_its_answers_where_the_host_says_nothing() -> None:
    from react_agent_mini.providers.openai_compat import OpenAICompatProvider

    local = OpenAICompatProvider("k", "http://127.0.0.1:8000/v1", "qwen3")
    assert local.dialect.name == "generic" and not local.new_stream().tags.only_assumed
    answer = local.new_stream()
    list(answer.feed({"x_groq": {"id": "r"}, "choices": [{"index": 0, "delta": {"content": "plan</think>hi"}}]}))
    local.learn(answer)
    assert local.dialect.name == "groq"
    assert local.new_stream().tags.only_assumed  # it opened the reasoning in the prompt: the next answer starts there
    hosted = OpenAICompatProvider("k", "https://api.deepseek.com", "deepseek-chat")
    hosted.learn(answer)
    assert hosted.dialect.name == "deepseek"  # the host wins over what an answer seemed to say
