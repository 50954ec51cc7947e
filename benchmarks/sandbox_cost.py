"""What the OS sandbox adds to one Bash call: the Bash tool running `true`, plain and under bwrap.

Each figure is the whole tool call as the model's call pays it (cwd file, pipes, spawn, wait, /proc looks,
result layout), timed over `--runs` calls after a warm-up, in a workspace with a `.git` directory:

* plain: `/bin/bash -c` as without the sandbox;
* sandboxed (workspace-write), no deny rules: forked in the session's resident sandbox (`sandbox/resident.py`);
* the same with a bwrap per command (`RAM_SANDBOX_RESIDENT=0`, as before the resident): bwrap's namespaces and
  mounts and the launcher bash every call;
* the same with an anchored Read deny rule (`Read(./secrets/**)`: one directory looked at);
* the same with a deny rule that matches at any depth (`Read(.env)`), in a workspace of 2,000 files in 200
  directories: the per-call walk over the workspace;
* read-only mode, and workspace-write with the network allowed (no network namespace to make).

The sandbox's first call also probes bwrap once per process (a bwrap start), and the resident's first call starts
it (bwrap and the helper's Python): both are timed apart, beside `python -c pass`. Figures only.
Run: `.venv/bin/python -m benchmarks.sandbox_cost [--runs N]` from the repo root.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from react_agent_mini.permissions.rules import RuleSet
from react_agent_mini.sandbox import bwrap, runtime
from react_agent_mini.sandbox.handle import Sandbox
from react_agent_mini.sandbox.settings import SandboxConfig, SandboxMode
from react_agent_mini.tools.base import ToolContext
from react_agent_mini.tools.builtin.bash import BashTool

from ._stats import line, runs_from

WARMUP = 5


def _workspace(root: Path, files: int = 0) -> Path:
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (root / "secrets").mkdir()
    (root / "secrets" / "key").write_text("k")
    for i in range(files):
        folder = root / f"pkg{i // 10:03d}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{i:04d}.py").write_text("")
    return root


async def _time_calls(tool: BashTool, ctx: ToolContext, runs: int) -> list[float]:
    args = tool.validate({"command": "true"})
    for _ in range(WARMUP):
        await tool.call(args, ctx)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        out = await tool.call(args, ctx)
        samples.append(time.perf_counter() - start)
        assert not out.is_error, out.content
    return samples


def _sandboxed(
    ws: Path, deny: Sequence[str] = (), mode: SandboxMode = "workspace-write", net: bool = False
) -> BashTool:
    rules = RuleSet()
    for text in deny:
        rules.add("deny", text, "cli")
    return BashTool(Sandbox(SandboxConfig(mode=mode, network=net, explicit=True), ws, lambda: rules))


async def main(argv: Sequence[str] | None = None) -> None:
    runs = runs_from(argv, "benchmarks.sandbox_cost", __doc__, 100)
    with tempfile.TemporaryDirectory(prefix="ram-sandbox-bench-") as tmp:
        small = _workspace(Path(tmp) / "small")
        big = _workspace(Path(tmp) / "big", files=2000)
        found = bwrap.find_bwrap({}, network=False)
        if found.binary is None:
            print(f"the sandbox cannot run here: {found.problem}")
            return
        bwrap.probe.cache_clear()
        start = time.perf_counter()
        bwrap.probe(found.binary, False)
        print(f"bwrap: {found.binary}; probe (once per process): {(time.perf_counter() - start) * 1e3:.1f} ms\n")
        floor = []
        for _ in range(10):
            began = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            floor.append(time.perf_counter() - began)
        print(line("python -c pass", floor, width=36))
        first = _sandboxed(small)
        began = time.perf_counter()
        await first.call(first.validate({"command": "true"}), ToolContext(cwd=small))
        print(f"resident sandbox's first call (starts it): {(time.perf_counter() - began) * 1e3:.1f} ms\n")
        runtime.RESIDENT = False
        per_command = _sandboxed(small)
        await per_command.call(per_command.validate({"command": "true"}), ToolContext(cwd=small))  # its runtime
        runtime.RESIDENT = True
        cases: list[tuple[str, BashTool, Path]] = [
            ("plain bash", BashTool(), small),
            ("sandboxed, no deny rules", _sandboxed(small), small),
            ("sandboxed, a bwrap per command", per_command, small),
            ("sandboxed, Read(./secrets/**)", _sandboxed(small, ["Read(./secrets/**)"]), small),
            ("sandboxed, Read(.env), 2k files", _sandboxed(big, ["Read(.env)"]), big),
            ("sandboxed read-only", _sandboxed(small, mode="read-only"), small),
            ("sandboxed, network allowed", _sandboxed(small, net=True), small),
        ]
        plain: list[float] = []
        for label, tool, ws in cases:
            samples = await _time_calls(tool, ToolContext(cwd=ws), runs)
            plain = plain or samples
            extra = sorted(samples)[len(samples) // 2] - sorted(plain)[len(plain) // 2]
            print(line(label, samples, f"+{extra * 1e3:.2f} ms over plain" if tool.sandbox else "", width=36))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
