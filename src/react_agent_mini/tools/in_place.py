"""Opening, reading and rewriting a file through one descriptor, so the file checked is the file written.

Write and Edit open the (already resolved) path once — never following a final symlink, never blocking on a FIFO
or a device — check that the open descriptor is a regular file, read it, and write the new bytes back through the
same descriptor, in place. A check by path followed by an open by path could meet a different file in between: a
FIFO swapped in makes a plain open hang for ever, a symlink swapped in redirects the write (to `/dev/null`, say).
Nothing is ever renamed over the path, so a device, FIFO or socket is never replaced by a regular file, and a
symlink the model wrote through stays a symlink (its target is what was resolved and written).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_OPEN_FLAGS = os.O_RDWR | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY | os.O_CLOEXEC
"""O_NONBLOCK: opening a FIFO or a device must fail or return at once, not wait for the other end."""
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class NotRegular(Exception):
    """The path names something other than a regular file; `kind` says what (`a FIFO (named pipe)`, ...)."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def kind_of(mode: int) -> str:
    """What a file of this mode is, with its article: `a directory`, `a character device`, ..."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def open_existing(path: Path) -> tuple[int, os.stat_result] | None:
    """A read-write descriptor of the regular file at `path` and its stat, or None when nothing is there.

    NotRegular when the path is a directory, FIFO, socket, device or (swapped in since it was resolved) symlink;
    OSError for anything else (permissions, I/O)."""
    try:
        # Some devices act when merely opened (a tape rewinds): look first, then check the descriptor again.
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not stat.S_ISREG(mode):
        raise NotRegular(kind_of(mode))
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise _refusal(path, exc) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(kind_of(info.st_mode))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def _refusal(path: Path, exc: OSError) -> Exception:
    """NotRegular when the open failed because of what the path is; otherwise the error itself."""
    if exc.errno in (errno.EISDIR, errno.ELOOP, errno.ENXIO, errno.EOPNOTSUPP):
        try:
            # ENXIO: a FIFO with no reader, or a socket; ELOOP: a symlink (O_NOFOLLOW); EISDIR: a directory.
            return NotRegular(kind_of(os.lstat(path).st_mode))
        except OSError:
            pass
    return exc


def read_all(fd: int) -> bytes:
    """The whole content of the open file, from its start."""
    chunks: list[bytes] = []
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def rewrite(fd: int, data: bytes) -> os.stat_result:
    """Make the open file hold exactly `data` (in place: same inode, links and mode); its new stat."""
    written = 0
    view = memoryview(data)
    while written < len(data):
        written += os.pwrite(fd, view[written:], written)
    os.ftruncate(fd, len(data))
    return os.fstat(fd)


def create(path: Path, data: bytes) -> os.stat_result:
    """Create `path` as a new regular file holding `data`; its stat. FileExistsError if something appeared there
    meanwhile (nothing is overwritten), NotRegular if that something is not a regular file."""
    try:
        fd = os.open(path, _CREATE_FLAGS, 0o666)
    except FileExistsError:
        raise
    except OSError as exc:
        raise _refusal(path, exc) from None
    try:
        return rewrite(fd, data)
    finally:
        os.close(fd)
