"""Real traffic of the models and servers people run, replayed to `ram -p` as a user runs it.

Each case is one recording from `tests/data/provider_streams/recorded/` (its MANIFEST names the source, licence
and what was changed): a loopback server (`tests/fakes/replay_server.py`) sends ram the recorded status line,
headers and body, piece by piece; a request the recording does not cover (the follow-up after a tool call, the
second turn of `ram -c`) gets a scripted streamed answer, `DONE`. ram is pointed at the provider's own path on
that server (`OPENAI_BASE_URL=http://127.0.0.1:PORT/api/v1` for OpenRouter, …), with the recorded model name.

What is checked is what a user meets: the exact answer on stdout and in `--output-format json`'s `result`, never
the reasoning; usage (and cache reads) in the json result; the recorded tool calls answered, one result each, in
the follow-up request; for error recordings one clear `error:` line and exit 1. And what ram sends back on the
next request: DeepSeek's `reasoning_content` with the tool-call turn, OpenRouter's `reasoning_details` as
received, Anthropic's thinking blocks with their signatures; no other reasoning, in no dialect.

The expected values are written out from the recordings (or, for long texts, read from them with the small
readers in `replay.py`, which share no code with ram's parsers).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ..fakes.replay_server import ReceivedRequest, RecordedResponse, ReplayServer
from .replay import (
    DONE,
    ai_sdk_chunks,
    anthropic_blocks,
    assistant_messages,
    error_lines,
    json_message,
    ram_env,
    raw_http,
    reasoning_sent,
    run_ram,
    scripted,
    sse_data,
    streamed,
    vcr,
    vcr_route,
)

RETRIES = "2"
"""RAM_MAX_RETRIES for every run: a retried error is seen three times, and no run waits long."""


def usage(inp: int, out: int, read: int = 0, write: int = 0) -> dict[str, int]:
    return {
        "input_tokens": inp,
        "output_tokens": out,
        "cache_creation_input_tokens": write,
        "cache_read_input_tokens": read,
    }


@dataclass(frozen=True)
class Call:
    """A tool call the recording makes: ram must answer it, once, in the next request."""

    id: str | None  # None: the recording sent an empty id, so ram must make one up
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Case:
    provider: str
    wire: str
    base_path: str
    """The provider's own base path (what follows the host in its documented base URL)."""
    model: str
    responses: Callable[[], list[RecordedResponse]]
    answer: str = ""
    """The exact text on stdout (stripped) and in the json `result`; "" for error recordings."""
    reasoning: str = ""
    """A piece of the recorded reasoning that must appear nowhere a user reads the answer."""
    usage: dict[str, int] | None = None
    calls: tuple[tuple[Call, ...], ...] = ()
    """The tool calls of each recorded response that makes some, in order."""
    error: str | tuple[str, ...] = ""
    """A piece of the one `error:` line an error recording must end in (a tuple: one of these pieces)."""
    requests: int | None = None
    """How many requests an error recording must take (retries included), when that is certain."""
    second_turn: bool = False
    """Also run `ram -c` and check what the next request carries of this answer."""
    sent_back: Callable[[ReceivedRequest], None] | None = None
    """The check of the first request that carries the recorded answer back (None: no reasoning at all)."""
    recovers: bool = False
    """The recording holds an error answer the model recovers from (ram may retry it first, or hand it back to the
    model): the number of requests and turns is left open, the outcome is not."""
    env: dict[str, str] = field(default_factory=dict)

    @property
    def route(self) -> str:
        return self.base_path + ("/chat/completions" if self.wire == "openai" else "/v1/messages")


# ---- what must be sent back ------------------------------------------------------------------------------------------


def deepseek_tool_turn(request: ReceivedRequest) -> None:
    """DeepSeek thinking mode: the reasoning of a turn that called tools goes back with it, whole."""
    recorded = streamed(ai_sdk_chunks("ai-sdk/deepseek-tool-call.chunks.txt"), "reasoning_content")
    [message] = [m for m in assistant_messages(request) if m.get("tool_calls")]
    assert message.get("reasoning_content") == recorded
    assert set(message) - {"role", "content", "tool_calls", "reasoning_content"} == set()


