"""Read, Write and Edit through the client's `fs/read_text_file` and `fs/write_text_file`: what the agent reads
and changes is the editor's view of a file, unsaved edits included.

They replace the built-in tools of the same names. The names, schemas, descriptions and results stay the same, and
so do the permission checks (the policy sees the same tool names and inputs). The pure parts are shared with the
built-in tools: Read's numbering, paging and size guard (`tools.builtin.read.page_text`), and Edit's exact-match
replacement (`tools.builtin.edit.replace_text`). The read-before-write rule holds as well. A file may be overwritten or
edited only after this session read it, and only while its text is still what was read. A buffer has no
modification time, so the `FileRead` recorded for it carries a fingerprint of the text in its place; it lives in
the same `FileReads`, which a summary clears.

The disk is still consulted where the editor cannot help: whether a path exists at all, is a directory or
something other than a regular file, or holds binary data (refused without asking the client), and for creating
the parent directories of a new file.
"""

from __future__ import annotations

import hashlib
import stat
from pathlib import Path

from acp import RequestError

from ..tools import paths
from ..tools.base import ModelTool, ToolContext, ToolOutput
from ..tools.builtin.edit import EditArgs, EditTool, replace_text
from ..tools.builtin.read import ReadArgs, ReadTool, page_text
from ..tools.builtin.write import WriteArgs, WriteTool
from ..tools.file_state import FileRead, FileReads
from ..tools.text_files import SNIFF_BYTES, looks_binary, newline_style, plural, split_lines
from .link import ClientLink


class ClientRead(ModelTool[ReadArgs]):
    """Read, from the editor's buffer."""

    name = ReadTool.name
    description = ReadTool.description
    args_model = ReadArgs
    read_only = True
    concurrency_safe = True
    status_field = "file_path"

    def __init__(self, link: ClientLink) -> None:
        self.link = link

    async def call(self, args: ReadArgs, ctx: ToolContext) -> ToolOutput:
        path = paths.resolve(ctx.cwd, args.file_path)
        shown = paths.display(ctx.cwd, path)
        if refusal := _not_a_text_file(path, shown, "Read only reads files", "Cannot read"):
            return refusal
        text = await read_buffer(self.link, path, shown)
        if isinstance(text, ToolOutput):
            return text
        ctx.file_reads.record(path, buffer_read(text))
        return page_text(text, shown, args)


class ClientWrite(ModelTool[WriteArgs]):
    """Write, into the editor's buffer."""

    name = WriteTool.name
    description = WriteTool.description
    args_model = WriteArgs
    read_only = False
    concurrency_safe = False
    status_field = "file_path"
    text_fields = frozenset({"content"})

    def __init__(self, link: ClientLink) -> None:
        self.link = link

    async def call(self, args: WriteArgs, ctx: ToolContext) -> ToolOutput:
        path = paths.resolve(ctx.cwd, args.file_path)
        shown = paths.display(ctx.cwd, path)
        content, kept = args.content, ""
        if path.exists():
            if refusal := _not_a_text_file(path, shown, "Write only writes regular files", None):
                return refusal
            existing = await read_buffer(self.link, path, shown)
            if isinstance(existing, ToolOutput):
                return existing
            if stale := buffer_refusal(ctx.file_reads, path, shown, existing):
                return ToolOutput(stale, is_error=True)
            # as the built-in Write: a CRLF file stays CRLF unless the model sent `\r` itself
            if "\r" not in content and "\n" in content and newline_style(existing) != "\n":
                content, kept = content.replace("\n", "\r\n"), "; kept its CRLF line endings"
            verb = "Updated"
        else:
            verb = "Created"
        if failed := await write_buffer(self.link, path, shown, content):
            return failed
        ctx.file_reads.record(path, buffer_read(content))
        return ToolOutput(f"{verb} {shown} ({plural(len(split_lines(args.content)), 'line')}{kept}).")


