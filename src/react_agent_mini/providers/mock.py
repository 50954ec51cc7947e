"""The scripted model behind `--mock` / `QUERY_MOCK=1`: offline, deterministic, and driving the real tool loop.

It reads the request the loop built (the user's last text and the tool results since) and answers from a
script, streaming its text in small pieces like a real model:
- `echo <text>` (upstream react-agent-mini's convention): call Echo with `<text>`, then answer `Echo reply: <result>`;
- anything else: the demo. With the codebase tools it globs and greps the workspace in one message (two calls
  run in parallel), reads the file it found, and answers from what it read; with only Echo, it echoes twice.
  It runs in whatever folder the user is in, so what it looks for is in any folder with code (a `def`, `class`,
  `function`, …) and every outcome reads well: no code (it reads the newest file), no file at all, a binary file.
Everything it says is labelled as scripted, so nobody mistakes it for a model, and each of its points is a
paragraph of its own (the REPL renders the text as Markdown, where single line breaks join lines).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator, Sequence

import msgspec

from ..events import ModelEvent, ModelResponse, StopReason, TextDelta
from ..messages import ContentBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from ..trace import trace
from .base import ModelRequest, trace_response

ECHO_PATTERN = re.compile(r"\becho\s+(.+)", re.IGNORECASE | re.DOTALL)
LABEL = "[scripted demo model, no API call made]"


class MockProvider(msgspec.Struct):
    """A ModelProvider that needs no network."""

    chunk_delay: float = 0.0
    """Seconds between streamed pieces (a little makes the demo watchable in a terminal)."""
    name: str = "mock"
    model: str = "mock-scripted"

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
        trace("api.request", messages=len(request.messages), tools=len(request.tools), model=self.model)
        task, results = _task_and_results(request.messages)
        tool_names = {t.name for t in request.tools}
        blocks = _answer(task, results, tool_names, call_number=_calls_since_task(request.messages))
        for block in blocks:
            if isinstance(block, TextBlock):
                for piece in _pieces(block.text):
                    if self.chunk_delay:
                        await asyncio.sleep(self.chunk_delay)
                    yield TextDelta(piece)
        stop: StopReason = "tool_use" if any(isinstance(b, ToolUseBlock) for b in blocks) else "end_turn"
        chars = sum(len(m.text) + sum(len(r.content) for r in m.tool_results) for m in request.messages)
        usage = Usage(input_tokens=(chars + len(request.system)) // 4, output_tokens=sum(_size(b) for b in blocks))
        response = ModelResponse(Message("assistant", tuple(blocks)), stop, usage)
        trace_response(response)
        yield response

    async def aclose(self) -> None:
        return None


def _size(block: ContentBlock) -> int:
    return len(block.text) // 4 if isinstance(block, TextBlock) else 10


def _pieces(text: str, size: int = 6) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _task_and_results(messages: Sequence[Message]) -> tuple[str, list[ToolResultBlock]]:
    """The newest user text and every tool result after it."""
    results: list[ToolResultBlock] = []
    for message in reversed(messages):
        if message.role == "user" and message.text.strip() and not message.meta:
            return message.text.strip(), list(reversed(results))
        results.extend(reversed(message.tool_results))
    return "", list(reversed(results))


def _calls_since_task(messages: Sequence[Message]) -> int:
    count = 0
    for message in reversed(messages):
        if message.role == "user" and message.text.strip() and not message.meta:
            break
        if message.role == "assistant":
            count += 1
    return count


def _answer(task: str, results: list[ToolResultBlock], tools: set[str], call_number: int) -> list[ContentBlock]:
    echo = ECHO_PATTERN.search(task)
    if echo and "Echo" in tools:
        if call_number == 0:
            return [ToolUseBlock("toolu_mock_echo_1", "Echo", {"message": echo.group(1).strip()})]
        return [TextBlock(f"Echo reply: {results[-1].content if results else ''}")]
    return _demo(task, results, tools, call_number)


def _demo(task: str, results: list[ToolResultBlock], tools: set[str], call_number: int) -> list[ContentBlock]:
    if {"Glob", "Grep", "Read"} <= tools:
        return _codebase_demo(task, results, call_number)
    if call_number == 0 and "Echo" in tools:
        intro = _paragraphs(
            LABEL,
            f"You asked: {task or '(nothing)'}",
            "I will show how the agent loop works: I ask for two tool calls in one message, "
            "the loop runs them in parallel and sends both results back.",
        )
        return [
            TextBlock(intro),
            ToolUseBlock("toolu_mock_demo_1", "Echo", {"message": "first call: the loop ran me"}),
            ToolUseBlock("toolu_mock_demo_2", "Echo", {"message": "second call: in the same turn"}),
        ]
    listed = "\n".join(f"- {r.tool_use_id}: {r.content}" for r in results)
    return [TextBlock(_paragraphs(LABEL, "Both results came back, each paired with its call:", listed, OUTRO))]


OUTRO = (
    "That is the ReAct loop: think, call tools, read the results, answer. "
    "Set OPENAI_API_KEY (DeepSeek by default) or ANTHROPIC_API_KEY to talk to a real model."
)
DEMO_PATTERN = r"\b(def|class|function|func|fn)\b"
"""What the demo greps for: a definition in most languages, so any folder with code has a match."""
READ_LINES = 40


def _paragraphs(*parts: str) -> str:
    """`parts` as Markdown paragraphs (a blank line between them), ending with a line break."""
    return "\n\n".join(part for part in parts if part) + "\n"


def _listed(result: ToolResultBlock | None) -> list[str]:
    """The paths a Glob/Grep result lists (notes and "no match" lines left out)."""
    if result is None or result.is_error:
        return []
    return [line for line in result.content.splitlines() if line and not line.startswith(("(", "[", "No "))]


def _codebase_demo(task: str, results: list[ToolResultBlock], call_number: int) -> list[ContentBlock]:
    """Look around the workspace the way a model would: glob and grep in parallel, read what was found, answer."""
    by_id = {r.tool_use_id: r for r in results}
    if call_number == 0:
        intro = _paragraphs(
            LABEL,
            f"You asked: {task or '(nothing)'}",
            "A real model would now explore the workspace. I will do the same with a fixed script: list the files "
            "and search for definitions (`def`, `class`, `function`, …) at once — two tool calls in one message, "
            "run in parallel.",
        )
        return [
            TextBlock(intro),
            ToolUseBlock("toolu_demo_glob", "Glob", {"pattern": "**/*"}),
            ToolUseBlock("toolu_demo_grep", "Grep", {"pattern": DEMO_PATTERN, "output_mode": "files_with_matches"}),
        ]
    files = _listed(by_id.get("toolu_demo_glob"))
    hits = _listed(by_id.get("toolu_demo_grep"))
    # a model would look at the code before its tests
    hits = sorted(hits, key=lambda path: any(part.startswith("test") for part in path.split("/")))
    target = (hits or files or [""])[0]
    if call_number == 1 and target:
        if hits:
            found = f"Found {len(files)} file(s), {len(hits)} with definitions in them. Reading {target}."
        else:
            found = f"Found {len(files)} file(s), none with code in it, so I read the newest: {target}."
        return [
            TextBlock(_paragraphs(found)),
            ToolUseBlock("toolu_demo_read", "Read", {"file_path": target, "limit": READ_LINES}),
        ]
    read = by_id.get("toolu_demo_read")
    if not target:
        seen = "This folder has no files for me to look at, so the tour ends here."
    elif read is None or read.is_error:
        seen = f"I could not read {target} as text ({_first_line(read)}), so the tour ends here."
    else:
        numbered = read.content.splitlines()
        first = next((ln.split("\t", 1)[1] for ln in numbered if "\t" in ln and ln.split("\t", 1)[1].strip()), "")
        seen = f"I read the first {min(READ_LINES, len(numbered))} lines of {target}; it opens with: {first.strip()!r}."
    return [TextBlock(_paragraphs(LABEL, seen, OUTRO))]


def _first_line(result: ToolResultBlock | None) -> str:
    text = result.content.strip().split("\n", 1)[0] if result is not None else ""
    return text.rstrip(".") or "no result"
