"""What this session knows about files it has read: the basis of read-before-write and of Read's
"unchanged since your last Read" stub.

One `FileReads` per session, shared by Read, Write and Edit through the ToolContext. It is cleared when the
conversation is cleared or summarised, because then the model no longer holds what it read.
"""

from __future__ import annotations

from pathlib import Path

import msgspec


class FileRead(msgspec.Struct, frozen=True):
    """One Read of a file, as it was on disk at the time."""

    mtime_ns: int
    """Modification time when read (or when this session last wrote it)."""
    size: int
    """Size in bytes when read."""
    offset: int = 1
    """First line returned (1-based)."""
    limit: int | None = None
    """Lines asked for (None = the default)."""
    tool_use_id: str = ""
    """The Read call whose tool_result holds the content ("" when the entry comes from a write)."""
    complete: bool = True
    """False when the result was cut (size guard, line cap): a stub must not stand in for it."""

    def matches(self, mtime_ns: int, size: int) -> bool:
        """True when the file on disk still has the modification time and size it had then."""
        return self.mtime_ns == mtime_ns and self.size == size


class FileReads:
    """Path → latest FileRead; paths are absolute and resolved."""

    def __init__(self) -> None:
        self._reads: dict[Path, FileRead] = {}

    def get(self, path: Path) -> FileRead | None:
        return self._reads.get(path)

    def record(self, path: Path, read: FileRead) -> None:
        self._reads[path] = read

    def forget(self, path: Path) -> None:
        self._reads.pop(path, None)

    def clear(self) -> None:
        self._reads.clear()

    def __len__(self) -> int:
        return len(self._reads)
