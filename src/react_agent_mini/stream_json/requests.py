"""The client's control requests (`control_request` lines) and their answers: `initialize`, `interrupt`,
`set_permission_mode`, `set_model`, `mcp_status`, `get_context_usage`. Any other subtype, a request that cannot be
done (`Refused`) or one that trips a bug is answered with an error; the session goes on.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from .. import __version__
from ..app import SessionOptions
from ..hooks import Hooks
from ..host import SessionHost
from ..kit.commands import offered
from .callbacks import register_hooks
from .control import ControlChannel
from .modes import Modes
from .turns import Turns


class Refused(Exception):
    """A control request that cannot be done; its text is the error answer."""


class ControlRequests:
    """Answers one client's control requests about its session."""

    def __init__(
        self,
        host: SessionHost,
        options: SessionOptions,
        channel: ControlChannel,
        hooks: Hooks,
        modes: Modes,
        turns: Turns,
        *,
        queued: Callable[[], list[str]],
        complain: Callable[[str], None],
    ) -> None:
        self.host, self.options, self.channel, self.hooks = host, options, channel, hooks
        self.modes, self.turns = modes, turns
        self.queued, self.complain = queued, complain
        self.initialized = False

    def handle(self, line: Mapping[str, Any]) -> None:
        """Answer one `control_request` line."""
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
            self.modes.announce(self.modes.current())

    def initialize(self, request: Mapping[str, Any]) -> dict[str, Any]:
        if self.initialized:
            raise Refused("already initialized")
        self.initialized = True
        host = self.host
        hooks = request.get("hooks")
        if isinstance(hooks, Mapping):
            register_hooks(self.hooks, hooks, self.channel, self.complain)
        prompt, appended = request.get("systemPrompt"), request.get("appendSystemPrompt")
        if isinstance(prompt, str) or isinstance(appended, str):  # the TS SDK sends its prompt options here
            base = prompt if isinstance(prompt, str) and prompt.strip() else self.options.system_prompt
            extra = appended if isinstance(appended, str) else self.options.append_system_prompt
            host.set_prompts(base, extra)
        if request.get("sdkMcpServers"):
            self.complain("warning: initialize: ram cannot reach MCP servers that live in the SDK process; skipped")
        agents = request.get("agents")
        if isinstance(agents, Mapping) and agents:  # the SDK's `agents=`: more types for the Agent tool
            from ..subagents.definitions import program_agents

            given, problems = program_agents(agents)
            host.agents.add(given)
            host.session.tools.changed()
            for problem in problems:
                self.complain(f"warning: initialize: {problem}")
        model = host.model
        return {
            "commands": [{"name": o.name, "description": o.description, "argumentHint": o.hint} for o in offered(host)],
            "agents": [
                {"name": a.name, "description": a.description, "model": a.model or None} for a in host.agents.agents
            ],
            "output_style": "default",
            "available_output_styles": ["default"],
            "models": [{"value": model, "displayName": model, "description": f"{host.config.kind}: {model} (ram)"}],
            "account": {},
            "pid": os.getpid(),
            "claude_code_version": __version__,
            "current_permission_mode": self.modes.current(),
        }

    def interrupt(self, request: Mapping[str, Any]) -> dict[str, Any]:
        self.turns.interrupt("interrupted by the client")
        return {"still_queued": self.queued()}

    def set_permission_mode(self, request: Mapping[str, Any]) -> dict[str, Any]:
        mode = request.get("mode")
        refused = self.modes.set(mode if isinstance(mode, str) else repr(mode))
        if refused:
            raise Refused(refused)
        return {"mode": mode}

    def set_model(self, request: Mapping[str, Any]) -> None:
        model = request.get("model")
        chosen = model if isinstance(model, str) and model not in ("", "default") else self.host.config.model
        self.host.set_model(chosen)

    def mcp_status(self, request: Mapping[str, Any]) -> dict[str, Any]:
        manager = self.host.mcp.manager
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
        session = self.host.session
        reading = session.context_reading()
        percent = 100 * reading.tokens / reading.window if reading.window else 0.0
        return {
            "categories": [{"name": "Conversation", "tokens": reading.tokens, "color": "blue"}],
            "totalTokens": reading.tokens,
            "maxTokens": reading.window,
            "rawMaxTokens": reading.window,
            "percentage": percent,
            "model": self.host.model,
            "isAutoCompactEnabled": session.compaction.auto.compact_enabled and session.compaction.auto.auto_enabled,
            "memoryFiles": [],
            "mcpTools": [],
            "agents": [],
        }

    handlers: ClassVar[dict[str, Callable[[ControlRequests, Mapping[str, Any]], dict[str, Any] | None]]] = {
        "initialize": initialize,
        "interrupt": interrupt,
        "set_permission_mode": set_permission_mode,
        "set_model": set_model,
        "mcp_status": mcp_status,
        "get_context_usage": get_context_usage,
    }
