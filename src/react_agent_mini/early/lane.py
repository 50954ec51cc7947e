"""Whether this run's first model request is known before the session is built, and if so, send it.

Known means: nothing that can change the first request is configured, so it is the system prompt this directory
gives, the default tools and the task. Every check below names such a thing; when one holds, the reason goes to
`providers.first_call.skipped` and nothing is sent (the session sends its request as always). A check that is
missing costs nothing but time: the session compares before it uses the early answer (`adopt.py`).
"""

from __future__ import annotations

import os
import sys

from ..providers import first_call

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping
    from pathlib import Path

    from ..provider_env import Endpoint

FREE_FLAGS = frozenset(
    {
        "task",
        "pipe",
        "provider",
        "model",
        "max_turns",
        "output_format",
        "include_partial_messages",
        "verbose",
        "max_budget_usd",
        "no_session_persistence",
        "allowed_tools",
        "disallowed_tools",
    }
)
"""Flags that do not change the first request (any other flag not at its default: nothing is sent early). Allow and
deny rules decide calls, not what the model is offered; a rule that does not parse is a warning, not an error."""
PLAIN_MODES = (None, "default", "acceptEdits", "bypassPermissions", "dontAsk")
"""Permission modes whose first request is the default one (plan mode tells the model more)."""
SETTING_VARIABLES = (
    "QUERY_MOCK",
    "MCP_CONFIG",
    "SEARXNG_URL",
    "BRAVE_API_KEY",
    "TAVILY_API_KEY",
    "RAM_MAX_OUTPUT_TOKENS",
    "RAM_MAX_RETRIES",
    "RAM_STREAM_IDLE_TIMEOUT",
    "RAM_FIRST_BYTE_TIMEOUT",
    "CONTEXT_WINDOW_TOKENS",
    "NETRC",
    *(f"{name}_PROXY" for name in ("HTTP", "HTTPS", "ALL", "http", "https", "all")),
)
"""Variables that add a tool, a server or a limit, route requests through a proxy or sign them (any set: nothing
is sent early)."""
USER_FILES = ("settings.json", "mcp.json", "agents")
"""In the user's config directory: settings (permissions, hooks, web search, sandbox), MCP servers, agents."""
PROJECT_FILES = (".claude/settings.json", ".claude/settings.local.json", ".agents/settings.json", ".mcp.json")
"""In the workspace: its settings and MCP servers."""
AGENT_DIRS = (".agents/agents", ".claude/agents")
"""At every level from the workspace up to the repository root: agent definitions (they change the Agent tool)."""
COMMAND_DIRS = (".agents/commands", ".claude/commands")
"""At every level too: custom commands (`custom_commands.catalog.PROJECT_DIRS`). They do not change the request,
but the REPL asks whether to trust a folder whose commands pre-approve tools, before its first turn."""
SETTINGS_NAMES = ("settings.json", "settings.local.json")
RULE_LISTS = frozenset({"allow", "deny", "ask"})
"""A settings file with nothing but allow rules under `permissions` (Claude Code's "don't ask again" writes them)
decides calls, not the first request. Deny and ask rules must be understood before the model hears anything (one
that is not stops the run), and their grammar is not light: a file with any is left to the session."""
SETTINGS_LIMIT = 1 << 18
"""Bytes of a settings file the lane reads at most (a bigger one: nothing is sent early)."""
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
"""A task naming an image file attaches it (`mentions.py`)."""
WIRES = {
    "react_agent_mini.providers.openai_compat.OpenAICompatProvider": "openai",
    "react_agent_mini.providers.anthropic.AnthropicProvider": "anthropic",
}


