"""`ram mcp list`: the configured MCP servers, whether each one starts, and what it offers.

Connects to every server (concurrently, as a session would), prints one block per server, then stops them all.
The exit code is 0 when every server connected and the config had no problems, 1 otherwise, so scripts can use
it as a health check.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from ..stop_signals import stop_on_signals, was_stopped
from ..terminal_text import visible
from .adapter import McpTool
from .config import config_files, default_log_dir, load_mcp_config, mcp_timeouts
from .manager import McpManager, ServerStatus

DESCRIPTION_WIDTH = 72


async def mcp_list(cwd: Path, env: Mapping[str, str], out: TextIO) -> int:
    """Print the servers, their status and their tools; the exit code (see the module docstring). What servers
    say (names, descriptions, errors) is printed with its control characters made visible."""
    from ..trust.gate import trust_gate

    screen = _Visible(out)
    gate = trust_gate(cwd, env)
    servers, warnings = load_mcp_config(cwd, env, trust=gate)
    connect_timeout, call_timeout, timeout_warnings = mcp_timeouts(env)
    warnings += gate.warnings + timeout_warnings
    left_out = gate.left_out_line()
    for warning in [*warnings, *([left_out] if left_out else [])]:
        screen.write(f"warning: {warning}\n")
    for item in gate.withheld:
        screen.write(f"not started (not trusted): {item.label}\n")
    if not servers:
        consulted = ", ".join(str(path) for path, _, _ in config_files(cwd, env))
        screen.write(f"No MCP servers configured (looked in {consulted}).\n")
        return 1 if warnings else 0
    manager = McpManager(
        servers, log_dir=default_log_dir(env), connect_timeout=connect_timeout, call_timeout=call_timeout
    )
    with stop_on_signals() as stopped:  # Ctrl+C, SIGTERM, SIGHUP: stop the servers, then end
        try:
            manager.start()
            await manager.wait_ready(connect_timeout + 1)
            statuses = manager.status()
            tools = [t for t in manager.tools() if isinstance(t, McpTool)]
        except asyncio.CancelledError:
            if not was_stopped(stopped):
                raise
        finally:
            await manager.aclose()
    if stopped.exit_code is not None:
        return stopped.exit_code
    sources = sorted({s.source for s in servers.values()}, key=lambda source: source.startswith(str(cwd)))
    screen.write(f"MCP servers: {len(servers)}, from {', '.join(_short(s, cwd) for s in sources)}\n")
    for status in statuses:
        screen.write("\n" + _server_line(status) + "\n")
        own = [t for t in tools if t.server == status.name]
        width = max((len(t.name) for t in own), default=0)
        for tool in own:
            flag = "read-only" if tool.read_only else "may write"
            screen.write(f"  {tool.name:<{width}}  {flag}  {_first_line(tool.description)}\n")
        if status.resources:
            screen.write(f"  resources: attach with @{status.name}:<uri>; the model has ListMcpResourcesTool\n")
        if status.prompts:
            screen.write("  prompts: " + ", ".join(f"/{status.name}:{p}" for p in status.prompts) + "\n")
    ok = not warnings and all(s.state == "connected" for s in statuses)
    return 0 if ok else 1


class _Visible:
    """A text stream that writes everything through `visible`."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        return self._inner.write(visible(text))


def _server_line(status: ServerStatus) -> str:
    head = f"{status.name} ({status.transport})"
    if status.state == "connected" or (status.state == "closed" and status.connect_seconds is not None):
        took = f" in {status.connect_seconds:.1f} s" if status.connect_seconds is not None else ""
        return f"{head}: connected{took}: {status.detail}"
    if status.state == "connecting":
        return f"{head}: still starting (gave up waiting)"
    return f"{head}: failed: {status.detail}"


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= DESCRIPTION_WIDTH else line[: DESCRIPTION_WIDTH - 1] + "…"


def _short(path: str, cwd: Path) -> str:
    try:
        return str(Path(path).relative_to(cwd))
    except ValueError:
        home = str(Path.home())
        return "~" + path[len(home) :] if path.startswith(home + "/") else path
