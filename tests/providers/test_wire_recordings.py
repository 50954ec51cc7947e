"""Provider answers as they really come, replayed to `ram` as a user runs it: whole JSON answers to streamed
requests, content as lists of parts, reasoning in tags and in every dialect's fields, errors inside streams, and
what goes back on the next request.

Each answer is a file of `tests/data/provider_streams/wire/` (its MANIFEST names where each came from: a public
repository's recorded traffic, or written from the provider's documented format), sent by the loopback fake LLM
server byte for byte (`Raw`). The fake validates every request as the real APIs do (each tool call answered), and
records it, so the tests read what ram sent back. Expected values are written out from the recordings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ..fakes.fake_llm import FakeLLMServer, Raw, Reply
from ..test_cli import ECHO, assert_no_traceback, env_for, ram

WIRE = Path(__file__).parents[1] / "data" / "provider_streams" / "wire"


def recorded(name: str, status: int = 200, **options: Any) -> Raw:
    """The file as the fake's answer: an `.sse` body as an event stream, a `.json` one as a JSON body."""
    kind = "text/event-stream" if name.endswith(".sse") else "application/json"
    return Raw((WIRE / name).read_bytes(), status, kind, **options)


def assistants(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "assistant"]


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def result_of(proc: Any) -> dict[str, Any]:
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    value: dict[str, Any] = json.loads(proc.stdout)
    return value


# ---- item 1: a whole JSON answer to a streamed request, on both wires ----


