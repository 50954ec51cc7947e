"""The providers' own documented stream examples against our parsers, and the hand-written fake against them.

`tests/data/provider_streams/` holds example responses from Anthropic's and OpenAI's documentation, byte for byte
(its README names the pages and the little framing OpenAI's chunk lists need). Each is served from a loopback HTTP
server, unchanged, to the real provider, which must make of it what the documentation says it means. Then the fake
LLM (`tests/fakes/fake_llm.py`), scripted with the same content, must give the same parsed result and the same
deltas, and put that content on the wire in the same event shapes: the fake is checked against something its
author did not write.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple

import msgspec
import pytest

from react_agent_mini.events import ModelEvent, ModelResponse, TextDelta, ThinkingDelta
from react_agent_mini.messages import Message, TextBlock, ThinkingBlock, ToolUseBlock, Usage, user_text
from react_agent_mini.providers.anthropic import AnthropicProvider
from react_agent_mini.providers.base import ModelRequest
from react_agent_mini.providers.http_provider import HttpProvider
from react_agent_mini.providers.openai_compat import OpenAICompatProvider

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall, anthropic_events, openai_events
from ..fakes.fake_llm import Usage as FakeUsage

DATA = Path(__file__).parents[1] / "data" / "provider_streams"
KEY = "test-key"
"""The fake's key; the loopback server below takes any."""


# --- the documented streams as SSE bodies ------------------------------------------------------------------------


def openai_body(chunks: list[bytes]) -> bytes:
    """OpenAI's framing: each chunk one data-only event, then `data: [DONE]`."""
    return b"".join(b"data: " + chunk + b"\n\n" for chunk in chunks) + b"data: [DONE]\n\n"


def openai_text_body() -> bytes:
    """`openai_chunks.txt`: its chunk lines, unchanged; the page's `....` (chunks it left out) is not one."""
    lines = (DATA / "openai_chunks.txt").read_bytes().splitlines()
    return openai_body([line for line in lines if line and line != b"...."])


def openai_tool_call_body() -> bytes:
    """`openai_tool_call_deltas.txt`: each documented `delta.tool_calls`, unchanged, as the delta of the first
    documented chunk; the last chunk (`tool_calls` null) finishes with `tool_calls`."""
    envelope = (DATA / "openai_chunks.txt").read_bytes().splitlines()[0]
    role_delta = b'"delta":{"role":"assistant","content":""}'
    assert envelope.count(role_delta) == 1 and envelope.count(b'"finish_reason":null') == 1
    deltas = (DATA / "openai_tool_call_deltas.txt").read_bytes().splitlines()
    chunks = []
    for i, tool_calls in enumerate(deltas):
        chunk = envelope.replace(role_delta, b'"delta":{"tool_calls":' + tool_calls + b"}")
        if i == len(deltas) - 1:
            assert tool_calls == b"null"
            chunk = chunk.replace(b'"finish_reason":null', b'"finish_reason":"tool_calls"')
        chunks.append(chunk)
    return openai_body(chunks)


THINKING = (
    "Let me solve this step by step:\n\n1. First break down 27 * 453\n2. 453 = 400 + 50 + 3\n3. 27 * 400 = 10,800"
    "\n4. 27 * 50 = 1,350\n5. 27 * 3 = 81\n6. 10,800 + 1,350 + 81 = 12,231"
)
WEATHER_SF = {"location": "San Francisco, CA", "unit": "fahrenheit"}
WEATHER_PARIS = json.loads('{"location":"Paris, France"}')  # the page's own accumulated arguments


class Case(NamedTuple):
    """One documented stream: its wire, its SSE body, the prompt it answered, what it means (written out from the
    page, not computed), and the fake's script for the same content."""

    wire: str
    body: bytes
    prompt: str
    expected: ModelResponse
    reply: Reply


def assistant(*blocks: Any) -> Message:
    return Message("assistant", tuple(blocks))


