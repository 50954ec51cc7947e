"""Reading the recordings of `tests/data/provider_streams/recorded/` into responses the replay server sends.

Three source formats, each kept as its source has it (see the MANIFEST there):

* VCR cassettes of pydantic-ai (`*.yaml`): per interaction the status, the headers and the body — an SSE body as
  its recorded text, a JSON body as `parsed_body` (re-serialised compactly: the cassette keeps the value, not the
  bytes). An SSE body is written one event per HTTP chunk, as a server flushes them.
* Vercel AI SDK chunk fixtures (`*.chunks.txt`): one chunk object a line, framed as the SDK's own tests frame
  them — `data: <line>` and a blank line for each non-empty line, then `data: [DONE]` — with the content type
  of an SSE answer (the fixtures keep no status or headers).
* Raw responses (`*.http`): a status line, headers, a blank line, the body — for error bodies quoted in public
  issue threads.

Also: what a test needs to read ram's requests and the recordings (the reasoning a stream carried, in order).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import yaml

from ..fakes.fake_llm import Reply, anthropic_events, openai_events
from ..fakes.fake_llm import Usage as FakeUsage
from ..fakes.replay_server import ReceivedRequest, RecordedResponse

RECORDED = Path(__file__).parents[1] / "data" / "provider_streams" / "recorded"
KEY = "test-key"
"""The key ram is given; the replay server takes any."""


# ---- the three formats ---------------------------------------------------------------------------------------------


def sse_pieces(body: bytes) -> tuple[bytes, ...]:
    """An SSE body cut after each blank line (each event, or comment, one piece); nothing added or lost."""
    pieces: list[bytes] = []
    rest = body
    while b"\n\n" in rest:
        head, _, rest = rest.partition(b"\n\n")
        pieces.append(head + b"\n\n")
    if rest:
        pieces.append(rest)
    return tuple(pieces)


def cassette(name: str) -> list[dict[str, Any]]:
    """The interactions of a VCR cassette."""
    data = yaml.safe_load((RECORDED / name).read_text(encoding="utf-8"))
    interactions: list[dict[str, Any]] = data["interactions"]
    return interactions


def vcr(name: str, *indexes: int) -> list[RecordedResponse]:
    """The responses of the cassette's interactions `indexes` (all when none is given), in that order."""
    interactions = cassette(name)
    chosen = indexes or tuple(range(len(interactions)))
    return [_vcr_response(interactions[i]["response"]) for i in chosen]


def _vcr_response(response: dict[str, Any]) -> RecordedResponse:
    headers = tuple((k, str(v)) for k, values in response.get("headers", {}).items() for v in values)
    body = response.get("body")
    text = body.get("string") if isinstance(body, dict) else None
    if text is None:  # a JSON body kept as its value
        raw = json.dumps(response["parsed_body"], ensure_ascii=False, separators=(",", ":")).encode()
        pieces: tuple[bytes, ...] = (raw,)
    else:
        raw = text.encode("utf-8")
        pieces = sse_pieces(raw) if raw.lstrip().startswith((b"data:", b":", b"event:")) else (raw,)
    chunked = any(k.lower() == "transfer-encoding" and "chunked" in v for k, v in headers) or len(pieces) > 1
    status = response["status"]
    return RecordedResponse(int(status["code"]), str(status["message"]), headers, pieces, chunked)


def vcr_route(name: str, index: int = 0) -> str:
    """The path the cassette's interaction was posted to (without its query string)."""
    uri = str(cassette(name)[index]["request"]["uri"])
    return "/" + uri.split("://", 1)[1].partition("/")[2].partition("?")[0]


def ai_sdk_chunks(name: str) -> RecordedResponse:
    """A chunk fixture framed as the AI SDK's tests frame it."""
    lines = [line for line in (RECORDED / name).read_text(encoding="utf-8").split("\n") if line.strip()]
    pieces = (*(f"data: {line}\n\n".encode() for line in lines), b"data: [DONE]\n\n")
    return RecordedResponse(200, "OK", (("content-type", "text/event-stream"),), pieces)


def raw_http(name: str) -> RecordedResponse:
    """A raw response file: status line, headers, blank line, body (without the file's last newline)."""
    text = (RECORDED / name).read_text(encoding="utf-8")
    head, _, body = text.partition("\n\n")
    status_line, *header_lines = head.split("\n")
    _, code, reason = status_line.split(" ", 2)
    headers = tuple((k.strip(), v.strip()) for k, _, v in (line.partition(":") for line in header_lines))
    return RecordedResponse(int(code), reason, headers, (body.removesuffix("\n").encode(),), chunked=False)


# ---- scripted follow-ups -------------------------------------------------------------------------------------------