def test_a_json_chat_completion_answering_a_stream_is_the_answer_with_its_calls_and_usage(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    """DeepSeek (recorded): reasoning, text and a tool call in one JSON body; the call is answered and its turn's
    reasoning goes back with it (DeepSeek thinking mode asks for it; the usage says DeepSeek)."""
    fake_llm.enqueue(recorded("deepseek_tool_call_reasoning.json"), Reply(text="Rolled."))
    proc = ram("--output-format", "json", "play dice", env=env_for("openai", fake_llm), cwd=tmp_path)
    result = result_of(proc)  # was: error: openai API stream ended before the response was complete
    assert result["result"] == "Rolled."
    assert result["usage"] == {
        "input_tokens": 51 + 100,
        "output_tokens": 116 + 20,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 512,
    }
    [call_turn] = assistants(fake_llm.requests[1].body)
    assert call_turn["tool_calls"][0]["id"] == "call_00_sXqYgMESDht75NCLLZtt9804"
    assert call_turn["tool_calls"][0]["function"]["name"] == "load_capability"
    assert call_turn["reasoning_content"].startswith("The user wants to play a dice game.")
    [result_message] = [m for m in fake_llm.requests[1].body["messages"] if m["role"] == "tool"]
    assert result_message["tool_call_id"] == "call_00_sXqYgMESDht75NCLLZtt9804"  # answered: an unknown tool


def test_a_json_anthropic_message_answering_a_stream_is_the_answer_and_its_thinking_goes_back(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    """Anthropic (recorded): a message object with a signed thinking block, then `ram -c`: the block goes back."""
    body = json.loads((WIRE / "anthropic_thinking_message.json").read_bytes())
    fake_llm.enqueue(recorded("anthropic_thinking_message.json"), Reply(text="Next."))
    env = env_for("anthropic", fake_llm)
    first = result_of(ram("--output-format", "json", "how do I cross?", env=env, cwd=tmp_path))
    assert first["result"] == body["content"][1]["text"]
    assert "straightforward question about pedestrian safety" not in first["result"]
    assert first["usage"]["input_tokens"] == body["usage"]["input_tokens"]
    assert result_of(ram("--output-format", "json", "-c", "and a river?", env=env, cwd=tmp_path))["result"] == "Next."
    [sent] = assistants(fake_llm.requests[1].body)
    thinking = body["content"][0]
    assert sent["content"][0] == {
        "type": "thinking",
        "thinking": thinking["thinking"],
        "signature": thinking["signature"],
    }


def test_a_json_anthropic_message_with_redacted_thinking_keeps_it(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    body = json.loads((WIRE / "anthropic_redacted_thinking_message.json").read_bytes())
    fake_llm.enqueue(recorded("anthropic_redacted_thinking_message.json"), Reply(text="Next."))
    env = env_for("anthropic", fake_llm)
    assert (
        result_of(ram("--output-format", "json", "hi", env=env, cwd=tmp_path))["result"] == body["content"][1]["text"]
    )
    result_of(ram("-c", "--output-format", "json", "again", env=env, cwd=tmp_path))
    [sent] = assistants(fake_llm.requests[1].body)
    assert sent["content"][0] == {"type": "redacted_thinking", "data": body["content"][0]["data"]}


def test_an_sse_event_carrying_a_whole_completion_is_the_answer(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """A proxy that did not stream, but framed its one answer as an event (written from OpenAI's documented object)."""
    fake_llm.enqueue(recorded("openai_completion_in_sse.sse"))
    result = result_of(ram("--output-format", "json", "describe", env=env_for("openai", fake_llm), cwd=tmp_path))
    assert result["result"] == "The image shows a wooden boardwalk."
    assert result["usage"]["cache_read_input_tokens"] == 1024 and result["usage"]["input_tokens"] == 93


def test_a_json_error_object_with_status_200_is_an_error_in_its_own_words(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(Raw.json({"error": {"message": "Content Exists Risk", "type": "invalid_request_error"}}))
    proc = ram("hi", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 1
    assert error_lines(proc.stderr) == ["error: openai API error in stream: Content Exists Risk"]
    assert len(fake_llm.requests) == 1  # an invalid request is not retried


def test_a_page_that_is_neither_a_stream_nor_json_is_one_clear_error(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Raw(b"<!DOCTYPE html>\n<html><body>Welcome to nginx!</body></html>\n", 200, "text/html"))
    proc = ram("hi", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 1
    [line] = error_lines(proc.stderr)
    assert line.startswith("error: openai API answered with neither a stream nor JSON (text/html): '<!DOCTYPE html>'")
    assert "check OPENAI_BASE_URL" in line
    assert len(fake_llm.requests) == 1  # was: retried 5 times as a stream that ended early


# ---- item 2: content as a list of parts ----


@pytest.mark.parametrize("name", ["mistral_magistral_thinking.sse", "mistral_magistral_thinking.json"])
def test_magistral_content_parts_give_the_answer_and_keep_the_thinking_apart(
    name: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    """Mistral Magistral (recorded, streamed and whole): `content` is a list of thinking and text parts."""
    fake_llm.enqueue(recorded(name))
    proc = ram("--output-format", "stream-json", "--verbose", "cross", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert_no_traceback(proc)  # was: internal error: TypeError: sequence item 0: expected str instance, list found
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    [assistant] = [line for line in lines if line["type"] == "assistant"]
    kinds = [block["type"] for block in assistant["message"]["content"]]
    assert kinds == ["thinking", "text"]
    thinking, text = (block.get("thinking") or block.get("text") for block in assistant["message"]["content"])
    result = lines[-1]["result"]
    assert result == text and result.startswith(("To cross the street", "Crossing a river"))
    assert thinking[:40] not in result


# ---- item 3: reasoning in <think> tags ----


def test_think_tags_cut_across_chunks_are_reasoning_not_the_answer(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """Groq, `reasoning_format: raw` (written from its documented format, the tags cut between chunks); then
    `ram -c`: the answer goes back without the reasoning, and no reasoning field goes to Groq."""
    fake_llm.enqueue(recorded("groq_think_tags_split.sse"), Reply(text="Again 4."))
    env = env_for("openai", fake_llm)
    proc = ram("--output-format", "stream-json", "--verbose", "2+2?", env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert lines[-1]["result"] == "2 + 2 = 4."  # was: "<think>\nThe user asks …</think>\n\n2 + 2 = 4."
    [assistant] = [line for line in lines if line["type"] == "assistant"]
    assert assistant["message"]["content"][0] == {
        "type": "thinking",
        "thinking": "\nThe user asks what 2 + 2 is. That is 4.\n",
        "signature": "",
    }
    text = ram("-c", "and again?", env=env, cwd=tmp_path)
    assert text.stdout == "Again 4.\n"
    [sent] = assistants(fake_llm.requests[1].body)
    assert sent == {"role": "assistant", "content": "2 + 2 = 4."}


def test_reasoning_opened_by_the_template_is_split_off_at_the_lone_closing_tag(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    """vLLM without a reasoning parser, Qwen3's thinking template (written): the content has only `</think>`."""
    fake_llm.enqueue(recorded("vllm_open_reasoning.sse"))
    proc = ram("hello", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Hello! How can I help?\n"  # was: "Okay, the user greets me. … </think>\n\nHello! …"


def test_hugging_face_deepseek_r1_json_with_think_tags(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    body = json.loads((WIRE / "huggingface_r1_think_tags.json").read_bytes())
    fake_llm.enqueue(recorded("huggingface_r1_think_tags.json"))
    result = result_of(ram("--output-format", "json", "hello", env=env_for("openai", fake_llm), cwd=tmp_path))
    assert result["result"] == body["choices"][0]["message"]["content"].split("</think>")[1].strip()
    assert "<think>" not in result["result"]


# ---- item 4: every reasoning dialect read, and sent back only as its provider asks ----


def test_openrouter_reasoning_details_go_back_as_received(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """OpenRouter (recorded): `reasoning` and `reasoning_details` (a summary and encrypted reasoning); `ram -c`."""
    body = json.loads((WIRE / "openrouter_encrypted_reasoning.json").read_bytes())
    message = body["choices"][0]["message"]
    fake_llm.enqueue(recorded("openrouter_encrypted_reasoning.json"), Reply(text="Merci."))
    env = env_for("openai", fake_llm)
    first = result_of(ram("--output-format", "json", "Voltaire?", env=env, cwd=tmp_path))
    assert first["result"] == message["content"] and message["reasoning"][:60] not in first["result"]
    result_of(ram("-c", "--output-format", "json", "thanks", env=env, cwd=tmp_path))
    [sent] = assistants(fake_llm.requests[1].body)
    assert sent == {
        "role": "assistant",
        "content": message["content"],
        "reasoning_details": message["reasoning_details"],
    }


def test_groq_reasoning_is_read_and_never_sent_back(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """Groq (recorded): `reasoning` with a tool call; the next request carries the call, not the reasoning."""
    fake_llm.enqueue(recorded("groq_tool_call_with_reasoning.json"), Reply(text="Done."))
    proc = ram("--output-format", "stream-json", "--verbose", "go", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    first = next(json.loads(line) for line in proc.stdout.splitlines() if '"type": "assistant"' in line)
    assert first["message"]["content"][0]["thinking"].startswith("We need to call with correct param")
    [sent] = assistants(fake_llm.requests[1].body)
    assert set(sent) == {"role", "content", "tool_calls"}  # was: reasoning_content went to Groq, which refuses it


def test_cerebras_reasoning_is_thinking_not_answer(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(recorded("cerebras_reasoning.json"), Reply(text="7."))
    env = env_for("openai", fake_llm)
    proc = ram("--output-format", "stream-json", "--verbose", "2+2?", env=env, cwd=tmp_path)
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert lines[-1]["result"] == "4."
    [assistant] = [line for line in lines if line["type"] == "assistant"]
    assert assistant["message"]["content"][0]["thinking"].startswith("User asks simple")
    ram("-c", "add 3", env=env, cwd=tmp_path)
    assert assistants(fake_llm.requests[1].body) == [{"role": "assistant", "content": "4."}]


def test_gemini_thought_signature_goes_back_on_its_tool_call(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """Gemini 3 (written from its OpenAI-compatibility docs): without the signature the next request is refused."""
    body = json.loads((WIRE / "gemini3_thought_signature.json").read_bytes())
    fake_llm.enqueue(recorded("gemini3_thought_signature.json"), Reply(text="pong"))
    result = result_of(ram(*ECHO, "--output-format", "json", "ping", env=env_for("openai", fake_llm), cwd=tmp_path))
    assert result["result"] == "pong"
    [sent] = assistants(fake_llm.requests[1].body)
    recorded_call = body["choices"][0]["message"]["tool_calls"][0]
    assert sent["tool_calls"][0]["extra_content"] == recorded_call["extra_content"]
    assert sent["tool_calls"][0]["id"] == recorded_call["id"]
    assert [m["content"] for m in fake_llm.requests[1].body["messages"] if m["role"] == "tool"] == ["ping"]


# ---- item 5: what is retried, and what is not ----


def test_groq_tool_use_failed_is_retried_once_and_the_retry_is_used(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """Groq (recorded): 400 `tool_use_failed`, then the model's valid call on the retry."""
    fake_llm.enqueue(recorded("groq_tool_use_failed.json", 400), recorded("groq_tool_call_with_reasoning.json"))
    fake_llm.enqueue(Reply(text="Done."))
    proc = ram("go", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr  # was: error: openai API error 400: Tool call validation failed …
    assert proc.stdout == "Done.\n"
    [retry] = [line for line in proc.stderr.splitlines() if line.startswith("[retry]")]
    assert "Tool call validation failed" in retry and "attempt 2/2" in retry
    assert fake_llm.requests[1].body == fake_llm.requests[0].body
    assert [c["function"]["name"] for c in assistants(fake_llm.requests[2].body)[0]["tool_calls"]] == [
        "get_something_by_name"
    ]


def test_an_invalid_call_refused_twice_is_told_to_the_model_then_ends_the_turn(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    failed = recorded("groq_tool_use_failed.json", 400)
    fake_llm.enqueue(failed, failed, failed, failed)
    proc = ram("go", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 1
    [line] = error_lines(proc.stderr)
    assert line.startswith("error: openai API error 400: Tool call validation failed")
    assert len(fake_llm.requests) == 4  # a call, its retry; the model told; its call and retry refused again
    told = fake_llm.requests[2].body["messages"]
    [call] = assistants(fake_llm.requests[2].body)[0]["tool_calls"]
    assert call["function"] == {"name": "get_something_by_name", "arguments": '{"foo": "bar"}'}
    [result] = [m for m in told if m["role"] == "tool"]
    assert result["tool_call_id"] == call["id"]
    assert "the model's call was invalid" in result["content"] and '"foo": "bar"' in result["content"]


def test_groq_tool_use_failed_inside_a_stream_is_retried(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """Groq (recorded): reasoning streams, then `event: error` with `tool_use_failed`; the retry's call runs."""
    fake_llm.enqueue(recorded("groq_tool_use_failed_in_stream.sse"), recorded("groq_tool_call_with_reasoning.json"))
    fake_llm.enqueue(Reply(text="Done."))
    proc = ram("go", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Done.\n"
    [retry] = [line for line in proc.stderr.splitlines() if line.startswith("[retry]")]
    assert "Tool call validation failed" in retry
    assert "attempt 2/2" in retry  # was: 2/5, retried as a server error would be
    assert len(fake_llm.requests) == 3


def test_openrouter_token_limit_after_the_cut_is_one_error_not_retried(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """OpenRouter (recorded): comments, reasoning, `finish_reason: "length"`, then the error chunk with the usage."""
    fake_llm.enqueue(*[recorded("openrouter_token_limit_after_length.sse")] * 5)
    proc = ram("Hello there", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 1
    [line] = error_lines(proc.stderr)
    assert "Token limit reached" in line and "output token limit" in line
    assert "respond to a greeting" not in proc.stdout + proc.stderr
    assert len(fake_llm.requests) == 1  # was: 5, retried as a server error, and the user saw the last retry's error


# ---- item 6: the upstream reason ----


def test_openrouter_429_says_the_upstream_reason(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(*[recorded("openrouter_rate_limited_upstream.json", 429)] * 2)
    proc = ram("hi", env=env_for("openai", fake_llm, RAM_MAX_RETRIES="1"), cwd=tmp_path)
    assert proc.returncode == 1
    [line] = error_lines(proc.stderr)
    assert line.startswith("error: openai API error 429: Provider returned error (Google: ")
    assert "google/gemini-2.0-flash-exp:free is temporarily rate-limited upstream" in line  # was: only the first part
    assert len(fake_llm.requests) == 2


# ---- item 7: keep-alive comments ----


def test_keep_alive_comments_keep_a_slow_stream_alive(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """OpenRouter's `: OPENROUTER PROCESSING` (written): 6 comments 0.4 s apart, longer in all than the idle limit."""
    fake_llm.enqueue(recorded("openrouter_keepalive_comments.sse", delay=0.4))
    env = env_for("openai", fake_llm, RAM_STREAM_IDLE_TIMEOUT="1")
    proc = ram("--output-format", "json", "hi", env=env, cwd=tmp_path)
    result = result_of(proc)
    assert result["result"] == "Still here."
    assert "[retry]" not in proc.stderr and len(fake_llm.requests) == 1


def test_a_stream_of_nothing_but_comments_is_still_given_up(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """Comments keep the stream alive, not the answer complete: one that ends after them is retried."""
    comments = Raw(b": OPENROUTER PROCESSING\n\n" * 3)
    fake_llm.enqueue(comments, Reply(text="Answer."))
    proc = ram("hi", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Answer.\n" and len(fake_llm.requests) == 2


def test_the_fake_replays_a_recording_byte_for_byte(fake_llm: FakeLLMServer) -> None:
    """The harness: what the fake sends for a `Raw` answer is the file, whole, in one event per chunk."""
    import socket

    body = (WIRE / "openrouter_token_limit_after_length.sse").read_bytes()
    fake_llm.enqueue(recorded("openrouter_token_limit_after_length.sse"))
    host, port = fake_llm.url.removeprefix("http://").split(":")
    request = json.dumps({"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}).encode()
    with socket.create_connection((host, int(port))) as sock:
        head = b"POST /v1/chat/completions HTTP/1.1\r\nauthorization: Bearer test-key\r\ncontent-length: %d\r\n\r\n"
        sock.sendall(head % len(request) + request)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    _, _, chunked = received.partition(b"\r\n\r\n")
    pieces = []
    while True:
        size, _, chunked = chunked.partition(b"\r\n")
        if int(size, 16) == 0:
            break
        pieces.append(chunked[: int(size, 16)])
        chunked = chunked[int(size, 16) + 2 :]
    assert b"".join(pieces) == body and pieces[0] == b": OPENROUTER PROCESSING\n\n"