def merged_reasoning_details(response: RecordedResponse) -> list[dict[str, Any]]:
    """OpenRouter's streamed `reasoning_details` accumulated as its docs say: fragments of one `index` joined (their
    text concatenated, the signature the one non-empty), their other fields kept; empty values left out."""
    merged: dict[int, dict[str, Any]] = {}
    for chunk in sse_data(response):
        for choice in chunk.get("choices") or []:
            for detail in (choice.get("delta") or {}).get("reasoning_details") or []:
                into = merged.setdefault(detail.get("index", 0), {})
                for key, value in detail.items():
                    if key == "text":
                        into["text"] = into.get("text", "") + value
                    elif value not in (None, ""):
                        into[key] = value
    return [{k: v for k, v in merged[i].items() if v not in (None, "")} for i in sorted(merged)]


def openrouter_details(request: ReceivedRequest) -> None:
    [recorded] = vcr("pydantic-ai/test_openrouter_streaming_reasoning.yaml")
    expected = merged_reasoning_details(recorded)
    assert expected[0]["signature"].startswith("Et0BCkgI") and expected[0]["text"].startswith("This is a simple")
    [message] = assistant_messages(request)
    sent = [{k: v for k, v in d.items() if v not in (None, "")} for d in message.get("reasoning_details") or []]
    assert sent == expected
    assert "reasoning_content" not in message and "<think>" not in str(message.get("content"))


def anthropic_thinking(request: ReceivedRequest) -> None:
    [recorded] = vcr("pydantic-ai/test_anthropic_model_thinking_part_stream.yaml")
    thinking, text = anthropic_blocks(recorded)
    assert thinking["type"] == "thinking" and thinking["signature"] and text["type"] == "text"
    [message] = assistant_messages(request)
    blocks = [{k: v for k, v in b.items() if k != "cache_control"} for b in message["content"]]
    assert blocks == [
        {"type": "thinking", "thinking": thinking["thinking"], "signature": thinking["signature"]},
        {"type": "text", "text": text["text"]},
    ]


# ---- the recordings ------------------------------------------------------------------------------------------------

P = "pydantic-ai/"
A = "ai-sdk/"
I = "issues/"  # noqa: E741

OPENAI_TOOLS = P + "test_complex_agent_run_in_workflow.yaml"
ANTHROPIC_THINKING = P + "test_anthropic_model_thinking_part_stream.yaml"
HF_THINK = P + "test_hf_model_thinking_part.yaml"
ZAI_JSON = P + "test_zai_preserved_thinking_round_trip.yaml"


def _text_of(name: str, index: int = 0) -> str:
    return "".join(b["text"] for b in anthropic_blocks(vcr(name, index)[0]) if b["type"] == "text")


def _after_think(name: str) -> str:
    return str(json_message(vcr(name, 0)[0])["content"]).split("</think>", 1)[1]


