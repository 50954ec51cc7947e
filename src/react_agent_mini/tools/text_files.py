"""Text-file helpers shared by Read, Write and Edit: binary sniffing, line splitting, line numbering,
line-ending detection, and the read-before-write check.

Lines are split on `\\n` only (a trailing `\\r` is dropped), never with `str.splitlines`, which also breaks on
form feeds, `\\x1c`, U+2028 and friends and would make our line numbers disagree with Grep, editors and `sed`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .file_state import FileReads

SNIFF_BYTES = 8192
"""How much of a file's start decides whether it is binary."""
LINE_CHAR_LIMIT = 2000
"""Longer lines are cut: minified files would otherwise flood the context with one line."""
BOM = b"\xef\xbb\xbf"
"""The UTF-8 byte-order mark some Windows editors put first."""

# Control characters that plain text does contain (tab, newlines, form feed, escape for ANSI colours).
_TEXT_CONTROLS = frozenset("\t\n\r\f\v\b\x1b")


def looks_binary(sample: bytes) -> bool:
    """True for a NUL byte, or for bytes that are not UTF-8 and mostly not text (so not just Latin-1 prose)."""
    if b"\x00" in sample:
        return True
    try:
        text = sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut by the sample's end is not evidence of binary data.
        if exc.start >= len(sample) - 3 and exc.reason == "unexpected end of data":
            return False
        text = sample.decode("utf-8", errors="replace")
    else:
        return False
    if not text:
        return False
    odd = sum(1 for ch in text if ch == "\ufffd" or (ch < " " and ch not in _TEXT_CONTROLS) or ch == "\x7f")
    return odd / len(text) > 0.3


def split_lines(text: str) -> list[str]:
    """The lines of `text` without their endings; a final newline does not start an extra empty line."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def cut_line(line: str) -> str:
    """The line, cut at LINE_CHAR_LIMIT characters with a visible mark when longer."""
    if len(line) <= LINE_CHAR_LIMIT:
        return line
    return f"{line[:LINE_CHAR_LIMIT]}… [line cut at {LINE_CHAR_LIMIT} chars]"


def numbered(line: str, number: int) -> str:
    """One line as the model sees it: `<n>\\t<line>` (1-based, no padding: padding costs tokens)."""
    return f"{number}\t{cut_line(line)}"


def number_lines(lines: Iterable[str], first: int = 1) -> str:
    """`lines` numbered from `first`, joined by newlines."""
    return "\n".join(numbered(line, n) for n, line in enumerate(lines, first))


def newline_style(text: str) -> str:
    """`\\r\\n` when most line endings in `text` are CRLF, else `\\n`."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf >= text.count("\n") - crlf else "\n"


def plural(count: int, word: str) -> str:
    """`1 line`, `3 lines`."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def overwrite_refusal(reads: FileReads, path: Path, shown: str, stat: os.stat_result) -> str | None:
    """Why an existing file may not be overwritten or edited now, or None when it may.

    The model must have read the file in this session, and the file must be as it was then: otherwise it
    would write over content it never saw (the user's edits, a formatter's output)."""
    read = reads.get(path)
    if read is None:
        return f"{shown} exists but has not been read in this session. Read it first, then write."
    if not read.matches(stat.st_mtime_ns, stat.st_size):
        return (
            f"{shown} changed on disk since it was last read (by the user or another program). "
            "Read it again before writing."
        )
    return None
