"""Per-model-call overhead of the agent loop with a 200-message history, the model itself taking no time.

The Session runs with production deps (retry wrapper, read-only permission policy, the real compaction seam)
around an in-process provider that answers instantly: three text deltas and a response, or one Echo tool call.
So every measured microsecond is ours: the outbound copy, compaction stages, ModelRequest and tool specs,
tool validation and running, event plumbing and history bookkeeping. Scenarios (each turn timed on its own,
divided by its model calls; the history is reset to the same 200 messages before every turn):

* text-only answer (1 model call per turn);
* one Echo tool call, then a text answer (2 model calls per turn);
* text-only answer whose provider also builds the real OpenAI / Anthropic request body and JSON-encodes it
  as httpx would: the full CPU cost of one call on the real path, short of the socket.

Then the request-building pieces on their own: `build_body` and the JSON encoding, per provider.
Target: ≤ 5 ms per call at 200 messages. Figures only; compare medians and minimums on a shared machine.
Run: `.venv/bin/python -m benchmarks.loop_overhead [--runs N]` from the repo root.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from react_agent_mini.app import SYSTEM_PROMPT, default_tools, production_deps
from react_agent_mini.events import ModelEvent, ModelResponse, TextDelta
from react_agent_mini.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage, user_text
from react_agent_mini.permissions.policy import allow_read_only
from react_agent_mini.providers.anthropic import AnthropicProvider
from react_agent_mini.providers.base import ModelRequest
from react_agent_mini.providers.openai_compat import OpenAICompatProvider
from react_agent_mini.providers.retry import RetryPolicy
from react_agent_mini.session import Session
from react_agent_mini.tools.base import ToolContext

from ._stats import line

HISTORY_MESSAGES = 200
TARGET = "target ≤ 5 ms per call"
WARMUP_TURNS = 20
ANSWER = "Done: the function now handles the empty case and the tests pass."

BodyBuilder = Callable[[ModelRequest], dict[str, Any]]


def encode_like_httpx(body: dict[str, Any]) -> bytes:
    """The request bytes exactly as httpx 0.28 encodes `json=body`."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def make_history(n: int = HISTORY_MESSAGES, seed: int = 0) -> list[Message]:
    """`n` messages in groups of four: user asks, assistant calls Echo, tool result (1-2 KB), assistant answers."""
    rng = random.Random(seed)
    code_line = 'def handler(event: dict[str, Any]) -> str:  # «naïve» "quoted"\treturn json.dumps(event)\n'
    history: list[Message] = []
    for i in range(n // 4 + 1):
        use_id = f"call_{i:04d}"
        size = rng.randint(1000, 2000)
        output = (code_line * (size // len(code_line) + 1))[:size]
        history += [
            user_text(f"Step {i}: look at src/module_{i}.py and tell me what handler() returns.", id=f"u{i}"),
            Message(
                "assistant",
                (TextBlock("Let me check."), ToolUseBlock(use_id, "Echo", {"message": f"src/module_{i}.py"})),
                id=f"a{i}",
            ),
            Message("user", (ToolResultBlock(use_id, output),), id=f"r{i}"),
            Message("assistant", (TextBlock(f"handler() in module_{i} returns the event as JSON text."),), id=f"t{i}"),
        ]
    return history[:n]


@dataclass
class InstantProvider:
    """A ModelProvider answering at once: Echo when the last message is the user's text (if `use_tool`), else
    text. With `build`, it first builds and encodes the real request body, as a network provider would."""

    use_tool: bool = False
    build: BodyBuilder | None = None
    name: str = "instant"
    model: str = "instant"
    calls: int = 0

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
        self.calls += 1
        if self.build is not None:
            encode_like_httpx(self.build(request))
        if self.use_tool and request.messages[-1].is_user_text:
            block = ToolUseBlock(f"call_live_{self.calls}", "Echo", {"message": "hello from the benchmark"})
            yield ModelResponse(Message("assistant", (block,)), "tool_use", Usage(100, 10))
            return
        for i in range(0, len(ANSWER), 24):
            yield TextDelta(ANSWER[i : i + 24])
        yield ModelResponse(Message("assistant", (TextBlock(ANSWER),)), "end_turn", Usage(100, 10))

    async def aclose(self) -> None:
        return None


async def time_turns(provider: InstantProvider, history: Sequence[Message], turns: int, cwd: Path) -> list[float]:
    """Seconds per model call, one sample per turn (turn time / model calls in it), after a warm-up."""
    session = Session(
        deps=production_deps(provider, RetryPolicy(), allow_read_only),
        tools=default_tools(),
        context=ToolContext(cwd=cwd),
        system_prompt=SYSTEM_PROMPT,
    )
    samples: list[float] = []
    for i in range(WARMUP_TURNS + turns):
        session.messages = list(history)
        calls_before = provider.calls
        start = time.perf_counter()
        async for _ in session.run_turn("Now fix the empty-event case in handler()."):
            pass
        elapsed = time.perf_counter() - start
        if i >= WARMUP_TURNS:
            samples.append(elapsed / (provider.calls - calls_before))
    return samples


def time_calls(fn: Callable[[], object], runs: int) -> list[float]:
    """Seconds per call of `fn`, one sample per call, after a few warm-up calls."""
    for _ in range(5):
        fn()
    samples: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.loop_overhead", description=(__doc__ or "").partition("\n")[0]
    )
    parser.add_argument(
        "--runs", type=int, default=500, metavar="N", help="measured turns/calls per figure (default 500)"
    )
    args = parser.parse_args(argv)
    runs = max(1, args.runs)

    history = make_history()
    request = ModelRequest(
        SYSTEM_PROMPT, (*history, user_text("Now fix the empty-event case.")), default_tools().specs(), None
    )
    openai = OpenAICompatProvider("test-key", "http://127.0.0.1:9", "deepseek-chat")
    anthropic = AnthropicProvider("test-key", "http://127.0.0.1:9", "claude-sonnet-4-5")
    bodies = {"openai": openai.build_body(request), "anthropic": anthropic.build_body(request)}

    with tempfile.TemporaryDirectory(prefix="ram-bench-") as tmp:
        cwd = Path(tmp)
        loop_rows = {
            "loop, text answer": InstantProvider(),
            "loop, Echo tool call + answer": InstantProvider(use_tool=True),
            "loop + OpenAI body + JSON, text": InstantProvider(build=openai.build_body),
            "loop + Anthropic body + JSON, text": InstantProvider(build=anthropic.build_body),
        }
        loop_samples = {label: asyncio.run(time_turns(p, history, runs, cwd)) for label, p in loop_rows.items()}

    kb = {name: len(encode_like_httpx(body)) / 1000 for name, body in bodies.items()}
    print(
        f"loop overhead: {len(history)}-message history (request body: OpenAI {kb['openai']:.0f} KB, "
        f"Anthropic {kb['anthropic']:.0f} KB), instant in-process model, python {sys.version.split()[0]}, "
        f"{runs} samples each"
    )
    print()
    print("per model call, whole loop (history reset before each turn):")
    for label, samples in loop_samples.items():
        print(line(f"  {label}", samples, TARGET, width=38))
    print()
    print("request building alone, per call:")
    builders: dict[str, BodyBuilder] = {"OpenAI": openai.build_body, "Anthropic": anthropic.build_body}
    for name, build in builders.items():
        build_samples = time_calls(partial(build, request), runs)
        encode_samples = time_calls(partial(encode_like_httpx, bodies[name.lower()]), runs)
        print(line(f"  {name} build_body", build_samples, width=38))
        print(line(f"  {name} json encode (as httpx)", encode_samples, width=38))
    tools = default_tools()
    specs = time_calls(tools.specs, runs)
    print(line("  ToolRegistry.specs() (Echo only)", specs, "called once per model call by the loop", width=38))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
