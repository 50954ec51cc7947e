"""`/export [FILE]`: the conversation as Markdown — to FILE, or with no FILE to the clipboard by OSC 52.

Claude Code's `/export` asks whether to copy or to save; here the argument decides, so it is one step either way:
with FILE the Markdown is written there (relative to the session's directory; an existing file is replaced); without
one it goes to the terminal's clipboard through the OSC 52 escape sequence, which works over ssh and needs no
clipboard program. Terminals that do not support OSC 52 ignore it silently, so the line after says what was sent
and how to write a file instead; past `OSC52_LIMIT` bytes (what many terminals accept) nothing is sent and the line
says to use a file.

What you typed and what the model answered are shown whole; each tool call is a line with its input and its result
in a fenced block, cut to `RESULT_CHARS` (the transcript keeps them whole); context ram added (project files,
memory, hook output) is left out, an earlier summary is kept as such.
"""

from __future__ import annotations

import base64
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from ..messages import Message, TextBlock, ToolResultBlock, ToolUseBlock

RESULT_CHARS = 4000
"""Characters of a tool result shown (head and tail) in the export."""
OSC52_LIMIT = 100_000
"""Bytes of base64 sent by OSC 52 at most (xterm and tmux take about this much; kitty and iTerm2 more)."""


def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks in `text`."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _block(text: str) -> str:
    fence = _fence(text)
    return f"{fence}\n{text.rstrip()}\n{fence}"


def _cut(text: str, limit: int = RESULT_CHARS) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n… [{len(text) - 2 * half:,} characters left out] …\n{text[-half:]}"


def _call(use: ToolUseBlock) -> str:
    args = dict(use.input)
    shown = args.get("command") or args.get("file_path") or args.get("pattern") or args.get("url")
    if isinstance(shown, str) and len(args) <= 3:
        quoted = shown.replace("`", "'")
        return f"**{use.name}** `{quoted}`"
    return f"**{use.name}**\n\n{_block(json.dumps(args, ensure_ascii=False, indent=2))}"


def conversation_markdown(messages: Sequence[Message], title: str) -> str:
    """The conversation as one Markdown document headed `title`."""
    from ..compact.autocompact import SUMMARY_HEADER

    parts = [f"# {title}"]
    for message in messages:
        if message.role == "assistant":
            for block in message.content:
                if isinstance(block, TextBlock) and block.text.strip():
                    parts.append(f"## Assistant\n\n{block.text.strip()}")
                elif isinstance(block, ToolUseBlock):
                    parts.append(_call(block))
            continue
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                label = "Error" if block.is_error else "Result"
                parts.append(f"{label}:\n\n{_block(_cut(block.content))}")
        text = message.text.strip()
        if not text:
            continue
        if message.meta:
            if text.startswith(SUMMARY_HEADER):
                parts.append(f"## Summary of the earlier conversation\n\n{text}")
            continue
        parts.append(f"## You\n\n{message.typed or text}")
    return "\n\n".join(parts) + "\n"


def osc52(text: str) -> str:
    """The escape sequence that puts `text` on the terminal's clipboard."""
    encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return f"\x1b]52;c;{encoded}\x07"


def export(messages: Sequence[Message], title: str, target: str, cwd: Path) -> tuple[str, str]:
    """Export to `target` (a file, or "" for the clipboard); the line to show and its style."""
    if not any(not m.meta for m in messages):
        return "nothing to export yet: the conversation is empty", "yellow"
    text = conversation_markdown(messages, title)
    if target:
        path = (cwd / Path(target).expanduser()).resolve()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            return f"error: cannot write {target}: {exc.strerror or exc}", "red"
        try:
            shown = str(path.relative_to(cwd.resolve()))
        except ValueError:
            shown = str(path)
        return f"exported the conversation ({len(text):,} characters of Markdown) to {shown}", ""
    sequence = osc52(text)
    if len(sequence) > OSC52_LIMIT:
        return (
            f"the conversation is {len(text):,} characters of Markdown, more than a terminal's clipboard takes: "
            "/export FILE writes it to a file",
            "yellow",
        )
    sys.stdout.write(sequence)
    sys.stdout.flush()
    return (
        f"copied the conversation ({len(text):,} characters of Markdown) to the clipboard by OSC 52 — if your "
        "terminal does not support that, nothing was copied: /export FILE writes a file",
        "",
    )
