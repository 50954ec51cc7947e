"""Read: show a text file's lines, numbered, a page at a time, and remember what was read.

The file is streamed line by line, so paging through a huge log costs memory for one page only. Each read is
recorded in the session's FileReads: that is what lets Write and Edit proceed, and what lets a repeated Read
of an unchanged range answer with a short stub instead of the same text again.

Each answer carries its data (`read_result.ReadResult`: the first line shown, how many, of how many, or which
notice), so what reads a Read's result later (compaction, the doom-loop guard) never reads the numbers in the text.
"""

from __future__ import annotations

import asyncio
import io
import stat
from pathlib import Path
from typing import IO, Annotated

import msgspec

from ...read_result import ReadResult
from .. import paths
from ..base import ModelTool, ToolContext, ToolOutput
from ..file_state import FileRead
from ..images import is_image_path
from ..text_files import SNIFF_BYTES, looks_binary, numbered, plural

DEFAULT_LIMIT = 2000
"""Lines returned when no limit is given."""
WHOLE_FILE_BYTES = 256 * 1024
"""Bigger files must be read with offset/limit, so one Read cannot swallow the context by accident."""
OUTPUT_CHARS = 100_000
"""The numbered text of one result stops at a line boundary before this many characters."""
EMPTY = ReadResult(notice="empty")
"""The data of the answer for an empty file."""
UNCHANGED_STUB = (
    "File unchanged since your last Read of this range; the content in that earlier Read result is still "
    "current — refer to it instead of reading again."
)


class ReadArgs(msgspec.Struct):
    file_path: Annotated[str, msgspec.Meta(description="Absolute, or relative to the workspace root.")]
    offset: Annotated[
        Annotated[int, msgspec.Meta(ge=0)] | None, msgspec.Meta(description="First line to return (1-based).")
    ] = None
    limit: Annotated[
        Annotated[int, msgspec.Meta(ge=1)] | None,
        msgspec.Meta(description=f"Lines to return (default {DEFAULT_LIMIT})."),
    ] = None


class ReadTool(ModelTool[ReadArgs]):
    name = "Read"
    description = (
        "Read a text file. Lines come as `<line number>\\t<line>` (the numbers are not part of the file); "
        f"{DEFAULT_LIMIT} lines at most per call, and a note says the offset to continue from. Lines over 2000 "
        "characters are cut; files over 256 KB must be read in parts; binary files are refused (for a directory, "
        "use Glob). Reading an unchanged range again returns a short notice instead of the text."
    )
    args_model = ReadArgs
    read_only = True
    family = "read"
    concurrency_safe = True
    status_field = "file_path"
    path_fields = ("file_path",)

    async def call(self, args: ReadArgs, ctx: ToolContext) -> ToolOutput:
        path = paths.resolve(ctx.cwd, args.file_path)
        shown = paths.display(ctx.cwd, path)
        prior = ctx.file_reads.get(path)
        # In a worker thread: a big file must not freeze the event loop (UI, abort, parallel Reads).
        output, read = await asyncio.to_thread(_read, path, shown, args, prior, ctx.whole_results, ctx.call_id)
        # Recorded only here, after the await: an aborted call's result never reaches the model whole, so no
        # later stub may point at it.
        if read is not None:
            ctx.file_reads.record(path, read)
        return output


def _error(text: str) -> tuple[ToolOutput, None]:
    return ToolOutput(text, is_error=True), None


