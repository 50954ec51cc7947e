"""Putting files back as a rewind's plan says: the content they held (from our blobs or git's), or no file.

A file is written in place (its inode, and so open editors, stay), with the executable bit it had; a link is made a
link again; a file that did not exist is removed (empty folders are left). Each file put back is recorded in the
store, so the next rewind knows what was left there.

A rewind never writes or removes anything outside the workspace, whatever the agent's commands did to it since:
- every folder above a file is resolved first, and a file whose folder now leads outside the workspace (a folder
  replaced by a link to `~`, say) is left as it is, and named (`refusal`);
- a file is never written through a link, nor when it has other hard links (its inode may be a file elsewhere):
  that file is left and named too; removing a link removes the link, never what it leads to;
- the write itself walks down from the workspace one folder at a time, each opened relative to the one above
  without following links (`os.open(..., dir_fd=..., O_NOFOLLOW)`), so a folder swapped for a link between the
  check and the write is refused rather than followed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

import msgspec

from .content import EXECUTABLE, SYMLINK, content_hash, state_hash, state_key
from .git import GitFailed, GitSnapshots
from .plan import FileStep
from .store import Absent, Before, Blob, CheckpointStore, GitBlob, RestoredRecord, Untracked

OUTSIDE = "it is outside the workspace"
LEADS_OUTSIDE = "its folder now leads outside the workspace"
A_LINK = "it is now a symbolic link, and a rewind never writes through one"
HARD_LINKED = "it has other hard links (the same file may be elsewhere), and a rewind never writes through them"


class Refused(Exception):
    """A file a rewind leaves as it is because writing or removing it could reach outside the workspace."""


class Contents:
    """The bytes a `Before` names."""

    def __init__(self, store: CheckpointStore) -> None:
        self.store = store
        self._hashes: dict[str, str | None] = {}

    async def bytes_of(self, before: Before) -> bytes | None:
        """None: no file."""
        if isinstance(before, Blob):
            return self.store.blob(before.id)
        if isinstance(before, GitBlob):
            git = GitSnapshots(Path(before.repo), self.store.directory / "git-index")
            return await git.blob(before.id, before.rel)
        if isinstance(before, Absent):
            return None
        raise ValueError(f"cannot be restored: {before.why}")

    async def hash_of(self, before: Before) -> str | None:
        """The key (`content.state_key`) of the state `before` names."""
        if isinstance(before, Blob):
            return state_key(before.id, before.mode)
        if isinstance(before, Absent):
            return None
        if isinstance(before, Untracked):
            return f"untracked:{before.why}"
        if before.id not in self._hashes:  # git's id is of the content before its filters: hash what we would write
            try:
                data = await self.bytes_of(before)
            except (GitFailed, OSError) as exc:
                return f"unreadable:{exc}"
            self._hashes[before.id] = content_hash(data) if data is not None else None
        found = self._hashes[before.id]
        return state_key(found, before.mode) if found is not None else None


class Restored(msgspec.Struct, frozen=True):
    file: str
    removed: bool
    """True when the file did not exist then, so it was removed."""


def refusal(step: FileStep, workspace: Path) -> str:
    """Why putting `step`'s file back could write or remove outside `workspace` ("" when it cannot)."""
    root = Path(os.path.realpath(workspace))
    path = Path(os.path.abspath(step.file))
    if not _inside(root, path.parent):
        return OUTSIDE
    if not _inside(root, Path(os.path.realpath(path.parent))):
        return LEADS_OUTSIDE
    if _writes_content(step.target):
        try:
            info = path.lstat()
        except OSError:
            return ""
        if stat.S_ISLNK(info.st_mode):
            return A_LINK
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            return HARD_LINKED
    return ""


async def restore(step: FileStep, contents: Contents, workspace: Path) -> Restored:
    """Put one file back; `Refused` when that could reach outside `workspace`, OSError or GitFailed when it cannot
    be done."""
    why = refusal(step, workspace)
    if why:
        raise Refused(why)
    path = Path(os.path.abspath(step.file))
    data = await contents.bytes_of(step.target)
    mode = step.target.mode if isinstance(step.target, (Blob, GitBlob)) else 0
    root = Path(os.path.realpath(workspace))
    folders = Path(os.path.realpath(path.parent)).relative_to(root).parts
    folder = _open_folder(root, folders, create=data is not None)
    if folder is not None:
        try:
            if data is None:
                _remove(folder, path.name)
            elif mode == SYMLINK:
                _remove(folder, path.name)
                os.symlink(os.fsdecode(data), path.name, dir_fd=folder)
            else:
                _write(folder, path.name, data, mode == EXECUTABLE)
        finally:
            os.close(folder)
    contents.store.append(RestoredRecord(step.file, state_hash(path)))
    return Restored(step.file, data is None)


def _writes_content(target: Before) -> bool:
    """True when putting `target` back writes bytes into a file (rather than removing it or making a link)."""
    return isinstance(target, (Blob, GitBlob)) and target.mode != SYMLINK


def _inside(root: Path, path: Path) -> bool:
    return path == root or root in path.parents


_SEARCH = getattr(os, "O_PATH", os.O_RDONLY)  # O_PATH (Linux): a folder we may enter but not list still opens
_FOLDER = _SEARCH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_folder(root: Path, parts: tuple[str, ...], *, create: bool) -> int | None:
    """A descriptor of the folder `root/parts…`, reached one folder at a time without following a link (missing
    folders made when `create`); None when one is missing and not to be made."""
    fd = os.open(root, _SEARCH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts:
            try:
                below = _open_below(fd, part)
            except FileNotFoundError:
                if not create:
                    os.close(fd)
                    return None
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=fd)
                below = _open_below(fd, part)
            os.close(fd)
            fd = below
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_below(fd: int, part: str) -> int:
    """The folder `part` in `fd`; `Refused` when it is a link (swapped for one since `refusal` looked)."""
    try:
        return os.open(part, _FOLDER, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(fd, part):
            raise Refused(LEADS_OUTSIDE) from None
        raise


def _is_link(folder: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _remove(folder: int, name: str) -> None:
    """Remove `name` in `folder` (a link itself, never what it leads to); nothing there is fine."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(name, dir_fd=folder)


def _write(folder: int, name: str, data: bytes, executable: bool) -> None:
    """Write `data` into `name` in `folder`, in place, never through a link or into a file with other hard links."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # O_NONBLOCK: a FIFO fails
    try:
        fd = os.open(name, flags, 0o666, dir_fd=folder)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused(A_LINK) from None
        raise
    with os.fdopen(fd, "wb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "it is not a regular file")
        if info.st_nlink > 1:
            raise Refused(HARD_LINKED)
        os.ftruncate(fd, 0)  # only now: a file refused above keeps its bytes
        handle.write(data)
        current = info.st_mode
        # executable where readable, as git checks a file out
        wanted = current | ((current & 0o444) >> 2) if executable else current & ~0o111
        if wanted != current:
            os.fchmod(fd, wanted & 0o7777)
