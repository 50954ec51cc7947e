"""The Claude Code flags the Claude Agent SDK and claude-code-acp pass, so that `ram` can stand in for `claude`.

`add_claude_code_flags` declares them (argparse only: `ram --help` and `--version` stay light); `session_fields`
turns their values into what the session needs — the system prompt, the built-in tools, MCP servers, the session
id — reading the files they name. Flags that mean nothing to ram are accepted and listed in `--help` as such.
What each flag means is Claude Code's (its CLI reference); which ones a driving program passes is what the Agent
SDK's subprocess transport and claude-code-acp put on the command line. An unknown flag is a one-line error with
the nearest real one (`cli.parse_command_line`).
"""

from __future__ import annotations

import argparse
import os
import re

from .permission_modes import SDK_PERMISSION_MODES as SDK_PERMISSION_MODES  # `--permission-mode`'s values

TYPE_CHECKING = False  # not `typing`'s: see SessionFields
if TYPE_CHECKING:
    from typing import Any

NO_EFFECT = (
    "--verbose",
    "--include-hook-events",
    "--fallback-model M",
    "--max-thinking-tokens N",
    "--thinking MODE",
    "--thinking-display X",
    "--effort LEVEL",
    "--betas LIST",
    "--json-schema JSON",
    "--plugin-dir DIR",
    "--agent NAME",
    "--debug [FILTER]",
    "--debug-to-stderr",
    "--debug-file F",
    "--task-budget N",
    "--resume-session-at ID",
    "--resume-drops-turn X",
    "--session-mirror",
)
"""Accepted so that the SDK's command lines parse; they change nothing here."""

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"


def add_claude_code_flags(parser: argparse.ArgumentParser, *, hidden: bool = True) -> None:
    """Declare the Claude Code flags on `parser`; `hidden` False: leave out those `--help` does not show (the
    parser then only prints the help)."""
    sdk = parser.add_argument_group(
        "Claude Code compatibility (what the Claude Agent SDK and claude-code-acp pass)",
    )
    sdk.add_argument(
        "--input-format",
        choices=["text", "stream-json"],
        default="text",
        help="stream-json: a long-lived session driven over stdin/stdout with Claude Code's NDJSON protocol "
        "(user messages and control requests in; needs --output-format stream-json)",
    )
    sdk.add_argument(
        "--include-partial-messages",
        action="store_true",
        help="stream-json: also write stream_event lines as the answer streams (text and thinking deltas)",
    )
    sdk.add_argument(
        "--permission-prompt-tool",
        metavar="stdio",
        help="stdio: ask the driving program (can_use_tool control requests) instead of denying what needs asking",
    )
    sdk.add_argument(
        "--system-prompt",
        metavar="TEXT",
        help="replace ram's base instructions (AGENTS.md/CLAUDE.md, memory and skills still follow); "
        'an empty value ("", as the SDK sends by default) keeps ram\'s own',
    )
    sdk.add_argument("--system-prompt-file", metavar="PATH", help="the same, read from a file")
    sdk.add_argument("--append-system-prompt", metavar="TEXT", help="text added at the end of the system prompt")
    sdk.add_argument(
        "--tools",
        metavar="TOOLS",
        help='the built-in tools offered: "default" (all but the Echo demo tool, which only --mock offers), "" '
        '(none), or a list such as "Read,Grep" or "default,Echo"',
    )
    sdk.add_argument(
        "--mcp-config",
        action="append",
        default=[],
        metavar="JSON|PATH",
        help='MCP servers, {"mcpServers": {...}} as JSON or a file (repeatable; they win over .mcp.json; '
        'SDK-hosted "type": "sdk" servers are skipped with a warning)',
    )
    sdk.add_argument("--strict-mcp-config", action="store_true", help="use only the --mcp-config servers")
    sdk.add_argument(
        "--setting-sources",
        metavar="LIST",
        help="which settings files give permission rules and hooks: user (~/.config/react-agent-mini/settings.json), "
        "project (.claude/settings.json, .agents/settings.json), local (.claude/settings.local.json); default all",
    )
    sdk.add_argument(
        "--settings",
        metavar="JSON|PATH",
        help="one more settings object or file; its `permissions` and `hooks` apply (other keys are named and ignored)",
    )
    sdk.add_argument("--session-id", metavar="UUID", help="the new session's id (a UUID not used yet)")
    sdk.add_argument("--fork-session", action="store_true", help="with --resume/--continue: continue as a new session")
    sdk.add_argument("--no-session-persistence", action="store_true", help="save no transcript of this session")
    sdk.add_argument(
        "--max-budget-usd",
        type=float,
        metavar="X",
        help="stop once the session's cost at list price reaches X dollars (error_max_budget_usd)",
    )
    sdk.add_argument(
        "--allow-dangerously-skip-permissions",
        action="store_true",
        help="let a driving program switch to bypassPermissions during the session",
    )
    compat = parser.add_argument_group("accepted for Claude Code compatibility, no effect", _wrapped(NO_EFFECT))
    sdk.add_argument(
        "--add-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="a directory Bash commands may also write in the sandbox (repeatable)",
    )
    if hidden:
        _add_hidden_flags(compat)


