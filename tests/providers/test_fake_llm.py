"""Tests for the loopback fake LLM server (tests/fakes/fake_llm.py), using real httpx over TCP."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fakes.fake_llm import (
    DEFAULT_TEXT,
    DropAfter,
    FakeLLMServer,
    Hang,
    HttpError,
    Malformed,
    RecordedRequest,
    Reply,
    Script,
    ToolCall,
    Usage,
)

ROOT = Path(__file__).resolve().parents[2]
OPENAI_HEADERS = {"authorization": "Bearer test-key"}
ANTHROPIC_HEADERS = {"x-api-key": "test-key", "anthropic-version": "2023-06-01"}
USER_HI = {"role": "user", "content": "hi"}


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:  # the fake closes every connection, so sharing is safe
    with httpx.Client(timeout=5.0) as c:
        yield c


def openai_body(**extra: Any) -> dict[str, Any]:
    return {"model": "gpt-test", "messages": [USER_HI], "stream": True, **extra}


def anthropic_body(**extra: Any) -> dict[str, Any]:
    return {"model": "claude-test", "max_tokens": 1024, "messages": [USER_HI], "stream": True, **extra}


def parse_sse(text: str) -> list[tuple[str | None, str]]:
    """Split an SSE body into (event name, data) pairs; every event must have exactly one data line."""
    events: list[tuple[str | None, str]] = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        name: str | None = None
        data: list[str] = []
        for line in block.split("\n"):
            field, _, value = line.partition(": ")
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
            else:
                raise AssertionError(f"unexpected SSE line {line!r}")
        assert len(data) == 1, block
        events.append((name, data[0]))
    return events


def post_openai(server: FakeLLMServer, client: httpx.Client, body: dict[str, Any]) -> httpx.Response:
    return client.post(f"{server.openai_base_url}/chat/completions", json=body, headers=OPENAI_HEADERS)


def post_anthropic(server: FakeLLMServer, client: httpx.Client, body: dict[str, Any]) -> httpx.Response:
    return client.post(f"{server.anthropic_base_url}/v1/messages", json=body, headers=ANTHROPIC_HEADERS)


def openai_chunks(resp: httpx.Response) -> list[dict[str, Any]]:
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-type"] == "text/event-stream"
    events = parse_sse(resp.text)
    assert all(name is None for name, _ in events)
    assert events[-1][1] == "[DONE]"
    return [json.loads(data) for _, data in events[:-1]]


def anthropic_events(resp: httpx.Response) -> list[dict[str, Any]]:
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-type"] == "text/event-stream"
    parsed = []
    for name, data in parse_sse(resp.text):
        obj = json.loads(data)
        assert obj["type"] == name  # the `event:` line always matches the payload type
        parsed.append(obj)
    return parsed


# --------------------------------------------------------------------------------------------
# OpenAI wire
# --------------------------------------------------------------------------------------------


def test_openai_text_stream_sequence(server: FakeLLMServer, client: httpx.Client) -> None:
    server.enqueue(Reply(text="Hello, world!", chunk_size=5))
    resp = post_openai(server, client, openai_body())
    assert resp.headers["cache-control"] == "no-cache"
    assert resp.headers["transfer-encoding"] == "chunked"
    chunks = openai_chunks(resp)

    first = chunks[0]
    assert first["id"].startswith("chatcmpl-")
    assert first["object"] == "chat.completion.chunk"
    assert first["model"] == "gpt-test"
    assert isinstance(first["created"], int)
    assert first["choices"] == [
        {"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None, "finish_reason": None}
    ]
    assert {c["id"] for c in chunks} == {first["id"]}
    texts = [c["choices"][0]["delta"]["content"] for c in chunks[1:-1]]
    assert texts == ["Hello", ", wor", "ld!"]
    assert chunks[-1]["choices"][0]["delta"] == {}
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert all("usage" not in c for c in chunks)  # no include_usage -> no usage anywhere


def test_openai_usage_chunk_only_with_include_usage(server: FakeLLMServer, client: httpx.Client) -> None:
    usage = Usage(input_tokens=70, output_tokens=9, cache_read_tokens=30, cache_write_tokens=5)
    server.enqueue(Reply(text="ok", usage=usage))
    chunks = openai_chunks(post_openai(server, client, openai_body(stream_options={"include_usage": True})))
    *regular, last = chunks
    assert all(c["usage"] is None for c in regular)
    assert last["choices"] == []
    assert last["usage"] == {
        "prompt_tokens": 100,
        "completion_tokens": 9,
        "total_tokens": 109,
        "prompt_tokens_details": {"cached_tokens": 30},
        "prompt_cache_hit_tokens": 30,
        "prompt_cache_miss_tokens": 70,
    }
    assert regular[-1]["choices"][0]["finish_reason"] == "stop"


def test_openai_tool_calls_split_mid_json(server: FakeLLMServer, client: httpx.Client) -> None:
    args = {"path": "src/main.py", "lines": [1, 2, 3], "note": "ünïcode"}
    server.enqueue(
        Reply(
            text="Let me look.",
            tool_calls=[ToolCall("read_file", args), ToolCall("bash", '{"cmd": "ls', id="call_fixed")],
        )
    )
    chunks = openai_chunks(post_openai(server, client, openai_body()))
    deltas = [c["choices"][0]["delta"] for c in chunks]
    calls: dict[int, dict[str, Any]] = {}
    fragments: dict[int, list[str]] = {}
    for delta in deltas:
        for tc in delta.get("tool_calls", []):
            if "id" in tc:
                assert tc["type"] == "function"
                assert tc["function"]["arguments"] == ""
                calls[tc["index"]] = {"id": tc["id"], "name": tc["function"]["name"]}
                fragments[tc["index"]] = []
            else:
                assert set(tc) == {"index", "function"}
                fragments[tc["index"]].append(tc["function"]["arguments"])
    assert calls[0]["name"] == "read_file"
    assert calls[0]["id"].startswith("call_")
    assert calls[1] == {"id": "call_fixed", "name": "bash"}
    assert all(0 < len(f) <= 4 for f in fragments[0])
    assert len(fragments[0]) > 3
    with pytest.raises(json.JSONDecodeError):  # a fragment alone is not JSON: split mid-document
        json.loads(fragments[0][0])
    assert json.loads("".join(fragments[0])) == args
    assert "".join(fragments[1]) == '{"cmd": "ls'  # raw (invalid) JSON sent as-is
    assert "".join(d.get("content") or "" for d in deltas) == "Let me look."
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_openai_reasoning_and_length_stop(server: FakeLLMServer, client: httpx.Client) -> None:
    server.enqueue(Reply(text="partial", thinking="I think so", stop="length"))
    chunks = openai_chunks(post_openai(server, client, openai_body()))
    deltas = [c["choices"][0]["delta"] for c in chunks]
    reasoning = [d for d in deltas if "reasoning_content" in d]
    assert all(d["content"] is None for d in reasoning)
    assert "".join(d["reasoning_content"] for d in reasoning) == "I think so"
    # reasoning comes before any text content
    first_text = next(i for i, d in enumerate(deltas) if d.get("content"))
    assert deltas.index(reasoning[-1]) < first_text
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"


def test_openai_path_without_v1_prefix(server: FakeLLMServer, client: httpx.Client) -> None:
    server.enqueue(Reply(text="x"))
    resp = client.post(f"{server.url}/chat/completions", json=openai_body(), headers=OPENAI_HEADERS)
    assert openai_chunks(resp)[1]["choices"][0]["delta"]["content"] == "x"


# --------------------------------------------------------------------------------------------
# Anthropic wire
# --------------------------------------------------------------------------------------------


def test_anthropic_full_event_sequence(server: FakeLLMServer, client: httpx.Client) -> None:
    args = {"path": "a.py", "content": "print('hi')\n"}
    usage = Usage(input_tokens=11, output_tokens=22, cache_read_tokens=33, cache_write_tokens=44)
    server.enqueue(
        Reply(
            text="Sure.",
            thinking="Plan it",
            tool_calls=[ToolCall("write_file", args)],
            usage=usage,
            chunk_size=3,
        )
    )
    events = anthropic_events(post_anthropic(server, client, anthropic_body()))
    types = [e["type"] for e in events]
    delta_types = [e["delta"]["type"] for e in events if e["type"] == "content_block_delta"]

    start = events[0]["message"]
    assert start["id"].startswith("msg_")
    assert (start["type"], start["role"], start["model"], start["content"]) == (
        "message",
        "assistant",
        "claude-test",
        [],
    )
    assert start["stop_reason"] is None and start["stop_sequence"] is None
    assert start["usage"] == {
        "input_tokens": 11,
        "cache_creation_input_tokens": 44,
        "cache_read_input_tokens": 33,
        "output_tokens": 1,
    }
    assert types[:2] == ["message_start", "ping"]
    assert types[-2:] == ["message_delta", "message_stop"]
    starts = [e for e in events if e["type"] == "content_block_start"]
    assert [s["index"] for s in starts] == [0, 1, 2]
    assert starts[0]["content_block"] == {"type": "thinking", "thinking": ""}
    assert starts[1]["content_block"] == {"type": "text", "text": ""}
    tool_block = starts[2]["content_block"]
    assert tool_block["type"] == "tool_use" and tool_block["name"] == "write_file" and tool_block["input"] == {}
    assert tool_block["id"].startswith("toolu_")
    assert delta_types.count("signature_delta") == 1
    assert delta_types.index("signature_delta") < delta_types.index("text_delta")

    def block_deltas(index: int, key: str) -> list[str]:
        return [e["delta"][key] for e in events if e["type"] == "content_block_delta" and e["index"] == index]

    thinking = [e["delta"]["thinking"] for e in events if e.get("delta", {}).get("type") == "thinking_delta"]
    assert "".join(thinking) == "Plan it"
    assert "".join(block_deltas(1, "text")) == "Sure."
    partial = block_deltas(2, "partial_json")
    assert partial[0] == ""
    assert all(len(p) <= 3 for p in partial)
    assert json.loads("".join(partial)) == args
    stops = [e["index"] for e in events if e["type"] == "content_block_stop"]
    assert stops == [0, 1, 2]
    assert events[-2] == {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": {"output_tokens": 22},
    }


@pytest.mark.parametrize(("stop", "expected"), [(None, "end_turn"), ("length", "max_tokens"), ("stop", "end_turn")])
def test_anthropic_stop_reason_mapping(
    server: FakeLLMServer, client: httpx.Client, stop: str | None, expected: str
) -> None:
    server.enqueue(Reply(text="hello", stop=stop))
    events = anthropic_events(post_anthropic(server, client, anthropic_body()))
    assert [e["type"] for e in events] == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert events[-2]["delta"]["stop_reason"] == expected


# --------------------------------------------------------------------------------------------
# Auth and validation
# --------------------------------------------------------------------------------------------


def test_bad_keys_and_missing_version(server: FakeLLMServer, client: httpx.Client) -> None:
    server.enqueue(Reply(text="kept"))
    url = f"{server.openai_base_url}/chat/completions"
    for headers in ({}, {"authorization": "Bearer wrong"}):
        resp = client.post(url, json=openai_body(), headers=headers)
        assert resp.status_code == 401
        assert resp.headers["content-type"] == "application/json"
        assert resp.json() == {
            "error": {
                "message": "Incorrect API key provided",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_api_key",
            }
        }
    resp = client.post(f"{server.url}/v1/messages", json=anthropic_body(), headers={"x-api-key": "nope"})
    assert resp.status_code == 401
    assert resp.json()["type"] == "error"
    assert resp.json()["error"]["type"] == "authentication_error"
    resp = client.post(f"{server.url}/v1/messages", json=anthropic_body(), headers={"x-api-key": "test-key"})
    assert resp.status_code == 400
    assert resp.json()["error"]["type"] == "invalid_request_error"
    assert "anthropic-version" in resp.json()["error"]["message"]
    # rejected requests are recorded but did not consume the script
    assert len(server.requests) == 4
    chunks = openai_chunks(post_openai(server, client, openai_body()))
    assert chunks[1]["choices"][0]["delta"]["content"] == "kept"


ASSISTANT_CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "ls", "arguments": "{}"}},
        {"id": "call_b", "type": "function", "function": {"name": "ls", "arguments": "{}"}},
    ],
}


@pytest.mark.parametrize(
    ("messages", "fragment"),
    [
        ([USER_HI, ASSISTANT_CALL], "insufficient tool messages following tool_calls message"),
        (
            [USER_HI, ASSISTANT_CALL, {"role": "tool", "tool_call_id": "call_a", "content": "x"}, USER_HI],
            "insufficient tool messages following tool_calls message",
        ),
        ([USER_HI, {"role": "tool", "tool_call_id": "call_zzz", "content": "x"}], "must be a response"),
        ([], "empty array"),
    ],
)
def test_openai_rejects_invalid_conversations(
    server: FakeLLMServer, client: httpx.Client, messages: list[dict[str, Any]], fragment: str
) -> None:
    server.enqueue(Reply(text="kept"))
    resp = post_openai(server, client, openai_body(messages=messages))
    assert resp.status_code == 400
    error = resp.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert fragment in error["message"]
    assert server.requests[0].body["messages"] == messages
    ok = [USER_HI, ASSISTANT_CALL]
    ok += [{"role": "tool", "tool_call_id": i, "content": "x"} for i in ("call_b", "call_a")]
    assert openai_chunks(post_openai(server, client, openai_body(messages=ok)))[1]["choices"][0]["delta"] == {
        "content": "kept"
    }


def test_openai_rejects_bad_tool_name_and_non_streaming(server: FakeLLMServer, client: httpx.Client) -> None:
    tools = [{"type": "function", "function": {"name": "read file", "parameters": {}}}]
    resp = post_openai(server, client, openai_body(tools=tools))
    assert resp.status_code == 400
    assert "tools[0].function.name" in resp.json()["error"]["message"]
    assert post_openai(server, client, openai_body(stream=False)).status_code == 400
    assert post_openai(server, client, {"messages": [USER_HI], "stream": True}).status_code == 400


TOOL_USE_TURN = {
    "role": "assistant",
    "content": [
        {"type": "text", "text": "checking"},
        {"type": "tool_use", "id": "toolu_a", "name": "ls", "input": {}},
        {"type": "tool_use", "id": "toolu_b", "name": "ls", "input": {}},
    ],
}


def tool_result(use_id: str, **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": use_id, "content": "ok", **extra}


@pytest.mark.parametrize(
    ("messages", "fragment"),
    [
        (
            [USER_HI, TOOL_USE_TURN],
            "`tool_use` ids were found without `tool_result` blocks immediately after",
        ),
        (
            [USER_HI, TOOL_USE_TURN, {"role": "user", "content": [tool_result("toolu_a")]}],
            "without `tool_result` blocks immediately after: toolu_b",
        ),
        (
            [
                USER_HI,
                TOOL_USE_TURN,
                {"role": "user", "content": [tool_result("toolu_a"), tool_result("toolu_x")]},
            ],
            "unexpected `tool_use_id` found in `tool_result` blocks: toolu_x",
        ),
        (
            [
                USER_HI,
                TOOL_USE_TURN,
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "hm"},
                        tool_result("toolu_a"),
                        tool_result("toolu_b"),
                    ],
                },
            ],
            "must come before",
        ),
        ([USER_HI, {"role": "user", "content": [tool_result("toolu_a")]}], "unexpected `tool_use_id`"),
    ],
)
def test_anthropic_rejects_invalid_tool_pairing(
    server: FakeLLMServer, client: httpx.Client, messages: list[dict[str, Any]], fragment: str
) -> None:
    resp = post_anthropic(server, client, anthropic_body(messages=messages))
    assert resp.status_code == 400, resp.text
    assert resp.json()["type"] == "error"
    assert resp.json()["error"]["type"] == "invalid_request_error"
    assert fragment in resp.json()["error"]["message"]


def test_anthropic_accepts_valid_tool_results_and_merges_turns(server: FakeLLMServer, client: httpx.Client) -> None:
    server.enqueue(Reply(text="fine"))
    messages = [
        USER_HI,
        TOOL_USE_TURN,
        {"role": "user", "content": [tool_result("toolu_b"), tool_result("toolu_a")]},
        {"role": "user", "content": "and then?"},  # consecutive user turns are merged, not rejected
    ]
    events = anthropic_events(post_anthropic(server, client, anthropic_body(messages=messages)))
    assert events[3]["delta"] == {"type": "text_delta", "text": "fine"}


def test_anthropic_cache_control_limit(server: FakeLLMServer, client: httpx.Client) -> None:
    eph = {"cache_control": {"type": "ephemeral"}}
    system = [{"type": "text", "text": "sys", **eph}]
    tools = [{"name": "ls", "description": "d", "input_schema": {"type": "object"}, **eph}]
    content = [{"type": "text", "text": "a", **eph}, {"type": "text", "text": "b", **eph}]
    messages = [{"role": "user", "content": content}]
    server.enqueue(Reply(text="four is fine"))
    ok = post_anthropic(server, client, anthropic_body(system=system, tools=tools, messages=messages))
    assert ok.status_code == 200
    content.append({"type": "text", "text": "c", **eph})
    resp = post_anthropic(server, client, anthropic_body(system=system, tools=tools, messages=messages))
    assert resp.status_code == 400
    assert resp.json()["error"]["message"] == "A maximum of 4 blocks with cache_control may be provided. Found 5."


def test_anthropic_rejects_missing_max_tokens(server: FakeLLMServer, client: httpx.Client) -> None:
    body = anthropic_body()
    del body["max_tokens"]
    assert post_anthropic(server, client, body).status_code == 400
    assert post_anthropic(server, client, anthropic_body(max_tokens="10")).status_code == 400


def test_unknown_path_is_404(server: FakeLLMServer, client: httpx.Client) -> None:
    assert client.post(f"{server.url}/v1/completions", json={}).status_code == 404
    assert client.get(f"{server.url}/v1/messages").status_code == 404


# --------------------------------------------------------------------------------------------
# Faults
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "openai_type", "anthropic_type"),
    [
        (429, "requests", "rate_limit_error"),
        (500, "server_error", "api_error"),
        (529, "server_error", "overloaded_error"),
        (400, "invalid_request_error", "invalid_request_error"),
        (401, "invalid_request_error", "authentication_error"),
    ],
)
def test_http_error_shapes(
    server: FakeLLMServer, client: httpx.Client, status: int, openai_type: str, anthropic_type: str
) -> None:
    server.enqueue(HttpError(status, "slow down", retry_after="1"), HttpError(status, "busy"))
    resp = post_openai(server, client, openai_body())
    assert resp.status_code == status
    assert resp.headers["retry-after"] == "1"
    assert resp.headers["content-type"] == "application/json"
    assert resp.json()["error"]["message"] == "slow down"
    assert resp.json()["error"]["type"] == openai_type
    assert set(resp.json()["error"]) >= {"message", "type", "code"}
    resp = post_anthropic(server, client, anthropic_body())
    assert resp.status_code == status
    assert "retry-after" not in resp.headers
    assert resp.json() == {"type": "error", "error": {"type": anthropic_type, "message": "busy"}}


def test_http_error_reason_phrase(server: FakeLLMServer) -> None:
    server.enqueue(HttpError(529))
    body = json.dumps(anthropic_body()).encode()
    head = "POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: test-key\r\nanthropic-version: 1\r\n"
    with socket.create_connection(("127.0.0.1", int(server.url.rsplit(":", 1)[1])), timeout=5) as sock:
        sock.sendall(f"{head}content-length: {len(body)}\r\n\r\n".encode() + body)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    assert data.startswith(b"HTTP/1.1 529 ")
    assert b"overloaded_error" in data


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_drop_after_is_a_protocol_error(server: FakeLLMServer, client: httpx.Client, wire: str) -> None:
    server.enqueue(DropAfter(Reply(text="a long answer that never finishes"), events=3))
    url, body, headers = (
        (f"{server.openai_base_url}/chat/completions", openai_body(), OPENAI_HEADERS)
        if wire == "openai"
        else (f"{server.url}/v1/messages", anthropic_body(), ANTHROPIC_HEADERS)
    )
    received = []
    with client.stream("POST", url, json=body, headers=headers) as resp:
        assert resp.status_code == 200
        with pytest.raises(httpx.RemoteProtocolError, match="incomplete chunked read"):
            for piece in resp.iter_text():
                received.append(piece)
    events = parse_sse("".join(received))
    assert len(events) == 3
    assert all(data != "[DONE]" and name != "message_stop" for name, data in events)


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_malformed_contains_non_json_data_line(server: FakeLLMServer, client: httpx.Client, wire: str) -> None:
    server.enqueue(Malformed(Reply(text="hello")))
    resp = (
        post_openai(server, client, openai_body())
        if wire == "openai"
        else post_anthropic(server, client, anthropic_body())
    )
    assert resp.status_code == 200  # the chunked body itself completes normally
    events = parse_sse(resp.text)
    assert len(events) == 3
    for _, data in events[:2]:
        json.loads(data)
    assert events[2][1] == "{not json"
    with pytest.raises(json.JSONDecodeError):
        json.loads(events[2][1])


def test_hang_times_out_and_stop_releases_it(server: FakeLLMServer, client: httpx.Client) -> None:
    server.enqueue(Hang(), Hang())
    with pytest.raises(httpx.ReadTimeout):
        client.post(
            f"{server.openai_base_url}/chat/completions",
            json=openai_body(),
            headers=OPENAI_HEADERS,
            timeout=0.2,
        )
    # a client still waiting when the server stops sees the connection close
    errors: list[BaseException] = []

    def waiter() -> None:
        try:
            with httpx.Client(timeout=5) as own_client:
                post_anthropic(server, own_client, anthropic_body())
        except httpx.HTTPError as exc:
            errors.append(exc)

    thread = threading.Thread(target=waiter)
    thread.start()
    server.wait_for_requests(2)
    t0 = time.monotonic()
    server.stop()
    thread.join(5)
    assert time.monotonic() - t0 < 3
    assert len(errors) == 1 and isinstance(errors[0], httpx.RemoteProtocolError)


def test_delay_streams_events_as_separate_pieces(server: FakeLLMServer, client: httpx.Client) -> None:
    server.enqueue(Reply(text="abcdefgh", chunk_size=2, delay=0.01))
    pieces: list[bytes] = []
    t0 = time.monotonic()
    with client.stream(
        "POST", f"{server.openai_base_url}/chat/completions", json=openai_body(), headers=OPENAI_HEADERS
    ) as r:
        pieces.extend(r.iter_raw())
    elapsed = time.monotonic() - t0
    n_events = len(parse_sse(b"".join(pieces).decode()))
    assert n_events == 1 + 4 + 1 + 1  # role chunk, 4 text fragments, finish chunk, [DONE]
    assert len(pieces) >= n_events  # one network piece per SSE event, not one big blob
    assert elapsed >= 0.01 * (n_events - 1)


# --------------------------------------------------------------------------------------------
# Recording, responder, defaults
# --------------------------------------------------------------------------------------------


def test_requests_are_recorded(server: FakeLLMServer, client: httpx.Client) -> None:
    before = time.monotonic()
    post_openai(server, client, openai_body(temperature=0.5))
    post_anthropic(server, client, anthropic_body(system="be brief"))
    server.wait_for_requests(2, timeout=1)
    first, second = server.requests
    assert (first.path, first.wire) == ("/v1/chat/completions", "openai")
    assert first.body["temperature"] == 0.5 and first.body["messages"] == [USER_HI]
    assert first.headers["authorization"] == "Bearer test-key"
    assert all(name == name.lower() for name in first.headers)
    assert (second.path, second.wire) == ("/v1/messages", "anthropic")
    assert second.body["system"] == "be brief"
    assert second.headers["anthropic-version"] == "2023-06-01"
    assert before <= first.received_at <= second.received_at <= time.monotonic()
    with pytest.raises(TimeoutError):
        server.wait_for_requests(3, timeout=0.05)


def test_chunked_request_body_is_accepted(server: FakeLLMServer, client: httpx.Client) -> None:
    payload = json.dumps(openai_body(user="chunky")).encode()
    parts = iter([payload[:10], payload[10:]])
    resp = client.post(f"{server.openai_base_url}/chat/completions", content=parts, headers=OPENAI_HEADERS)
    assert resp.status_code == 200
    assert server.requests[0].headers["transfer-encoding"] == "chunked"
    assert server.requests[0].body["user"] == "chunky"


def test_default_reply_and_responder(server: FakeLLMServer, client: httpx.Client) -> None:
    chunks = openai_chunks(post_openai(server, client, openai_body()))
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks) == DEFAULT_TEXT
    seen: list[str] = []

    def responder(request: RecordedRequest) -> Script:
        seen.append(request.wire)
        return Reply(text=f"echo {request.body['model']}")

    server.set_responder(responder)
    server.enqueue(Reply(text="queued first"))
    texts = []
    for _ in range(2):
        events = anthropic_events(post_anthropic(server, client, anthropic_body()))
        texts.append("".join(e["delta"].get("text", "") for e in events if e["type"] == "content_block_delta"))
    assert texts == ["queued first", "echo claude-test"]
    assert seen == ["anthropic"]


async def test_usable_from_async_code(server: FakeLLMServer) -> None:
    server.enqueue(Reply(text="async ok"))
    async with httpx.AsyncClient(timeout=5) as aclient:
        resp = await aclient.post(
            f"{server.openai_base_url}/chat/completions", json=openai_body(), headers=OPENAI_HEADERS
        )
    await server.wait_for_requests_async(1, timeout=1)
    chunks = openai_chunks(resp)
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks) == "async ok"
    assert len(server.requests) == 1


def test_subprocess_client_and_standalone_main(server: FakeLLMServer, tmp_path: Path) -> None:
    # a child process talks to the in-process server ...
    server.enqueue(Reply(text="from child", chunk_size=100))
    code = (
        "import httpx, json, sys; headers = {'authorization': 'Bearer test-key'}; "
        "r = httpx.post(sys.argv[1] + '/chat/completions', headers=headers, json=json.loads(sys.argv[2])); "
        "print(r.status_code, 'from child' in r.text)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, server.openai_base_url, json.dumps(openai_body())],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.stdout.split() == ["200", "True"], out.stderr
    # ... and the module runs standalone with a JSON script
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps([{"type": "http_error", "status": 429, "retry_after": "0"}, {"text": "second", "chunk_size": 100}])
    )
    record = tmp_path / "requests.jsonl"
    argv = ["-m", "tests.fakes.fake_llm", "--port", "0", "--script", str(script), "--record", str(record)]
    with subprocess.Popen([sys.executable, *argv], cwd=ROOT, stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:")
            with httpx.Client(timeout=5) as c:
                first = c.post(f"{url}/v1/messages", json=anthropic_body(), headers=ANTHROPIC_HEADERS)
                second = c.post(f"{url}/v1/messages", json=anthropic_body(), headers=ANTHROPIC_HEADERS)
            assert (first.status_code, first.headers["retry-after"]) == (429, "0")
            assert '"text":"second"' in second.text
        finally:
            proc.terminate()
            assert proc.wait(10) == 0
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert [line["wire"] for line in lines] == ["anthropic", "anthropic"]
