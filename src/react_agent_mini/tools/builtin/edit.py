"""Edit: replace exact text in a file the model has read, keeping the file's line endings and final newline.

Matching is exact, on the text with CRLF shown as LF (the way Read shows it). There is deliberately no
fuzzy tier that edits "close enough" text: when the text is not found, the error says where a match that
differs only in whitespace starts, and the model copies the exact text. Bytes outside the replaced spans are
written back unchanged, so a CRLF file stays CRLF byte for byte.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left
from pathlib import Path
from typing import Annotated

import msgspec

from .. import in_place, paths
from ..base import ModelTool, ToolContext, ToolOutput
from ..file_state import FileRead, FileReads
from ..text_files import (
    BOM,
    SNIFF_BYTES,
    looks_binary,
    newline_style,
    number_lines,
    overwrite_refusal,
    plural,
    split_lines,
)
from .write import write_file

SNIPPET_CONTEXT = 3
"""Unchanged lines shown before and after the change."""
SNIPPET_MAX_LINES = 40
"""A long replacement's snippet stops here: the model wrote those lines and need not read them all back."""

_LINE_NUMBER_PREFIX = re.compile(r"^\s*\d+\t")


class EditArgs(msgspec.Struct):
    file_path: Annotated[str, msgspec.Meta(description="Absolute, or relative to the workspace root.")]
    old_string: Annotated[
        str, msgspec.Meta(description="The exact text to replace, without Read's line numbers; empty: a new file.")
    ]
    new_string: Annotated[str, msgspec.Meta(description="Its replacement (different).")]
    replace_all: Annotated[bool, msgspec.Meta(description="Replace every occurrence, not exactly one.")] = False


class EditTool(ModelTool[EditArgs]):
    name = "Edit"
    description = (
        "Replace exact text in a file: old_string must match whitespace and indentation included, and occur once "
        "unless replace_all (add surrounding lines to make it unique). The file must have been read in this "
        "session and be unchanged since. Line endings and the final newline are kept; binary and non-UTF-8 files "
        "cannot be edited. Returns the changed lines with their numbers."
    )
    args_model = EditArgs
    read_only = False
    family = "edit"
    concurrency_safe = False
    status_field = "file_path"
    path_fields = ("file_path",)
    text_fields = frozenset({"old_string", "new_string"})

    async def call(self, args: EditArgs, ctx: ToolContext) -> ToolOutput:
        # Synchronous on purpose, like Write: an abort must not report "interrupted" for an edit that happens.
        path = paths.resolve(ctx.cwd, args.file_path)
        return _edit(path, paths.display(ctx.cwd, path), args, ctx.file_reads)


def _error(text: str) -> ToolOutput:
    return ToolOutput(text, is_error=True)


def _edit(path: Path, shown: str, args: EditArgs, reads: FileReads) -> ToolOutput:
    old = args.old_string.replace("\r\n", "\n")
    new = args.new_string.replace("\r\n", "\n")
    if old == new:
        return _error("old_string and new_string are identical; there is nothing to change.")
    # One descriptor from check to write (see `in_place`): a device, FIFO or socket is refused, never replaced.
    try:
        opened = in_place.open_existing(path)
    except in_place.NotRegular as exc:
        if exc.kind == "a directory":
            return _error(f"{shown} is a directory, not a file.")
        return _error(f"{shown} is {exc.kind}, not a regular file; Edit only edits regular files.")
    except OSError as exc:
        return _error(f"Cannot edit {shown}: {exc.strerror or exc}.")
    if opened is None:
        if not old:
            return write_file(path, shown, new, reads)
        return _error(f"File does not exist: {shown}")
    fd, info = opened
    try:
        return _edit_open(fd, info, path, shown, args, reads)
    finally:
        os.close(fd)


def _edit_open(fd: int, info: os.stat_result, path: Path, shown: str, args: EditArgs, reads: FileReads) -> ToolOutput:
    try:
        data = in_place.read_all(fd)
    except OSError as exc:
        return _error(f"Cannot edit {shown}: {exc.strerror or exc}.")
    if looks_binary(data[:SNIFF_BYTES]):
        return _error(f"Cannot edit {shown}: it is a binary file.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return _error(
            f"Cannot edit {shown}: it is not valid UTF-8 text, and rewriting it would corrupt the bytes that are "
            "not. Use Write to replace it whole, or Bash for byte-level changes."
        )
    if refusal := overwrite_refusal(reads, path, shown, info):
        return _error(refusal)
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]
    done = replace_text(text, shown, args)
    if isinstance(done, ToolOutput):
        return done
    try:
        after = in_place.rewrite(fd, (BOM if bom else b"") + done.text.encode("utf-8", errors="replace"))
    except OSError as exc:
        return _error(f"Cannot edit {shown}: {exc.strerror or exc}.")
    reads.record(path, FileRead(after.st_mtime_ns, after.st_size))
    return ToolOutput(done.message)


