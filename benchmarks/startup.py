"""Startup latency of the `ram` command, next to the bare interpreter floor.

Measures, over N runs each (after one discarded warm-up run):

* `ram --version` wall time (target ≤ 100 ms median), and `python -c pass` / `python -S -c pass` for scale;
* launch → first HTTP request arriving at the loopback fake LLM server, for the OpenAI-compatible and the
  Anthropic provider (target ≤ 300 ms median). The server runs in a thread of this process, so its
  `received_at` and our `t0` come from the same `time.monotonic()` clock;
* total wall time of `ram "hello"` against the fake server and of `ram --mock hello`, for reference.

Figures only, no pass/fail: shared machines are noisy, so compare medians and minimums, not single runs.
Run: `.venv/bin/python -m benchmarks.startup [--runs N]` from the repo root.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.fakes.fake_llm import FakeLLMServer, Reply

from ._stats import fmt_seconds, line, runs_from

VERSION_TARGET = "target ≤ 100 ms"
FIRST_REQUEST_TARGET = "target ≤ 300 ms"
API_KEY = "test-key"
_STRIPPED_PREFIXES = ("OPENAI_", "ANTHROPIC_")
_STRIPPED_NAMES = (
    "QUERY_MOCK",
    "TRACE",
    "RAM_DEBUG",
    "RAM_MAX_RETRIES",
    "RAM_MAX_OUTPUT_TOKENS",
    # This workplace sets PYTHONDONTWRITEBYTECODE=1, which makes every launch recompile our (editable) sources:
    # no user's machine does that, and pip-installed packages ship their bytecode. The warm-up run writes it.
    "PYTHONDONTWRITEBYTECODE",
)


def ram_command() -> list[str]:
    """The `ram` console script next to this interpreter, or `python -m react_agent_mini` without one."""
    script = Path(sys.executable).parent / "ram"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "react_agent_mini"]


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without provider keys, URLs or agent switches, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_STRIPPED_PREFIXES) and k not in _STRIPPED_NAMES}
    env.update(extra or {})
    return env


def run_once(argv: Sequence[str], env: Mapping[str, str], cwd: str) -> tuple[float, float, int, str]:
    """(t0, seconds until exit, exit code, stderr) for one run; t0 is time.monotonic() just before Popen."""
    t0 = time.monotonic()
    proc = subprocess.Popen(
        argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, err = proc.communicate(timeout=60)
    return t0, time.monotonic() - t0, proc.returncode, err.decode(errors="replace")


def time_command(argv: Sequence[str], runs: int, env: Mapping[str, str], cwd: str) -> tuple[list[float], str]:
    """Wall times of `runs` successful runs (after one warm-up), and the first failure's stderr if any."""
    samples: list[float] = []
    failure = ""
    for i in range(runs + 1):
        _, elapsed, code, err = run_once(argv, env, cwd)
        if code != 0:
            failure = failure or f"exit {code}: {err.strip()[-300:]}"
        elif i > 0:
            samples.append(elapsed)
    return samples, failure


def time_provider(server: FakeLLMServer, provider: str, runs: int, cwd: str) -> tuple[list[float], list[float], str]:
    """(launch → first request, total wall time, first failure) of `ram "hello"` against the fake server."""
    if provider == "openai":
        env = clean_env({"OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": server.openai_base_url})
    else:
        env = clean_env({"ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": server.anthropic_base_url})
    argv = [*ram_command(), "hello"]
    first: list[float] = []
    total: list[float] = []
    failure = ""
    for i in range(runs + 1):
        seen = len(server.requests)
        server.enqueue(Reply(text="Hi there.", chunk_size=16))
        t0, elapsed, code, err = run_once(argv, env, cwd)
        new = server.requests[seen:]
        if code != 0 or len(new) != 1:
            failure = failure or f"exit {code}, {len(new)} request(s): {err.strip()[-300:]}"
            continue
        if i > 0:
            first.append(new[0].received_at - t0)
            total.append(elapsed)
    return first, total, failure


def report(label: str, samples: Sequence[float], note: str, failure: str) -> None:
    print(line(label, samples, note))
    if failure:
        print(f"  ! some runs failed: {failure}")


def main(argv: Sequence[str] | None = None) -> int:
    runs = runs_from(argv, "benchmarks.startup", __doc__, 15)
    ram = ram_command()
    env = clean_env()

    with tempfile.TemporaryDirectory(prefix="ram-bench-") as cwd:
        floor, floor_fail = time_command([sys.executable, "-c", "pass"], runs, env, cwd)
        floor_s, floor_s_fail = time_command([sys.executable, "-S", "-c", "pass"], runs, env, cwd)
        version, version_fail = time_command([*ram, "--version"], runs, env, cwd)
        mock, mock_fail = time_command([*ram, "--mock", "hello"], runs, env, cwd)
        with FakeLLMServer(api_key=API_KEY) as server:
            providers = {name: time_provider(server, name, runs, cwd) for name in ("openai", "anthropic")}

    floor_note = f"python -c pass: {fmt_seconds(min(floor))} min" if floor else ""
    print(f"startup: {' '.join(ram)}  (python {sys.version.split()[0]}, {runs} runs + 1 warm-up each)")
    print()
    report("python -c pass", floor, "interpreter floor", floor_fail)
    report("python -S -c pass", floor_s, "floor without site", floor_s_fail)
    report("ram --version", version, f"{VERSION_TARGET}; {floor_note}", version_fail)
    for name, (first, _, failure) in providers.items():
        report(f"launch → first request ({name})", first, FIRST_REQUEST_TARGET, failure)
    for name, (_, total, _) in providers.items():
        report(f'ram "hello" total ({name})', total, "fake server, one short reply", "")
    report("ram --mock hello total", mock, "reference; two model calls, two tool calls", mock_fail)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