def _add_hidden_flags(compat: argparse._ArgumentGroup) -> None:
    """The flags that change nothing here (`NO_EFFECT`): parsed, not shown."""
    for flag in ("--verbose", "--include-hook-events", "--debug-to-stderr", "--session-mirror"):
        compat.add_argument(flag, action="store_true", help=argparse.SUPPRESS)
    compat.add_argument("--plugin-dir", action="append", default=[], help=argparse.SUPPRESS)
    for flag in (
        "--fallback-model",
        "--max-thinking-tokens",
        "--thinking",
        "--thinking-display",
        "--effort",
        "--betas",
        "--json-schema",
        "--agent",
        "--debug-file",
        "--task-budget",
        "--resume-session-at",
        "--resume-drops-turn",
    ):
        compat.add_argument(flag, help=argparse.SUPPRESS)
    compat.add_argument("--debug", nargs="?", const="", help=argparse.SUPPRESS)


def _wrapped(words: tuple[str, ...], width: int = 100) -> str:
    """`words` joined with spaces, in lines of at most `width` characters (the help text is not re-wrapped)."""
    lines = [""]
    for word in words:
        if lines[-1] and len(lines[-1]) + 1 + len(word) > width:
            lines.append("")
        lines[-1] = f"{lines[-1]} {word}" if lines[-1] else word
    return "\n".join(lines)


class FlagError(Exception):
    """A flag's value cannot be used (one line for the user; the run exits 2)."""


class SessionFields:
    """What the Claude Code flags say about the session (fields of `app.SessionOptions`). A plain class, not a
    NamedTuple: `ram --help` imports this module, and `typing` would cost it ≈4 ms."""

    __slots__ = (
        "append_system_prompt",
        "builtin_tools",
        "fork",
        "mcp_servers",
        "save",
        "session_id",
        "strict_mcp",
        "system_prompt",
        "warnings",
    )

    def __init__(
        self,
        *,
        system_prompt: str | None,
        append_system_prompt: str,
        builtin_tools: tuple[str, ...] | None,
        mcp_servers: dict[str, Any] | None,
        strict_mcp: bool,
        session_id: str | None,
        save: bool,
        fork: bool,
        warnings: list[str],
    ) -> None:
        self.system_prompt = system_prompt
        self.append_system_prompt = append_system_prompt
        self.builtin_tools = builtin_tools
        self.mcp_servers = mcp_servers
        self.strict_mcp = strict_mcp
        self.session_id = session_id
        self.save = save
        self.fork = fork
        self.warnings = warnings
        """Lines to show on stderr (servers skipped, tools unknown)."""


def session_fields(args: argparse.Namespace, cwd: str) -> SessionFields:
    """Read the flags' values (and the files they name); FlagError when one cannot be used."""
    warnings: list[str] = []
    return SessionFields(
        system_prompt=_system_prompt(args, cwd),
        append_system_prompt=args.append_system_prompt or "",
        builtin_tools=_tools(args.tools, warnings),
        mcp_servers=_mcp_servers(args.mcp_config, cwd, warnings),
        strict_mcp=args.strict_mcp_config,
        session_id=_session_id(args.session_id),
        save=not args.no_session_persistence,
        fork=args.fork_session,
        warnings=warnings,
    )