class Replaced(msgspec.Struct, frozen=True):
    """An edit worked out on a file's text."""

    text: str
    """The new text, with the file's line endings and final newline."""
    message: str
    """What the model reads: how many replacements, and the changed lines numbered as Read numbers them."""


def replace_text(text: str, shown: str, args: EditArgs) -> Replaced | ToolOutput:
    """`args` applied to `text` (a file's content without its BOM, from disk or an editor's buffer): the new text,
    or the error the model reads. Pure: the caller reads and writes the file."""
    old = args.old_string.replace("\r\n", "\n")
    new = args.new_string.replace("\r\n", "\n")
    if old == new:
        return _error("old_string and new_string are identical; there is nothing to change.")
    if not old and text:
        return _error(
            f"old_string is empty, but {shown} already has content. Give the exact text to replace, or use "
            "Write to replace the whole file."
        )

    # Match on the text as Read shows it (CRLF → LF); `crlf_at` maps positions back to the raw text.
    crlf_at = [m.start() - i for i, m in enumerate(re.finditer("\r\n", text))]
    norm = text.replace("\r\n", "\n") if crlf_at else text
    count = norm.count(old) if old else 1
    if count == 0:
        return _error(_not_found(shown, norm, old))
    if count > 1 and not args.replace_all:
        return _error(
            f"old_string occurs {count} times in {shown}. Include more surrounding lines to make it unique, or set "
            "replace_all to true to change every occurrence."
        )

    style = newline_style(text)
    new_raw = new.replace("\n", style) if style != "\n" else new
    starts = _find_all(norm, old) if old else [0]
    if not args.replace_all:
        starts = starts[:1]
    pieces: list[str] = []
    done = 0
    for start in starts:
        end = start + len(old)
        pieces.append(text[done : start + bisect_left(crlf_at, start)])
        pieces.append(new_raw)
        done = end + bisect_left(crlf_at, end)
    pieces.append(text[done:])
    result = "".join(pieces)
    if text:
        result = _keep_final_newline(text, result, style)

    replacements = plural(len(starts), "replacement")
    snippet = _snippet(result, norm.count("\n", 0, starts[0]) + 1, new.count("\n"))
    return Replaced(result, f"Edited {shown} ({replacements}).\n{snippet}".rstrip("\n"))


def _find_all(text: str, needle: str) -> list[int]:
    """Start of every non-overlapping occurrence (the ones `str.count` counts)."""
    found: list[int] = []
    at = text.find(needle)
    while at != -1:
        found.append(at)
        at = text.find(needle, at + len(needle))
    return found


def _keep_final_newline(before: str, after: str, style: str) -> str:
    """`after` ending with a newline exactly when `before` did."""
    if before.endswith("\n") and after and not after.endswith("\n"):
        return after + style
    if not before.endswith("\n") and after.endswith("\n"):
        return after[:-2] if after.endswith("\r\n") else after[:-1]
    return after


def _snippet(result: str, first_changed: int, new_newlines: int) -> str:
    """The edited lines with SNIPPET_CONTEXT lines around them, numbered as Read numbers them."""
    lines = split_lines(result)
    if not lines:
        return ""
    low = max(1, first_changed - SNIPPET_CONTEXT)
    high = min(len(lines), first_changed + new_newlines + SNIPPET_CONTEXT)
    text = number_lines(lines[low - 1 : min(high, low + SNIPPET_MAX_LINES - 1)], low)
    if high >= low + SNIPPET_MAX_LINES:
        text += f"\n[… lines {low + SNIPPET_MAX_LINES}-{high} not shown; Read the file to see them.]"
    return text


def _not_found(shown: str, text: str, old: str) -> str:
    """The not-found error, with a pointer to a near match when there is one."""
    message = (
        f"old_string was not found in {shown}. It must match the file exactly, including whitespace and "
        "indentation; Read the file to copy the exact text."
    )
    old_lines = [line for line in old.split("\n") if line.strip()]
    if old_lines and all(_LINE_NUMBER_PREFIX.match(line) for line in old_lines):
        return message + " old_string seems to include Read's line-number prefixes; leave them out."
    words = old.split()
    if words:
        near = re.search(r"\s+".join(map(re.escape, words)), text)
        if near:
            line = text.count("\n", 0, near.start()) + 1
            return message + f" Text that differs from it only in whitespace starts at line {line}."
    return message
