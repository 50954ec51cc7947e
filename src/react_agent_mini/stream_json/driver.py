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
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, TextIO

import msgspec

from .. import __version__
from ..app import SessionOptions
from ..claude_flags import SDK_PERMISSION_MODES
from ..config import ProviderConfig
from ..events import AssistantTurn, Compacted, Terminal, ToolResults
from ..headless import budget_applies, denied_call, init_info, over_budget
from ..hooks import Hooks
from ..host import Remark, SessionHost, TurnScope, Waiting
from ..messages import Message
from ..permissions.configured import HEADLESS_FAIL_CLOSED
from ..permissions.rules import PERMISSION_MODES, PermissionMode
from ..pricing import cost_usd
from ..stop_signals import stop_on_signals, was_stopped
from ..terminal_text import visible
from .callbacks import ClientAsker, register_hooks
from .control import ControlChannel
from .input import read_lines, short, user_content
from .lines import InitInfo, TurnSummary, dumps
from .peer import watch_reader
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


class Refused(Exception):
    """A control request that cannot be done; its text is the error answer."""


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
    """One client, one session."""

    def __init__(
        self, config: ProviderConfig, options: SessionOptions, flags: DriverOptions, out: TextIO, err: TextIO
    ) -> None:
        self.config, self.options, self.flags = config, options, flags
        self.out, self.err = out, err
        self.channel = ControlChannel(self.write)
        self.hooks = Hooks()
        self.asker = ClientAsker(self.channel, lambda: self.live.built.policy, self.switch_mode, self.complain)
        self.host: SessionHost | None = None
        self.writer: StreamJsonWriter | None = None
        self.alias = flags.mode if flags.mode in ("dontAsk", "auto") else ""
        """The SDK mode reported in place of our `default` (`dontAsk`, `auto`), or ""."""
        self.pending: collections.deque[dict[str, Any]] = collections.deque()
        """User messages waiting for their turn."""
        self.wakeup = asyncio.Event()
        self.input_done = False
        self.stopping = False
        self.gone = False
        """stdout is closed: nothing we write arrives any more."""
        self.in_turn = False
        self.interrupt_pending = False
        """`interrupt` came before the turn's model call started: stop it as soon as it can be."""
        self.initialized = False
        self.last_error = False

    @property
    def live(self) -> SessionHost:
        assert self.host is not None
        return self.host

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
        if self.in_turn and self.host is not None and not self.host.interrupt("the client went away"):
            self.interrupt_pending = True  # before the model call started: stopped at the turn's next event

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
            self.config, self.options, asker=self.asker if self.flags.ask_client else None, hooks=self.hooks
        )
        for warning in host.warnings:
            self.complain(f"warning: {warning}")
        if host.built.permission_settings.errors:  # fail closed, as a headless run does
            for error in host.built.permission_settings.errors:
                self.complain(f"error: {error.text} — {HEADLESS_FAIL_CLOSED}")
            await host.aclose()
            return EXIT_USAGE
        if self.alias == "dontAsk":
            host.built.policy.asker = None
        if host.built.policy.mode == "bypassPermissions":  # started in it (a flag or a settings file)
            self.flags = msgspec.structs.replace(self.flags, allow_bypass=True)
        if self.flags.max_budget_usd is not None and not budget_applies(host.model):
            self.complain(f"warning: --max-budget-usd: the price of {host.model} is not known, so no budget applies")
        self.writer = StreamJsonWriter(self.write, host.session_id, host.model, partial=self.flags.partial)
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
        return 1 if self.last_error else 0

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
            self.control(line)
        elif kind == "control_response":
            self.channel.answered(line)
        elif kind not in ("control_cancel_request", "keep_alive"):  # we answer at once: nothing to withdraw
            self.complain(f"warning: stdin: ignored a line of type {kind!r}")

    async def work(self) -> None:
        """Run the queued user messages one at a time until stdin has ended and none is left."""
        while True:
            while not self.pending:
                if self.input_done or self.stopping:
                    return
                self.wakeup.clear()
                await self.wakeup.wait()
            if self.stopping:
                return
            await self.turn(self.pending.popleft())

    # ---- control requests from the client ----

    def control(self, line: Mapping[str, Any]) -> None:
        request_id, request = line.get("request_id"), line.get("request")
        if not isinstance(request_id, str) or not isinstance(request, Mapping):
            self.complain("warning: stdin: a control_request without request_id or request, ignored")
            return
        subtype = request.get("subtype")
        handler = self.handlers.get(str(subtype))
        if handler is None:
            self.channel.reply_error(request_id, f"ram does not support the control request {subtype!r}")
            return
        try:
            response = handler(self, request)
        except Refused as exc:
            self.channel.reply_error(request_id, str(exc))
            return
        except Exception as exc:  # a bug answers the one request, never ends the session
            self.channel.reply_error(request_id, f"{subtype} failed: {type(exc).__name__}: {exc}")
            return
        self.channel.reply(request_id, response)
        if subtype == "set_permission_mode":
            self.status()

    def initialize(self, request: Mapping[str, Any]) -> dict[str, Any]:
        if self.initialized:
            raise Refused("already initialized")
        self.initialized = True
        host = self.live
        hooks = request.get("hooks")
        if isinstance(hooks, Mapping):
            register_hooks(self.hooks, hooks, self.channel, self.complain)
        prompt, appended = request.get("systemPrompt"), request.get("appendSystemPrompt")
        if isinstance(prompt, str) or isinstance(appended, str):  # the TS SDK sends its prompt options here
            base = prompt if isinstance(prompt, str) and prompt.strip() else self.options.system_prompt
            extra = appended if isinstance(appended, str) else self.options.append_system_prompt
            host.session.system_prompt = host.built.knowledge.replace_prompts(base, extra)
        if request.get("sdkMcpServers"):
            self.complain("warning: initialize: ram cannot reach MCP servers that live in the SDK process; skipped")
        agents = request.get("agents")
        if isinstance(agents, Mapping) and agents:  # the SDK's `agents=`: more types for the Agent tool
            from ..subagents.definitions import program_agents

            given, problems = program_agents(agents)
            host.built.agents.add(given)
            host.session.tools.changed()
            for problem in problems:
                self.complain(f"warning: initialize: {problem}")
        commands = [{"name": "compact", "description": "summarise the conversation now", "argumentHint": "[focus]"}]
        commands += [
            {"name": c.name, "description": c.description or "custom command", "argumentHint": c.argument_hint}
            for c in host.built.commands.commands
        ]
        commands += [
            {"name": skill.id, "description": skill.description or "skill", "argumentHint": "[arguments]"}
            for skill in host.built.knowledge.skills
        ]
        model = host.model
        return {
            "commands": commands,
            "agents": [
                {"name": a.name, "description": a.description, "model": a.model or None}
                for a in host.built.agents.agents
            ],
            "output_style": "default",
            "available_output_styles": ["default"],
            "models": [{"value": model, "displayName": model, "description": f"{host.config.kind}: {model} (ram)"}],
            "account": {},
            "pid": os.getpid(),
            "claude_code_version": __version__,
            "current_permission_mode": self.mode(),
        }

    def interrupt(self, request: Mapping[str, Any]) -> dict[str, Any]:
        if self.in_turn and not self.live.interrupt("interrupted by the client"):
            self.interrupt_pending = True
        return {"still_queued": [str(line.get("uuid", "")) for line in self.pending]}

    def set_permission_mode(self, request: Mapping[str, Any]) -> dict[str, Any]:
        mode = request.get("mode")
        refused = self.set_mode(mode if isinstance(mode, str) else repr(mode))
        if refused:
            raise Refused(refused)
        return {"mode": mode}

    def set_model(self, request: Mapping[str, Any]) -> None:
        model = request.get("model")
        chosen = model if isinstance(model, str) and model not in ("", "default") else self.live.config.model
        self.live.set_model(chosen)

    def mcp_status(self, request: Mapping[str, Any]) -> dict[str, Any]:
        manager = self.live.built.mcp.manager
        servers = []
        states = {"connected": "connected", "connecting": "pending", "failed": "failed", "closed": "failed"}
        for server in manager.status() if manager is not None else []:
            entry: dict[str, Any] = {"name": server.name, "status": states.get(server.state, "failed")}
            if server.state != "connected" and server.detail:
                entry["error"] = server.detail
            entry["tools"] = [{"name": name} for name in server.tools]
            servers.append(entry)
        return {"mcpServers": servers}

    def get_context_usage(self, request: Mapping[str, Any]) -> dict[str, Any]:
        session = self.live.session
        reading = session.context_reading()
        percent = 100 * reading.tokens / reading.window if reading.window else 0.0
        return {
            "categories": [{"name": "Conversation", "tokens": reading.tokens, "color": "blue"}],
            "totalTokens": reading.tokens,
            "maxTokens": reading.window,
            "rawMaxTokens": reading.window,
            "percentage": percent,
            "model": self.live.model,
            "isAutoCompactEnabled": session.compaction.auto.compact_enabled and session.compaction.auto.auto_enabled,
            "memoryFiles": [],
            "mcpTools": [],
            "agents": [],
        }

    handlers: ClassVar[dict[str, Callable[[Driver, Mapping[str, Any]], dict[str, Any] | None]]] = {
        "initialize": initialize,
        "interrupt": interrupt,
        "set_permission_mode": set_permission_mode,
        "set_model": set_model,
        "mcp_status": mcp_status,
        "get_context_usage": get_context_usage,
    }

    # ---- permission mode ----

    def mode(self) -> str:
        """The mode as the client knows it (`dontAsk`/`auto` stand for our `default`)."""
        mode = self.live.built.policy.mode
        return self.alias if self.alias and mode == "default" else mode

    def set_mode(self, mode: str) -> str | None:
        """Switch the permission mode; why not, when it may not be."""
        if mode not in SDK_PERMISSION_MODES:
            return f"unknown permission mode {mode!r} (one of {', '.join(SDK_PERMISSION_MODES)})"
        if mode == "bypassPermissions" and not self.flags.allow_bypass:
            return (
                "bypassPermissions can be chosen only when ram was started with --allow-dangerously-skip-permissions "
                "or --permission-mode bypassPermissions"
            )
        policy = self.live.built.policy
        ours: PermissionMode = mode if mode in PERMISSION_MODES else "default"
        policy.mode = ours
        self.alias = mode if mode in ("dontAsk", "auto") else ""
        policy.asker = None if mode == "dontAsk" or not self.flags.ask_client else self.asker
        return None

    def switch_mode(self, mode: str) -> str | None:
        """`set_mode`, and on success the `system/status` line saying so (a `can_use_tool` answer's `setMode`)."""
        refused = self.set_mode(mode)
        if refused is None:
            self.status()
        return refused

    def status(self) -> None:
        assert self.writer is not None
        self.writer.system("status", status=None, permissionMode=self.mode())

    # ---- turns ----

    async def turn(self, line: Mapping[str, Any]) -> None:
        """One user message: `system/init`, the turn's lines, one `result`."""
        host, writer = self.live, self.writer
        assert writer is not None
        writer.model = host.model
        if writer.partial is not None:
            writer.partial.model = host.model
        message = line.get("message")
        content = user_content(message.get("content") if isinstance(message, Mapping) else None)
        started = time.monotonic()
        summary = TurnSummary(session_id=host.session_id, model=host.model, max_turns=self.options.max_turns)
        if content is None or not content.strip():  # refused as a UserPromptSubmit hook refuses a prompt
            self.complain("warning: stdin: a user message without text, answered with an error")
            writer.init(self.init_info())
            refused = Terminal("aborted", 0, "the user message has no text content; nothing was sent to the model")
            self.finish(refused, summary, started, 0.0)
            return
        inject: Sequence[Message] = []
        scope: TurnScope | None = None
        if not line.get("client_composed") and content.startswith("/"):
            command = await self.slash(content, summary, started)
            if command is None:
                return
            content, inject, scope = command
        if self.gone:  # the client went away while a command was being looked up: nobody waits for this turn
            return
        self.in_turn, self.interrupt_pending = True, False
        terminal = Terminal("error", 0, "the turn ended without a result")
        api_seconds = 0.0
        try:
            if host.built.mcp.manager is not None:  # join the servers first, so that init lists their tools
                for warning in await host.built.mcp.join(host.session.tools):
                    self.complain(f"warning: {warning}")
            writer.init(self.init_info())  # at the start of the turn, before the model answers, as Claude Code
            api_started = time.monotonic()
            async for event in host.turn(content, inject=inject, scope=scope):
                if self.interrupt_pending and host.interrupt("interrupted by the client"):
                    self.interrupt_pending = False
                if isinstance(event, Remark):
                    self.complain(event.text)
                    continue
                if isinstance(event, Waiting):
                    continue
                if isinstance(event, AssistantTurn):
                    api_seconds += time.monotonic() - api_started
                    summary.result = event.message.text
                    if over_budget(host, self.flags.max_budget_usd) and summary.over_budget is None:
                        summary.over_budget = self.flags.max_budget_usd
                        host.interrupt("budget")
                elif isinstance(event, ToolResults):
                    api_started = time.monotonic()
                elif (use := denied_call(event)) is not None:
                    summary.permission_denials.append(
                        {"tool_name": use.name, "tool_use_id": use.id, "tool_input": dict(use.input)}
                    )
                elif isinstance(event, Terminal):
                    terminal = event
                writer.event(event)
        except Exception as exc:  # a bug ends this turn with an error result, never the session
            host.repair()
            terminal = Terminal("error", terminal.turns, f"internal error: {type(exc).__name__}: {exc}")
        finally:
            self.in_turn = False
        self.finish(terminal, summary, started, api_seconds)

    async def slash(
        self, text: str, summary: TurnSummary, started: float
    ) -> tuple[str, Sequence[Message], TurnScope | None] | None:
        """`/compact [focus]` runs here (None: done); a custom command gives its expanded text, files and scope;
        `/<skill> [args]` the text and the skill's body to send; anything else is sent as typed."""
        from ..custom_commands.invoke import Failed, invoke, lookup
        from ..tools.builtin.skill import SkillTool

        name, _, args = text[1:].partition(" ")
        host = self.live
        if name == "compact":
            assert self.writer is not None
            self.writer.init(self.init_info())
            try:
                outcome = await host.session.compact_now(args.strip())
            except Exception as exc:  # a failed summary is this command's error, not the session's
                outcome = f"Compaction failed: {type(exc).__name__}: {exc}"
            if isinstance(outcome, Compacted):
                self.writer.event(outcome)
                summary.result = outcome.notice
                self.finish(Terminal("completed", 0), summary, started, 0.0)
            else:
                summary.result = outcome
                failed = outcome.startswith("Compaction failed")
                self.finish(
                    Terminal("error", 0, outcome) if failed else Terminal("completed", 0), summary, started, 0.0
                )
            return None
        custom = lookup(host.built, text)
        if custom is not None:
            invoked = await invoke(host.built, *custom)
            if isinstance(invoked, Failed):
                assert self.writer is not None
                self.writer.init(self.init_info())
                self.finish(Terminal("error", 0, invoked.message), summary, started, 0.0)
                return None
            return invoked.text, invoked.attached, invoked.scope
        tool = host.session.tools.get("Skill")
        if isinstance(tool, SkillTool) and tool.find(name) is not None:
            output = tool.load(name, args.strip() or None)
            if not output.is_error and output.after:
                return args.strip(), [Message("user", tuple(output.after), meta=True)], None
        return text, [], None

    def finish(self, terminal: Terminal, summary: TurnSummary, started: float, api_seconds: float) -> None:
        host, writer = self.live, self.writer
        assert writer is not None
        summary.model = host.model
        summary.usage = host.session.totals.usage
        summary.total_cost_usd = cost_usd(host.model, summary.usage)
        summary.duration_ms = round((time.monotonic() - started) * 1000)
        summary.duration_api_ms = round(api_seconds * 1000)
        result = writer.result(terminal, summary)
        self.last_error = bool(result["is_error"])

    def init_info(self) -> InitInfo:
        return msgspec.structs.replace(init_info(self.live), permission_mode=self.mode())