class ClientEdit(ModelTool[EditArgs]):
    """Edit, in the editor's buffer."""

    name = EditTool.name
    description = EditTool.description
    args_model = EditArgs
    read_only = False
    concurrency_safe = False
    status_field = "file_path"
    text_fields = frozenset({"old_string", "new_string"})

    def __init__(self, link: ClientLink) -> None:
        self.link = link

    async def call(self, args: EditArgs, ctx: ToolContext) -> ToolOutput:
        path = paths.resolve(ctx.cwd, args.file_path)
        shown = paths.display(ctx.cwd, path)
        if not path.exists():
            if args.old_string:
                return ToolOutput(f"File does not exist: {shown}", is_error=True)
            if failed := await write_buffer(self.link, path, shown, args.new_string):  # as Edit creates a file
                return failed
            ctx.file_reads.record(path, buffer_read(args.new_string))
            return ToolOutput(f"Created {shown} ({plural(len(split_lines(args.new_string)), 'line')}).")
        if refusal := _not_a_text_file(path, shown, "Edit only edits regular files", "Cannot edit"):
            return refusal
        text = await read_buffer(self.link, path, shown)
        if isinstance(text, ToolOutput):
            return text
        if stale := buffer_refusal(ctx.file_reads, path, shown, text):
            return ToolOutput(stale, is_error=True)
        bom = "\ufeff" if text.startswith("\ufeff") else ""
        done = replace_text(text[len(bom) :], shown, args)
        if isinstance(done, ToolOutput):
            return done
        if failed := await write_buffer(self.link, path, shown, bom + done.text):
            return failed
        ctx.file_reads.record(path, buffer_read(bom + done.text))
        return ToolOutput(done.message)


def client_file_tools(link: ClientLink) -> list[ModelTool[ReadArgs] | ModelTool[WriteArgs] | ModelTool[EditArgs]]:
    """The three tools, in the order the built-in ones have."""
    return [ClientRead(link), ClientWrite(link), ClientEdit(link)]


async def read_buffer(link: ClientLink, path: Path, shown: str) -> str | ToolOutput:
    """The file's text as the editor has it, or the error result."""
    try:
        response = await link.conn.read_text_file(session_id=link.session_id, path=str(path))
    except (RequestError, ConnectionError) as exc:
        if not path.exists():
            return ToolOutput(f"File does not exist: {shown}", is_error=True)
        return ToolOutput(f"Cannot read {shown}: the editor answered: {_said(exc)}", is_error=True)
    return response.content


async def write_buffer(link: ClientLink, path: Path, shown: str, content: str) -> ToolOutput | None:
    """Have the editor write `content` to `path` (parents made first, as Write does); the error result, if any."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        await link.conn.write_text_file(session_id=link.session_id, path=str(path), content=content)
    except OSError as exc:
        return ToolOutput(f"Cannot write {shown}: {exc.strerror or exc}.", is_error=True)
    except (RequestError, ConnectionError) as exc:
        return ToolOutput(f"Cannot write {shown}: the editor answered: {_said(exc)}", is_error=True)
    return None


def buffer_read(text: str) -> FileRead:
    """What a Read of `text` records: a fingerprint of the text in place of the modification time a file has."""
    data = text.encode("utf-8", errors="replace")
    return FileRead(_fingerprint(data), len(data))


def buffer_refusal(reads: FileReads, path: Path, shown: str, text: str) -> str | None:
    """Why `path`, whose text now is `text`, may not be overwritten or edited now (None: it may)."""
    read = reads.get(path)
    if read is None:
        return f"{shown} exists but has not been read in this session. Read it first, then write."
    data = text.encode("utf-8", errors="replace")
    if not read.matches(_fingerprint(data), len(data)):
        return f"{shown} changed since it was last read (in the editor or on disk). Read it again before writing."
    return None


def _fingerprint(data: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def _not_a_text_file(path: Path, shown: str, what: str, binary: str | None) -> ToolOutput | None:
    """The refusal for a directory, a device, FIFO or socket, or (unless `binary` is None: how its refusal
    starts) a binary file on disk."""
    try:
        info = path.stat()
    except OSError:
        return None  # not on disk: the editor may still have it
    if stat.S_ISDIR(info.st_mode):
        return ToolOutput(f"{shown} is a directory, not a file; use Glob to list it.", is_error=True)
    if not stat.S_ISREG(info.st_mode):
        return ToolOutput(f"{shown} is not a regular file (a device, pipe or socket); {what}.", is_error=True)
    if binary is not None:
        try:
            with path.open("rb") as stream:
                head = stream.read(SNIFF_BYTES)
        except OSError:
            return None
        if looks_binary(head):
            return ToolOutput(f"{binary} {shown}: it is a binary file ({info.st_size} bytes).", is_error=True)
    return None


def _said(exc: Exception) -> str:
    data = getattr(exc, "data", None)
    detail = f" ({data})" if data else ""
    return f"{exc}{detail}"
