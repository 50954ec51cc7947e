"""Putting files back as a rewind's plan says: the content they held (from our blobs or git's), or no file.

A file is written in place (its inode, and so hard links and open editors, stay), with the executable bit it had;
a link is made a link again; a file that did not exist is removed (empty folders are left). Each file put back is
recorded in the store, so the next rewind knows what was left there.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from .content import EXECUTABLE, SYMLINK, content_hash, state_hash, state_key
from .git import GitFailed, GitSnapshots
from .plan import FileStep
from .store import Absent, Before, Blob, CheckpointStore, GitBlob, RestoredRecord, Untracked


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


async def restore(step: FileStep, contents: Contents) -> Restored:
    """Put one file back; OSError or GitFailed when that cannot be done."""
    path = Path(step.file)
    data = await contents.bytes_of(step.target)
    mode = step.target.mode if isinstance(step.target, (Blob, GitBlob)) else 0
    if data is None:
        if path.is_symlink() or path.exists():
            path.unlink()
    elif mode == SYMLINK:
        if path.is_symlink() or path.exists():
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(os.fsdecode(data), path)
    else:
        if path.is_symlink():
            path.unlink()  # it was a file then: the link made since goes
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as handle:
            handle.write(data)
        current = path.stat().st_mode
        # executable where readable, as git checks a file out
        executable = current | ((current & 0o444) >> 2) if mode == EXECUTABLE else current & ~0o111
        if executable != current:
            os.chmod(path, executable & 0o7777)
    contents.store.append(RestoredRecord(step.file, state_hash(path)))
    return Restored(step.file, data is None)
