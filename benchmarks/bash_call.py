"""What one plain Bash call costs ram: the Bash tool running `true` (no sandbox), as a model's call pays it.

Per call, over `--runs` calls after a warm-up: wall time, and CPU time of this process (what ram itself spends:
spawning, pipes, the look for processes the command left running, the result). Beside it, `bash -c true` spawned
directly with `subprocess.run` (the floor a tool call cannot go under), and the look for leftovers alone
(`leftovers.Command.finished`, as the tool makes it when the command ends), with the number of processes on the
machine: before issue 28 that look read /proc/<pid>/stat of every process, so its cost grew with everything else
running here. Figures only. `--base SRC` is not offered: run this module twice, once with `PYTHONPATH=SRC`, in
turns, to compare another checkout. Run: `.venv/bin/python -m benchmarks.bash_call [--runs N]` from the repo root.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from react_agent_mini.tools import leftovers
from react_agent_mini.tools.base import ToolContext
from react_agent_mini.tools.builtin.bash import BashTool

from ._stats import line, runs_from

WARMUP = 5


async def timed(step: Callable[[], Awaitable[None]], runs: int) -> tuple[list[float], list[float]]:
    """(wall, this process's CPU) per run of `step`, after WARMUP unmeasured runs."""
    for _ in range(WARMUP):
        await step()
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        await step()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return walls, cpus


async def main(argv: Sequence[str] | None = None) -> None:
    runs = runs_from(argv, "benchmarks.bash_call", __doc__, 100)
    processes = sum(1 for entry in os.listdir("/proc") if entry.isdigit())
    print(f"bash_call: {runs} calls each after {WARMUP} warm-up; {processes} processes on this machine\n")
    with tempfile.TemporaryDirectory(prefix="ram-bash-bench-") as tmp:
        tool, ctx = BashTool(), ToolContext(cwd=Path(tmp))
        args = tool.validate({"command": "true"})

        async def call() -> None:
            out = await tool.call(args, ctx)
            assert not out.is_error, out.content

        async def spawn() -> None:
            subprocess.run(["bash", "-c", "true"], check=True)

        async def look() -> None:  # timed alone: a command's bash that has exited, not yet reaped, is looked at
            ended = subprocess.Popen(["true"])
            os.waitid(os.P_PID, ended.pid, os.WEXITED | os.WNOWAIT)
            wall, cpu = time.perf_counter(), time.process_time()
            command = leftovers.Command()
            command.started(ended.pid)
            command.finished(leftovers.Scan())
            look_cpu.append(time.process_time() - cpu)
            look_wall.append(time.perf_counter() - wall)
            ended.wait()

        look_wall: list[float] = []
        look_cpu: list[float] = []
        for label, step in (("Bash tool call (true)", call), ("bash -c true, subprocess.run", spawn)):
            walls, cpus = await timed(step, runs)
            print(line(label, walls, f"CPU of this process: median {statistics.median(cpus) * 1e3:.2f} ms", 32))
        await timed(look, runs)
        walls, cpus = look_wall[WARMUP:], look_cpu[WARMUP:]
        print(line("the look for leftovers alone", walls, f"CPU median {statistics.median(cpus) * 1e3:.2f} ms", 32))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