CASES: dict[str, Case] = {
    "anthropic_text": Case(
        "anthropic",
        (DATA / "anthropic_text.sse").read_bytes(),
        "Hello",
        ModelResponse(assistant(TextBlock("Hello!")), "end_turn", Usage(input_tokens=25, output_tokens=15)),
        Reply(text="Hello!", usage=FakeUsage(input_tokens=25, output_tokens=15)),
    ),
    "anthropic_tool_use": Case(
        "anthropic",
        (DATA / "anthropic_tool_use.sse").read_bytes(),
        "What is the weather like in San Francisco?",
        ModelResponse(
            assistant(
                TextBlock("Okay, let's check the weather for San Francisco, CA:"),
                ToolUseBlock("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", WEATHER_SF),
            ),
            "tool_use",
            Usage(input_tokens=472, output_tokens=89),
        ),
        Reply(
            text="Okay, let's check the weather for San Francisco, CA:",
            tool_calls=[ToolCall("get_weather", WEATHER_SF, id="toolu_01T1x1fJ34qAmk2tNTrN7Up6")],
            usage=FakeUsage(input_tokens=472, output_tokens=89),
        ),
    ),
    "anthropic_thinking": Case(
        "anthropic",
        (DATA / "anthropic_thinking.sse").read_bytes(),
        "What is 27 * 453?",
        ModelResponse(
            assistant(
                ThinkingBlock(THINKING, "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds..."),
                TextBlock("27 * 453 = 12,231"),
            ),
            "end_turn",
            Usage(),  # the example reports no usage at all
        ),
        Reply(thinking=THINKING, text="27 * 453 = 12,231", usage=FakeUsage(input_tokens=0, output_tokens=0)),
    ),
    "openai_text": Case(
        "openai",
        openai_text_body(),
        "Hello!",
        ModelResponse(assistant(TextBlock("Hello")), "end_turn", Usage()),  # no usage chunk was asked for
        Reply(text="Hello", usage=FakeUsage(input_tokens=0, output_tokens=0)),
    ),
    "openai_tool_calls": Case(
        "openai",
        openai_tool_call_body(),
        "What's the weather like in Paris today?",
        ModelResponse(
            assistant(ToolUseBlock("call_DdmO9pD3xa9XTPNJ32zg2hcA", "get_weather", WEATHER_PARIS)),
            "tool_use",
            Usage(),
        ),
        Reply(
            tool_calls=[ToolCall("get_weather", WEATHER_PARIS, id="call_DdmO9pD3xa9XTPNJ32zg2hcA")],
            usage=FakeUsage(input_tokens=0, output_tokens=0),
        ),
    ),
}


# --- a loopback server that answers with one recorded body -------------------------------------------------------


class Recorded(NamedTuple):
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class RecordedStreamServer:
    """Answers every POST on 127.0.0.1 with `body` as `text/event-stream`, unchanged, in writes of `piece` bytes
    (0: one write), and records what it was sent."""

    def __init__(self, body: bytes, piece: int = 0) -> None:
        self.body = body
        self.piece = piece or len(body)
        self.requests: list[Recorded] = []
        self._server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    async def __aenter__(self) -> RecordedStreamServer:
        self._server = await asyncio.start_server(self._answer, "127.0.0.1", 0)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
            headers = {k.strip().lower(): v.strip() for k, sep, v in (h.partition(":") for h in head[1:]) if sep}
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            self.requests.append(Recorded(head[0].split(" ")[1], headers, json.loads(body)))
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
                b"content-length: %d\r\nconnection: close\r\n\r\n" % len(self.body)
            )
            for start in range(0, len(self.body), self.piece):
                writer.write(self.body[start : start + self.piece])
                await writer.drain()
        finally:
            writer.close()


# --- helpers ------------------------------------------------------------------------------------------------------


def provider_for(wire: str, base_url: str) -> HttpProvider:
    if wire == "openai":
        return OpenAICompatProvider(KEY, base_url, "gpt-4o-mini")
    return AnthropicProvider(KEY, base_url, "claude-sonnet-4-5")


async def streamed(provider: HttpProvider, prompt: str) -> list[ModelEvent]:
    try:
        return [event async for event in provider.stream(ModelRequest("", [user_text(prompt)]))]
    finally:
        await provider.aclose()


def delta_shape(events: list[ModelEvent]) -> list[str]:
    """The kinds of events in order, a run of one kind counted once (chunking is the server's business)."""
    return [kind for kind, _ in itertools.groupby(type(e).__name__ for e in events)]


def joined(events: list[ModelEvent], kind: type[TextDelta] | type[ThinkingDelta]) -> str:
    return "".join(e.text for e in events if isinstance(e, kind))


def unsigned(response: ModelResponse) -> ModelResponse:
    """`response` with each thinking signature replaced by whether it had one (the fake signs with a hash)."""
    blocks = tuple(
        msgspec.structs.replace(b, signature=str(bool(b.signature))) if isinstance(b, ThinkingBlock) else b
        for b in response.message.content
    )
    return msgspec.structs.replace(response, message=msgspec.structs.replace(response.message, content=blocks))


# --- the documented streams through our parsers -------------------------------------------------------------------


@pytest.mark.parametrize("piece", [0, 7], ids=["whole", "7-byte-writes"])
@pytest.mark.parametrize("name", list(CASES))
async def test_a_documented_stream_parses_as_documented(name: str, piece: int) -> None:
    case = CASES[name]
    async with RecordedStreamServer(case.body, piece) as server:
        base = server.url + ("/v1" if case.wire == "openai" else "")
        events = await streamed(provider_for(case.wire, base), case.prompt)
    [request] = server.requests
    assert request.path == ("/v1/chat/completions" if case.wire == "openai" else "/v1/messages")
    assert request.body["stream"] is True and request.headers["accept"] == "text/event-stream"
    *deltas, response = events
    assert response == case.expected
    assert not any(isinstance(e, ModelResponse) for e in deltas)
    blocks = case.expected.message.content
    assert joined(deltas, TextDelta) == "".join(b.text for b in blocks if isinstance(b, TextBlock))
    assert joined(deltas, ThinkingDelta) == "".join(b.thinking for b in blocks if isinstance(b, ThinkingBlock))