CASES: dict[str, Case] = {
    # OpenAI: two calls in one message, then one whose arguments come in pieces
    "openai-parallel-tool-calls": Case(
        "OpenAI",
        "openai",
        "/v1",
        "gpt-4o",
        lambda: vcr(OPENAI_TOOLS, 0, 1),
        answer=DONE,
        usage=usage(364 + 423, 40 + 15),
        calls=(
            (
                Call("call_3rqTYrA6H21AYUaRGP4F66oq", "get_country", {}),
                Call("call_Xw9XMKBJU48kAAd78WgIswDx", "get_product_name", {}),
            ),
            (Call("call_Vz0Sie91Ap56nH0ThKGrZXT7", "get_weather", {"city": "Mexico City"}),),
        ),
    ),
    "openai-context-length": Case(
        "OpenAI",
        "openai",
        "/v1",
        "gpt-4o",
        lambda: [raw_http(I + "openai_context_length.http")],
        error="maximum context length is 4097 tokens",
    ),
    # Anthropic: extended thinking with a signature, then text
    "anthropic-thinking": Case(
        "Anthropic",
        "anthropic",
        "",
        "claude-sonnet-4-0",
        lambda: vcr(ANTHROPIC_THINKING),
        answer=_text_of(ANTHROPIC_THINKING),
        reasoning="This is a straightforward question about pedest",
        usage=usage(43, 282),
        second_turn=True,
        sent_back=anthropic_thinking,
    ),
    "anthropic-prompt-too-long": Case(
        "Anthropic",
        "anthropic",
        "",
        "claude-sonnet-4-5",
        lambda: [raw_http(I + "anthropic_prompt_too_long.http")],
        error="prompt is too long: 203284 tokens > 200000 maximum",
    ),
    # DeepSeek: reasoning_content, a tool call with its arguments in pieces, cache hits
    "deepseek-reasoner-tool-call": Case(
        "DeepSeek",
        "openai",
        "",
        "deepseek-reasoner",
        lambda: [ai_sdk_chunks(A + "deepseek-tool-call.chunks.txt")],
        answer=DONE,
        reasoning="The user is asking for the weather in San Francisco",
        usage=usage(339 - 320, 83, read=320),
        calls=((Call("call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", "weather", {"location": "San Francisco"}),),),
        sent_back=deepseek_tool_turn,
    ),
    "deepseek-reasoner-answer": Case(
        "DeepSeek",
        "openai",
        "",
        "deepseek-reasoner",
        lambda: vcr(P + "test_deepseek_model_thinking_stream.yaml"),
        answer="Hello there! 😊 How can I help you today?",
        reasoning='Hmm, the user just said "Hello"',
        usage=usage(6, 212),
        second_turn=True,
    ),
    "deepseek-context-length": Case(
        "DeepSeek",
        "openai",
        "",
        "deepseek-chat",
        lambda: [raw_http(I + "deepseek_context_length.http")],
        error="maximum context length is 65536 tokens",
    ),
    # Groq
    "groq-tool-call": Case(
        "Groq",
        "openai",
        "/openai/v1",
        "llama-3.3-70b-versatile",
        lambda: [ai_sdk_chunks(A + "groq-tool-call.chunks.txt")],
        answer=DONE,
        usage=usage(210, 15),
        calls=((Call("tk85n1k4m", "weather", {}),),),
    ),
    # Groq's 400 `tool_use_failed`, then the model's valid call and its answer: the whole recorded conversation
    "groq-tool-use-failed-400": Case(
        "Groq",
        "openai",
        "/openai/v1",
        "openai/gpt-oss-120b",
        lambda: vcr(P + "test_tool_use_failed_error.yaml"),
        answer="The first call failed due to missing and extra parameters, as expected. The second call succeeded "
        'and returned: "Something with name: test".',
        reasoning="We need to call with correct param",
        usage=usage(301 + 336 - 256, 52 + 96, read=256),
        calls=((Call("fc_311ba17b-89f9-48d3-8fd9-7e74a1264855", "get_something_by_name", {"name": "test"}),),),
        recovers=True,
    ),
    # ... and in a 200 stream (`event: error` after some text), then the model's call
    "groq-tool-use-failed-in-stream": Case(
        "Groq",
        "openai",
        "/openai/v1",
        "openai/gpt-oss-120b",
        lambda: vcr(P + "test_tool_use_failed_error_streaming_with_text.yaml"),
        answer=DONE,
        reasoning='The user says: "dont make a tool call',
        usage=usage(343, 180),
        calls=((Call("fc_299e8414-9e94-4d9c-bd06-c096f8919768", "final_result", {"response": "no"}),),),
        recovers=True,
    ),
    "groq-context-length": Case(
        "Groq",
        "openai",
        "/openai/v1",
        "llama3-70b-8192",
        lambda: [raw_http(I + "groq_context_length.http")],
        error="Please reduce the length of the messages or completion",
    ),
    # OpenRouter: `: OPENROUTER PROCESSING` comments, reasoning + reasoning_details, errors
    "openrouter-reasoning-details": Case(
        "OpenRouter",
        "openai",
        "/api/v1",
        "anthropic/claude-sonnet-4.5",
        lambda: vcr(P + "test_openrouter_streaming_reasoning.yaml"),
        answer="2 + 2 = 4",
        reasoning="This is a simple arithmetic question",
        usage=usage(43, 36),
        second_turn=True,
        sent_back=openrouter_details,
    ),
    "openrouter-error-after-length": Case(
        "OpenRouter",
        "openai",
        "/api/v1",
        "minimax/minimax-m2:free",
        lambda: vcr(P + "test_openrouter_stream_error.yaml"),
        reasoning="to respond to a greeting",
        error=("Token limit reached", "output token limit"),
    ),
    "openrouter-429": Case(
        "OpenRouter",
        "openai",
        "/api/v1",
        "google/gemini-2.0-flash-exp:free",
        lambda: vcr(P + "test_openrouter_errors_raised.yaml"),
        error="temporarily rate-limited upstream",
        requests=3,
    ),
    "openrouter-context-length": Case(
        "OpenRouter",
        "openai",
        "/api/v1",
        "deepseek/deepseek-chat-v3-0324:free",
        lambda: [raw_http(I + "openrouter_context_length.http")],
        error="maximum context length is 131072 tokens",
    ),
    # Cerebras: a JSON body (the recorded request did not stream) with `reasoning`
    "cerebras-reasoning-json": Case(
        "Cerebras",
        "openai",
        "/v1",
        "zai-glm-4.7",
        lambda: vcr(P + "test_cerebras_zai_reasoning_replayed_as_think_tags.yaml", 0),
        answer="25 * 4 = 100.",
        reasoning="The user wants me to solve the multiplication problem",
        usage=usage(17, 415),
        second_turn=True,
    ),
    # Hugging Face: the router streaming (novita), and DeepSeek-R1 with <think> in the content (together, JSON)
    "huggingface-router-stream": Case(
        "Hugging Face",
        "openai",
        "/novita/v3/openai",
        "meta-llama/llama-3.1-8b-instruct",
        lambda: vcr(P + "test_cancel_recorded_provider_streamhuggingface.yaml", 1),
        answer="Paris",
        usage=usage(40, 2),
    ),
    "huggingface-think-tags-json": Case(
        "Hugging Face",
        "openai",
        "/together/v1",
        "deepseek-ai/DeepSeek-R1",
        lambda: vcr(HF_THINK, 0),
        answer=_after_think(HF_THINK),
        reasoning="Okay, the user asked",
        usage=usage(10, 995),
        second_turn=True,
    ),
    # Mistral: Magistral's content as a list of parts, thinking among them; a tool call without `index`
    "mistral-magistral-parts": Case(
        "Mistral",
        "openai",
        "/v1",
        "magistral-medium-2507",
        lambda: [ai_sdk_chunks(A + "mistral-reasoning.chunks.txt")],
        answer="2 + 2 = 4",
        reasoning="This is basic arithmetic",
        usage=usage(10, 46),
        second_turn=True,
    ),
    "mistral-tool-call": Case(
        "Mistral",
        "openai",
        "/v1",
        "mistral-small-latest",
        lambda: [ai_sdk_chunks(A + "mistral-tool-call.chunks.txt")],
        answer=DONE,
        usage=usage(124, 22),
        calls=((Call("gSIMJiOkT", "weather", {"location": "San Francisco"}),),),
    ),
    # Z.ai (GLM): reasoning_content streamed; a JSON body
    "zai-thinking-stream": Case(
        "Z.ai",
        "openai",
        "/api/paas/v4",
        "glm-4.7",
        lambda: vcr(P + "test_zai_thinking_stream.yaml"),
        answer="4",
        reasoning="Analyze the User's Request",
        usage=usage(13, 564),
        second_turn=True,
    ),
    "zai-json-answer": Case(
        "Z.ai",
        "openai",
        "/api/paas/v4",
        "glm-4.7",
        lambda: vcr(ZAI_JSON, 0),
        answer=str(json_message(vcr(ZAI_JSON, 0)[0])["content"]),
        reasoning="The user is asking for the product of 17 and 19",
        usage=usage(17, 172),
    ),
    # Crusoe: vLLM streaming; a tool call and its recorded answer (JSON bodies, `reasoning`, cache reads)
    "crusoe-stream": Case(
        "Crusoe",
        "openai",
        "/v1",
        "meta-llama/Llama-3.3-70B-Instruct",
        lambda: vcr(P + "test_crusoe_model_streaming.yaml"),
        answer="1, 2, 3, 4, 5",
        usage=usage(46, 14),
    ),
    "crusoe-tool-call-json": Case(
        "Crusoe",
        "openai",
        "/v1",
        "zai/GLM-5.2",
        lambda: vcr(P + "test_crusoe_tool_calling.yaml", 0, 1),
        answer="The weather in Paris is currently **sunny** with a temperature of **25°C**. "
        "It's a great day to enjoy the city! ☀️",
        reasoning="I'll call the get_weather function",
        usage=usage(167 + 214 - 64, 37 + 54, read=64),
        calls=((Call("chatcmpl-tool-bbb91941bf76335c", "get_weather", {"city": "Paris"}),),),
    ),
    # Ollama's OpenAI-compatible /v1 (ollama.com; the same server code as a local one)
    "ollama-json": Case(
        "Ollama",
        "openai",
        "/v1",
        "gpt-oss:20b",
        lambda: vcr(P + "test_ollama_cloud_tool_output.yaml", 0),
        answer="Paris.",
        reasoning="We need to answer question",
        usage=usage(134, 122),
    ),
    # Gemini's OpenAI-compatible endpoint: a tool call with an empty id, then the recorded answer
    "gemini-tool-call-empty-id": Case(
        "Gemini (OpenAI-compatible)",
        "openai",
        "/v1beta/openai",
        "gemini-2.5-pro-preview-05-06",
        lambda: vcr(P + "test_compatible_api_with_tool_calls_without_id.yaml"),
        answer="The current time is Noon.",
        usage=usage(35 + 66, 12 + 6),
        calls=((Call(None, "get_current_time", {}),),),
    ),
    "gemini-context-length": Case(
        "Gemini (OpenAI-compatible)",
        "openai",
        "/v1beta/openai",
        "gemini-2.5-pro",
        lambda: [raw_http(I + "gemini_context_length.http")],
        error="exceeds the maximum number of tokens allowed (131072)",
    ),
    # Heroku Managed Inference
    "heroku-json": Case(
        "Heroku",
        "openai",
        "/v1",
        "claude-3-7-sonnet",
        lambda: vcr(P + "test_heroku_model_provider_claude_3_7_sonnet.yaml"),
        answer="The capital of France is Paris. It's not only the political capital but also a major cultural and "
        "economic hub in Europe, known for landmarks like the Eiffel Tower, the Louvre Museum, and Notre-Dame "
        "Cathedral.",
        usage=usage(14, 51),
    ),
}

