"""`/context`: what fills the model's window now, part by part, as Claude Code's `/context` shows it — a grid of
the window, one cell per 1/`CELLS` of it, and a table of the parts in tokens.

The parts are counted as each call record counts them for `ram view` (`call_record.context_parts`, estimates of
the next request as compaction's stage ① would send it): the system prompt (our instructions and the environment),
the tool schemas (the built-in tools, and each MCP server's apart), the project's instruction files (AGENTS.md /
CLAUDE.md), the memory file, skills (the catalogue, and skill bodies loaded), and the messages by kind — what you
typed, what ram added (hook context, attachments, a summary), the model's answers, and tool results by tool. Then
what is kept free: the reserve past the compaction threshold (a summary starts when the context passes it; the
answer's `max_tokens`, where one is sent, comes out of that reserve) and the free space before the threshold,
whose place in the grid is marked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from ..host import SessionHost
    from ..tools.spec import ToolSpec

CELLS = 100
"""Cells of the grid (10 rows of 10, as Claude Code's)."""
ROW = 10
USED, FREE, RESERVE = "⛁", "⛶", "⛝"

STYLES = ("cyan", "magenta", "blue", "green", "yellow", "red", "bright_cyan", "bright_magenta", "bright_blue")


def tool_groups(specs: Sequence[ToolSpec]) -> list[tuple[str, int]]:
    """(label, schema tokens): the built-in tools, then each MCP server's (`mcp__<server>__<tool>`)."""
    from ..call_record import tool_tokens

    groups: dict[str, list[ToolSpec]] = {}
    for spec in specs:
        if spec.name.startswith("mcp__"):
            server = spec.name[5:].split("__", 1)[0]
            groups.setdefault(f"MCP tools: {server}", []).append(spec)
        else:
            groups.setdefault("tool schemas: built-in", []).append(spec)
    return [(label, tool_tokens(tools)) for label, tools in groups.items()]


def context_parts(host: SessionHost) -> list[tuple[str, int]]:
    """(label, estimated tokens) of everything the next request carries, in the order the grid shows them."""
    from ..call_record import context_parts as counted

    session = host.session
    specs = session.tools.specs()
    sent = session.compaction.sent(session.messages)
    parts = counted(session.system_prompt, specs, sent)
    out: list[tuple[str, int]] = [("system prompt", parts["system"])]
    out += tool_groups(specs)
    out += [
        ("project instructions (AGENTS.md, CLAUDE.md)", parts["project"]),
        ("memory", parts["memory"]),
        ("skills", parts["skills"]),
        ("your messages", parts["user"]),
        ("added by ram (hooks, attachments, summary)", parts["injected"]),
        ("model's messages", parts["assistant"]),
    ]
    results = sorted(parts["results"].items(), key=lambda item: -item[1])
    out += [(f"tool results: {name}", tokens) for name, tokens in results]
    return [(label, tokens) for label, tokens in out if tokens > 0 or label == "system prompt"]


def answer_reserve(host: SessionHost) -> int:
    """The `max_tokens` a request asks for (0 when none is sent: the server decides)."""
    provider = host.provider
    wanted = host.session.max_tokens or getattr(provider, "max_tokens", None)
    if wanted:
        return int(wanted)
    if provider.name == "anthropic":
        from ..providers.wire_layout import DEFAULT_MAX_TOKENS

        return DEFAULT_MAX_TOKENS
    return 0


def context_report(host: SessionHost) -> tuple[Text, Table, Text]:
    """The grid, the table of parts, and the lines under it."""
    session = host.session
    compaction = session.compaction
    window = compaction.window
    threshold = compaction.auto.trigger_tokens if compaction.auto.auto_enabled else window
    parts = context_parts(host)
    used = sum(tokens for _label, tokens in parts)
    reserve = max(0, window - threshold)
    free = max(0, window - used - reserve)
    answer = answer_reserve(host)
    styled = [(label, tokens, STYLES[n % len(STYLES)]) for n, (label, tokens) in enumerate(parts)]

    cells: list[tuple[str, str]] = []
    per_cell = window / CELLS
    total = 0
    for _label, tokens, style in styled:  # by running total, so the cells add up to the whole (a tiny part: none)
        before, total = total, total + tokens
        cells += [(USED, style)] * (round(total / per_cell) - round(before / per_cell))
    cells = cells[:CELLS]
    mark = min(CELLS - 1, round(threshold / per_cell))
    while len(cells) < CELLS:
        cells.append((RESERVE, "dim") if len(cells) >= mark else (FREE, "dim"))
    grid = Text()
    for row in range(CELLS // ROW):
        for column in range(ROW):
            at = row * ROW + column
            glyph, style = cells[at]
            grid.append(glyph + " ", style=style if at != mark else f"{style} reverse")
        grid.append("\n")

    table = Table(box=None, show_header=False, padding=(0, 1))
    table.add_column("", no_wrap=True)
    table.add_column("part")
    table.add_column("tokens", justify="right")
    table.add_column("share", justify="right")

    def share(tokens: int) -> str:
        return f"{100 * tokens / window:.1f}%" if window else ""

    for label, tokens, style in styled:
        table.add_row(Text(USED, style=style), label, f"{tokens:,}", share(tokens))
    table.add_row(Text(FREE, style="dim"), "free space", f"{free:,}", share(free))
    reserve_label = "reserve past the compaction threshold"
    if answer:
        reserve_label += f" (the answer's {answer:,} come out of it)"
    table.add_row(Text(RESERVE, style="dim"), reserve_label, f"{reserve:,}", share(reserve))

    reading = session.context_reading()
    if compaction.auto.auto_enabled:
        where = f"a summary starts past {threshold:,} tokens ({compaction.auto.percent}% of the window)"
    else:
        where = "automatic summaries are off (AUTOCOMPACT=0): /compact summarises by hand"
    notes = Text()
    notes.append(f"{host.model} · {used:,} of {window:,} tokens (~{round(100 * used / window)}%) by estimate")
    if not reading.estimated:
        notes.append(f" · ~{reading.tokens:,} by the provider's count of the last request")
    notes.append(f"\nthe highlighted cell marks the compaction threshold: {where}")
    return grid, table, notes
