"""Startup with MCP servers: each server alone, then all three together.

`ram "hello"` runs against the loopback fake LLM server with a `.mcp.json` naming one server, or all three:
mcp-server-time (stdio, Python), server-everything (stdio, Node) and server-everything over streamable HTTP on
127.0.0.1 (already running, so its "start" is the connection and the handshake). The first model call waits
for the servers (at most 10 s), so launch → first request is the time until every configured server's tools
are ready. The issue's target: three servers together are no slower than the slowest one alone.

Figures only, no pass/fail: shared machines are noisy, so compare medians within one run. On a machine with
few cores the servers' own starts (a Python interpreter importing the MCP SDK, a Node process) and our import
of the SDK compete for the CPU, so the note prints the core count.
Run: `.venv/bin/python -m benchmarks.mcp_startup [--runs N]` from the repo root (after `scripts/setup`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.fakes.fake_llm import FakeLLMServer, Reply
from tests.fakes.mcp_servers import support

from ._stats import fmt_seconds, line
from .startup import API_KEY, clean_env, ram_command, run_once


def configs(remote_url: str) -> dict[str, dict[str, object]]:
    """Server name → its `.mcp.json` entry."""
    return {
        "time": {"command": support.time_server(), "args": ["--local-timezone", "UTC"]},
        "everything": {"command": support.node(), "args": [support.everything_js(), "stdio"]},
        "remote": {"type": "http", "url": remote_url},
    }


def time_servers(
    server: FakeLLMServer, servers: Mapping[str, object], runs: int, env: Mapping[str, str]
) -> tuple[list[float], str]:
    """Launch → first request samples of `ram "hello"` with `servers` configured, and the first failure."""
    samples: list[float] = []
    failure = ""
    with tempfile.TemporaryDirectory(prefix="ram-bench-mcp-") as cwd:
        Path(cwd, ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
        for i in range(runs + 1):
            seen = len(server.requests)
            server.enqueue(Reply(text="Hi."))
            t0, _, code, err = run_once([*ram_command(), "hello"], env, cwd)
            new = server.requests[seen:]
            names = [t["function"]["name"] for t in new[0].body.get("tools", [])] if new else []
            tools = {n.split("__")[1] for n in names if n.startswith("mcp__")}
            if code != 0 or len(new) != 1 or not set(servers) <= tools:
                failure = failure or f"exit {code}, servers ready: {sorted(tools)}: {err.strip()[-300:]}"
                continue
            if i > 0:
                samples.append(new[0].received_at - t0)
    return samples, failure


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.mcp_startup", description=(__doc__ or "").partition("\n")[0]
    )
    parser.add_argument("--runs", type=int, default=7, metavar="N", help="measured runs per figure (default 7)")
    args = parser.parse_args(argv)
    runs = max(1, args.runs)
    command, port, http_env = support.everything_http()
    with support.http_server(command, port, http_env), FakeLLMServer(api_key=API_KEY) as server:
        env = clean_env({"OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": server.openai_base_url})
        every = configs(f"http://127.0.0.1:{port}/mcp")
        results = {name: time_servers(server, {name: entry}, runs, env) for name, entry in every.items()}
        results["none"] = time_servers(server, {}, runs, env)
        results["all three"] = time_servers(server, every, runs, env)
    print(f'mcp startup: ram "hello" launch → first request  (python {sys.version.split()[0]}, {os.cpu_count()} cores)')
    print()
    for name, (samples, failure) in results.items():
        label = "no servers" if name == "none" else f"{name} alone" if name != "all three" else "all three together"
        print(line(label, samples))
        if failure:
            print(f"  ! some runs failed: {failure}")
    alone = [statistics.median(results[n][0]) for n in every if results[n][0]]
    together = results["all three"][0]
    if alone and together:
        slowest = max(alone)
        excess = statistics.median(together) - slowest
        print()
        print(f"all three vs the slowest alone: {fmt_seconds(abs(excess))} {'slower' if excess > 0 else 'faster'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