def _read(
    path: Path, shown: str, args: ReadArgs, prior: FileRead | None, whole: frozenset[str], call_id: str
) -> tuple[ToolOutput, FileRead | None]:
    """The result, and the FileRead to record (None for errors and stubs)."""
    try:
        info = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return _error(f"File does not exist: {shown}")
    except OSError as exc:
        return _error(f"Cannot read {shown}: {exc.strerror or exc}.")
    if stat.S_ISDIR(info.st_mode):
        return _error(f"{shown} is a directory, not a file; use Glob to list it.")
    if not stat.S_ISREG(info.st_mode):
        # Reading a FIFO or device could block forever or never end.
        return _error(f"{shown} is not a regular file (a device, pipe or socket); Read only reads files.")

    first = args.offset or 1
    limit = args.limit or DEFAULT_LIMIT
    if (
        prior is not None
        and prior.tool_use_id
        and prior.tool_use_id in whole
        and prior.complete
        and prior.offset == first
        and (prior.limit or DEFAULT_LIMIT) == limit
        and prior.matches(info.st_mtime_ns, info.st_size)
    ):
        return ToolOutput(UNCHANGED_STUB, details=ReadResult(first, notice="unchanged")), None

    record = FileRead(info.st_mtime_ns, info.st_size, first, args.limit, call_id)
    if is_image_path(path):  # the image itself, for a model that sees images (tools/images.py)
        from ..images import read_image

        line, image = read_image(path, shown)
        if image is None:
            return _error(line)
        return ToolOutput(line, images=(image,), details=ReadResult(notice="image")), record
    try:
        with path.open("rb") as stream:
            head = stream.read(SNIFF_BYTES)
            if looks_binary(head):
                return _error(f"Cannot read {shown}: it is a binary file ({info.st_size} bytes).")
            if not head:
                return ToolOutput(f"{shown} is empty.", details=EMPTY), record
            stream.seek(0)
            if args.limit is None and not args.offset and info.st_size > WHOLE_FILE_BYTES:
                return _error(_too_large(shown, info.st_size, _count_lines(stream)))
            return _page(stream, shown, first, limit, args.offset, record)
    except OSError as exc:
        return _error(f"Cannot read {shown}: {exc.strerror or exc}.")


def page_text(text: str, shown: str, args: ReadArgs) -> ToolOutput:
    """Read's answer for a file whose text is already in hand (an editor's buffer, which may differ from the
    disk): the same numbered lines, paging, notes and size guard as reading the file."""
    data = text.encode("utf-8", errors="replace")
    if not data:
        return ToolOutput(f"{shown} is empty.", details=EMPTY)
    stream = io.BytesIO(data)
    if args.limit is None and not args.offset and len(data) > WHOLE_FILE_BYTES:
        return ToolOutput(_too_large(shown, len(data), _count_lines(stream)), is_error=True)
    first, limit = args.offset or 1, args.limit or DEFAULT_LIMIT
    output, _ = _page(stream, shown, first, limit, args.offset, FileRead(0, len(data), first, args.limit))
    return output


def _too_large(shown: str, size: int, total: int) -> str:
    return (
        f"{shown} is too large to read whole: {size:,} bytes, {plural(total, 'line')} "
        f"(files over {WHOLE_FILE_BYTES // 1024} KB need offset or limit). Read it in parts with "
        f"offset and limit, e.g. offset=1, limit={DEFAULT_LIMIT}. Grep can find the part you need."
    )


def _page(
    stream: IO[bytes], shown: str, first: int, limit: int, asked_offset: int | None, record: FileRead
) -> tuple[ToolOutput, FileRead | None]:
    """Lines first..first+limit-1 of the stream, numbered, within the output cap."""
    shown_lines: list[str] = []
    chars = 0
    number = 0
    last = first - 1
    capped = False
    replaced = False
    for raw in stream:
        number += 1
        if number < first:
            continue
        if number >= first + limit:
            break
        line, ok = _decode_line(raw, number)
        replaced = replaced or not ok
        entry = numbered(line, number)
        if shown_lines and chars + len(entry) + 1 > OUTPUT_CHARS:
            capped = True
            break
        shown_lines.append(entry)
        chars += len(entry) + 1
        last = number
    # `number` counts every line met so far, the one that stopped the loop included; count the rest.
    total = number + _count_lines(stream)
    if first > total:
        return _error(f"offset {asked_offset} is past the end of {shown} ({plural(total, 'line')}).")
    text = "\n".join(shown_lines)
    if last < total:
        text += f"\n\n[File has {total} lines; showing lines {first}-{last}. Read more with offset={last + 1}.]"
    if replaced:
        text += "\n\n[Some bytes in these lines are not valid UTF-8; they are shown as U+FFFD (�).]"
    details = ReadResult(first, len(shown_lines), total, capped)
    return ToolOutput(text, details=details), msgspec.structs.replace(record, complete=not capped)


def _decode_line(raw: bytes, number: int) -> tuple[str, bool]:
    """One line without its ending, and whether it was valid UTF-8."""
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        return raw.decode("utf-8"), True
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace"), False


def _count_lines(stream: IO[bytes]) -> int:
    """Lines from the stream's position to its end (a last line without a newline counts)."""
    count = 0
    tail = b"\n"
    while chunk := stream.read(1 << 20):
        count += chunk.count(b"\n")
        tail = chunk[-1:]
    return count + (tail != b"\n")