DONE = "Done: that is all."
"""The scripted answer to a request a recording does not cover (the follow-up after a recorded tool call, the
second turn of `ram -c`)."""


def scripted(wire: str, text: str = DONE) -> RecordedResponse:
    """A streamed text answer in `wire`'s format, built by the fake LLM's own event builders (no usage)."""
    reply = Reply(text=text, usage=FakeUsage(input_tokens=0, output_tokens=0))
    request = {"model": "scripted", "stream_options": {"include_usage": True}}
    build = openai_events if wire == "openai" else anthropic_events
    events = build(reply, request, iter(range(1, 1000)).__next__)
    return RecordedResponse(200, "OK", (("content-type", "text/event-stream"),), tuple(events))


# ---- reading the recordings ----------------------------------------------------------------------------------------


def sse_data(response: RecordedResponse) -> Iterator[Any]:
    """The decoded `data:` of each event of an SSE response (`[DONE]` left out)."""
    for piece in sse_pieces(response.body):
        data = [line[5:].strip() for line in piece.decode().split("\n") if line.startswith("data:")]
        if data and data != ["[DONE]"]:
            yield json.loads("\n".join(data))


def streamed(response: RecordedResponse, field: str) -> str:
    """Everything an OpenAI-style stream carried in `delta.<field>` (a string field), in order."""
    out = []
    for chunk in sse_data(response):
        for choice in chunk.get("choices") or []:
            value = (choice.get("delta") or {}).get(field)
            if isinstance(value, str):
                out.append(value)
    return "".join(out)


def anthropic_blocks(response: RecordedResponse) -> list[dict[str, Any]]:
    """The content blocks an Anthropic stream built (text and thinking with its signature), in order."""
    blocks: dict[int, dict[str, Any]] = {}
    for event in sse_data(response):
        if event.get("type") == "content_block_start":
            blocks[event["index"]] = dict(event["content_block"])
        elif event.get("type") == "content_block_delta":
            block, delta = blocks[event["index"]], event["delta"]
            for key in ("text", "thinking", "signature"):
                if key in delta:
                    block[key] = block.get(key, "") + delta[key]
    return [blocks[i] for i in sorted(blocks)]


def json_message(response: RecordedResponse) -> dict[str, Any]:
    """The `choices[0].message` of a JSON chat completion."""
    message: dict[str, Any] = json.loads(response.body)["choices"][0]["message"]
    return message


# ---- ram's requests ------------------------------------------------------------------------------------------------


def assistant_messages(request: ReceivedRequest) -> list[dict[str, Any]]:
    return [m for m in request.body["messages"] if m.get("role") == "assistant"]


REASONING_KEYS = ("reasoning_content", "reasoning", "reasoning_details", "thinking", "thinking_blocks")


def reasoning_sent(request: ReceivedRequest) -> list[str]:
    """Every way an earlier answer's reasoning travels back in `request`: reasoning fields on assistant messages,
    `<think>` in their text, thinking blocks."""
    found = []
    for message in assistant_messages(request):
        found += [f"{key} field" for key in REASONING_KEYS if key in message]
        content = message.get("content")
        if isinstance(content, str) and "<think>" in content:
            found.append("<think> in content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") in ("thinking", "redacted_thinking"):
                found.append(f"{block['type']} block")
    return found


# ---- the CLI -------------------------------------------------------------------------------------------------------


def ram_env(wire: str, base_url: str, model: str, **extra: str) -> dict[str, str]:
    """The environment of a user who pointed ram at `base_url`: only the provider's own variables set."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "RAM_"))}
    for name in ("QUERY_MOCK", "TRACE", "ALLOW_WRITE"):
        env.pop(name, None)
    if wire == "openai":
        env.update(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=base_url, OPENAI_MODEL=model)
    else:
        env.update(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=base_url, ANTHROPIC_MODEL=model)
    env.update(extra)
    return env


def run_ram(
    *args: str, env: dict[str, str], cwd: Path, task: str = "What is the answer?"
) -> subprocess.CompletedProcess[str]:
    """`ram -p ARGS` with `task` on stdin, as a user runs it (no wall-clock limit: a hung ram is a failure the
    suite's runner reports)."""
    return subprocess.run(
        [sys.executable, "-m", "react_agent_mini", "-p", *args],
        env=env,
        cwd=cwd,
        input=task,
        capture_output=True,
        text=True,
        check=False,
    )


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


__all__: Sequence[str] = [
    "DONE",
    "KEY",
    "RECORDED",
    "ai_sdk_chunks",
    "anthropic_blocks",
    "assistant_messages",
    "error_lines",
    "json_message",
    "ram_env",
    "raw_http",
    "reasoning_sent",
    "run_ram",
    "scripted",
    "sse_data",
    "streamed",
    "vcr",
    "vcr_route",
]
