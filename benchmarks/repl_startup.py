"""How fast the REPL is ready to type in, and how fast the first answer comes after that.

`ram` with no task runs in a real pseudo-terminal (120×40) whose cursor-position requests are answered as a
terminal emulator does. Measured over N runs each (after one discarded warm-up run):

* launch → prompt ready: until the idle prompt is drawn (target ≤ 300 ms median). `ram` draws it before it
  imports prompt_toolkit and asyncio, with the keyboard's echo off, so keys typed from then on wait in the
  terminal and land in the prompt as typed (see `src/react_agent_mini/ui/early.py`);
* launch → typed keys shown: `hello` is typed as soon as the prompt is drawn; until prompt_toolkit shows it;
* launch → first request: then Enter; until that request reaches the loopback fake LLM server (with nothing
  configured it goes before the REPL has loaded: `src/react_agent_mini/early/repl.py`), for both wire formats;
* the same with the offline demo model (`QUERY_MOCK=1`), until its answer is on the screen.

Every figure also as a multiple of `python -c pass`, measured in the same rounds. Figures only, no pass/fail:
shared machines are noisy, so compare medians and minimums, not single runs.
Run: `.venv/bin/python -m benchmarks.repl_startup [--runs N]` from the repo root.
"""

from __future__ import annotations

import statistics
import subprocess
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


def pty_run(server: FakeLLMServer, env: dict[str, str], cwd: str) -> tuple[float, float, float]:
    """One REPL run against the fake server: launch → prompt ready, → 'hello' shown, → its request received."""
    seen = len(server.requests)
    server.enqueue(Reply(text="Hi there.", chunk_size=16))
    with Term(env=env, cwd=Path(cwd), program=ram_command()) as term:
        up = since_launch(term, PLACEHOLDER)
        term.send("hello")
        shown = since_launch(term, "hello")
        term.send("\r")
        deadline = time.monotonic() + 30
        while len(server.requests) == seen and time.monotonic() < deadline:
            term.settle(0.002)  # a terminal answers prompt_toolkit's cursor-position requests meanwhile
        if len(server.requests) == seen:
            raise AssertionError("no request reached the fake server")
        return up, shown, server.requests[seen].received_at - term.started


def mock_run(cwd: str) -> float:
    """launch → the offline demo model's answer on the screen."""
    with Term(env=clean_env({"QUERY_MOCK": "1"}), cwd=Path(cwd), program=ram_command()) as term:
        since_launch(term, PLACEHOLDER)
        term.send("echo ping\r")
        return since_launch(term, "Echo reply: ping")


def python_pass() -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], env=clean_env(), check=True)
    return time.monotonic() - started


def measure(server: FakeLLMServer, runs: int, cwd: str) -> tuple[dict[str, Samples], str]:
    """Samples per figure, rounds interleaved (the floor, each wire format, the demo model), and the first
    failure if any."""
    envs = {
        "openai": clean_env({"OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": server.openai_base_url}),
        "anthropic": clean_env({"ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": server.anthropic_base_url}),
    }
    samples: dict[str, Samples] = {}
    failure = ""
    for i in range(runs + 1):
        taken: dict[str, float] = {"python -c pass": python_pass()}
        try:
            for wire, env in envs.items():
                up, shown, first = pty_run(server, env, cwd)
                taken[f"launch → prompt ready ({wire})"] = up
                taken[f"launch → typed keys shown ({wire})"] = shown
                taken[f"launch → first request ({wire})"] = first
            taken["launch → mock answer on screen"] = mock_run(cwd)
        except AssertionError as exc:
            failure = failure or str(exc)[:300]
            continue
        if i > 0:
            for label, value in taken.items():
                samples.setdefault(label, []).append(value)
    return samples, failure


NOTES = {
    "launch → prompt ready": READY_TARGET,
    "launch → typed keys shown": "'hello' typed when the prompt is drawn",
    "launch → first request": "Enter pressed when it shows",
    "launch → mock answer on screen": "'echo ping', offline demo model",
}


def main(argv: Sequence[str] | None = None) -> int:
    runs = runs_from(argv, "benchmarks.repl_startup", __doc__, 15)
    with tempfile.TemporaryDirectory(prefix="ram-bench-") as cwd, FakeLLMServer(api_key=API_KEY) as server:
        samples, failure = measure(server, runs, cwd)
    version = sys.version.split()[0]
    print(
        f"repl startup: {' '.join(ram_command())} in a pty  (python {version}, {runs} interleaved rounds + 1 warm-up)"
    )
    print()
    floor = statistics.median(samples["python -c pass"]) if samples.get("python -c pass") else 0.0
    for label, values in samples.items():
        note = next((text for prefix, text in NOTES.items() if label.startswith(prefix)), "")
        if floor and label != "python -c pass":
            note = f"{statistics.median(values) / floor:.1f}× python -c pass; {note}"
        print(line(label, values, note, width=40))
    if failure:
        print(f"  ! some runs failed: {failure}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
