"""Read, Write and Edit on real files: numbering, paging, guards, read-before-write, de-duplication, edits."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec
import pytest

from react_agent_mini.read_result import ReadResult
from react_agent_mini.tools.base import ModelTool, ToolContext, ToolInputError, ToolOutput
from react_agent_mini.tools.builtin.edit import EditTool
from react_agent_mini.tools.builtin.read import UNCHANGED_STUB, ReadTool
from react_agent_mini.tools.builtin.write import WriteTool
from react_agent_mini.tools.file_state import FileRead
from react_agent_mini.tools.text_files import looks_binary, split_lines

READ, WRITE, EDIT = ReadTool(), WriteTool(), EditTool()
STUB = ReadResult(notice="unchanged")
"""The data of Read's answer for an unchanged range read from line 1."""


async def run(tool: ModelTool[Any], ctx: ToolContext, **raw: Any) -> ToolOutput:
    return await tool.call(tool.validate(raw), ctx)


def as_call(ctx: ToolContext, call_id: str, *whole: str) -> ToolContext:
    """The per-call copy the runner makes (file_reads stays shared)."""
    return msgspec.structs.replace(ctx, call_id=call_id, whole_results=frozenset(whole))


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


def lines_file(path: Path, count: int, width: int = 0) -> Path:
    path.write_text("".join(f"line {n}{'x' * width}\n" for n in range(1, count + 1)))
    return path


def bump_mtime(path: Path) -> None:
    """Change only the modification time, as a `touch` or same-size rewrite would."""
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 5_000_000_000))


# ---------------------------------------------------------------- Read


