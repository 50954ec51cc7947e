"""How fast the REPL is ready to type in, and how fast the first answer comes after that.

`ram` with no task runs in a real pseudo-terminal (120×40) whose cursor-position requests are answered as a
terminal emulator does. Measured over N runs each (after one discarded warm-up run):

* launch → prompt ready: until the idle prompt is drawn (target ≤ 300 ms median). `ram` draws it before it
  imports prompt_toolkit and asyncio, with the keyboard's echo off, so keys typed from then on wait in the
  terminal and land in the prompt as typed (see `src/react_agent_mini/ui/early.py`);
* launch → typed keys shown: `hello` is typed as soon as the prompt is drawn; until prompt_toolkit shows it;
* launch → first request: then Enter; until that request reaches the loopback fake LLM server (the session is
  built in the background meanwhile, so this is not prompt + build);
* the same with the offline demo model (`QUERY_MOCK=1`), until its answer is on the screen.

Figures only, no pass/fail: shared machines are noisy, so compare medians and minimums, not single runs.
Run: `.venv/bin/python -m benchmarks.repl_startup [--runs N]` from the repo root.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from tests.fakes.fake_llm import FakeLLMServer, Reply
from tests.ui.test_repl_minimal import Term

from ._stats import line, runs_from
from .startup import API_KEY, clean_env, ram_command

READY_TARGET = "target ≤ 300 ms"
PLACEHOLDER = "Type a task"


def since_launch(term: Term, marker: str) -> float:
    """Seconds from launch until `marker` is on the screen (AssertionError if it never comes)."""
    term.expect(marker, timeout=30)
    return time.monotonic() - term.started


Samples = list[float]


def measure(server: FakeLLMServer, runs: int, cwd: str) -> tuple[Samples, Samples, Samples, Samples, str]:
    """(prompt ready, keys shown, first request, mock answer on screen) samples, and the first failure if any."""
    argv = ram_command()
    fake_env = clean_env({"OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": server.openai_base_url})
    mock_env = clean_env({"QUERY_MOCK": "1"})
    ready: list[float] = []
    echoed: list[float] = []
    first: list[float] = []
    mock: list[float] = []
    failure = ""
    for i in range(runs + 1):
        seen = len(server.requests)
        server.enqueue(Reply(text="Hi there.", chunk_size=16))
        with Term(env=fake_env, cwd=Path(cwd), program=argv) as term:
            try:
                up = since_launch(term, PLACEHOLDER)
                term.send("hello")
                shown = since_launch(term, "hello")
                term.send("\r")
                deadline = time.monotonic() + 30
                while len(server.requests) == seen and time.monotonic() < deadline:
                    term.settle(0.002)  # a terminal answers prompt_toolkit's cursor-position requests meanwhile
                if len(server.requests) == seen:
                    raise AssertionError("no request reached the fake server")
                if i > 0:
                    ready.append(up)
                    echoed.append(shown)
                    first.append(server.requests[seen].received_at - term.started)
            except AssertionError as exc:
                failure = failure or str(exc)[:300]
        with Term(env=mock_env, cwd=Path(cwd), program=argv) as term:
            try:
                since_launch(term, PLACEHOLDER)
                term.send("echo ping\r")
                answered = since_launch(term, "Echo reply: ping")
                if i > 0:
                    mock.append(answered)
            except AssertionError as exc:
                failure = failure or str(exc)[:300]
    return ready, echoed, first, mock, failure


def main(argv: Sequence[str] | None = None) -> int:
    runs = runs_from(argv, "benchmarks.repl_startup", __doc__, 15)
    with tempfile.TemporaryDirectory(prefix="ram-bench-") as cwd, FakeLLMServer(api_key=API_KEY) as server:
        ready, echoed, first, mock, failure = measure(server, runs, cwd)
    version = sys.version.split()[0]
    print(f"repl startup: {' '.join(ram_command())} in a pty  (python {version}, {runs} runs + 1 warm-up)")
    print()
    print(line("launch → prompt ready", ready, READY_TARGET))
    print(line("launch → typed keys shown", echoed, "'hello' typed when the prompt is drawn"))
    print(line("launch → first request", first, "Enter pressed when it shows"))
    print(line("launch → mock answer on screen", mock, "'echo ping', offline demo model"))
    if failure:
        print(f"  ! some runs failed: {failure}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
