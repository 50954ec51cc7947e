"""Startup latency of the `ram` command, next to the bare interpreter floor.

Measures, in N rounds (after one discarded warm-up round) that run every case once each, interleaved, so that every
figure sees the same load; each figure is also given as a ratio of medians to `python -c pass`:

* `ram --version` and `ram --help` wall time (target ≤ 100 ms median), and `python -c pass` / `python -S -c pass`
  for scale;
* launch → first HTTP request arriving at the loopback fake LLM server, for the OpenAI-compatible and the
  Anthropic provider (target ≤ 300 ms median). The server runs in a thread of this process, so its
  `received_at` and our `t0` come from the same `time.monotonic()` clock;
* total wall time of `ram "hello"` against the fake server and of `ram --mock hello`, for reference.

Figures only, no pass/fail: shared machines are noisy, so compare medians and minimums, not single runs.
`--base SRC` also times another checkout's package (e.g. `git worktree add /tmp/base main`, then `--base
/tmp/base/src`) through the same console script and interpreter, in the same rounds.
Run: `.venv/bin/python -m benchmarks.startup [--runs N] [--base SRC]` from the repo root.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from tests.fakes.fake_llm import FakeLLMServer, Reply

from ._stats import line

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


def run_with_cpu(argv: Sequence[str], env: Mapping[str, str], cwd: str) -> tuple[float, float, float, int, str]:
    """As `run_once`, plus the CPU seconds (user + system) the child used: less sensitive than wall time to
    what else the machine runs."""
    t0 = time.monotonic()
    proc = subprocess.Popen(
        argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.monotonic() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stderr.close()
    return t0, elapsed, usage.ru_utime + usage.ru_stime, proc.returncode, err.decode(errors="replace")


def report(label: str, samples: Sequence[float], note: str, failure: str, width: int = 34) -> None:
    print(line(label, samples, note, width))
    if failure:
        print(f"  ! some runs failed: {failure}")


class Case(NamedTuple):
    """One thing to time: a command, or `ram "hello"` against the fake server for a wire (`provider`)."""

    label: str
    argv: list[str]
    env: dict[str, str]
    provider: str = ""


def parse_options(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.startup", description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", type=int, default=15, metavar="N", help="measured runs per figure (default 15)")
    parser.add_argument(
        "--base",
        metavar="SRC",
        help="also time the ram whose package is in SRC (e.g. a worktree of main's src), interleaved, by putting SRC "
        "first on PYTHONPATH for the same console script",
    )
    options = parser.parse_args(argv)
    options.runs = max(1, options.runs)
    return options


def cases(ram: list[str], env: dict[str, str], base: str | None) -> list[Case]:
    variants = [("", env)]
    if base:
        variants.append((" [base]", {**env, "PYTHONPATH": base}))
    out = [Case("python -c pass", [sys.executable, "-c", "pass"], env)]
    out.append(Case("python -S -c pass", [sys.executable, "-S", "-c", "pass"], env))
    for suffix, variant in variants:
        out.append(Case(f"ram --version{suffix}", [*ram, "--version"], variant))
        out.append(Case(f"ram --help{suffix}", [*ram, "--help"], variant))
        out.append(Case(f"ram --mock hello{suffix}", [*ram, "--mock", "hello"], variant))
        for provider in ("openai", "anthropic"):
            out.append(Case(f"ram hello ({provider}){suffix}", [*ram, "hello"], variant, provider))
    return out


def run_case(case: Case, server: FakeLLMServer, cwd: str) -> tuple[float, float, float, str]:
    """(launch → first request or NaN, wall time, CPU time, failure or '') of one run of `case`."""
    env = dict(case.env)
    if case.provider == "openai":
        env.update(OPENAI_API_KEY=API_KEY, OPENAI_BASE_URL=server.openai_base_url)
    elif case.provider == "anthropic":
        env.update(ANTHROPIC_API_KEY=API_KEY, ANTHROPIC_BASE_URL=server.anthropic_base_url)
    seen = len(server.requests)
    if case.provider:
        server.enqueue(Reply(text="Hi there.", chunk_size=16))
    t0, elapsed, cpu, code, err = run_with_cpu(case.argv, env, cwd)
    new = server.requests[seen:]
    if code != 0 or (case.provider and len(new) != 1):
        return float("nan"), elapsed, cpu, f"exit {code}, {len(new)} request(s): {err.strip()[-300:]}"
    return (new[0].received_at - t0 if case.provider else float("nan")), elapsed, cpu, ""


def main(argv: Sequence[str] | None = None) -> int:
    options = parse_options(argv)
    ram = ram_command()
    env = clean_env()
    todo = cases(ram, env, options.base)
    walls: dict[str, list[float]] = {case.label: [] for case in todo}
    firsts: dict[str, list[float]] = {case.label: [] for case in todo}
    cpus: dict[str, list[float]] = {case.label: [] for case in todo}
    failures: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="ram-bench-") as cwd, FakeLLMServer(api_key=API_KEY) as server:
        for i in range(options.runs + 1):  # round robin: every case sees the same load; round 0 is the warm-up
            for case in todo:
                first, elapsed, cpu, failure = run_case(case, server, cwd)
                if failure:
                    failures.setdefault(case.label, failure)
                elif i > 0:
                    walls[case.label].append(elapsed)
                    cpus[case.label].append(cpu)
                    if case.provider:
                        firsts[case.label].append(first)

    floor = walls["python -c pass"]
    print(f"startup: {' '.join(ram)}  (python {sys.version.split()[0]}, {options.runs} interleaved rounds + 1 warm-up)")
    print()

    def note(samples: list[float], target: str = "") -> str:
        ratio = ""
        if samples and floor:
            ratio = f"{statistics.median(samples) / statistics.median(floor):.1f}× python -c pass"
        return "; ".join(part for part in (ratio, target) if part)

    def cpu_note(label: str) -> str:
        mine, base = cpus[label], cpus["python -c pass"]
        if not mine or not base:
            return ""
        return f"CPU {statistics.median(mine) * 1e3:.1f} ms = {statistics.median(mine) / statistics.median(base):.1f}×"

    for case in todo:
        label = case.label
        if case.provider:
            target = FIRST_REQUEST_TARGET
            report(f"launch → first request {label[10:]}", firsts[label], note(firsts[label], target), "", 42)
            report(
                f"{label} total", walls[label], f"{note(walls[label])}; {cpu_note(label)}", failures.get(label, ""), 42
            )
        else:
            target = VERSION_TARGET if label.startswith("ram --version") else ""
            notes = "; ".join(part for part in (note(walls[label], target), cpu_note(label)) if part)
            report(label, walls[label], notes, failures.get(label, ""), 42)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