SUCCESS = [name for name, case in CASES.items() if not case.error]
ERRORS = [name for name, case in CASES.items() if case.error]


# ---- running one ---------------------------------------------------------------------------------------------------


def serve(case: Case) -> ReplayServer:
    responses = case.responses()
    if case.error:
        return ReplayServer(responses, repeat_last=True)
    return ReplayServer(responses, then=lambda request: scripted(case.wire))


def run(case: Case, server: ReplayServer, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = ram_env(case.wire, server.url + case.base_path, case.model, RAM_MAX_RETRIES=RETRIES, **case.env)
    proc = run_ram(*args, env=env, cwd=tmp_path)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def assert_routes(case: Case, server: ReplayServer) -> None:
    assert server.requests, "ram sent nothing"
    assert {r.route for r in server.requests} == {case.route}
    assert all(
        r.method == "POST" and r.body["stream"] is True and r.body["model"] == case.model for r in server.requests
    )


def wire_calls(case: Case, request: ReceivedRequest) -> list[tuple[str, str, dict[str, Any]]]:
    """Every tool call the request carries on its assistant messages: (id, name, arguments)."""
    if case.wire == "anthropic":
        blocks = [b for m in assistant_messages(request) for b in m["content"] if b["type"] == "tool_use"]
        return [(b["id"], b["name"], b["input"]) for b in blocks]
    calls = [c for m in assistant_messages(request) for c in m.get("tool_calls") or []]
    return [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls]


def wire_results(request: ReceivedRequest) -> list[str]:
    return [m["tool_call_id"] for m in request.body["messages"] if m.get("role") == "tool"]


# ---- the tests -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SUCCESS)
def test_the_answer_is_printed_and_nothing_else(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    with serve(case) as server:
        proc = run(case, server, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == case.answer.strip()
    assert not error_lines(proc.stderr), proc.stderr
    if case.reasoning:
        assert case.reasoning not in proc.stdout and case.reasoning not in proc.stderr
    assert "<think>" not in proc.stdout and "</think>" not in proc.stdout
    assert_routes(case, server)


@pytest.mark.parametrize("name", SUCCESS)
def test_the_json_result_has_the_answer_and_the_usage(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    with serve(case) as server:
        proc = run(case, server, tmp_path, "--output-format", "json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["is_error"] is False and result["subtype"] == "success"
    assert result["result"].strip() == case.answer.strip()
    if case.reasoning:
        assert case.reasoning not in result["result"]
    assert result["usage"] == case.usage
    if not case.recovers:
        assert result["num_turns"] == 1 + len(case.calls)


@pytest.mark.parametrize("name", [n for n in SUCCESS if CASES[n].calls or CASES[n].second_turn])
def test_what_ram_sends_back(name: str, tmp_path: Path) -> None:
    """The recorded tool calls each answered once, by id, in the follow-up; the reasoning sent back only where
    the provider asks for it; for `second_turn` cases the next turn (`ram -c`) carries the recorded answer."""
    case = CASES[name]
    with serve(case) as server:
        first = run(case, server, tmp_path)
        assert first.returncode == 0, first.stderr
        if case.second_turn:
            second = run(case, server, tmp_path, "-c")
            assert second.returncode == 0, second.stderr
            assert second.stdout.strip() == DONE
    requests = server.requests
    if not case.recovers:
        assert len(requests) == 1 + len(case.calls) + case.second_turn
    carrying: ReceivedRequest | None = None
    for calls in case.calls:
        # the first request that carries these calls back is their follow-up
        follow_up = next(
            r for r in requests if [n for _, n, _ in wire_calls(case, r)][-len(calls) :] == [c.name for c in calls]
        )
        carrying = carrying or follow_up
        sent = wire_calls(case, follow_up)[-len(calls) :]
        assert [(name, args) for _, name, args in sent] == [(c.name, c.arguments) for c in calls]
        for (sent_id, _, _), call in zip(sent, calls, strict=True):
            assert sent_id if call.id is None else sent_id == call.id
        if case.wire == "openai":
            assert wire_results(follow_up)[-len(calls) :] == [sent_id for sent_id, _, _ in sent]
    carrying = carrying or requests[1]
    if case.sent_back is not None:
        case.sent_back(carrying)
    else:
        for request in requests[1:]:
            assert reasoning_sent(request) == [], f"reasoning sent back to {case.provider}"
    if case.second_turn:
        [*_, answer] = assistant_messages(requests[-1])
        content = answer["content"]
        text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
        assert text.strip() == case.answer.strip()


@pytest.mark.parametrize("name", ERRORS)
def test_an_error_is_one_clear_line(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    with serve(case) as server:
        proc = run(case, server, tmp_path)
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    lines = error_lines(proc.stderr)
    assert len(lines) == 1, proc.stderr
    pieces = (case.error,) if isinstance(case.error, str) else case.error
    assert any(piece in lines[0] for piece in pieces), lines[0]
    assert "\n" not in lines[0] and len(lines[0]) < 1000
    if case.reasoning:
        assert case.reasoning not in proc.stdout and case.reasoning not in proc.stderr
    assert_routes(case, server)
    if case.requests is not None:
        assert len(server.requests) == case.requests


def test_every_recording_is_used_and_named_in_the_manifest() -> None:
    """No recording lies unused, and each is listed with its source in the MANIFEST."""
    from .replay import RECORDED

    manifest = (RECORDED / "MANIFEST.md").read_text(encoding="utf-8")
    source = Path(__file__).read_text(encoding="utf-8")
    for path in sorted(p for p in RECORDED.rglob("*") if p.is_file() and p.name != "MANIFEST.md"):
        assert f"`{path.relative_to(RECORDED)}`" in manifest, f"{path.name} is not in the MANIFEST"
        assert path.name in source, f"{path.name} is not replayed by any case"


def test_the_replay_server_sends_the_recorded_bytes(tmp_path: Path) -> None:
    """The harness itself: what a client reads from the replay server is the recording, piece for piece."""
    import socket

    [recorded] = vcr("pydantic-ai/test_openrouter_stream_error.yaml")
    assert vcr_route("pydantic-ai/test_openrouter_stream_error.yaml") == "/api/v1/chat/completions"
    with ReplayServer([recorded]) as server:
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(b"POST /api/v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}")
            received = b""
            while chunk := sock.recv(65536):
                received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0] == b"HTTP/1.1 200 OK"
    assert b"content-type: text/event-stream" in head and b"transfer-encoding: chunked" in head
    pieces = []
    while True:
        size, _, body = body.partition(b"\r\n")
        if int(size, 16) == 0:
            break
        pieces.append(body[: int(size, 16)])
        body = body[int(size, 16) + 2 :]
    assert tuple(pieces) == recorded.chunks
    assert pieces[0] == b": OPENROUTER PROCESSING\n\n" and b'"Token limit reached"' in b"".join(pieces)
