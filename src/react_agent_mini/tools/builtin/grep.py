"""Grep: search file contents with a regular expression, through ripgrep.

The tool's part is its arguments and what it tells the model, and one call: the path is resolved and checked, an
explicitly named binary file is answered at once (rg would print a warning rather than say so), the search runs
(grep_search.py), files the permission rules hide are taken out, and the rest is ordered and paged
(grep_render.py). Without rg the call is an error saying how to get it (ripgrep.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import msgspec

from ..base import ModelTool, ToolContext, ToolOutput
from ..declared import Touches
from ..paths import display, resolve
from .grep_render import MAX_LINE_CHARS, render
from .grep_search import Mode, SearchSpec, invalid_regex, search
from .ripgrep import find_rg, not_found

DEFAULT_HEAD_LIMIT = 250
_BINARY_PROBE = 64 * 1024
"""How much of a named file is read at once while looking for a NUL (rg looks at its first buffer too)."""

NonNegative = Annotated[int, msgspec.Meta(ge=0)]


class GrepArgs(msgspec.Struct):
    pattern: Annotated[str, msgspec.Meta(description="Rust regex (as rg): no look-around or backreferences.")]
    path: Annotated[str | None, msgspec.Meta(description="File or directory to search (default: the workspace).")] = (
        None
    )
    glob: Annotated[
        str | None,
        msgspec.Meta(description="Only files matching these globs (space- or comma-separated; `!x` excludes)."),
    ] = None
    type: Annotated[str | None, msgspec.Meta(description="Only files of this rg type: py, js, rust, go, ...")] = None
    output_mode: Annotated[Mode, msgspec.Meta(description="See above.")] = "files_with_matches"
    ignore_case: Annotated[bool, msgspec.Meta(description="Case-insensitive.")] = msgspec.field(
        default=False, name="-i"
    )
    line_numbers: Annotated[bool, msgspec.Meta(description="Line numbers (content mode).")] = msgspec.field(
        default=True, name="-n"
    )
    after: Annotated[NonNegative | None, msgspec.Meta(description="Lines after each match.")] = msgspec.field(
        default=None, name="-A"
    )
    before: Annotated[NonNegative | None, msgspec.Meta(description="Lines before each match.")] = msgspec.field(
        default=None, name="-B"
    )
    context: Annotated[NonNegative | None, msgspec.Meta(description="Lines around each match.")] = msgspec.field(
        default=None, name="-C"
    )
    multiline: Annotated[bool, msgspec.Meta(description="`.` and `\\s` also match newlines.")] = False
    head_limit: Annotated[
        NonNegative | None,
        msgspec.Meta(description=f"At most this many entries (default {DEFAULT_HEAD_LIMIT}; 0: all)."),
    ] = None
    offset: Annotated[NonNegative, msgspec.Meta(description="Skip this many entries (next page).")] = 0


def _split(raw: str | None) -> list[str]:
    """Globs or type names separated by spaces or commas (a comma inside `{}` belongs to its glob)."""
    out: list[str] = []
    current: list[str] = []
    depth = 0
    for c in raw or "":
        if depth == 0 and (c == "," or c.isspace()):
            out.append("".join(current))
            current = []
            continue
        depth += (c == "{") - (c == "}" and depth > 0)
        current.append(c)
    out.append("".join(current))
    return [piece for piece in out if piece]


class GrepTool(ModelTool[GrepArgs]):
    name = "Grep"
    description = (
        "Search file contents with a regular expression (ripgrep); use it instead of grep or rg in Bash. Escape "
        "metacharacters to match them literally (`interface\\{\\}`, `\\.`). output_mode: files_with_matches "
        "(default; paths, newest first), content (`path:line:text`, by path; -A/-B/-C context) or count (`path:N`). "
        "Respects .gitignore; skips binary files and .git/. Paths are relative to the workspace root. "
        f"Lines over {MAX_LINE_CHARS} characters are cut; the result says how to page on with offset."
    )
    args_model = GrepArgs
    read_only = True
    family = "search"
    concurrency_safe = True
    status_field = "pattern"
    path_fields = ("path",)

    def __init__(self, *, rg_path: str | None = None) -> None:
        """`rg_path` overrides where rg is looked for (ripgrep.find_rg)."""
        self._rg_path = rg_path

    def touches(self, raw: Mapping[str, Any]) -> Touches:
        """The folder (or file) searched: the workspace when none is given."""
        where = raw.get("path")
        return Touches(searches=(where if isinstance(where, str) and where else ".",))

    async def call(self, args: GrepArgs, ctx: ToolContext) -> ToolOutput:
        if "\0" in args.pattern:
            return ToolOutput(
                invalid_regex(args.pattern, "it contains a NUL character; write \\x00 instead"), is_error=True
            )
        try:
            return await self._grep(args, ctx)
        except (OSError, ValueError) as exc:  # e.g. a NUL in the path, an unreadable root
            return ToolOutput(f"Grep failed: {exc}", is_error=True)

    async def _grep(self, args: GrepArgs, ctx: ToolContext) -> ToolOutput:
        root = ctx.cwd.resolve()
        raw_path = None if args.path in (None, "", "undefined", "null") else args.path
        target = resolve(root, raw_path or ".")
        if not target.exists():
            return ToolOutput(f"Path does not exist: {raw_path}", is_error=True)
        content = args.output_mode == "content"
        spec = SearchSpec(
            root=root,
            target=target,
            pattern=args.pattern,
            mode=args.output_mode,
            ignore_case=args.ignore_case,
            multiline=args.multiline,
            before=_context(args.before, args.context) if content else 0,
            after=_context(args.after, args.context) if content else 0,
            globs=_split(args.glob),
            types=_split(args.type),
        )
        limit = DEFAULT_HEAD_LIMIT if args.head_limit is None else args.head_limit
        if target.is_file() and await asyncio.to_thread(_is_binary, target):
            return ToolOutput(f"No matches for {args.pattern}: {display(root, target)} is a binary file.")
        rg = self._rg_path or find_rg()
        if rg is None:
            return ToolOutput(not_found("Grep"), is_error=True)
        found = await search(rg, spec)
        if isinstance(found, str):
            return ToolOutput(found, is_error=True)
        if ctx.read_denied is not None:
            found = found.without_denied(root, ctx.read_denied)
        text, page = await asyncio.to_thread(render, spec, found, args.offset, limit, args.line_numbers)
        return ToolOutput(text, details=page)


def _is_binary(path: Path) -> bool:
    """True when an explicitly named file holds a NUL byte (UTF-16 text, marked by its BOM, is not binary)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(_BINARY_PROBE)
            if head.startswith((b"\xff\xfe", b"\xfe\xff")):
                return False
            while head:
                if b"\0" in head:
                    return True
                head = handle.read(1 << 20)
    except OSError:
        return False
    return False


def _context(specific: int | None, both: int | None) -> int:
    """rg's rule: -A/-B win over -C for their side."""
    if specific is not None:
        return specific
    return both or 0
