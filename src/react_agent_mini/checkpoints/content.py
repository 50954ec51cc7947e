"""A file's state as checkpoints see it: its bytes (or its link target) and mode, named by a git-style hash.

The hash is git's blob id of the bytes (`sha1("blob <size>\\0" + bytes)`), so a Write snapshot, a file on disk and
a blob git stored for a file without filters agree; it names our own blobs too. What is compared to tell whether a
file changed is its key: the hash, marked `+x` for an executable file and `@link` for a link, so a `chmod +x` is a
change too.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import msgspec

MAX_SNAPSHOT_BYTES = 20 * 1024 * 1024
"""Files larger than this are not snapshotted (the listing says so)."""
REGULAR = 0o100644
EXECUTABLE = 0o100755
SYMLINK = 0o120000


class NotTrackable(Exception):
    """A directory, device, FIFO or socket: nothing checkpoints can keep."""


class FileState(msgspec.Struct, frozen=True):
    """What is at a path: its bytes and git-style mode."""

    data: bytes
    mode: int
    """REGULAR, EXECUTABLE or SYMLINK (the bytes are then the link's target)."""

    @property
    def key(self) -> str:
        return state_key(content_hash(self.data), self.mode)


def content_hash(data: bytes) -> str:
    """git's blob id for `data`."""
    import hashlib  # at the first snapshot, not at startup (≈1 ms)

    return hashlib.sha1(b"blob %d\x00" % len(data) + data, usedforsecurity=False).hexdigest()


def state_key(data_hash: str, mode: int) -> str:
    """What tells two states of a file apart: the content's hash and whether it is executable or a link."""
    return data_hash + ("+x" if mode == EXECUTABLE else "@link" if mode == SYMLINK else "")


def read_state(path: Path) -> FileState | None:
    """The state at `path` (None when nothing is there); `NotTrackable` for what is not a file or a link."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None
    if stat.S_ISLNK(info.st_mode):
        return FileState(os.fsencode(os.readlink(path)), SYMLINK)
    if not stat.S_ISREG(info.st_mode):
        raise NotTrackable(f"{path} is not a regular file")
    if info.st_size > MAX_SNAPSHOT_BYTES:
        raise NotTrackable(f"{path} is larger than {MAX_SNAPSHOT_BYTES // (1024 * 1024)} MB")
    mode = EXECUTABLE if info.st_mode & 0o111 else REGULAR
    return FileState(path.read_bytes(), mode)


def state_hash(path: Path) -> str | None:
    """The key of what is at `path` now (None when nothing is); a directory or device gets one of its own, which
    never equals a file's."""
    try:
        state = read_state(path)
    except NotTrackable as exc:
        return f"untrackable:{exc}"
    except OSError as exc:
        return f"unreadable:{exc.strerror or exc}"
    return state.key if state is not None else None
