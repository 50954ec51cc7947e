"""Renderers: what a terminal and a pipe see for the same events."""

from __future__ import annotations

import io

import msgspec

from react_agent_mini.events import (
    AssistantTurn,
    QueryEvent,
    StreamRetry,
    Terminal,
    TextDelta,
    ToolFinished,
    ToolStarted,
)
from react_agent_mini.messages import ToolResultBlock, ToolUseBlock, Usage, assistant_text
from react_agent_mini.output import RunSummary, TextRenderer, result_object

RETRY = StreamRetry(2, 5, 0.5, "openai API stream dropped midway", discarded_output=True)
EVENTS: list[QueryEvent] = [
    TextDelta("Hal"),
    RETRY,
    TextDelta("Hello"),
    AssistantTurn(assistant_text("Hello"), "end_turn", Usage()),
]


def render(stream: bool) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    renderer = TextRenderer(out, err, lambda use: str(use.input.get("message", "")), stream=stream)
    for event in EVENTS:
        renderer.event(event)
    renderer.finish(Terminal("completed", 1), RunSummary("s", "m"))
    return out.getvalue(), err.getvalue()


def test_a_terminal_sees_the_stream_and_the_retry() -> None:
    out, err = render(stream=True)
    assert out == "Hal [interrupted; retrying]\nHello\n"
    assert err == "[retry] openai API stream dropped midway — attempt 2/5 in 0.5s\n"


def test_a_pipe_sees_only_complete_messages() -> None:
    out, _ = render(stream=False)
    assert out == "Hello\n"


def test_tool_lines_and_errors_go_to_stderr() -> None:
    out, err = io.StringIO(), io.StringIO()
    renderer = TextRenderer(out, err, lambda use: "notes.txt")
    use = ToolUseBlock("t", "Read", {"file_path": "notes.txt"})
    renderer.event(ToolStarted(use))
    renderer.event(ToolFinished(use, ToolResultBlock("t", "File not found:\n notes.txt", is_error=True)))
    assert out.getvalue() == ""
    assert err.getvalue() == "[tool] Read: notes.txt\n[tool] Read error — File not found: notes.txt\n"


def test_result_object_fields() -> None:
    """Claude Code's shape: an API failure is `success` with is_error, its text as `result` and in `errors`."""
    summary = RunSummary("sid", "deepseek-chat", Usage(1, 2, 3, 4), "answer", 10, 7)
    result = result_object(Terminal("error", 2, "boom"), summary)
    assert result.pop("uuid")
    assert result == {
        "type": "result",
        "subtype": "success",
        "is_error": True,
        "duration_ms": 10,
        "duration_api_ms": 7,
        "num_turns": 2,
        "result": "boom",
        "errors": ["boom"],
        "error": "boom",
        "session_id": "sid",
        "model": "deepseek-chat",
        "stop_reason": None,
        "terminal_reason": "error",
        "total_cost_usd": None,
        "usage": {
            "input_tokens": 1,
            "output_tokens": 2,
            "cache_creation_input_tokens": 4,
            "cache_read_input_tokens": 3,
        },
        "permission_denials": [],
    }
    limited = result_object(Terminal("max_turns", 3), msgspec.structs.replace(summary, max_turns=3))
    assert limited["subtype"] == "error_max_turns" and "result" not in limited
    assert limited["errors"] == ["Reached maximum number of turns (3)"]
    aborted = result_object(Terminal("aborted", 1), summary)
    assert aborted["subtype"] == "error_during_execution" and aborted["error"] == "interrupted"
