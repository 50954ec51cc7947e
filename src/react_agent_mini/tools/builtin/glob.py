"""Glob: find files by path pattern inside the workspace, newest first.

The pattern's leading literal directories are resolved first (following `..` and symlinks), so `../*`,
`/etc/*` or a symlinked directory pointing elsewhere are recognised as outside the workspace and answered
with a plain sentence instead of a listing. Files come from `rg --files` (gitignore-aware, symlinks not
followed); the pattern itself is matched here (glob_pattern.py), so it means what this tool says whatever
rg's own `--glob` rules are. rg only gets a name prefilter (`--type-add`) and a depth limit, which shrink its
output on large trees; a prefilter rg refuses is dropped and the listing run again without it. A listing comes
with its data (`search_result.SearchResult`: how many lines are paths, of how many matches), for what reads the
result later (compaction).
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, NamedTuple

import msgspec

from ...search_result import SearchResult
from ..base import ModelTool, ToolContext, ToolOutput
from ..declared import Touches
from ..paths import display, inside, resolve
from .glob_pattern import GlobError, translate_glob
from .newest import dated
from .ripgrep import find_rg, not_found, not_started, run_rg

MAX_RESULTS = 100
_META = frozenset("*?[]{},\\")
"""Characters with a meaning in a glob; a backslash before anything else is read as a path separator."""
_NAME_PREFILTER_UNSAFE = frozenset("[\\:/")
"""A last component with one of these is not handed to rg as a type glob (rg's syntax differs or rejects it)."""


class GlobArgs(msgspec.Struct):
    pattern: Annotated[
        str, msgspec.Meta(description="Relative to `path`: `*.py` (that directory), `**/*.py` (any depth).")
    ]
    path: Annotated[str | None, msgspec.Meta(description="Directory to search (default: the workspace).")] = None


class _Plan(NamedTuple):
    """What to list and how to match it."""

    base: Path
    """The directory to list (resolved, inside the workspace)."""
    regex: re.Pattern[str]
    """Matches paths relative to `base`."""
    max_depth: int | None
    name_glob: str | None
    """The pattern's last component, safe to give rg as a file-name prefilter."""


def _normalise(pattern: str) -> str:
    """Backslashes used as separators (Windows habits: `..\\src\\*.py`) become `/`; glob escapes stay."""
    out: list[str] = []
    for i, c in enumerate(pattern):
        if c == "\\" and (i + 1 == len(pattern) or pattern[i + 1] not in _META):
            out.append("/")
        else:
            out.append(c)
    return "".join(out)


def _outside(what: str, root: Path) -> ToolOutput:
    return ToolOutput(f"{what} resolves outside the workspace; Glob only searches inside {root}.")


def _plan(root: Path, pattern: str, path: str | None) -> _Plan | ToolOutput:
    base = resolve(root, path or ".")
    if not inside(root, base):
        return _outside(path or ".", root)
    if not base.exists():
        return ToolOutput(f"Path does not exist: {path}", is_error=True)
    if not base.is_dir():
        return ToolOutput(f"Not a directory: {path}. Glob's path must be a directory.", is_error=True)
    parts = _normalise(pattern).split("/")
    literal = 0
    while literal < len(parts) - 1 and not _META.intersection(parts[literal]):
        literal += 1
    if literal:
        prefix = "/".join(parts[:literal]) or "/"  # `/etc/*` keeps its root
        base = resolve(base, prefix)
        if not inside(root, base):
            return _outside(pattern, root)
    rest = "/".join(parts[literal:])
    try:
        regex = re.compile(translate_glob(rest), re.DOTALL)
    except (GlobError, re.error) as exc:
        return ToolOutput(f"Invalid glob pattern {pattern}: {exc}", is_error=True)
    # `{a/b,c}` puts a separator inside braces: the depth varies and the last component is not a file name.
    braced_slash = _slash_in_braces(rest)
    last = rest.rsplit("/", 1)[-1]
    name_ok = not braced_slash and "**" not in last and last not in ("", "*") and last.count("{") <= 1
    name_ok = name_ok and not _NAME_PREFILTER_UNSAFE.intersection(last)
    depth = None if braced_slash or "**" in rest else rest.count("/") + 1
    return _Plan(base, regex, depth, last if name_ok else None)


def _slash_in_braces(pattern: str) -> bool:
    depth = 0
    for c in pattern:
        if c == "{":
            depth += 1
        elif c == "}" and depth:
            depth -= 1
        elif c == "/" and depth:
            return True
    return False


async def _list(rg: str, root: Path, plan: _Plan) -> list[str] | str:
    """Files under the plan's base, relative to root, from `rg --files`; or the text of why rg could not list them."""
    options = ["--files"]
    if plan.max_depth is not None:
        options.append(f"--max-depth={plan.max_depth}")
    prefilter = [f"--type-add=ramglob:{plan.name_glob}", "--type=ramglob"] if plan.name_glob is not None else []
    paths = [] if plan.base == root else [display(root, plan.base)]
    try:
        result = await run_rg(rg, options + prefilter, paths, root)
        if result.returncode == 2 and result.stderr.strip() and prefilter:
            result = await run_rg(rg, options, paths, root)  # rg refused the name prefilter: the pattern will do
    except OSError as exc:
        return not_started("Glob", rg, exc)
    if result.returncode == 2 and result.stderr.strip():
        return "Glob failed: " + " ".join(result.stderr.replace("rg: ", "").split())
    return [os.fsdecode(p) for p in result.stdout.split(b"\0") if p]


def _rank(root: Path, plan: _Plan, files: list[str]) -> tuple[list[str], int]:
    """The newest MAX_RESULTS matches (ties by path) and how many matched in all."""
    cut = 0 if plan.base == root else len(display(root, plan.base)) + 1
    fullmatch = plan.regex.fullmatch
    if os.sep != "/":
        files = [f.replace(os.sep, "/") for f in files]
    matches = dated(root, [rel for rel in files if fullmatch(rel, cut)])
    return [rel for _, rel in matches[:MAX_RESULTS]], len(matches)


class GlobTool(ModelTool[GlobArgs]):
    name = "Glob"
    description = (
        "Find files by path pattern (`*`, `?`, `**`, `{a,b}`, `[abc]`). Returns paths relative to the workspace "
        f"root, newest first, at most {MAX_RESULTS}. Respects .gitignore, skips .git/, includes hidden files. Use "
        "Grep to search contents."
    )
    args_model = GlobArgs
    read_only = True
    family = "search"
    concurrency_safe = True
    status_field = "pattern"
    path_fields = ("path",)

    def touches(self, raw: Mapping[str, Any]) -> Touches:
        """The folder searched (the workspace when none is given) and the folders the pattern starts with."""
        where = raw.get("path")
        base = where if isinstance(where, str) and where else "."
        pattern = raw.get("pattern")
        prefix = static_prefix(pattern) if isinstance(pattern, str) else ""
        if not prefix:
            return Touches(searches=(base,))
        return Touches(searches=(base, prefix if prefix.startswith(("/", "~")) else os.path.join(base, prefix)))

    def __init__(self, *, rg_path: str | None = None) -> None:
        """`rg_path` overrides where rg is looked for (ripgrep.find_rg)."""
        self._rg_path = rg_path

    async def call(self, args: GlobArgs, ctx: ToolContext) -> ToolOutput:
        if "\0" in args.pattern:
            return ToolOutput(f"Invalid glob pattern {args.pattern}: it contains a NUL character.", is_error=True)
        try:
            return await self._glob(args, ctx)
        except (OSError, ValueError) as exc:  # e.g. a NUL in the pattern, an unreadable root
            return ToolOutput(f"Glob failed: {exc}", is_error=True)

    async def _glob(self, args: GlobArgs, ctx: ToolContext) -> ToolOutput:
        root = ctx.cwd.resolve()
        path = None if args.path in (None, "", "undefined", "null") else args.path
        plan = _plan(root, args.pattern, path)
        if isinstance(plan, ToolOutput):
            return plan
        if not plan.base.is_dir():
            return ToolOutput(f"No files match {args.pattern}.")
        rg = self._rg_path or find_rg()
        if rg is None:
            return ToolOutput(not_found("Glob"), is_error=True)
        files = await _list(rg, root, plan)
        if isinstance(files, str):
            return ToolOutput(files, is_error=True)
        if ctx.read_denied is not None:
            denied = ctx.read_denied
            files = [f for f in files if not denied(resolve(root, f))]
        shown, total = await asyncio.to_thread(_rank, root, plan, files)
        if not total:
            return ToolOutput(f"No files match {args.pattern}.")
        text = "\n".join(shown)
        if total > len(shown):
            text += (
                f"\n(Showing {len(shown)} of {total} matches, newest first. "
                "Narrow the pattern or the path to see the rest.)"
            )
        return ToolOutput(text, details=SearchResult(len(shown), total, mode="glob"))


def static_prefix(pattern: str) -> str:
    """The leading directories of a glob pattern before its first wildcard (`/etc/*.conf` → `/etc`)."""
    kept: list[str] = []
    for part in pattern.split("/"):
        if any(c in part for c in "*?[{"):
            break
        kept.append(part)
    prefix = "/".join(kept)
    return "/" if not prefix and pattern.startswith("/") else prefix
