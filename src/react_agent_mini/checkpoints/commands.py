"""Checkpoints of Bash commands in a git repository: the snapshot before, what differs after, and settling a
command ram did not see end.

Before a command that is not read-only runs, the workspace is snapshotted (`git.py`) and a `command` record naming
that snapshot is written — before the command starts. When it ends, the workspace is snapshotted again, and every
path that differs gets a `change` record (what it held before, from the first snapshot) unless the turn already
has one, and an `after` record (what the command left); then an `ended` record.

If ram was killed while the command ran (kill -9, a crash, the OOM killer), the `ended` record is missing. The
next process to hold the session settles it before anything else (`settle`): the first change checkpoints see in
a continued session, `ram rewind` and `/rewind`. What differs between the snapshot and the workspace then is taken
as the command's change, so it is rewound like any other, and the conversation is never rewound past code that was
not. (A change someone made between the kill and the settling counts as the command's too: nothing tells them
apart.) A git that a killed process left holding the private index (`git-index.lock`) is cleared then too: the
session's lock says no process of ours is using it.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

import msgspec

from .content import state_hash
from .git import ZERO, GitFailed, GitSnapshots
from .store import (
    Absent,
    AfterRecord,
    Before,
    ChangeRecord,
    CheckpointStore,
    CommandRecord,
    EndedRecord,
    GitBlob,
    NotKept,
    UncoveredRecord,
)

TRACKED_MODES = frozenset({0o100644, 0o100755, 0o120000})
"""Regular files, executables and links; anything else a tree holds (a submodule's gitlink) is not rewound."""


class Running(msgspec.Struct):
    """A command that has started, and the snapshot taken before it."""

    store: CheckpointStore
    git: GitSnapshots
    record: CommandRecord


async def start(store: CheckpointStore, git: GitSnapshots, turn: str, command: str) -> Running | None:
    """Snapshot the workspace and record it before `command` runs; None when there is nothing to compare with
    afterwards (no git repository: the command is recorded as not covered). `NotKept` when the snapshot or its
    record cannot be made."""
    root = await git.root()
    if root is None:
        store.append(UncoveredRecord(turn, command))
        return None
    try:
        tree = await git.snapshot()
    except (GitFailed, OSError) as exc:
        store.append(UncoveredRecord(turn, f"{command}  (git snapshot failed: {exc})"))
        what = f"rewind will not cover what this command changes: the snapshot before it failed ({exc})"
        raise NotKept(what) from None
    record = CommandRecord(f"{os.getpid()}-{os.urandom(6).hex()}", turn, command, tree, str(git.workspace), str(root))
    store.append(record)
    return Running(store, git, record)


async def finish(running: Running) -> None:
    """Record what the command changed."""
    await _record_changes(running.store, running.git, running.record, "")


async def settle(store: CheckpointStore, skip: Collection[str] = ()) -> None:
    """Record the changes of every command that started and never ended (ram was killed while it ran), but those
    in `skip` (running in this process)."""
    (store.directory / "git-index.lock").unlink(missing_ok=True)  # left by a git killed with us, if any
    ended = {r.id for r in store.records if isinstance(r, EndedRecord)}
    pending = [r for r in store.records if isinstance(r, CommandRecord) and r.id not in ended and r.id not in skip]
    for record in pending:
        git = GitSnapshots(Path(record.workspace), store.directory / "git-index")
        try:
            await _record_changes(store, git, record, "ram was stopped while it ran; ")
        except NotKept:
            continue  # said as not covered in the store, when the store takes it


async def _record_changes(store: CheckpointStore, git: GitSnapshots, record: CommandRecord, why: str) -> None:
    try:
        after = await git.snapshot()
        changes = await git.changes(record.tree, after)
    except (GitFailed, OSError) as exc:
        store.append(UncoveredRecord(record.turn, f"{record.command}  ({why}the git snapshot after it failed: {exc})"))
        store.append(EndedRecord(record.id))
        what = f"rewind will not cover what this command changed: the snapshot after it failed ({exc})"
        raise NotKept(what) from None
    root = Path(record.root)
    for change in changes:
        if change.old_mode and change.old_mode not in TRACKED_MODES:
            continue  # a submodule
        file = root / change.rel
        if (record.turn, str(file)) not in store.changed:
            before: Before = Absent()
            if change.old_id != ZERO:
                before = GitBlob(change.old_id, change.old_mode, record.root, change.rel)
            store.append(ChangeRecord(record.turn, str(file), before))
        store.append(AfterRecord(record.turn, str(file), state_hash(file)))
    store.append(EndedRecord(record.id))