async def test_read_numbers_lines_without_padding(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\nbeta\n\ngamma\n")
    out = await run(READ, ctx, file_path="a.txt")
    assert out == ToolOutput("1\talpha\n2\tbeta\n3\t\n4\tgamma", details=ReadResult(1, 4, 4))


async def test_read_accepts_absolute_path_and_last_line_without_newline(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text("x = 1\ny = 2")
    out = await run(READ, ctx, file_path=str(tmp_path / "sub" / "b.py"))
    assert out.content == "1\tx = 1\n2\ty = 2"


async def test_read_offset_and_limit_with_continue_note(ctx: ToolContext, tmp_path: Path) -> None:
    lines_file(tmp_path / "f.txt", 10)
    out = await run(READ, ctx, file_path="f.txt", offset=3, limit=2)
    assert out.content == "3\tline 3\n4\tline 4\n\n[File has 10 lines; showing lines 3-4. Read more with offset=5.]"


async def test_read_no_note_when_range_reaches_end(ctx: ToolContext, tmp_path: Path) -> None:
    lines_file(tmp_path / "f.txt", 10)
    out = await run(READ, ctx, file_path="f.txt", offset=8, limit=5)
    assert out.content == "8\tline 8\n9\tline 9\n10\tline 10"


async def test_read_offset_zero_and_limit_alone_start_at_line_one(ctx: ToolContext, tmp_path: Path) -> None:
    lines_file(tmp_path / "f.txt", 5)
    zero = await run(READ, ctx, file_path="f.txt", offset=0, limit=1)
    alone = await run(READ, ctx, file_path="f.txt", limit=2)
    assert zero.content == "1\tline 1\n\n[File has 5 lines; showing lines 1-1. Read more with offset=2.]"
    assert alone.content.startswith("1\tline 1\n2\tline 2\n\n[File has 5 lines; showing lines 1-2.")


async def test_read_default_limit_is_2000_lines(ctx: ToolContext, tmp_path: Path) -> None:
    lines_file(tmp_path / "big.txt", 2500)
    out = await run(READ, ctx, file_path="big.txt")
    body, note = out.content.split("\n\n")
    assert body.splitlines()[-1] == "2000\tline 2000"
    assert len(body.splitlines()) == 2000
    assert note == "[File has 2500 lines; showing lines 1-2000. Read more with offset=2001.]"
    rest = await run(READ, ctx, file_path="big.txt", offset=2001)
    assert rest.content.splitlines()[0] == "2001\tline 2001"
    assert rest.content.splitlines()[-1] == "2500\tline 2500"


async def test_read_cuts_long_lines(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("a" * 2000 + "\n" + "b" * 2001 + "tail\n")
    out = await run(READ, ctx, file_path="min.js")
    first, second = out.content.split("\n")
    assert first == "1\t" + "a" * 2000
    assert second == "2\t" + "b" * 2000 + "… [line cut at 2000 chars]"


async def test_read_missing_file(ctx: ToolContext) -> None:
    assert await run(READ, ctx, file_path="nope/x.txt") == ToolOutput("File does not exist: nope/x.txt", is_error=True)


async def test_read_directory(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    out = await run(READ, ctx, file_path="pkg")
    assert out == ToolOutput("pkg is a directory, not a file; use Glob to list it.", is_error=True)


async def test_read_binary_with_nul_byte(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "img.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    out = await run(READ, ctx, file_path="img.bin")
    assert out == ToolOutput(f"Cannot read img.bin: it is a binary file ({16 + 256} bytes).", is_error=True)
    assert ctx.file_reads.get(tmp_path / "img.bin") is None


async def test_read_an_image_gives_the_image_and_a_line_naming_it(ctx: ToolContext, tmp_path: Path) -> None:
    import base64

    data = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
    (tmp_path / "img.png").write_bytes(data)
    out = await run(READ, ctx, file_path="img.png")
    assert out.content == f"[image: img.png · image/png · {len(data):,} bytes]" and not out.is_error
    assert [(i.media_type, base64.b64decode(i.data)) for i in out.images] == [("image/png", data)]
    (tmp_path / "notes.png").write_text("just text")  # named an image, is not one
    out = await run(READ, ctx, file_path="notes.png")
    assert out.is_error and "its bytes are not a PNG, JPEG, GIF or WebP image" in out.content


async def test_read_binary_without_nul_but_mostly_undecodable(ctx: ToolContext, tmp_path: Path) -> None:
    data = bytes(b for b in range(0x80, 0x100)) * 8  # no NUL, not UTF-8, nothing text-like
    (tmp_path / "blob.bin").write_bytes(data)
    out = await run(READ, ctx, file_path="blob.bin")
    assert out == ToolOutput(f"Cannot read blob.bin: it is a binary file ({len(data)} bytes).", is_error=True)


async def test_read_non_utf8_text_uses_replacement_characters(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "latin.txt").write_bytes("café au lait\nnaïve\n".encode("latin-1"))
    out = await run(READ, ctx, file_path="latin.txt")
    assert not out.is_error
    assert out.content == (
        "1\tcaf\ufffd au lait\n2\tna\ufffdve\n\n"
        "[Some bytes in these lines are not valid UTF-8; they are shown as U+FFFD (�).]"
    )


async def test_read_crlf_shows_clean_lines_and_strips_bom(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "win.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\nthree")
    out = await run(READ, ctx, file_path="win.txt")
    assert out.content == "1\tone\n2\ttwo\n3\tthree"


async def test_read_empty_file_is_not_an_error_and_counts_as_read(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("")
    assert await run(READ, ctx, file_path="empty.txt") == ToolOutput(
        "empty.txt is empty.", details=ReadResult(notice="empty")
    )
    out = await run(WRITE, ctx, file_path="empty.txt", content="now\n")
    assert out == ToolOutput("Updated empty.txt (1 line).")


async def test_read_size_guard_tells_size_lines_and_how_to_page(ctx: ToolContext, tmp_path: Path) -> None:
    path = lines_file(tmp_path / "huge.log", 3000, width=100)
    size = path.stat().st_size
    assert size > 256 * 1024
    out = await run(READ, ctx, file_path="huge.log")
    assert out.is_error
    assert out.content == (
        f"huge.log is too large to read whole: {size:,} bytes, 3000 lines (files over 256 KB need offset or "
        "limit). Read it in parts with offset and limit, e.g. offset=1, limit=2000. Grep can find the part you need."
    )
    assert ctx.file_reads.get(path) is None
    paged = await run(READ, ctx, file_path="huge.log", offset=1, limit=500)
    assert not paged.is_error
    assert paged.content.split("\n")[0] == "1\tline 1" + "x" * 100
    assert paged.content.endswith("[File has 3000 lines; showing lines 1-500. Read more with offset=501.]")
    tail = await run(READ, ctx, file_path="huge.log", offset=2999)
    assert tail.content == "2999\tline 2999" + "x" * 100 + "\n3000\tline 3000" + "x" * 100


async def test_read_offset_past_end(ctx: ToolContext, tmp_path: Path) -> None:
    lines_file(tmp_path / "f.txt", 10)
    out = await run(READ, ctx, file_path="f.txt", offset=20)
    assert out == ToolOutput("offset 20 is past the end of f.txt (10 lines).", is_error=True)
    one = tmp_path / "one.txt"
    one.write_text("only")
    out = await run(READ, ctx, file_path="one.txt", offset=2)
    assert out.content == "offset 2 is past the end of one.txt (1 line)."


async def test_read_rejects_negative_offset_and_zero_limit() -> None:
    with pytest.raises(ToolInputError, match="offset"):
        READ.validate({"file_path": "a", "offset": -1})
    with pytest.raises(ToolInputError, match="limit"):
        READ.validate({"file_path": "a", "limit": 0})


async def test_read_output_cap_stops_at_line_boundary_and_records_incomplete(ctx: ToolContext, tmp_path: Path) -> None:
    path = tmp_path / "wide.txt"
    path.write_text("".join(f"{n:04d}" + "w" * 1496 + "\n" for n in range(1, 101)))  # 100 lines of 1500 chars
    first = as_call(ctx, "r1")
    out = await run(READ, first, file_path="wide.txt", limit=100)
    body, note = out.content.split("\n\n")
    lines = body.split("\n")
    assert len(body) <= 100_000
    assert all(len(line) == len(f"{n}\t") + 1500 for n, line in enumerate(lines, 1))  # whole lines only
    shown = len(lines)
    assert 60 <= shown < 100
    assert note == f"[File has 100 lines; showing lines 1-{shown}. Read more with offset={shown + 1}.]"
    assert ctx.file_reads.get(path) == FileRead(path.stat().st_mtime_ns, path.stat().st_size, 1, 100, "r1", False)
    # An incomplete result is never stood in for by a stub.
    again = await run(READ, as_call(ctx, "r2", "r1"), file_path="wide.txt", limit=100)
    assert again.content == out.content


async def test_read_records_the_read(ctx: ToolContext, tmp_path: Path) -> None:
    path = lines_file(tmp_path / "f.txt", 10)
    await run(READ, as_call(ctx, "toolu_7"), file_path="f.txt", offset=3, limit=2)
    info = path.stat()
    assert ctx.file_reads.get(path) == FileRead(info.st_mtime_ns, info.st_size, 3, 2, "toolu_7", True)


# ---------------------------------------------------------------- Read de-duplication


async def test_dedupe_stub_when_earlier_result_is_whole(ctx: ToolContext, tmp_path: Path) -> None:
    lines_file(tmp_path / "f.txt", 3)
    first = await run(READ, as_call(ctx, "r1"), file_path="f.txt")
    assert first.content.startswith("1\tline 1")
    second = await run(READ, as_call(ctx, "r2", "r1"), file_path="f.txt")
    assert second == ToolOutput(UNCHANGED_STUB, details=STUB)
    assert UNCHANGED_STUB == (
        "File unchanged since your last Read of this range; the content in that earlier Read result is still "
        "current — refer to it instead of reading again."
    )
    # The record still points at the result that holds the content.
    assert ctx.file_reads.get(tmp_path / "f.txt").tool_use_id == "r1"  # type: ignore[union-attr]


async def test_dedupe_treats_offset_zero_and_default_limit_as_same_range(ctx: ToolContext, tmp_path: Path) -> None:
    lines_file(tmp_path / "f.txt", 3)
    await run(READ, as_call(ctx, "r1"), file_path="f.txt")
    out = await run(READ, as_call(ctx, "r2", "r1"), file_path="f.txt", offset=0, limit=2000)
    assert out == ToolOutput(UNCHANGED_STUB, details=STUB)


async def test_no_stub_when_earlier_result_is_not_whole(ctx: ToolContext, tmp_path: Path) -> None:
    lines_file(tmp_path / "f.txt", 3)
    await run(READ, as_call(ctx, "r1"), file_path="f.txt")
    # r1 was cut or cleared by compaction: the model no longer has its content.
    out = await run(READ, as_call(ctx, "r2", "other"), file_path="f.txt")
    assert out.content == "1\tline 1\n2\tline 2\n3\tline 3"
    assert ctx.file_reads.get(tmp_path / "f.txt").tool_use_id == "r2"  # type: ignore[union-attr]
    # And the new read is what a later stub points at.
    assert await run(READ, as_call(ctx, "r3", "r2"), file_path="f.txt") == ToolOutput(UNCHANGED_STUB, details=STUB)


async def test_no_stub_when_file_changed(ctx: ToolContext, tmp_path: Path) -> None:
    path = lines_file(tmp_path / "f.txt", 3)
    await run(READ, as_call(ctx, "r1"), file_path="f.txt")
    path.write_text("changed\n")
    out = await run(READ, as_call(ctx, "r2", "r1"), file_path="f.txt")
    assert out.content == "1\tchanged"


async def test_no_stub_when_only_mtime_changed(ctx: ToolContext, tmp_path: Path) -> None:
    path = lines_file(tmp_path / "f.txt", 3)
    await run(READ, as_call(ctx, "r1"), file_path="f.txt")
    bump_mtime(path)
    out = await run(READ, as_call(ctx, "r2", "r1"), file_path="f.txt")
    assert out.content.startswith("1\tline 1")


async def test_no_stub_when_range_differs(ctx: ToolContext, tmp_path: Path) -> None:
    lines_file(tmp_path / "f.txt", 10)
    await run(READ, as_call(ctx, "r1"), file_path="f.txt", offset=1, limit=5)
    other_offset = await run(READ, as_call(ctx, "r2", "r1"), file_path="f.txt", offset=2, limit=5)
    assert other_offset.content.startswith("2\tline 2")
    other_limit = await run(READ, as_call(ctx, "r3", "r2"), file_path="f.txt", offset=2, limit=6)
    assert other_limit.content.startswith("2\tline 2")
    assert "7\tline 7" in other_limit.content


async def test_no_stub_after_write_or_edit(ctx: ToolContext, tmp_path: Path) -> None:
    lines_file(tmp_path / "f.txt", 3)
    await run(READ, as_call(ctx, "r1"), file_path="f.txt")
    await run(EDIT, as_call(ctx, "e1", "r1"), file_path="f.txt", old_string="line 2", new_string="LINE 2")
    # The FileRead now comes from the edit (no tool_use_id), so Read shows the new content.
    out = await run(READ, as_call(ctx, "r2", "r1", "e1"), file_path="f.txt")
    assert out.content == "1\tline 1\n2\tLINE 2\n3\tline 3"


# ---------------------------------------------------------------- Write


async def test_write_creates_file_and_parent_dirs(ctx: ToolContext, tmp_path: Path) -> None:
    out = await run(WRITE, ctx, file_path="src/pkg/mod.py", content="a = 1\nb = 2\n")
    assert out == ToolOutput("Created src/pkg/mod.py (2 lines).")
    assert (tmp_path / "src/pkg/mod.py").read_bytes() == b"a = 1\nb = 2\n"


async def test_write_updates_file_that_was_read(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("old\n")
    await run(READ, ctx, file_path="f.txt")
    out = await run(WRITE, ctx, file_path="f.txt", content="new\nlines\nhere")
    assert out == ToolOutput("Updated f.txt (3 lines).")
    assert (tmp_path / "f.txt").read_text() == "new\nlines\nhere"


async def test_write_refuses_unread_existing_file(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("precious\n")
    out = await run(WRITE, ctx, file_path="f.txt", content="oops\n")
    assert out == ToolOutput(
        "f.txt exists but has not been read in this session. Read it first, then write.", is_error=True
    )
    assert (tmp_path / "f.txt").read_text() == "precious\n"


async def test_write_refuses_file_changed_since_read(ctx: ToolContext, tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("v1\n")
    await run(READ, ctx, file_path="f.txt")
    path.write_text("user edit\n")
    out = await run(WRITE, ctx, file_path="f.txt", content="model\n")
    assert out == ToolOutput(
        "f.txt changed on disk since it was last read (by the user or another program). Read it again before writing.",
        is_error=True,
    )
    assert path.read_text() == "user edit\n"


async def test_write_refuses_when_only_mtime_changed(ctx: ToolContext, tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("v1\n")
    await run(READ, ctx, file_path="f.txt")
    bump_mtime(path)
    out = await run(WRITE, ctx, file_path="f.txt", content="model\n")
    assert out.is_error and "changed on disk" in out.content
    assert path.read_text() == "v1\n"


async def test_write_to_directory_is_an_error(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    out = await run(WRITE, ctx, file_path="d", content="x")
    assert out == ToolOutput("d is a directory, not a file; give the path of a file.", is_error=True)


async def test_write_under_a_file_is_an_error_value(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("x")
    out = await run(WRITE, ctx, file_path="plain/child.txt", content="y")
    assert out.is_error
    assert out.content.startswith("Cannot write plain/child.txt: ")


async def test_write_twice_needs_no_reread(ctx: ToolContext, tmp_path: Path) -> None:
    assert (await run(WRITE, ctx, file_path="f.txt", content="1\n")).content == "Created f.txt (1 line)."
    assert (await run(WRITE, ctx, file_path="f.txt", content="2\n")).content == "Updated f.txt (1 line)."
    info = (tmp_path / "f.txt").stat()
    assert ctx.file_reads.get(tmp_path / "f.txt") == FileRead(info.st_mtime_ns, info.st_size, 1, None, "", True)


async def test_write_keeps_crlf_of_existing_file(ctx: ToolContext, tmp_path: Path) -> None:
    path = tmp_path / "win.txt"
    path.write_bytes(b"a\r\nb\r\n")
    await run(READ, ctx, file_path="win.txt")
    out = await run(WRITE, ctx, file_path="win.txt", content="x\ny\nz\n")
    assert out == ToolOutput("Updated win.txt (3 lines; kept its CRLF line endings).")
    assert path.read_bytes() == b"x\r\ny\r\nz\r\n"


# ---------------------------------------------------------------- Edit


async def read_first(ctx: ToolContext, path: Path, data: bytes) -> None:
    path.write_bytes(data)
    out = await run(READ, ctx, file_path=str(path))
    assert not out.is_error


async def test_edit_unique_replacement_with_snippet(ctx: ToolContext, tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    await read_first(ctx, path, "".join(f"line {n}\n" for n in range(1, 21)).encode())
    out = await run(EDIT, ctx, file_path="f.txt", old_string="line 10\n", new_string="ten\nTEN\n")
    assert out == ToolOutput(
        "Edited f.txt (1 replacement).\n"
        "7\tline 7\n8\tline 8\n9\tline 9\n10\tten\n11\tTEN\n12\tline 11\n13\tline 12\n14\tline 13\n15\tline 14"
    )
    assert path.read_text().splitlines()[8:12] == ["line 9", "ten", "TEN", "line 11"]


async def test_edit_snippet_at_file_start_and_end(ctx: ToolContext, tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    await read_first(ctx, path, b"a\nb\nc\n")
    out = await run(EDIT, ctx, file_path="f.txt", old_string="a", new_string="A")
    assert out.content == "Edited f.txt (1 replacement).\n1\tA\n2\tb\n3\tc"
    out = await run(EDIT, ctx, file_path="f.txt", old_string="c", new_string="C")
    assert out.content == "Edited f.txt (1 replacement).\n1\tA\n2\tb\n3\tC"


async def test_edit_not_found(ctx: ToolContext, tmp_path: Path) -> None:
    path = tmp_path / "f.py"
    await read_first(ctx, path, b"def f():\n    return 1\n")
    out = await run(EDIT, ctx, file_path="f.py", old_string="return 2", new_string="return 3")
    assert out == ToolOutput(
        "old_string was not found in f.py. It must match the file exactly, including whitespace and indentation; "
        "Read the file to copy the exact text.",
        is_error=True,
    )
    assert path.read_bytes() == b"def f():\n    return 1\n"


async def test_edit_not_found_points_at_whitespace_only_difference(ctx: ToolContext, tmp_path: Path) -> None:
    path = tmp_path / "f.py"
    await read_first(ctx, path, b"x = 0\n\ndef f():\n    return 1\n")
    out = await run(EDIT, ctx, file_path="f.py", old_string="def f():\n  return 1", new_string="def f():\n  return 2")
    assert out.is_error
    assert out.content.endswith(" Text that differs from it only in whitespace starts at line 3.")
    assert path.read_bytes() == b"x = 0\n\ndef f():\n    return 1\n"  # no fuzzy edit


async def test_edit_not_found_spots_line_number_prefixes(ctx: ToolContext, tmp_path: Path) -> None:
    await read_first(ctx, tmp_path / "f.txt", b"one\ntwo\n")
    out = await run(EDIT, ctx, file_path="f.txt", old_string="1\tone\n2\ttwo", new_string="x")
    assert out.content.endswith(" old_string seems to include Read's line-number prefixes; leave them out.")


async def test_edit_multiple_matches(ctx: ToolContext, tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    await read_first(ctx, path, b"x = 1\nx = 1\ny\nx = 1\n")
    out = await run(EDIT, ctx, file_path="f.txt", old_string="x = 1", new_string="x = 2")
    assert out == ToolOutput(
        "old_string occurs 3 times in f.txt. Include more surrounding lines to make it unique, or set replace_all "
        "to true to change every occurrence.",
        is_error=True,
    )
    assert path.read_bytes() == b"x = 1\nx = 1\ny\nx = 1\n"


async def test_edit_replace_all(ctx: ToolContext, tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    await read_first(ctx, path, b"x = 1\nx = 1\ny\nx = 1\n")
    out = await run(EDIT, ctx, file_path="f.txt", old_string="x = 1", new_string="x = 2", replace_all=True)
    assert out.content.startswith("Edited f.txt (3 replacements).\n1\tx = 2\n")
    assert path.read_bytes() == b"x = 2\nx = 2\ny\nx = 2\n"


async def test_edit_crlf_file_stays_crlf_byte_for_byte(ctx: ToolContext, tmp_path: Path) -> None:
    path = tmp_path / "win.txt"
    await read_first(ctx, path, b"one\r\ntwo\r\nthree\r\nfour\r\n")
    # The model copies from Read, so it sends LF.
    out = await run(EDIT, ctx, file_path="win.txt", old_string="two\nthree", new_string="2\n2.5\n3")
    assert out.content == "Edited win.txt (1 replacement).\n1\tone\n2\t2\n3\t2.5\n4\t3\n5\tfour"
    assert path.read_bytes() == b"one\r\n2\r\n2.5\r\n3\r\nfour\r\n"
    # old_string sent with CRLF matches as well.
    await run(EDIT, ctx, file_path="win.txt", old_string="2.5\r\n3\r\n", new_string="")
    assert path.read_bytes() == b"one\r\n2\r\nfour\r\n"


async def test_edit_mixed_endings_keep_untouched_lines(ctx: ToolContext, tmp_path: Path) -> None:
    path = tmp_path / "mixed.txt"
    await read_first(ctx, path, b"a\r\nb\nc\r\nd\r\n")
    await run(EDIT, ctx, file_path="mixed.txt", old_string="c", new_string="C")
    assert path.read_bytes() == b"a\r\nb\nC\r\nd\r\n"


async def test_edit_lf_file_stays_lf(ctx: ToolContext, tmp_path: Path) -> None:
    path = tmp_path / "unix.txt"
    await read_first(ctx, path, b"a\nb\n")
    await run(EDIT, ctx, file_path="unix.txt", old_string="a\n", new_string="x\r\ny\n")
    assert path.read_bytes() == b"x\ny\nb\n"


async def test_edit_keeps_missing_final_newline(ctx: ToolContext, tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    await read_first(ctx, path, b"a\nb")
    await run(EDIT, ctx, file_path="f.txt", old_string="b", new_string="b\nc\n")
    assert path.read_bytes() == b"a\nb\nc"


async def test_edit_keeps_present_final_newline(ctx: ToolContext, tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    await read_first(ctx, path, b"a\nb\n")
    await run(EDIT, ctx, file_path="f.txt", old_string="b\n", new_string="c")
    assert path.read_bytes() == b"a\nc\n"
    crlf = tmp_path / "g.txt"
    await read_first(ctx, crlf, b"a\r\nb\r\n")
    await run(EDIT, ctx, file_path="g.txt", old_string="b\n", new_string="c")
    assert crlf.read_bytes() == b"a\r\nc\r\n"


async def test_edit_keeps_bom(ctx: ToolContext, tmp_path: Path) -> None:
    path = tmp_path / "bom.txt"
    await read_first(ctx, path, b"\xef\xbb\xbfhello\n")
    out = await run(EDIT, ctx, file_path="bom.txt", old_string="hello", new_string="bye")
    assert out.content == "Edited bom.txt (1 replacement).\n1\tbye"
    assert path.read_bytes() == b"\xef\xbb\xbfbye\n"


async def test_edit_creates_missing_file_with_empty_old_string(ctx: ToolContext, tmp_path: Path) -> None:
    out = await run(EDIT, ctx, file_path="new/dir/n.txt", old_string="", new_string="hello\nworld\n")
    assert out == ToolOutput("Created new/dir/n.txt (2 lines).")
    assert (tmp_path / "new/dir/n.txt").read_bytes() == b"hello\nworld\n"
    # Recorded: a following Edit needs no Read.
    out = await run(EDIT, ctx, file_path="new/dir/n.txt", old_string="world", new_string="there")
    assert not out.is_error
    assert (tmp_path / "new/dir/n.txt").read_bytes() == b"hello\nthere\n"


async def test_edit_empty_old_string_on_existing_content_is_refused(ctx: ToolContext, tmp_path: Path) -> None:
    await read_first(ctx, tmp_path / "f.txt", b"content\n")
    out = await run(EDIT, ctx, file_path="f.txt", old_string="", new_string="x")
    assert out == ToolOutput(
        "old_string is empty, but f.txt already has content. Give the exact text to replace, or use Write to "
        "replace the whole file.",
        is_error=True,
    )


async def test_edit_empty_old_string_fills_empty_file(ctx: ToolContext, tmp_path: Path) -> None:
    path = tmp_path / "e.txt"
    await read_first(ctx, path, b"")
    out = await run(EDIT, ctx, file_path="e.txt", old_string="", new_string="first\n")
    assert out.content == "Edited e.txt (1 replacement).\n1\tfirst"
    assert path.read_bytes() == b"first\n"


async def test_edit_missing_file_with_old_string(ctx: ToolContext) -> None:
    out = await run(EDIT, ctx, file_path="ghost.txt", old_string="a", new_string="b")
    assert out == ToolOutput("File does not exist: ghost.txt", is_error=True)


async def test_edit_identical_strings(ctx: ToolContext, tmp_path: Path) -> None:
    await read_first(ctx, tmp_path / "f.txt", b"a\n")
    out = await run(EDIT, ctx, file_path="f.txt", old_string="a", new_string="a")
    assert out == ToolOutput("old_string and new_string are identical; there is nothing to change.", is_error=True)


async def test_edit_refuses_unread_and_changed_files(ctx: ToolContext, tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("a\n")
    out = await run(EDIT, ctx, file_path="f.txt", old_string="a", new_string="b")
    assert out == ToolOutput(
        "f.txt exists but has not been read in this session. Read it first, then write.", is_error=True
    )
    await run(READ, ctx, file_path="f.txt")
    path.write_text("a\nuser\n")
    out = await run(EDIT, ctx, file_path="f.txt", old_string="a", new_string="b")
    assert out.is_error
    assert out.content.startswith("f.txt changed on disk since it was last read")
    assert path.read_text() == "a\nuser\n"


async def test_edit_refuses_binary_and_non_utf8(ctx: ToolContext, tmp_path: Path) -> None:
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"abc\x00def")
    out = await run(EDIT, ctx, file_path="b.bin", old_string="abc", new_string="xyz")
    assert out == ToolOutput("Cannot edit b.bin: it is a binary file.", is_error=True)
    assert binary.read_bytes() == b"abc\x00def"
    latin = tmp_path / "l.txt"
    await read_first(ctx, latin, "café\n".encode("latin-1"))
    out = await run(EDIT, ctx, file_path="l.txt", old_string="caf", new_string="tea")
    assert out.is_error
    assert out.content.startswith("Cannot edit l.txt: it is not valid UTF-8 text")
    assert latin.read_bytes() == "café\n".encode("latin-1")


async def test_edit_directory(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    out = await run(EDIT, ctx, file_path="d", old_string="a", new_string="b")
    assert out == ToolOutput("d is a directory, not a file.", is_error=True)


async def test_edit_records_new_state(ctx: ToolContext, tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    await read_first(ctx, path, b"a\n")
    await run(EDIT, ctx, file_path="f.txt", old_string="a", new_string="bb")
    info = path.stat()
    assert ctx.file_reads.get(path) == FileRead(info.st_mtime_ns, info.st_size, 1, None, "", True)


async def test_edit_long_replacement_snippet_is_capped(ctx: ToolContext, tmp_path: Path) -> None:
    await read_first(ctx, tmp_path / "f.txt", b"start\nend\n")
    body = "".join(f"new {n}\n" for n in range(100))
    out = await run(EDIT, ctx, file_path="f.txt", old_string="start\n", new_string=body)
    lines = out.content.split("\n")
    assert lines[0] == "Edited f.txt (1 replacement)."
    assert lines[1] == "1\tnew 0"
    assert lines[40] == "40\tnew 39"
    assert lines[41] == "[… lines 41-101 not shown; Read the file to see them.]"  # 100 new lines + "end"
    assert len(lines) == 42


async def test_read_write_edit_chain_without_reread(ctx: ToolContext, tmp_path: Path) -> None:
    path = tmp_path / "app.py"
    path.write_text("print('v1')\n")
    assert not (await run(READ, as_call(ctx, "r1"), file_path="app.py")).is_error
    assert (await run(WRITE, ctx, file_path="app.py", content="a = 1\nb = 2\n")).content == "Updated app.py (2 lines)."
    first = await run(EDIT, ctx, file_path="app.py", old_string="a = 1", new_string="a = 10")
    second = await run(EDIT, ctx, file_path="app.py", old_string="b = 2", new_string="b = 20")
    assert not first.is_error and not second.is_error
    assert path.read_text() == "a = 10\nb = 20\n"
    # A change by someone else still stops the chain.
    path.write_text("a = 10\nb = 20\nc = 3\n")
    third = await run(EDIT, ctx, file_path="app.py", old_string="c = 3", new_string="c = 30")
    assert third.is_error and "changed on disk" in third.content


# ---------------------------------------------------------------- helpers


def test_split_lines_only_breaks_on_newline() -> None:
    assert split_lines("") == []
    assert split_lines("a\r\nb\n") == ["a", "b"]
    assert split_lines("a\x0cb\u2028c\n\n") == ["a\x0cb\u2028c", ""]


def test_looks_binary() -> None:
    assert looks_binary(b"a\x00b")
    assert not looks_binary("héllo wörld\n".encode())
    assert not looks_binary(b"ok " * 10 + "é".encode()[:1])  # a character cut by the sample's end
    assert not looks_binary("résumé naïve café\n".encode("latin-1"))
    assert looks_binary(bytes(range(0x80, 0x100)))


def test_schemas_use_claude_code_names() -> None:
    assert READ.name == "Read" and WRITE.name == "Write" and EDIT.name == "Edit"
    assert set(READ.input_schema()["properties"]) == {"file_path", "offset", "limit"}
    assert READ.input_schema()["required"] == ["file_path"]
    assert set(WRITE.input_schema()["required"]) == {"file_path", "content"}
    assert set(EDIT.input_schema()["properties"]) == {"file_path", "old_string", "new_string", "replace_all"}
    assert all(p.get("description") for t in (READ, WRITE, EDIT) for p in t.input_schema()["properties"].values())
    assert READ.read_only and READ.concurrency_safe
    assert not WRITE.read_only and not WRITE.concurrency_safe
    assert not EDIT.read_only and not EDIT.concurrency_safe
    assert READ.describe_call({"file_path": "a.py"}) == "a.py"
