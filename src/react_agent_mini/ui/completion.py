"""What Tab (and typing) offers at the prompt: slash commands, skills and MCP prompts after a leading `/`, their
arguments where they have a fixed set, and `@` paths (files and folders under the workspace, or `@server:` for MCP
resources) anywhere in a message, a command's arguments included. Pure logic, so it can be tested without a
terminal; `prompt.py` adapts it to prompt_toolkit.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import msgspec

MAX_CANDIDATES = 60
INDEX_LIMIT = 20_000
"""Files indexed for `@name` search anywhere in the workspace (a huge tree is cut here, not walked whole)."""
SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "venv", "dist", "build", "target", "site-packages"})
"""Folders the `@` search does not descend into (hidden folders are skipped too)."""

_MENTION = re.compile(r"(?:^|\s)@(\S*)$")


class Candidate(msgspec.Struct, frozen=True):
    """One completion: replace the `length` characters before the cursor with `text`."""

    text: str
    length: int
    display: str = ""
    meta: str = ""


class FileIndex:
    """The workspace's files (relative paths), listed once on first use."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: list[str] | None = None

    def files(self) -> list[str]:
        if self._files is None:
            self._files = list(_walk(self.root, INDEX_LIMIT))
        return self._files


def _walk(root: Path, limit: int) -> Iterable[str]:
    count = 0
    stack = [""]
    while stack:
        relative = stack.pop()
        try:
            entries = sorted(os.scandir(root / relative if relative else root), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = f"{relative}{entry.name}"
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if entry.name not in SKIPPED_DIRS:
                    stack.append(path + "/")
                continue
            yield path
            count += 1
            if count >= limit:
                return


def complete(
    before_cursor: str,
    commands: Sequence[tuple[str, str]],
    *,
    root: Path,
    arguments: Callable[[str], Sequence[tuple[str, str]]] = lambda command: (),
    resource_servers: Sequence[str] = (),
    index: FileIndex | None = None,
) -> list[Candidate]:
    """Completions for the text left of the cursor.

    `commands`: (`/name`, description) pairs, built-ins first; `arguments(name)`: (value, description) pairs a
    command takes (e.g. `/resume` session ids); `resource_servers`: MCP servers that offer `@server:` resources.
    """
    stripped = before_cursor.lstrip()
    if stripped.startswith("/") and not stripped[1:].startswith("/"):
        command, space, rest = stripped.partition(" ")
        if not space and "\n" not in stripped:
            return _match(command, commands, len(command))
        word = rest.lstrip()
        if "\n" not in rest and " " not in rest.strip() and not word.startswith("@"):
            return _match(word, arguments(command), len(word))
        # `/review @src/ap`: a command's arguments may name files too (a custom command reads them), so `@`
        # completes there as anywhere
    mention = _MENTION.search(before_cursor)
    if mention is not None:
        return _mentions(mention.group(1), root, resource_servers, index)
    return []


def _match(typed: str, options: Sequence[tuple[str, str]], length: int) -> list[Candidate]:
    """Options starting with `typed` (ignoring case), then options containing it."""
    wanted = typed.casefold()
    first = [(name, meta) for name, meta in options if name.casefold().startswith(wanted)]
    rest = [(name, meta) for name, meta in options if wanted in name.casefold() and (name, meta) not in first]
    return [Candidate(name, length, name, meta) for name, meta in [*first, *rest][:MAX_CANDIDATES]]


def _mentions(typed: str, root: Path, resource_servers: Sequence[str], index: FileIndex | None) -> list[Candidate]:
    out: list[Candidate] = [
        Candidate(f"@{server}:", len(typed) + 1, f"@{server}:", "MCP resources")
        for server in resource_servers
        if f"{server}:".startswith(typed) and typed != f"{server}:"
    ]
    if ":" in typed and not typed.startswith((".", "/", "~")):
        return out
    directory, _, prefix = typed.rpartition("/")
    if typed.startswith("/"):
        base = Path(directory or "/")
    elif directory.startswith("~"):
        base = Path(os.path.expanduser(directory))
    else:
        base = root / directory
    shown_dir = f"{directory}/" if directory or typed.startswith("/") else ""
    seen: set[str] = set()
    try:
        entries = sorted(os.scandir(base), key=lambda e: (not e.is_dir(), e.name))
    except OSError:
        entries = []
    for entry in entries:
        if not entry.name.startswith(prefix) or (entry.name.startswith(".") and not prefix.startswith(".")):
            continue
        try:
            is_dir = entry.is_dir()
        except OSError:
            continue
        path = shown_dir + entry.name + ("/" if is_dir else "")
        seen.add(path)
        out.append(Candidate(f"@{path}", len(typed) + 1, path, "folder" if is_dir else ""))
        if len(out) >= MAX_CANDIDATES:
            return out
    if not directory and prefix and index is not None:  # `@app` finds src/app.py too
        wanted = prefix.casefold()
        for path in index.files():
            if path not in seen and wanted in path.rsplit("/", 1)[-1].casefold():
                out.append(Candidate(f"@{path}", len(typed) + 1, path, ""))
                if len(out) >= MAX_CANDIDATES:
                    break
    return out
