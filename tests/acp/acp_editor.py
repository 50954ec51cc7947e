"""An editor for the ACP tests: the `agent-client-protocol` package's real client side, spawning `ram acp` (or any
agent command) as a subprocess, with the client methods an editor implements.

The editor records every `session/update`, answers `session/request_permission` from a script of option ids, and
when asked to, offers `fs` (its buffers, which may differ from the disk; writes stay in the buffers) and `terminal`
(real processes it runs itself, with an environment of its own). Tests assert on what it saw and on the agent's
stderr, which goes to a file.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from acp import PROTOCOL_VERSION, Client, RequestError, spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    EnvVariable,
    FileSystemCapabilities,
    InitializeResponse,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)


@dataclass
class Asked:
    """One permission request the editor got."""

    tool_call: ToolCallUpdate
    options: list[PermissionOption]

    @property
    def option_ids(self) -> list[str]:
        return [o.option_id for o in self.options]


@dataclass
class Run:
    """A command the editor ran in one of its terminals."""

    command: str
    args: list[str]
    cwd: str | None
    env: dict[str, str]
    process: asyncio.subprocess.Process
    output: bytearray = field(default_factory=bytearray)
    reader: asyncio.Task[None] | None = None
    released: bool = False
    killed: bool = False


class Editor:
    """The client side: what an editor does when an agent asks."""

    def __init__(
        self,
        *,
        answers: Sequence[str] = (),
        buffers: dict[str, str] | None = None,
        terminal: bool = False,
        terminal_env: Mapping[str, str] | None = None,
    ) -> None:
        self.updates: list[Any] = []
        self.answers = list(answers)
        """The options to pick (their kind, such as `allow_once`, or id), one per permission request, in order
        ("cancelled" answers cancelled; none left: reject once)."""
        self.asked: list[Asked] = []
        self.buffers = buffers
        """Path → text of the open buffers; None: no `fs` capability."""
        self.written: dict[str, str] = {}
        self.terminal = terminal
        self.terminal_env = dict(terminal_env or os.environ)
        self.runs: dict[str, Run] = {}
        self._seen = asyncio.Event()

    @property
    def capabilities(self) -> ClientCapabilities:
        fs = FileSystemCapabilities(read_text_file=True, write_text_file=True) if self.buffers is not None else None
        return ClientCapabilities(fs=fs or FileSystemCapabilities(), terminal=self.terminal)

    # ---- what the agent sends ----

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        self._seen.set()

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.asked.append(Asked(tool_call, options))
        self._seen.set()
        choice = self.answers.pop(0) if self.answers else "reject_once"
        if choice == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        picked = next(o.option_id for o in options if choice in (o.kind, o.option_id))  # a person picks by label
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=picked))

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        assert self.buffers is not None, "fs/read_text_file without the fs capability"
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        try:
            return ReadTextFileResponse(content=Path(path).read_text(encoding="utf-8"))
        except OSError:
            raise RequestError.resource_not_found(path) from None

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> WriteTextFileResponse:
        assert self.buffers is not None, "fs/write_text_file without the fs capability"
        self.buffers[path] = content
        self.written[path] = content
        return WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        assert self.terminal, "terminal/create without the terminal capability"
        environment = {**self.terminal_env, **{v.name: v.value for v in env or ()}}
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            env=environment,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        run = Run(command, list(args or []), cwd, environment, process)
        terminal_id = f"term-{len(self.runs) + 1}"
        self.runs[terminal_id] = run

        async def read() -> None:
            assert process.stdout is not None
            while chunk := await process.stdout.read(4096):
                run.output += chunk

        run.reader = asyncio.ensure_future(read())
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> TerminalOutputResponse:
        run = self.runs[terminal_id]
        status = None
        if run.process.returncode is not None:
            if run.reader is not None:
                await run.reader
            status = _exit_status(run.process.returncode)
        return TerminalOutputResponse(output=run.output.decode("utf-8", "replace"), truncated=False, exit_status=status)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        run = self.runs[terminal_id]
        code = await run.process.wait()
        if run.reader is not None:
            await run.reader
        status = _exit_status(code)
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> KillTerminalResponse:
        run = self.runs[terminal_id]
        run.killed = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.process.pid, 9)
        await run.process.wait()
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> ReleaseTerminalResponse:
        self.runs[terminal_id].released = True
        return ReleaseTerminalResponse()

    # ---- what tests look at ----

    async def wait_until(self, condition: Callable[[], bool]) -> None:
        """Until `condition()` holds, checked after each update or permission request."""
        while not condition():
            self._seen.clear()
            await self._seen.wait()

    def kinds(self) -> list[str]:
        """Each update's `sessionUpdate` tag, in order."""
        return [u.session_update for u in self.updates]

    def dumped(self) -> list[dict[str, Any]]:
        """Each update as JSON (by the protocol's names)."""
        return [u.model_dump(mode="json", by_alias=True, exclude_none=True) for u in self.updates]

    def text(self, kind: str = "agent_message_chunk") -> str:
        """The text of every chunk of `kind`, joined."""
        return "".join(u.content.text for u in self.updates if u.session_update == kind)

    def tool_updates(self, call_id: str) -> list[dict[str, Any]]:
        """The `tool_call` and `tool_call_update`s of one call, in order."""
        return [u for u in self.dumped() if u.get("toolCallId") == call_id]


def _exit_status(code: int) -> TerminalExitStatus:
    if code < 0:
        return TerminalExitStatus(exit_code=None, signal=f"SIG{-code}")
    return TerminalExitStatus(exit_code=code)


@contextlib.asynccontextmanager
async def agent(
    editor: Editor, cwd: Path, env: Mapping[str, str], stderr: Path, *command: str
) -> AsyncIterator[tuple[ClientSideConnection, InitializeResponse]]:
    """`ram acp` (or `command`) started in `cwd`, connected to `editor`, initialized with its capabilities."""
    argv = list(command) or [sys.executable, "-m", "react_agent_mini", "acp"]
    with stderr.open("ab") as err:
        async with (
            spawn_agent_process(
                cast(Client, editor),  # the methods an editor needs here, not every one of the protocol
                argv[0],
                *argv[1:],
                env=dict(env),
                cwd=cwd,
                transport_kwargs={"stderr": err.fileno()},
            ) as (conn, _process)
        ):
            init = await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=editor.capabilities)
            yield conn, init
