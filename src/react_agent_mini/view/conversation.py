"""A transcript's conversation as HTML: what you typed, what ram added, what the model answered, and each tool call
folded (`<details>`) with its result — an Edit or a Write as a diff, a Bash command with its output.

Everything shown is escaped (html.py). Long results are shown by their head (and, for Bash, their tail) with a
line saying how much was left out — the transcript keeps them whole — so a 1,000-call session stays a page a
browser opens at once: `Limits` are tighter when a session has many results.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from ..compact.autocompact import SUMMARY_HEADER
from ..messages import (
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from ..pricing import cost_usd
from .html import dollars, esc, number, share, when
from .reading import Call, CallItem, CompactItem, MessageItem, RewindItem, Story


class Limits(msgspec.Struct, frozen=True):
    """How much of a long text is shown."""

    whole_lines: int = 120
    whole_chars: int = 8000
    head: int = 50
    tail: int = 20
    chars: int = 5000
    diff_lines: int = 400


ROOMY = Limits()
TIGHT = Limits(whole_lines=30, whole_chars=1500, head=14, tail=6, chars=1400, diff_lines=80)
TIGHT_FROM = 150
"""Tool results in a session from which `TIGHT` applies."""
DIFF_WORK = 4_000_000
"""An Edit whose old and new lines multiply past this is shown as the old lines, then the new (difflib's work
grows with their product)."""


def limits_for(story: Story) -> Limits:
    results = sum(
        len(item.message.tool_results)
        for s in (story, *story.subagents)
        for item in s.items
        if isinstance(item, MessageItem)
    )
    return TIGHT if results >= TIGHT_FROM else ROOMY


def conversation(story: Story, limits: Limits, agent_links: Mapping[str, str] | None = None, prefix: str = "") -> str:
    """The items of `story` in order; `agent_links`: an Agent call's id → the anchor of its subagent's section;
    `prefix`: before every anchor (a subagent's page part)."""
    calls = {c.number: c for c in story.calls}
    out: list[str] = []
    shown_results: set[int] = set()
    items = story.items
    for index, item in enumerate(items):
        if isinstance(item, MessageItem):
            message = item.message
            if message.role == "assistant":
                results = _results_after(items, index)
                shown_results.update(id(r) for r in results.values())
                out.append(_assistant(index, item, results, limits, agent_links or {}, prefix))
                if item.call is not None and item.call in calls:
                    out.append(_call_line(calls[item.call], prefix))
            else:
                out.append(_user(index, item, shown_results, limits, prefix))
        elif isinstance(item, CompactItem):
            out.append(_summary(item, limits))
        elif isinstance(item, RewindItem):
            out.append(
                f'<div class="event rewind" data-rewind="{item.keep}"><b>Rewound</b> — the conversation was cut back '
                f"to its first {item.keep} messages here ({esc(when(item.ts))}); what follows goes on from there."
                "</div>"
            )
        elif isinstance(item, CallItem) and item.call.record.kind != "turn":
            out.append(_call_line(item.call, prefix))
    return "\n".join(out) if out else '<p class="note">No messages.</p>'


def _results_after(items: Sequence[object], index: int) -> dict[str, ToolResultBlock]:
    """The results in the first message after `index` (the one that answers its calls)."""
    for item in items[index + 1 :]:
        if isinstance(item, MessageItem):
            if item.message.role != "user":
                return {}
            return {r.tool_use_id: r for r in item.message.tool_results}
        if isinstance(item, CompactItem | RewindItem):
            return {}
    return {}


def _assistant(
    index: int,
    item: MessageItem,
    results: Mapping[str, ToolResultBlock],
    limits: Limits,
    agents: Mapping[str, str],
    prefix: str,
) -> str:
    parts = [f'<div class="msg assistant" id="{prefix}m-{index}"><div class="who">Assistant {esc(when(item.ts))}</div>']
    for block in item.message.content:
        if isinstance(block, TextBlock) and block.text.strip():
            parts.append(f'<pre class="text">{esc(block.text)}</pre>')
        elif isinstance(block, ThinkingBlock) and block.thinking.strip():
            parts.append(f"<details><summary>Thinking</summary>{_clipped(block.thinking, limits, False)}</details>")
        elif isinstance(block, RedactedThinkingBlock):
            parts.append('<p class="note">(reasoning the provider keeps encrypted)</p>')
        elif isinstance(block, ToolUseBlock):
            parts.append(_tool(block, results.get(block.id), limits, agents.get(block.id)))
    parts.append("</div>")
    return "".join(parts)


def _user(index: int, item: MessageItem, shown: set[int], limits: Limits, prefix: str) -> str:
    message = item.message
    rest = [b for b in message.content if not (isinstance(b, ToolResultBlock) and id(b) in shown)]
    if not rest:
        return ""
    texts = [b.text for b in rest if isinstance(b, TextBlock)]
    orphans = [b for b in rest if isinstance(b, ToolResultBlock)]
    if message.is_user_text and not message.meta:
        body = "".join(f'<pre class="text">{esc(t)}</pre>' for t in texts)
        return (
            f'<div class="msg user" id="{prefix}m-{index}"><div class="who">You {esc(when(item.ts))}</div>{body}</div>'
        )
    first = next((t.strip().splitlines()[0] for t in texts if t.strip()), "")
    label = "Summary of the earlier conversation" if first.startswith(SUMMARY_HEADER) else "Added by ram"
    body = "".join(_clipped(t, limits, False) for t in texts)
    body += "".join(_result(r, "", limits) for r in orphans)
    return (
        f'<details class="msg injected" id="{prefix}m-{index}"><summary><span class="who">{label}</span> '
        f"{esc(first[:120])}</summary>{body}</details>"
    )


def _call_line(call: Call, prefix: str) -> str:
    record = call.record
    kind = "" if record.kind == "turn" else f'<span class="tag kind">{esc(record.kind)}</span> '
    tags = "".join(f'<span class="tag {e}">{e}</span>' for e in call.events)
    cost = cost_usd(record.model, record.usage.usage())
    return (
        f'<p class="call">{kind}<a href="#{prefix}call-{call.number}">call {call.number}</a> · {esc(record.model)} · '
        f"read {number(call.read)} ({share(call.cache_share)} from cache) · out "
        f"{number(record.usage.output_tokens)} · {dollars(cost)}{tags}</p>"
    )


def _summary(item: CompactItem, limits: Limits) -> str:
    texts = [m.text for m in item.messages if m.text.startswith(SUMMARY_HEADER)]
    if not texts:
        texts = [m.text for m in item.messages if m.meta and m.text.strip()]
    body = "".join(_clipped(t, limits, False) for t in texts)
    return (
        f'<div class="event" data-summary-after="{item.after_call}"><b>Summary</b> — after call {item.after_call} '
        f"({esc(when(item.ts))}) a summary rewrote the history: it now holds {len(item.messages)} messages."
        f"<details><summary>What the model was given instead</summary>{body}</details></div>"
    )


# ---- tool calls ----


def _tool(use: ToolUseBlock, result: ToolResultBlock | None, limits: Limits, agent_anchor: str | None) -> str:
    args = dict(use.input)
    what = _headline(use.name, args)
    if result is None:
        status = '<span class="err">no result</span>'
    elif result.is_error:
        status = '<span class="err">error</span>'
    else:
        status = ""
    body = [_tool_input(use.name, args, limits)]
    if agent_anchor:
        body.append(f'<p><a href="#{esc(agent_anchor)}">The subagent\'s own conversation</a></p>')
    if result is not None:
        body.append(_result(result, use.name, limits))
    return (
        f'<details class="tool" data-tool="{esc(use.name)}"><summary><span class="tname">{esc(use.name)}</span> '
        f"{esc(what)} {status}</summary><div>{''.join(body)}</div></details>"
    )


def _headline(name: str, args: Mapping[str, Any]) -> str:
    """The one argument that says what a call did (its file, command or pattern)."""
    for key in ("file_path", "command", "pattern", "url", "query", "description", "path", "skill", "message"):
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return _one(value)
    return ""


def _one(value: str) -> str:
    line = " ".join(value.split())
    return line if len(line) <= 140 else line[:139] + "…"


def _tool_input(name: str, args: Mapping[str, Any], limits: Limits) -> str:
    path = args.get("file_path")
    if name == "Edit" and isinstance(args.get("old_string"), str) and isinstance(args.get("new_string"), str):
        note = " (every occurrence)" if args.get("replace_all") else ""
        return _diff(str(path or ""), str(args["old_string"]), str(args["new_string"]), limits, note)
    if name == "Write" and isinstance(args.get("content"), str):
        return _diff(str(path or ""), "", str(args["content"]), limits, " (whole file)")
    if name == "Bash" and isinstance(args.get("command"), str):
        return f"<pre>$ {esc(args['command'])}</pre>"
    if name == "Agent" and isinstance(args.get("prompt"), str):
        kind = esc(args.get("subagent_type") or "general-purpose")
        return f'<p class="note">{kind} agent, asked:</p>{_clipped(str(args["prompt"]), limits, False)}'
    if len(args) == 1 and _headline(name, args):
        return ""  # its one argument is the summary line already
    try:
        shown = json.dumps(dict(args), indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        shown = str(dict(args))
    return _clipped(shown, limits, False)


def _diff(path: str, old: str, new: str, limits: Limits, note: str) -> str:
    before, after = old.splitlines(), new.splitlines()
    if len(before) * len(after) > DIFF_WORK:  # too big to compare line by line at once: the old lines, the new
        lines = ["@@ (compared whole) @@", *(f"-{line}" for line in before), *(f"+{line}" for line in after)]
    else:
        lines = list(difflib.unified_diff(before, after, lineterm="", n=3))[2:]
    shown = lines[: limits.diff_lines]
    rows = []
    for line in shown:
        kind = {"+": "a", "-": "d", "@": "h"}.get(line[:1], "")
        rows.append(f'<pre class="{kind}">{esc(line) or " "}</pre>' if kind else f"<pre>{esc(line) or ' '}</pre>")
    if len(lines) > len(shown):
        rows.append(f'<pre class="cut">[… {len(lines) - len(shown):,} more diff lines not shown]</pre>')
    return f'<p class="note">{esc(path)}{esc(note)}</p><div class="diff" data-diff="1">{"".join(rows)}</div>'


def _result(result: ToolResultBlock, tool: str, limits: Limits) -> str:
    head = '<p class="err">The tool said it failed:</p>' if result.is_error else ""
    images = f'<p class="note">(and {len(result.images)} image(s), not shown)</p>' if result.images else ""
    cls = "out" if tool == "Bash" else ""
    return head + _clipped(result.content, limits, tool == "Bash", cls) + images


def _clipped(text: str, limits: Limits, tail: bool, cls: str = "") -> str:
    """`text` in a `<pre>`, whole when short; else its head (and tail) and a line saying what was left out."""
    attr = f' class="{cls}"' if cls else ""
    lines = text.splitlines()
    if len(lines) <= limits.whole_lines and len(text) <= limits.whole_chars:
        return f"<pre{attr}>{esc(text)}</pre>"
    head_n = limits.head + (0 if tail else limits.tail)
    head = _fit("\n".join(lines[:head_n]), limits.chars)
    end = _fit("\n".join(lines[-limits.tail :]), limits.chars // 2, from_end=True) if tail else ""
    left = len(text) - len(head) - len(end)
    kept_lines = head.count("\n") + 1 + (end.count("\n") + 1 if end else 0)
    cut = (
        f'<span class="cut">\n[… {max(0, len(lines) - kept_lines):,} lines ({max(0, left):,} characters) not '
        "shown: the transcript has them all …]\n</span>"
    )
    return f"<pre{attr}>{esc(head)}{cut}{esc(end)}</pre>"


def _fit(text: str, chars: int, from_end: bool = False) -> str:
    if len(text) <= chars:
        return text
    return text[-chars:] if from_end else text[:chars]
