"""What slash commands print, worked out from the session alone: the `/status` report, the Bash runs `/output`
shows, and how long ago a saved session was last used (`/resume`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..pricing import cost_usd, format_cost

if TYPE_CHECKING:
    from ..host import SessionHost
    from ..messages import Message


def ago(seconds: float) -> str:
    if seconds < 90:
        return "just now"
    if seconds < 5400:
        return f"{round(seconds / 60)} min ago"
    if seconds < 36 * 3600:
        return f"{round(seconds / 3600)} h ago"
    return f"{round(seconds / 86400)} days ago"


def bash_runs(messages: list[Message]) -> list[tuple[str, str]]:
    """(command, result) of every Bash call in `messages` that ran (not declined, skipped or interrupted),
    oldest first."""
    from ..builtin_tools import family_named
    from .render import bash_outcome

    shell = [u for m in messages for u in m.tool_uses if family_named(u.name) == "shell"]
    commands = {u.id: str(u.input.get("command", "")) for u in shell}
    return [
        (commands[r.tool_use_id], r.content)
        for m in messages
        for r in m.tool_results
        if r.tool_use_id in commands and bash_outcome(r) is not None
    ]


def status_report(host: SessionHost) -> str:
    """What `/status` prints."""
    session, provider = host.session, host.provider
    reading = session.context_reading()
    usage = session.totals.usage
    cost = cost_usd(provider.model, usage)
    estimated = ", estimated" if reading.estimated else ""
    lines = [
        f"model        {provider.name}:{provider.model}",
        f"context      ~{reading.tokens:,} of {reading.window:,} tokens (~{reading.percent}%{estimated})",
        f"tokens       {usage.total_input_tokens:,} in ({usage.cache_read_input_tokens:,} from cache, "
        f"{usage.cache_creation_input_tokens:,} written to cache) · {usage.output_tokens:,} out · "
        f"{session.totals.model_calls} model calls",
        "cost         "
        + (f"{format_cost(cost)} at list price" if cost is not None else f"no price known for {provider.model}"),
        f"permissions  {host.policy.mode} mode · {len(host.policy.session_rules())} rule(s) recorded this session",
        "MCP          " + _mcp_status(host),
        f"session      {session.session_id} · {len(session.messages)} messages · {session.context.cwd}",
    ]
    return "\n".join(lines)


def _mcp_status(host: SessionHost) -> str:
    manager = host.mcp.manager
    if manager is None:
        return "no servers configured"
    parts = []
    for server in manager.status():
        if server.state == "connected":
            parts.append(f"{server.name} connected ({len(server.tools)} tools)")
        elif server.detail:
            parts.append(f"{server.name} {server.state}: {server.detail}")
        else:
            parts.append(f"{server.name} {server.state}")
    return "; ".join(parts)
