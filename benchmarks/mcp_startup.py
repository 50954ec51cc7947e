"""Startup with MCP servers: each server alone, then all three together.

`ram "hello"` runs against the loopback fake LLM server with a `.mcp.json` naming one server, or all three:
mcp-server-time (stdio, Python), server-everything (stdio, Node) and server-everything over streamable HTTP on
127.0.0.1 (already running, so its "start" is the connection and the handshake). The first model call waits
for the servers (at most 10 s), so launch → first request is the time until every configured server's tools
are ready. The issue's target: three servers together are no slower than the slowest one alone.

Figures only, no pass/fail: shared machines are noisy, so compare medians within one run. On a machine with
few cores the servers' own starts (a Python interpreter importing the MCP SDK, a Node process) and our import
of the SDK compete for the CPU, so the note prints the core count.
Run: `.venv/bin/python -m benchmarks.mcp_startup [--runs N]` from the repo root (after `scripts/setup --dev`).
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.fakes.fake_llm import FakeLLMServer, Reply
from tests.fakes.mcp_servers import support

from ._stats import fmt_seconds, line, runs_from
from .startup import API_KEY, clean_env, ram_command, report, run_once


def configs(remote_url: str) -> dict[str, dict[str, object]]:
    """Server name → its `.mcp.json` entry."""
    return {
        "time": {"command": support.time_server(), "args": ["--local-timezone", "UTC"]},
        "everything": {"command": support.node(), "args": [support.everything_js(), "stdio"]},
        "remote": {"type": "http", "url": remote_url},
    }


class Figures:
    """Samples of one configuration: launch → first request, and CPU seconds used by the run (ram and the
    stdio servers it started; an already running HTTP server is not counted)."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self.cpu: list[float] = []
        self.failure = ""


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def own_start(command: Sequence[str], runs: int) -> list[float]:
    """A stdio server's own start, without the agent: spawn → `initialize` answered → `tools/list` answered,
    over raw JSON-RPC lines (the 2025-11-25 handshake every server here speaks)."""
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    samples: list[float] = []
    for i in range(runs + 1):
        t0 = time.monotonic()
        proc = subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        proc.stdin.flush()
        answered: dict[object, bool] = {}
        while 2 not in answered and (raw := proc.stdout.readline()):
            with contextlib.suppress(ValueError):
                message = json.loads(raw)
                if isinstance(message, dict) and "id" in message:
                    answered[message["id"]] = "result" in message
        elapsed = time.monotonic() - t0
        proc.stdin.close()
        proc.wait(timeout=30)
        if i > 0 and answered.get(1) and answered.get(2):
            samples.append(elapsed)
    return samples


def time_servers(server: FakeLLMServer, servers: Mapping[str, object], runs: int, env: Mapping[str, str]) -> Figures:
    """Launch → first request and CPU samples of `ram "hello"` with `servers` configured."""
    figures = Figures()
    with tempfile.TemporaryDirectory(prefix="ram-bench-mcp-") as cwd:
        Path(cwd, ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
        for i in range(runs + 1):
            seen = len(server.requests)
            server.enqueue(Reply(text="Hi."))
            cpu = children_cpu()
            t0, _, code, err = run_once([*ram_command(), "hello"], env, cwd)
            cpu = children_cpu() - cpu
            new = server.requests[seen:]
            names = [t["function"]["name"] for t in new[0].body.get("tools", [])] if new else []
            tools = {n.split("__")[1] for n in names if n.startswith("mcp__")}
            if code != 0 or len(new) != 1 or not set(servers) <= tools:
                failure = f"exit {code}, servers ready: {sorted(tools)}: {err.strip()[-300:]}"
                figures.failure = figures.failure or failure
                continue
            if i > 0:
                figures.samples.append(new[0].received_at - t0)
                figures.cpu.append(cpu)
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    runs = runs_from(argv, "benchmarks.mcp_startup", __doc__, 7)
    command, port, http_env = support.everything_http()
    with support.http_server(command, port, http_env), FakeLLMServer(api_key=API_KEY) as server:
        env = clean_env({"OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": server.openai_base_url})
        every = configs(f"http://127.0.0.1:{port}/mcp")
        results = {name: time_servers(server, {name: entry}, runs, env) for name, entry in every.items()}
        results["none"] = time_servers(server, {}, runs, env)
        results["all three"] = time_servers(server, every, runs, env)
    stdio_commands = {
        "time": [support.time_server(), "--local-timezone", "UTC"],
        "everything": [support.node(), support.everything_js(), "stdio"],
    }
    own = {name: own_start(command, runs) for name, command in stdio_commands.items()}
    cores = os.cpu_count() or 1
    print(f'mcp startup: ram "hello" launch → first request  (python {sys.version.split()[0]}, {cores} cores)')
    print()
    for name, figures in results.items():
        label = "no servers" if name == "none" else f"{name} alone" if name != "all three" else "all three together"
        cpu = f"CPU {statistics.median(figures.cpu):.2f} s" if figures.cpu else ""
        report(label, figures.samples, cpu, figures.failure)
    print()
    for name, samples in own.items():
        print(line(f"{name}: the server's own start", samples, "raw JSON-RPC, no agent"))
    alone = [statistics.median(results[n].samples) for n in every if results[n].samples]
    together = results["all three"]
    if alone and together.samples:
        slowest = max(alone)
        excess = statistics.median(together.samples) - slowest
        print()
        print(f"all three vs the slowest alone: {fmt_seconds(abs(excess))} {'slower' if excess > 0 else 'faster'}")
        if own_samples := [statistics.median(v) for v in own.values() if v]:
            excess = statistics.median(together.samples) - max(own_samples)
            print(
                f"all three vs the slowest server's own start: {fmt_seconds(abs(excess))} "
                f"{'slower' if excess > 0 else 'faster'}"
            )
        need = statistics.median(together.cpu) / cores
        print(f"CPU of a run with all three / {cores} cores: at least {fmt_seconds(need)} of wall time on this machine")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
