"""How a tool call looks in the editor: its kind, a title a person reads ("Read src/app.py", "Run `pytest -q`"),
the places it touches, and for Edit and Write the change as a diff.

These are pure functions of the call's name and input and the workspace root; what a built-in tool is comes from
its declaration (`builtin_tools.family_named`), never from a list of names here. One exception: Write's diff shows the
text being replaced, which the caller reads for us (`OldText`). Locations use 0-based lines, as Zed reads them.
Read's `offset` is 1-based, so line 1 is location line 0.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec
from acp.schema import FileEditToolCallContent, ToolCallLocation, ToolKind

from ..builtin_tools import family_named
from ..tools.paths import display, resolve

OldText = Callable[[Path], str | None]
"""The current text of a file (None when it does not exist or cannot be shown as text)."""

TITLE_CHARS = 120
"""A title longer than this is cut, with `…`."""
PREVIEW_BYTES = 256 * 1024
"""A file bigger than this is not shown as a Write's old text (the diff then shows the new text alone)."""


class Card(msgspec.Struct, frozen=True):
    """What the editor shows for one tool call."""

    kind: ToolKind
    title: str
    locations: tuple[ToolCallLocation, ...] = ()
    diff: FileEditToolCallContent | None = None
    """The change an Edit or Write makes (old and new text)."""


def card(name: str, args: Mapping[str, Any], root: Path, old_text: OldText) -> Card:
    """The card for a call of tool `name` with input `args`."""
    path = _path(args, root)
    shown = display(root, path) if path is not None else ""
    family = family_named(name)
    if family == "read" and path is not None:
        return Card("read", f"{name} {shown}{_range(args)}", (_location(path, _offset(args) - 1),))
    if family == "edit" and path is not None and "old_string" in args:
        old, new = str(args.get("old_string", "")), str(args.get("new_string", ""))
        diff = FileEditToolCallContent(type="diff", path=str(path), old_text=old or None, new_text=new)
        return Card("edit", f"{name} {shown}", (_location(path, _line_of(old_text(path), old)),), diff)
    if family == "edit" and path is not None:
        before = old_text(path)
        diff = FileEditToolCallContent(type="diff", path=str(path), old_text=before, new_text=str(args.get("content")))
        return Card("edit", f"{name} {shown}", (_location(path, 0),), diff)
    if family == "shell":
        return Card("execute", f"Run {code(_cut(_one_line(str(args.get('command', '')))))}")
    if family == "search":
        where = _search_root(args, root)
        title = f"{name} {code(_cut(str(args.get('pattern', ''))))}" + (f" in {display(root, where)}" if where else "")
        return Card("search", title, (_location(where, None),) if where else ())
    if name == "Skill":
        return Card("other", _cut(f"Skill {args.get('skill', '')}"))
    if name == "ReadMcpResourceTool":
        return Card("read", _cut(f"Read {args.get('server', '')}:{args.get('uri', '')}"))
    if name == "ListMcpResourcesTool":
        return Card("search", "List MCP resources" + (f" of {args['server']}" if args.get("server") else ""))
    if name.startswith("mcp__"):
        server, _, tool = name[len("mcp__") :].partition("__")
        kind: ToolKind = "fetch" if re.search(r"fetch|http|url|web", tool, re.IGNORECASE) else "other"
        return Card(kind, _cut(f"{tool or name} ({server}){_brief(args)}"))
    return Card("other", _cut(f"{name}{_brief(args)}"))


def disk_text(path: Path) -> str | None:
    """The text of the file at `path` on disk, for a Write's diff (None: none, too big, or not UTF-8 text)."""
    try:
        if not path.is_file() or path.stat().st_size > PREVIEW_BYTES:
            return None
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def code(text: str) -> str:
    """`text` as Markdown inline code, with a fence longer than any run of backticks inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{padded}{fence}"


def _path(args: Mapping[str, Any], root: Path) -> Path | None:
    raw = args.get("file_path")
    return resolve(root, raw) if isinstance(raw, str) and raw and "\x00" not in raw else None


def _search_root(args: Mapping[str, Any], root: Path) -> Path | None:
    raw = args.get("path")
    return resolve(root, raw) if isinstance(raw, str) and raw and "\x00" not in raw else None


def _offset(args: Mapping[str, Any]) -> int:
    offset = args.get("offset")
    return offset if isinstance(offset, int) and offset > 0 else 1


def _range(args: Mapping[str, Any]) -> str:
    limit = args.get("limit")
    first = _offset(args)
    if isinstance(limit, int) and limit > 0:
        return f" (lines {first}–{first + limit - 1})"
    return f" (from line {first})" if first > 1 else ""


def _location(path: Path, line: int | None) -> ToolCallLocation:
    return ToolCallLocation(path=str(path), line=max(line, 0) if line is not None else None)


def _line_of(text: str | None, needle: str) -> int | None:
    """The 0-based line where `needle` first starts in `text` (None when it is not there)."""
    if text is None or not needle:
        return None
    at = text.replace("\r\n", "\n").find(needle.replace("\r\n", "\n"))
    return text.replace("\r\n", "\n").count("\n", 0, at) if at >= 0 else None


def _one_line(command: str) -> str:
    lines = [line.strip() for line in command.strip().splitlines() if line.strip()]
    return " ⏎ ".join(lines)


def _brief(args: Mapping[str, Any]) -> str:
    if not args:
        return ""
    shown = json.dumps(dict(args), ensure_ascii=False, default=str)
    return f" {shown}"


def _cut(title: str) -> str:
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…"
