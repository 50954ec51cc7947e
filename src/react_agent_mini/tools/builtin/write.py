"""Write: create a file, or replace one the model has read, with the given content.

An existing file is only overwritten when this session read it and it has not changed on disk since (see
`text_files.overwrite_refusal`). Only regular files are written, in place, through the descriptor that was
checked (see `in_place`). After writing, the new state is recorded as read, so a following Edit or Write needs no
fresh Read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import msgspec

from .. import in_place, paths
from ..base import ModelTool, ToolContext, ToolOutput
from ..file_state import FileRead, FileReads
from ..text_files import BOM, newline_style, overwrite_refusal, plural, split_lines


class WriteArgs(msgspec.Struct):
    file_path: Annotated[str, msgspec.Meta(description="Absolute, or relative to the workspace root.")]
    content: Annotated[str, msgspec.Meta(description="The whole new content.")]


class WriteTool(ModelTool[WriteArgs]):
    name = "Write"
    description = (
        "Create a file, or replace a whole file (prefer Edit for a part); parent directories are created. An "
        "existing file must have been read in this session and be unchanged on disk since. CRLF line endings are "
        "kept."
    )
    args_model = WriteArgs
    read_only = False
    family = "edit"
    concurrency_safe = False
    status_field = "file_path"
    path_fields = ("file_path",)
    text_fields = frozenset({"content"})

    async def call(self, args: WriteArgs, ctx: ToolContext) -> ToolOutput:
        # Synchronous on purpose: with no await point, an abort cannot report "interrupted" for a write
        # that goes on to happen anyway.
        path = paths.resolve(ctx.cwd, args.file_path)
        return write_file(path, paths.display(ctx.cwd, path), args.content, ctx.file_reads)


def write_file(path: Path, shown: str, content: str, reads: FileReads) -> ToolOutput:
    """Write `content` to `path` under the read-before-write rule; the result says what happened.

    The existing file is opened once and checked, read and rewritten through that descriptor (`in_place`): a
    device, FIFO or socket is refused, never replaced, and a symlink to the file stays a symlink."""
    try:
        opened = in_place.open_existing(path)
    except in_place.NotRegular as exc:
        return _not_regular(shown, exc.kind)
    except OSError as exc:
        return ToolOutput(f"Cannot write {shown}: {exc.strerror or exc}.", is_error=True)
    if opened is None:
        return _create(path, shown, content, reads)
    fd, info = opened
    try:
        if refusal := overwrite_refusal(reads, path, shown, info):
            return ToolOutput(refusal, is_error=True)
        try:
            old = in_place.read_all(fd)
        except OSError as exc:
            return ToolOutput(f"Cannot write {shown}: {exc.strerror or exc}.", is_error=True)
        data = content.encode("utf-8", errors="replace")
        kept = ""
        # Read shows CRLF files with clean lines, so content written back with `\n` would silently convert
        # the whole file (and its diff); keep the file's CRLF unless the model sent `\r` itself.
        if "\r" not in content and "\n" in content and newline_style(old.decode("utf-8", errors="replace")) != "\n":
            data = content.replace("\n", "\r\n").encode("utf-8", errors="replace")
            kept = "; kept its CRLF line endings"
        if old.startswith(BOM) and not content.startswith("\ufeff"):
            data = BOM + data
        try:
            after = in_place.rewrite(fd, data)
        except OSError as exc:
            return ToolOutput(f"Cannot write {shown}: {exc.strerror or exc}.", is_error=True)
    finally:
        os.close(fd)
    # Recorded as read with no tool_use_id: the next Edit/Write may proceed, but Read never stubs against it.
    reads.record(path, FileRead(after.st_mtime_ns, after.st_size))
    return ToolOutput(f"Updated {shown} ({plural(len(split_lines(content)), 'line')}{kept}).")


def _create(path: Path, shown: str, content: str, reads: FileReads) -> ToolOutput:
    """A new file (parents made as needed); never over something that appeared at the path meanwhile."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return ToolOutput(f"Cannot write {shown}: {exc.strerror or exc}.", is_error=True)
    try:
        after = in_place.create(path, content.encode("utf-8", errors="replace"))
    except FileExistsError:
        return ToolOutput(f"{shown} was just created by something else; Read it, then write.", is_error=True)
    except in_place.NotRegular as exc:
        return _not_regular(shown, exc.kind)
    except OSError as exc:
        return ToolOutput(f"Cannot write {shown}: {exc.strerror or exc}.", is_error=True)
    reads.record(path, FileRead(after.st_mtime_ns, after.st_size))
    return ToolOutput(f"Created {shown} ({plural(len(split_lines(content)), 'line')}).")


def _not_regular(shown: str, kind: str) -> ToolOutput:
    if kind == "a directory":
        return ToolOutput(f"{shown} is a directory, not a file; give the path of a file.", is_error=True)
    return ToolOutput(f"{shown} is {kind}, not a regular file; Write only writes regular files.", is_error=True)