def send_early(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Send the first request now when it is known; never raises. Reads stdin first when the task comes (also)
    from there, as the run would, and leaves what it read in `args.early_stdin` for the run."""
    try:
        flag = unusual_flag(parser, args)
        if flag:
            first_call.skipped = flag
            return
        args.early_stdin = _read_stdin(args)
        planned = plan(args, os.environ, args.early_stdin)
    except Exception as exc:  # never a reason for the run to fail: the session's own request goes out
        first_call.skipped = f"{type(exc).__name__}: {exc}"
        return
    put_on_wire(planned)


def put_on_wire(planned: tuple[str, dict[str, str], bytes] | str) -> None:
    """Send the planned request (URL, headers, body) and leave it for the session's first call; or, when it is
    not sent (`planned` already says why, or sending fails), leave why in `first_call.skipped`. Never raises."""
    if isinstance(planned, str):
        first_call.skipped = planned
        return
    from .wire import send

    try:
        sent = send(*planned)
    except Exception as exc:  # the session's own request goes out instead
        sent = f"{type(exc).__name__}: {exc}"
    if isinstance(sent, str):
        first_call.skipped = sent
        return
    first_call.pending = sent
    from ..trace import trace

    trace("early.sent", bytes=len(sent.body))


def unusual_flag(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str:
    """The first flag given that can change the first request ("" when there is none)."""
    for action in parser._actions:
        if action.dest in FREE_FLAGS or action.default == "==SUPPRESS==":
            continue
        if action.dest == "permission_mode":
            if args.permission_mode not in PLAIN_MODES:
                return f"--permission-mode {args.permission_mode}"
        elif action.dest == "sandbox":  # the request does not show the sandbox; any other mode is probed first
            if args.sandbox not in (None, "off"):
                return f"--sandbox {args.sandbox}"
        elif getattr(args, action.dest, action.default) != action.default:
            return f"the flag {action.option_strings[0] if action.option_strings else action.dest}"
    return ""


def plan(
    args: argparse.Namespace, env: Mapping[str, str], stdin_text: str | None
) -> tuple[str, dict[str, str], bytes] | str:
    """The first request (URL, the provider's headers, the body) when nothing configured can change it; else why.
    The flags are checked already (`unusual_flag`); `stdin_text` is what stdin held (None: a terminal)."""
    task = " ".join(args.task or ()).strip()
    task = "\n\n".join(part for part in (task, (stdin_text or "").strip()) if part)
    if not task:
        return "no task"
    reason = task_reason(task)
    if reason:
        return reason
    known = knowable(args, env)
    return known if isinstance(known, str) else known.request(task)


def task_reason(task: str) -> str:
    """What in the task itself can change the first request ("" when nothing does)."""
    if task.startswith("/") or "@" in task:
        return "a command or an @mention"
    if any(suffix in task.lower() for suffix in IMAGE_SUFFIXES):
        return "the task may name an image"
    return ""


class Known:
    """Everything of the first request but the task: the wire format, where it goes, the system prompt."""

    __slots__ = ("endpoint", "system", "wire")

    def __init__(self, wire: str, endpoint: Endpoint, system: str) -> None:
        self.wire = wire
        self.endpoint = endpoint
        self.system = system

    def request(self, task: str) -> tuple[str, dict[str, str], bytes]:
        """URL, headers and body of the first request for `task`."""
        from .body import first_request

        return first_request(self.wire, self.endpoint, self.system, task)


def knowable(args: argparse.Namespace, env: Mapping[str, str], repl: bool = False) -> Known | str:
    """The first request but its task, when nothing in the environment or the files around can change it; else
    why (the flags are checked already). `repl`: nor will the REPL ask about the folder's own configuration
    before its first turn (the project's settings files and custom commands)."""
    if set_variable := next((name for name in SETTING_VARIABLES if env.get(name)), None):
        return f"{set_variable} is set"
    found = _endpoint(args, env)
    if isinstance(found, str):
        return found
    wire = _wire(found.kind)
    if wire is None:
        return f"the {found.kind} provider"
    from pathlib import Path

    cwd = Path.cwd().resolve()
    configured = _configuration(cwd, env, repl)
    if configured:
        return f"{configured} exists"
    from ..context.knowledge import Knowledge

    knowledge = Knowledge(cwd, env)
    if knowledge.skills:
        return "skills"
    return Known(wire, found, knowledge.system_prompt)


def _endpoint(args: argparse.Namespace, env: Mapping[str, str]) -> Endpoint | str:
    from ..provider_env import default_provider, endpoint

    provider = args.provider or default_provider(env)
    if provider is None:
        return "no provider"
    return endpoint(env, provider, args.model)


def _wire(kind: str) -> str | None:
    from ..provider_registry import get

    spec = get(kind)
    return WIRES.get(spec.provider_class) if spec is not None else None


def _configuration(cwd: Path, env: Mapping[str, str], repl: bool) -> Path | None:
    """The first file or folder found that configures something the first request would show (a settings file of
    allow rules only does not, except a project's for the REPL, and neither do custom commands, but for the REPL)."""
    from pathlib import Path

    from ..context import user_config_dir
    from ..context.project import search_levels

    user_dirs = {user_config_dir(env), Path.home() / ".config" / "react-agent-mini"}
    candidates = [directory / name for directory in user_dirs for name in USER_FILES]
    candidates += [cwd / name for name in PROJECT_FILES]
    levels, _, _ = search_levels(cwd)
    candidates += [level / name for level in levels for name in (*AGENT_DIRS, *(COMMAND_DIRS if repl else ()))]
    candidates.append(Path.home() / ".netrc")
    project = {cwd / name for name in PROJECT_FILES}
    for path in candidates:
        if not os.path.lexists(path):
            continue
        if path.name in SETTINGS_NAMES and not (repl and path in project) and allow_rules_only(path):
            continue
        return path
    return None


def allow_rules_only(path: Path) -> bool:
    """Is `path` a regular file (not a link, a FIFO or a device) of JSON whose only settings are allow rules
    (`{"permissions": {"allow": [...]}}`, `$schema` beside it, empty deny and ask lists)? Anything else, or
    unreadable: no."""
    import json
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > SETTINGS_LIMIT:
            return False
        data = json.loads(os.read(fd, SETTINGS_LIMIT + 1))
    except (OSError, ValueError):
        return False
    finally:
        os.close(fd)
    if not isinstance(data, dict) or not set(data) <= {"$schema", "permissions"}:
        return False
    rules = data.get("permissions", {})
    return (
        isinstance(rules, dict)
        and set(rules) <= RULE_LISTS
        and all(isinstance(items, list) and all(isinstance(item, str) for item in items) for items in rules.values())
        and not rules.get("deny")
        and not rules.get("ask")
    )


def _read_stdin(args: argparse.Namespace) -> str | None:
    """What stdin holds for a headless task, read as the run reads it (`stdin_task.read_stdin`: with a task argument, a
    pipe silent for a few seconds is skipped; with `-p` or no argument, read to its end); None on a terminal."""
    if sys.stdin is None or sys.stdin.isatty():
        return None
    from ..stdin_task import STDIN_WAIT_SECONDS, read_stdin

    task = " ".join(args.task or ()).strip()
    return read_stdin(wait=STDIN_WAIT_SECONDS if task and not args.pipe else None)
