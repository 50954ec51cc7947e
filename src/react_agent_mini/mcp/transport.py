"""The stdio transport: start the server process at once, talk newline-delimited JSON-RPC, stop its whole group.

Why not the SDK's `stdio_client`: it can only spawn once the SDK is imported (≈0.6 s, more on a small machine),
and a server's own start is often as long again. Spawning here, before the import, lets the two overlap. The
process gets its own session (Ctrl+C in the terminal does not reach it), its stderr goes to a log file, and its
environment is a small safe base plus what its config names.

Stopping follows the MCP lifecycle (close stdin, wait), then SIGTERM and SIGKILL to the process group, and it
also clears members that outlived the leader (an `npx` wrapper's node child). It completes even if the caller is
cancelled; if the caller is cancelled while stopping, the group is killed at once rather than waited for. Groups
still alive at interpreter exit are killed by an atexit hook, the last line of defence.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import re
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..tools.shell_env import guard_own_process
from .config import ServerConfig

if TYPE_CHECKING:
    from mcp.shared.message import SessionMessage

STOP_GRACE = 2.0
"""Seconds a server gets to exit after its stdin closes (the SDK's value)."""
TERM_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL."""
LOG_ROTATE_BYTES = 1_000_000
"""A server log larger than this when the server starts is moved to `<name>.log.1` (one generation kept)."""
MAX_MESSAGE_BYTES = 32 << 20
"""The largest JSON-RPC message read from a server; a larger one is skipped (its request fails with a line
saying so), so a server cannot make us buffer without bound."""
TOO_LARGE = f"the server's answer was over {MAX_MESSAGE_BYTES >> 20} MB, more than this client accepts"
EXIT_POLL = 0.1
"""Seconds between checks that the server process is still running."""
EXIT_DRAIN = 0.5
"""Seconds its output still gets to arrive after it exited."""
_READ_CHUNK = 1 << 16
_REQUEST_ID = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')
_BASE_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
_EXTRA_ENV = ("LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")
"""Passed on besides the SDK's base set: locale, temp dir and proxies, which servers need to behave. Nothing
else of ours (API keys!) reaches a server unless its config names it in `env`."""

_live_groups: set[int] = set()


@atexit.register
def _kill_leftovers() -> None:
    for pgid in list(_live_groups):
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)


def server_env(config: ServerConfig) -> dict[str, str]:
    """The environment a stdio server runs with."""
    inherited = {k: v for k in (*_BASE_ENV, *_EXTRA_ENV) if (v := os.environ.get(k)) is not None}
    return inherited | config.env


class StdioServer:
    """One stdio server process."""

    def __init__(self, config: ServerConfig, log_path: Path) -> None:
        self.config = config
        self.log_path = log_path
        self.process: asyncio.subprocess.Process | None = None
        self._stopping: asyncio.Future[None] | None = None

    async def spawn(self) -> None:
        """Start the process (OSError if it cannot be run)."""
        try:
            log = open_log(self.log_path, self.config)
        except OSError:  # an unwritable log directory must not cost the server: its stderr is dropped instead
            log = None
        guard_own_process()  # nor a server: it runs as the user, and ram's environment holds the keys
        try:
            self.process = await asyncio.create_subprocess_exec(
                self.config.command,
                *self.config.args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=log if log is not None else asyncio.subprocess.DEVNULL,
                cwd=self.config.cwd or None,
                env=server_env(self.config),
                start_new_session=True,
            )
        finally:
            if log is not None:
                log.close()  # the child has its own copy of the descriptor
        _live_groups.add(self.process.pid)

    @contextlib.asynccontextmanager
    async def streams(self) -> AsyncIterator[tuple[Any, Any]]:
        """The SDK's transport streams over this process (needs the SDK imported); leaving stops the process."""
        import anyio
        import mcp_types
        from mcp.shared.message import SessionMessage

        process = self.process
        assert process is not None and process.stdin is not None and process.stdout is not None
        stdin, stdout = process.stdin, process.stdout
        read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)

        def parse(line: bytes) -> SessionMessage | Exception:
            try:
                return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
            except ValueError as exc:  # the session reports it; one bad line does not end the connection
                return exc

        def too_large(head: bytes) -> SessionMessage | Exception:
            """What stands in for a message over MAX_MESSAGE_BYTES: an error answer to its request when its id
            can be read from its start (so the call fails at once, not at its timeout), else a parse error."""
            found = _REQUEST_ID.search(head.partition(b'"result"')[0].partition(b'"error"')[0])
            if found is None:
                return ValueError(TOO_LARGE)
            request_id = json.loads(found.group(1))
            error = mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message=TOO_LARGE)
            return SessionMessage(mcp_types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))

        async def reader() -> None:
            buffer = bytearray()
            scanned = 0  # bytes of `buffer` known to hold no newline
            skipping: bytes | None = None  # the start of an oversized message being skipped
            deliver = True
            async with read_send:
                with contextlib.suppress(OSError), reading:
                    while chunk := await stdout.read(_READ_CHUNK):
                        if not deliver:
                            continue  # keep draining: a server blocked writing stdout could not exit
                        buffer += chunk
                        lines: list[SessionMessage | Exception] = []
                        while (end := buffer.find(b"\n", scanned)) >= 0:
                            line = bytes(buffer[:end])
                            del buffer[: end + 1]
                            scanned = 0
                            if skipping is not None:
                                lines.append(too_large(skipping))
                                skipping = None
                            elif line.strip():
                                lines.append(parse(line))
                        scanned = len(buffer)
                        if len(buffer) > MAX_MESSAGE_BYTES:
                            skipping = skipping or bytes(buffer[:4096])
                            buffer.clear()
                            scanned = 0
                        for item in lines:
                            try:
                                await read_send.send(item)
                            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                                deliver = False
                                buffer.clear()
                                break
            # leaving closes read_send: the session sees end-of-stream, pending requests fail at once

        async def watch_exit() -> None:
            """A server that exited while a process it started still holds its stdout never gives end-of-stream;
            once it has exited (and what it wrote had time to be read), stop reading."""
            while process.returncode is None:
                await anyio.sleep(EXIT_POLL)
            await anyio.sleep(EXIT_DRAIN)
            reading.cancel()

        async def writer() -> None:
            try:
                async with write_recv:
                    async for message in write_recv:
                        data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                        stdin.write(data.encode() + b"\n")
                        await stdin.drain()
            except (OSError, anyio.ClosedResourceError, anyio.BrokenResourceError):
                await read_send.aclose()  # the server stopped reading: end the session rather than hang

        reading = anyio.CancelScope()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(reader)
            tasks.start_soon(writer)
            tasks.start_soon(watch_exit)
            try:
                yield read_recv, write_send
            finally:
                with anyio.CancelScope(shield=True):
                    await self.stop()
                tasks.cancel_scope.cancel()

    async def stop(self) -> None:
        """Stop the process and its group (idempotent); see the module docstring for the sequence."""
        if self.process is None:
            return
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._stop(self.process))
        try:
            await asyncio.shield(self._stopping)
        except asyncio.CancelledError:
            if not self._stopping.done():  # cancelled mid-stop (e.g. a forced exit): no more waiting
                _signal_group(self.process.pid, signal.SIGKILL)
                _live_groups.discard(self.process.pid)
            raise

    async def _stop(self, process: asyncio.subprocess.Process) -> None:
        pgid = process.pid  # the leader's pid is the group id (start_new_session)
        if process.stdin is not None:
            process.stdin.close()
        if not await _exited(process, STOP_GRACE):
            _signal_group(pgid, signal.SIGTERM)
            if not await _exited(process, TERM_GRACE):
                _signal_group(pgid, signal.SIGKILL)
                await _exited(process, TERM_GRACE)
        # members that outlived the leader (children of a wrapper) go too
        if _group_alive(pgid):
            _signal_group(pgid, signal.SIGTERM)
            deadline = time.monotonic() + TERM_GRACE
            while _group_alive(pgid) and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            _signal_group(pgid, signal.SIGKILL)
        _live_groups.discard(pgid)


async def _exited(process: asyncio.subprocess.Process, timeout: float) -> bool:
    # polled rather than `process.wait()`, which also waits for the pipes to close: a grandchild holding them
    # would make an exited server look hung
    deadline = time.monotonic() + timeout
    while process.returncode is None:
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.01)
    return True


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def open_log(path: Path, config: ServerConfig) -> Any:
    """The server's stderr file: appended to, rotated when large, private to the user."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(OSError):
        if path.stat().st_size > LOG_ROTATE_BYTES:
            path.replace(path.with_name(path.name + ".1"))
    log = open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "a", encoding="utf-8")  # noqa: SIM115
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    # the program only: arguments may carry expanded secrets
    log.write(f"--- {stamp} starting MCP server {config.name}: {config.command}\n")
    log.flush()
    return log


def last_log_line(path: Path) -> str:
    """The last line a server wrote to stderr since its latest start, cut to 200 characters ("" if none)."""
    try:
        with path.open("rb") as log:
            log.seek(max(0, log.seek(0, os.SEEK_END) - 4096))
            lines = log.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    for line in reversed(lines):
        line = line.strip()
        if line.startswith("--- "):
            return ""
        if line:
            return line if len(line) <= 200 else line[:199] + "…"
    return ""
