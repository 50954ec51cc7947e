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
    pattern: Annotated[
        str,
        msgspec.Meta(
            description="The regular expression to search for (Rust regex syntax, as ripgrep): `def \\w+`, "
            "`log.*Error`. Escape metacharacters to match them literally: `interface\\{\\}`, `\\.`, `\\(`."
        ),
    ]
    path: Annotated[
        str | None,
        msgspec.Meta(
            description="A file or directory to search, relative to the workspace root or absolute. Omit it to "
            "search the whole workspace."
        ),
    ] = None
    glob: Annotated[
        str | None,
        msgspec.Meta(
            description="Only search files matching this glob: `*.py`, `*.{ts,tsx}`, `src/**/*.rs`; several "
            "separated by spaces or commas; `!*.min.js` excludes. As in rg, a glob also reaches files that .gitignore "
            "lists (but not ignored directories)."
        ),
    ] = None
    type: Annotated[
        str | None,
        msgspec.Meta(
            description="Only search files of this ripgrep type: py, js, ts, rust, go, java, c, cpp, md, json, "
            "yaml, ... More efficient than glob for standard types."
        ),
    ] = None
    output_mode: Annotated[
        Mode,
        msgspec.Meta(
            description="files_with_matches: paths of matching files, newest first (default). content: the "
            "matching lines as path:line:text. count: path:N, the number of matching lines per file."
        ),
    ] = "files_with_matches"
    ignore_case: Annotated[bool, msgspec.Meta(description="Case-insensitive search.")] = msgspec.field(
        default=False, name="-i"
    )
    line_numbers: Annotated[bool, msgspec.Meta(description="Show line numbers in content mode (default true).")] = (
        msgspec.field(default=True, name="-n")
    )
    after: Annotated[
        NonNegative | None, msgspec.Meta(description="Lines of context after each match (content mode).")
    ] = msgspec.field(default=None, name="-A")
    before: Annotated[
        NonNegative | None, msgspec.Meta(description="Lines of context before each match (content mode).")
    ] = msgspec.field(default=None, name="-B")
    context: Annotated[
        NonNegative | None,
        msgspec.Meta(description="Lines of context before and after each match (content mode)."),
    ] = msgspec.field(default=None, name="-C")
    multiline: Annotated[
        bool,
        msgspec.Meta(
            description="Let the pattern span lines: `.` and `\\s` also match newlines, e.g. "
            "`struct Foo \\{[\\s\\S]*?\\}`. Slower; default false (matches stay within one line)."
        ),
    ] = False
    head_limit: Annotated[
        NonNegative | None,
        msgspec.Meta(
            description=f"Show at most this many entries (lines in content mode, files otherwise); default "
            f"{DEFAULT_HEAD_LIMIT}, 0 for no limit."
        ),
    ] = None
    offset: Annotated[
        NonNegative, msgspec.Meta(description="Skip this many entries first (to page through large results).")
    ] = 0


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
        "Search file contents with a regular expression (ripgrep). Use it instead of grep or rg in Bash.\n"
        "- pattern is Rust regex syntax (like PCRE without look-around or backreferences). Escape "
        "metacharacters to match them literally: `interface\\{\\}` finds `interface{}`, `\\.` a dot, `\\(` a "
        "parenthesis.\n"
        "- Narrow the files with glob (`*.py`, `*.{ts,tsx}`, `src/**/*.rs`) or type (rg's file types: py, js, "
        "ts, rust, go, java, c, cpp, md, json, yaml...).\n"
        "- output_mode: files_with_matches (default) lists matching files, newest first; content shows "
        "matching lines as `path:line:text` (context lines as `path-line-text`, `--` between groups; use "
        "-A/-B/-C for context, -n for line numbers); count gives `path:N` matching lines per file. Content and "
        "count are ordered by path.\n"
        "- Matches stay within one line unless multiline is true.\n"
        "- Respects .gitignore, skips binary files and .git/, searches hidden files. Paths are relative to the "
        "workspace root.\n"
        f"- Shows at most head_limit entries (default {DEFAULT_HEAD_LIMIT}; 0 for all) and says how to get "
        f"the next page with offset. Lines over {MAX_LINE_CHARS} characters are cut.\n"
        "- Use Glob to find files by name."
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
        text = await asyncio.to_thread(render, spec, found, args.offset, limit, args.line_numbers)
        return ToolOutput(text)


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
