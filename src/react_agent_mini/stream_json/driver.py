"""`--input-format stream-json`: one long-lived `ram` driven over stdin and stdout, as the Claude Agent SDK and
claude-code-acp drive the `claude` CLI (`../shared/reference/claude-code-sdk-protocol.md`).

stdin carries NDJSON — `user` messages, each one turn, and control messages — and is read in a thread, so that
control requests (`interrupt` above all) are handled while a turn runs. stdout carries Claude Code's stream-json
lines: for each user message a `system/init`, the turn's messages, and one `result`; our own control requests
(`can_use_tool`, `hook_callback`, see `callbacks`); and the answers to the client's. Turns run one after another
on one `SessionHost`. When stdin ends, the running and queued turns finish and the process exits 0, or 1 when the
last result was an error; SIGTERM stops the running turn and ends the process (143) with the MCP servers closed.
When the client goes away — its end of stdout closed, seen at once by `peer` even while nothing is being written —
the running turn stops (model stream, tools), the queued ones are dropped, and the process exits 141.

This module is the protocol loop (stdin's lines, the queue, signals, the client going away); the rest is in parts
with one job each: `turns` (a user message to its `result`, slash commands resolved by `kit.commands`), `requests`
(the client's control requests), `modes` (the permission mode as the SDK names it), `callbacks` (our requests to the
client) and `writer` (the lines).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import sys
import threading
from collections.abc import Callable
from typing import Any, TextIO

import msgspec

from ..app import SessionOptions
from ..config import ProviderConfig
from ..hooks import Hooks
from ..host import SessionHost
from ..kit.setup import setup_report
from ..kit.tally import budget_warning
from ..stop_signals import stop_on_signals, was_stopped
from ..terminal_text import visible
from .callbacks import ClientAsker
from .control import ControlChannel
from .input import read_lines, short
from .lines import dumps
from .modes import Modes
from .peer import watch_reader
from .requests import ControlRequests
from .turns import Turns
from .writer import StreamJsonWriter

EXIT_USAGE = 2
EXIT_CLIENT_GONE = 141
"""As for any `ram` whose stdout closed early (`ram … | head`)."""


class DriverOptions(msgspec.Struct, frozen=True):
    """What the command line says about the protocol (the session's own options are `SessionOptions`)."""

    partial: bool = False
    """`--include-partial-messages`: `stream_event` lines as the answer streams."""
    ask_client: bool = False
    """`--permission-prompt-tool stdio`: what needs asking is asked of the client (`can_use_tool`)."""
    mode: str = ""
    """The `--permission-mode` given ("" for none), with the SDK's `dontAsk` and `auto`."""
    allow_bypass: bool = False
    """The client may switch to bypassPermissions (`--allow-dangerously-skip-permissions`, or started in it)."""
    max_budget_usd: float | None = None
    """`--max-budget-usd`: a turn that takes the session's cost to it ends as `error_max_budget_usd`."""


async def serve(
    config: ProviderConfig,
    options: SessionOptions,
    flags: DriverOptions,
    *,
    stdin_fd: int | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Run the protocol until stdin ends (or a signal); the process exit code."""
    if stdin_fd is None and sys.stdin is not None:
        try:
            stdin_fd = sys.stdin.fileno()
        except (OSError, ValueError):
            stdin_fd = None
    driver = Driver(config, options, flags, out or sys.stdout, err or sys.stderr)
    return await driver.run(stdin_fd)


class Driver:
    """One client, one session: the protocol loop. The parts with one job each: `Modes` (the permission mode),
    `ControlRequests` (the client's requests), `Turns` (each user message to its `result`)."""

    def __init__(
        self, config: ProviderConfig, options: SessionOptions, flags: DriverOptions, out: TextIO, err: TextIO
    ) -> None:
        self.config, self.options, self.flags = config, options, flags
        self.out, self.err = out, err
        self.channel = ControlChannel(self.write)
        self.hooks = Hooks()
        self.modes = Modes(flags.mode, flags.ask_client, flags.allow_bypass)
        self.modes.asker = ClientAsker(self.channel, self.modes.policy, self.modes.switch, self.complain)
        self.host: SessionHost | None = None
        self.turns: Turns | None = None
        self.requests: ControlRequests | None = None
        self.pending: collections.deque[dict[str, Any]] = collections.deque()
        """User messages waiting for their turn."""
        self.wakeup = asyncio.Event()
        self.input_done = False
        self.stopping = False
        self.gone = False
        """stdout is closed: nothing we write arrives any more."""

    # ---- output ----

    def write(self, line: dict[str, Any]) -> None:
        if self.gone:
            return
        try:
            self.out.write(dumps(line) + "\n")
            self.out.flush()
        except (OSError, ValueError):  # the client closed our stdout
            self.client_gone()

    def client_gone(self) -> None:
        """Our stdout has no reader any more: stop the running turn, drop the queued ones, and end."""
        if self.gone:
            return
        self.gone = self.stopping = True
        self.pending.clear()
        with contextlib.suppress(OSError, ValueError):  # what is still buffered must not fail again at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), self.out.fileno())
        self.channel.close()  # a can_use_tool or hook callback waiting for an answer gets none
        self.wakeup.set()
        if self.turns is not None:
            self.turns.interrupt("the client went away")

    def complain(self, text: str) -> None:
        self.err.write(visible(text) + "\n")
        self.err.flush()

    # ---- life ----

    async def run(self, stdin_fd: int | None) -> int:
        loop = asyncio.get_running_loop()
        inbox: asyncio.Queue[bytes | None] = asyncio.Queue()

        def deliver(item: bytes | None) -> None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: we are exiting
                loop.call_soon_threadsafe(inbox.put_nowait, item)

        if stdin_fd is None:
            inbox.put_nowait(None)
        else:
            threading.Thread(target=read_lines, args=(stdin_fd, deliver), name="stdin", daemon=True).start()
        with contextlib.suppress(OSError, ValueError, AttributeError):  # an `out` without a descriptor: not watched
            watch_reader(self.out.fileno(), lambda: self._from_thread(loop, self.client_gone))
        self.host = host = SessionHost.build(
            self.config, self.options, asker=self.modes.asker if self.flags.ask_client else None, hooks=self.hooks
        )
        report = setup_report(host, can_ask=False)
        for line in report.lines:
            self.complain(line)
        if report.refused:  # fail closed, as a headless run does
            await host.aclose()
            return EXIT_USAGE
        self.modes.attach(host)
        if warning := budget_warning(host, self.flags.max_budget_usd):
            self.complain(warning)
        writer = StreamJsonWriter(self.write, host.session_id, host.model, partial=self.flags.partial)
        self.modes.announce = lambda mode: writer.system("status", status=None, permissionMode=mode)
        self.turns = Turns(
            host,
            writer,
            self.modes,
            max_turns=self.options.max_turns,
            max_budget_usd=self.flags.max_budget_usd,
            complain=self.complain,
            gone=lambda: self.gone,
        )
        self.requests = ControlRequests(
            host,
            self.options,
            self.channel,
            self.hooks,
            self.modes,
            self.turns,
            queued=lambda: [str(line.get("uuid", "")) for line in self.pending],
            complain=self.complain,
        )
        with stop_on_signals(self.on_signal) as stopped:
            try:
                async with host:
                    reading = asyncio.ensure_future(self.dispatch(inbox))
                    try:
                        await self.work()
                    finally:
                        reading.cancel()
            except asyncio.CancelledError:
                if not was_stopped(stopped):
                    raise
        if stopped.exit_code is not None:
            return stopped.exit_code
        if self.gone:
            return EXIT_CLIENT_GONE
        return 1 if self.turns.last_error else 0

    @staticmethod
    def _from_thread(loop: asyncio.AbstractEventLoop, call: Callable[[], None]) -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed: we are exiting
            loop.call_soon_threadsafe(call)

    def on_signal(self, code: int) -> bool:
        """SIGTERM/SIGINT/SIGHUP: drop the queued turns and stop the running one (True), or have the run
        cancelled when none is running (False)."""
        self.stopping = True
        self.pending.clear()
        self.wakeup.set()
        return self.host is not None and self.host.interrupt("terminated")

    async def dispatch(self, inbox: asyncio.Queue[bytes | None]) -> None:
        """Read stdin's lines until its end: control messages at once, user messages into the queue."""
        while (raw := await inbox.get()) is not None:
            try:
                self.line(raw)
            except Exception as exc:  # one line that trips a bug costs a warning, not the session
                self.complain(f"warning: stdin: a line could not be handled: {type(exc).__name__}: {exc}")
        self.input_done = True
        self.channel.close()  # nobody is left to answer our requests
        self.wakeup.set()

    def line(self, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").strip()
        if not text:
            return
        try:
            line = json.loads(text)
        except ValueError:
            line = None
        if not isinstance(line, dict):
            self.complain(f"warning: stdin: not a JSON object, ignored: {short(text)}")
            return
        kind = line.get("type")
        if kind == "user":
            self.pending.append(line)
            self.wakeup.set()
        elif kind == "control_request":
            assert self.requests is not None
            self.requests.handle(line)
        elif kind == "control_response":
            self.channel.answered(line)
        elif kind not in ("control_cancel_request", "keep_alive"):  # we answer at once: nothing to withdraw
            self.complain(f"warning: stdin: ignored a line of type {kind!r}")

    async def work(self) -> None:
        """Run the queued user messages one at a time until stdin has ended and none is left."""
        assert self.turns is not None
        while True:
            while not self.pending:
                if self.input_done or self.stopping:
                    return
                self.wakeup.clear()
                await self.wakeup.wait()
            if self.stopping:
                return
            await self.turns.run(self.pending.popleft())
