"""What slash commands print or send, worked out from the session alone: the task `/init` gives the agent, the
`/status` report, the Bash runs `/output` shows, and how long ago a saved session was last used (`/resume`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..pricing import cost_usd, format_cost

if TYPE_CHECKING:
    from ..app import Assembled
    from ..messages import Message

INIT_PROMPT = """\
Write {target_action} for this repository: the file coding agents (and new contributors) read before they work \
here. {target_note}

1. Explore first, with read-only tools: the README, the build and package files (pyproject.toml, package.json, \
Cargo.toml, go.mod, Makefile, CI workflows...), the layout of the source and test folders, a few central modules, \
and any existing agent instructions (AGENTS.md, CLAUDE.md, .cursorrules, .cursor/rules/, \
.github/copilot-instructions.md) — fold what is still true in them into the result.
2. Find the exact commands to install dependencies, build, lint, format, type-check, run all tests and run a \
single test. Take them from the project's files and CI; do not guess them, and do not run the full test suite or \
anything slow or destructive to check them.
3. Write concise Markdown with:
   - one short paragraph on what the project is;
   - the commands above, in code blocks;
   - the architecture: the main parts and how a request or data flows through them — what takes reading \
several files to understand, not what a directory listing shows;
   - the conventions a newcomer would get wrong: style beyond what the linters enforce, naming, error handling, \
testing patterns, where new code goes, things never to do.
   Every line must be true of this repository and useful to someone changing it: no generic advice ("write \
tests", "handle errors"), no invented sections, no list of every file. Aim for well under 200 lines.
4. {target_write}
5. Finish with two or three sentences on what you wrote or changed.{notes}"""


def init_prompt(root: Path, notes: str) -> str:
    """The task `/init` gives the agent: AGENTS.md, or the project's CLAUDE.md when that is what it keeps."""
    agents, claude = root / "AGENTS.md", root / "CLAUDE.md"
    if agents.is_file():
        action, note = "an improved AGENTS.md", "AGENTS.md already exists: improve it rather than start over."
        write = (
            "Change AGENTS.md in place with Edit (read it first): keep what is right, fix what is outdated, "
            "add what is missing."
        )
    elif claude.is_file():
        action, note = (
            "an improved CLAUDE.md",
            "This project keeps its agent instructions in CLAUDE.md: improve that file.",
        )
        write = (
            "Change CLAUDE.md in place with Edit (read it first): keep what is right, fix what is outdated, "
            "add what is missing."
        )
    else:
        action, note = "AGENTS.md", "There is none yet."
        write = "Create AGENTS.md at the root of the workspace with Write, starting with the heading `# AGENTS.md`."
    extra = f"\n\nNotes from the user: {notes.strip()}" if notes.strip() else ""
    return INIT_PROMPT.format(target_action=action, target_note=note, target_write=write, notes=extra)


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
    from ..tools.builtin import family_named
    from .render import bash_outcome

    shell = [u for m in messages for u in m.tool_uses if family_named(u.name) == "shell"]
    commands = {u.id: str(u.input.get("command", "")) for u in shell}
    return [
        (commands[r.tool_use_id], r.content)
        for m in messages
        for r in m.tool_results
        if r.tool_use_id in commands and bash_outcome(r) is not None
    ]


def status_report(built: Assembled) -> str:
    """What `/status` prints."""
    session, provider = built.session, built.provider
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
        f"permissions  {built.policy.mode} mode · {len(built.policy.session_rules())} rule(s) recorded this session",
        "MCP          " + _mcp_status(built),
        f"session      {session.session_id} · {len(session.messages)} messages · {session.context.cwd}",
    ]
    return "\n".join(lines)


def _mcp_status(built: Assembled) -> str:
    manager = built.mcp.manager
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