def setting_sources(value: str | None) -> tuple[str, ...] | None:
    """`--setting-sources user,project,local` as a tuple (None when not given); FlagError for an unknown name."""
    if value is None:
        return None
    names = tuple(part.strip() for part in value.split(",") if part.strip())
    unknown = [name for name in names if name not in ("user", "project", "local")]
    if unknown:
        raise FlagError(f"--setting-sources: unknown source {unknown[0]!r} (use user, project and local)")
    return names


def _read(path: str, cwd: str, flag: str) -> str:
    full = os.path.join(cwd, os.path.expanduser(path))
    try:
        with open(full, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError as exc:
        raise FlagError(f"{flag}: cannot read {path}: {exc.strerror or exc}") from None


def _system_prompt(args: argparse.Namespace, cwd: str) -> str | None:
    """A non-empty `--system-prompt` / `--system-prompt-file` replaces our base instructions; empty keeps ours."""
    if args.system_prompt and args.system_prompt_file:
        raise FlagError("--system-prompt and --system-prompt-file cannot be used together")
    text = args.system_prompt or ""
    if args.system_prompt_file:
        text = _read(args.system_prompt_file, cwd, "--system-prompt-file")
    return text if text.strip() else None


def _tools(value: str | None, warnings: list[str]) -> tuple[str, ...] | None:
    """`--tools`: None for "default" (every built-in tool but the Echo demo tool), else the names to offer; a list
    may hold "default" for all of those, plus more (`default,Echo`)."""
    if value is None or value.strip() == "default":
        return None
    from .builtin_tools import built_in_names  # the tool classes, imported only for this flag

    names = tuple(dict.fromkeys(part for part in re.split(r"[,\s]+", value) if part))
    known = built_in_names()
    unknown = [name for name in names if name not in known and name != "default"]
    if unknown:
        warnings.append(f"--tools: ram has no built-in tool named {', '.join(unknown)} (it has {', '.join(known)})")
    return names


def _mcp_servers(values: list[str], cwd: str, warnings: list[str]) -> dict[str, Any] | None:
    """The servers of every `--mcp-config`, merged in order; SDK-hosted ones are skipped with a warning."""
    if not values:
        return None
    import json

    merged: dict[str, Any] = {}
    for value in values:
        text = value if value.lstrip().startswith("{") else _read(value, cwd, "--mcp-config")
        try:
            data = json.loads(text)
        except ValueError as exc:
            where = "its JSON" if text is value else value
            raise FlagError(f"--mcp-config: {where} is not valid JSON ({exc})") from None
        inner = data.get("mcpServers", data) if isinstance(data, dict) else None
        if not isinstance(inner, dict):
            raise FlagError('--mcp-config: expected {"mcpServers": {"name": {...}}}')
        for name, entry in inner.items():
            if isinstance(entry, dict) and entry.get("type") == "sdk":
                warnings.append(
                    f'MCP server {name!r} lives in the SDK process (type "sdk"), which ram cannot reach yet; skipped'
                )
                continue
            merged[str(name)] = entry
    return {"mcpServers": merged}


def _session_id(value: str | None) -> str | None:
    if value is None:
        return None
    if not re.fullmatch(_UUID, value):
        raise FlagError(f"--session-id: {value!r} is not a UUID")
    return value.lower()


def session_flags_check(args: argparse.Namespace, fields: SessionFields, *, resuming: bool) -> tuple[str, list[str]]:
    """Why `--session-id` / `--fork-session` / `--permission-prompt-tool` cannot be used as given ("" when they
    can), and warnings for those that only have no effect."""
    warnings: list[str] = []
    if fields.fork and not resuming:
        warnings.append("--fork-session has effect only with --resume or --continue")
    tool = args.permission_prompt_tool
    if tool is not None and tool != "stdio":
        warnings.append(f"--permission-prompt-tool {tool!r}: only stdio is supported; what needs asking is denied")
    elif tool == "stdio" and args.input_format != "stream-json":
        warnings.append("--permission-prompt-tool stdio has effect only with --input-format stream-json")
    if fields.session_id is None:
        return "", warnings
    if resuming and not fields.fork:
        return "--session-id with --resume or --continue needs --fork-session (the resumed one keeps its id)", warnings
    from pathlib import Path

    from . import transcript

    if (transcript.sessions_dir(Path.cwd()) / f"{fields.session_id}.jsonl").exists():
        return f"--session-id: session {fields.session_id} already exists (use --resume to continue it)", warnings
    return "", warnings
