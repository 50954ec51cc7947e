"""What an Edit or a Write will do to a file, as a line diff, computed from the file on disk and the call's arguments.

Used twice: in the permission prompt (before anything happens) and after an allowed change ran. The Edit preview
applies the same exact-match rule the Edit tool uses (CRLF read as LF, one occurrence unless `replace_all`), so
what is shown is what will be written; when the text is not found, the preview says the edit will fail.
Pure logic (no terminal); `render.py` colours it.
"""

from __future__ import annotations

import difflib
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec

from ..tools import paths
from ..tools.text_files import SNIFF_BYTES, looks_binary

MAX_PREVIEW_BYTES = 2 * 1024 * 1024
"""Files larger than this are not diffed (the preview gives sizes only)."""
CONTEXT_LINES = 3

LineKind = Literal["context", "removed", "added", "gap"]


class DiffLine(msgspec.Struct, frozen=True):
    kind: LineKind
    text: str
    """The line without its newline (empty for a gap)."""
    old_number: int = 0
    """1-based line number in the old file (0 for added lines and gaps)."""
    new_number: int = 0
    """1-based line number in the new file (0 for removed lines and gaps)."""


class Preview(msgspec.Struct, frozen=True):
    """A change to one file."""

    path: str
    """As the user reads it (relative to the workspace when inside)."""
    lines: tuple[DiffLine, ...] = ()
    """The diff; empty when there is nothing to show (see `note`)."""
    note: str = ""
    """One line about the change: `new file · 3 lines, 42 bytes`, `2 lines → 3 lines`, or why it will fail."""
    fails: bool = False
    """True when the call will be refused (text not found, binary file...)."""

    @property
    def added(self) -> int:
        return sum(1 for line in self.lines if line.kind == "added")

    @property
    def removed(self) -> int:
        return sum(1 for line in self.lines if line.kind == "removed")


def _read(path: Path) -> tuple[str | None, str]:
    """(text with LF line ends, '') or (None, why not)."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):  # a FIFO would block the prompt for ever; a device never ends
            from ..tools.in_place import kind_of

            return None, kind_of(info.st_mode)
        size = info.st_size
        if size > MAX_PREVIEW_BYTES:
            return None, f"{human_size(size)}, too large to preview"
        data = path.read_bytes()
    except FileNotFoundError:
        return None, "missing"
    except OSError as exc:
        return None, f"cannot read it: {exc.strerror or exc}"
    if looks_binary(data[:SNIFF_BYTES]):
        return None, "a binary file"
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    return text.replace("\r\n", "\n"), ""


def human_size(size: int) -> str:
    """`42 bytes`, `4.2 KB`, `1.3 MB`."""
    if size < 1024:
        return f"{size} byte" + ("" if size == 1 else "s")
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def count_lines(text: str) -> int:
    return text.count("\n") + (0 if not text or text.endswith("\n") else 1)


def _lines_word(count: int) -> str:
    return f"{count} line" + ("" if count == 1 else "s")


def diff_lines(before: str, after: str, context: int = CONTEXT_LINES) -> list[DiffLine]:
    """A unified line diff of two texts, with `context` unchanged lines around each change and gaps between."""
    # a final newline ends the last line; it does not start an empty one
    old = before.removesuffix("\n").split("\n") if before else []
    new = after.removesuffix("\n").split("\n") if after else []
    out: list[DiffLine] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for index, group in enumerate(matcher.get_grouped_opcodes(context)):
        if index:
            out.append(DiffLine("gap", ""))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(DiffLine("context", old[i], i + 1, j1 + (i - i1) + 1) for i in range(i1, i2))
                continue
            out.extend(DiffLine("removed", old[i], old_number=i + 1) for i in range(i1, i2))
            out.extend(DiffLine("added", new[j], new_number=j + 1) for j in range(j1, j2))
    return out


def edit_preview(root: Path, args: Mapping[str, Any]) -> Preview:
    """What Edit(`args`) will do, judged from the file as it is now."""
    raw_path = str(args.get("file_path", ""))
    path = paths.resolve(root, raw_path) if raw_path else root
    shown = paths.display(root, path)
    old = str(args.get("old_string", "")).replace("\r\n", "\n")
    new = str(args.get("new_string", "")).replace("\r\n", "\n")
    replace_all = bool(args.get("replace_all", False))
    text, problem = _read(path)
    if text is None:
        if problem == "missing" and not old:
            return Preview(shown, tuple(diff_lines("", new)), f"new file · {_lines_word(count_lines(new))}")
        if problem == "missing":
            return Preview(shown, note="the file does not exist, so the edit will fail", fails=True)
        return Preview(shown, note=f"{shown} is {problem}" if problem.startswith("a ") else problem)
    if not old:
        if text:
            return Preview(
                shown, note="old_string is empty but the file has content, so the edit will fail", fails=True
            )
        return Preview(shown, tuple(diff_lines("", new)), f"fills the empty file · {_lines_word(count_lines(new))}")
    count = text.count(old)
    if count == 0:
        shown_lines = [DiffLine("removed", line) for line in old.split("\n")]
        shown_lines += [DiffLine("added", line) for line in new.split("\n")]
        return Preview(shown, tuple(shown_lines), "the text to replace is not in the file, so the edit will fail", True)
    if count > 1 and not replace_all:
        return Preview(
            shown,
            note=f"the text to replace occurs {count} times and replace_all is not set: the edit will fail",
            fails=True,
        )
    after = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    note = f"{count} replacements" if count > 1 else ""
    return Preview(shown, tuple(diff_lines(text, after)), note)


def write_preview(root: Path, args: Mapping[str, Any]) -> Preview:
    """What Write(`args`) will do: a new file (its size) or the diff against the current content."""
    raw_path = str(args.get("file_path", ""))
    path = paths.resolve(root, raw_path) if raw_path else root
    shown = paths.display(root, path)
    content = str(args.get("content", "")).replace("\r\n", "\n")
    size = human_size(len(str(args.get("content", "")).encode("utf-8", errors="replace")))
    text, problem = _read(path)
    if text is None and problem == "missing":
        return Preview(shown, tuple(diff_lines("", content)), f"new file · {_lines_word(count_lines(content))}, {size}")
    if text is None:
        return Preview(shown, note=f"overwrites {shown} ({problem}) with {size}")
    note = f"overwrites {_lines_word(count_lines(text))} with {_lines_word(count_lines(content))}, {size}"
    if text == content:
        note = f"rewrites it unchanged ({_lines_word(count_lines(text))}, {size})"
    return Preview(shown, tuple(diff_lines(text, content)), note)


def preview_for(tool: str, root: Path, args: Mapping[str, Any]) -> Preview | None:
    """The preview of a call to `tool`, or None when it does not change a file in a way we can show."""
    try:
        if tool == "Edit":
            return edit_preview(root, args)
        if tool == "Write":
            return write_preview(root, args)
    except (OSError, ValueError):  # a path we cannot even resolve: the tool will say why
        return None
    return None