# --- the fake against them ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(CASES))
async def test_the_fake_streams_the_same_content_to_the_same_result(name: str, fake_llm: FakeLLMServer) -> None:
    case = CASES[name]
    async with RecordedStreamServer(case.body) as server:
        base = server.url + ("/v1" if case.wire == "openai" else "")
        documented = await streamed(provider_for(case.wire, base), case.prompt)
    fake_llm.enqueue(case.reply)
    base = fake_llm.openai_base_url if case.wire == "openai" else fake_llm.anthropic_base_url
    faked = await streamed(provider_for(case.wire, base), case.prompt)
    assert isinstance(documented[-1], ModelResponse) and isinstance(faked[-1], ModelResponse)
    assert unsigned(faked[-1]) == unsigned(documented[-1])
    assert delta_shape(faked) == delta_shape(documented)
    for kind in (TextDelta, ThinkingDelta):
        assert joined(faked, kind) == joined(documented, kind)


def sse_events(body: bytes) -> list[tuple[str | None, Any]]:
    """`(event name, decoded data)` of each event of an SSE body (`[DONE]` stays a string)."""
    out: list[tuple[str | None, Any]] = []
    for block in body.decode().split("\n\n"):
        name, data = None, []
        for line in block.splitlines():
            if line.startswith("event:"):
                name = line[len("event:") :].strip()
            elif line.startswith("data:"):
                data.append(line[len("data:") :].removeprefix(" "))
        if data:
            text = "\n".join(data)
            out.append((name, text if text == "[DONE]" else json.loads(text)))
    return out


def shape(value: Any) -> Any:
    """The structure of a JSON value: objects by key (a null member counts as absent, as the SDKs read it), arrays
    element by element, anything else by its type."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [shape(v) for v in value]
    return type(value).__name__


def within(documented: Any, faked: Any) -> bool:
    """Whether every member the documented event has, the fake's has too, of the same shape (the fake may send
    more: usage fields the page left out, for one)."""
    if isinstance(documented, dict):
        return isinstance(faked, dict) and all(k in faked and within(v, faked[k]) for k, v in documented.items())
    if isinstance(documented, list):
        return isinstance(faked, list) and len(faked) == len(documented) and all(map(within, documented, faked))
    return bool(documented == faked)


def event_kind(wire: str, name: str | None, data: Any) -> str | None:
    """What an event carries, or None when it carries nothing a parser keeps and may come or not: Anthropic's `ping`
    ("any number of ping events"); an OpenAI chunk that only says `role` (the documented text stream opens with one,
    the documented tool-call stream does not, the fake always sends one); the usage-only chunk that
    `stream_options.include_usage` adds, which our requests ask for and the documented ones did not."""
    if data == "[DONE]":
        return "[DONE]"
    if wire == "anthropic":
        assert name == data["type"], (name, data)  # the SSE event name repeats the data's type
        inner = data.get("content_block") or data.get("delta") or {}
        return None if name == "ping" else f"{name}:{inner.get('type', '')}".rstrip(":")
    assert name is None, name  # data-only events
    if not data.get("choices"):
        return None
    choice = data["choices"][0]
    delta = choice.get("delta") or {}
    kinds = [k for k in ("reasoning_content", "content") if delta.get(k)]
    for call in delta.get("tool_calls") or []:
        kinds.append("tool_call" if (call.get("function") or {}).get("name") else "tool_call_arguments")
    if choice.get("finish_reason"):
        kinds.append(f"finish:{choice['finish_reason']}")
    return "+".join(kinds) or None


def kinds_and_shapes(wire: str, body: bytes) -> Iterator[tuple[str, Any]]:
    for name, data in sse_events(body):
        kind = event_kind(wire, name, data)
        if kind is not None:
            yield kind, shape(data)


@pytest.mark.parametrize("name", list(CASES))
def test_the_fake_puts_the_same_content_on_the_wire_in_the_documented_shapes(name: str) -> None:
    case = CASES[name]
    provider = provider_for(case.wire, "http://127.0.0.1")
    request = provider.build_body(ModelRequest("", [user_text(case.prompt)]))  # what the fake is sent
    build = openai_events if case.wire == "openai" else anthropic_events
    faked = list(kinds_and_shapes(case.wire, b"".join(build(case.reply, request, itertools.count(1).__next__))))
    documented = list(kinds_and_shapes(case.wire, case.body))
    # The same events in the same order (a run of one kind counted once: the fake splits text its own way) ...
    runs = [[k for k, _ in itertools.groupby(kind for kind, _ in events)] for events in (faked, documented)]
    assert runs[0] == runs[1]
    # ... and each documented event's members present in every fake event of its kind, with the same shapes.
    for kind, documented_shape in documented:
        for faked_kind, faked_shape in faked:
            if faked_kind == kind:
                assert within(documented_shape, faked_shape), (kind, documented_shape, faked_shape)
