"""What going back to the state right after turn N means, worked out from the store and the conversation.

Turns are numbered from 1 in the current conversation. A turn's changes are undone when they came after turn N:
its own position is after N, or — for a turn no longer in the conversation (a conversation rewind dropped it) —
it branched off at or after N. For every file those turns changed, the target is what it held before the first of
them changed it. A file is in conflict — someone else changed it — when what is on disk now differs from what
the agent (or a rewind) last left there, or when between two of the undone turns it was changed by someone else;
a conflict is only overwritten when the user says so (`--force`, or yes at the REPL's question).
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import msgspec

from ..messages import Message
from .content import state_key
from .store import (
    Absent,
    AfterRecord,
    Before,
    Blob,
    ChangeRecord,
    CheckpointStore,
    GitBlob,
    RestoredRecord,
    TurnRecord,
    UncoveredRecord,
    Untracked,
)
from .tracker import is_turn_start, turn_id, typed_text


class TurnSummary(msgspec.Struct, frozen=True):
    """One turn of the conversation, for the listing."""

    number: int
    id: str
    prompt: str
    """What the user typed (for a custom command, `/review src/app.py`, not the text it expanded to)."""
    files: tuple[str, ...]
    """Files the turn changed (absolute paths)."""
    uncovered: tuple[str, ...]
    """Commands whose changes could not be seen."""


class FileStep(msgspec.Struct, frozen=True):
    """One file to put back."""

    file: str
    target: Before
    conflict: str
    """Why putting it back would overwrite someone else's change ("" when it would not)."""


class CodePlan(msgspec.Struct, frozen=True):
    turn: int
    steps: tuple[FileStep, ...]
    uncovered: tuple[str, ...]
    """Commands of the undone turns whose changes could not be seen (and so are not undone)."""
    untracked: tuple[tuple[str, str], ...]
    """Files that cannot be put back, and why."""


def summarize(history: Sequence[Message], store: CheckpointStore) -> list[TurnSummary]:
    """The turns of `history`, each with what it changed."""
    starts = [(turn_id(m, i), m) for i, m in enumerate(history) if is_turn_start(m)]
    befores: dict[tuple[str, str], str | None] = {}
    afters: dict[tuple[str, str], str | None] = {}
    uncovered: dict[str, list[str]] = {}
    for record in store.records:
        if isinstance(record, ChangeRecord):
            befores[(record.turn, record.file)] = _listed_hash(record.before)
        elif isinstance(record, AfterRecord):
            afters[(record.turn, record.file)] = record.hash
        elif isinstance(record, UncoveredRecord):
            uncovered.setdefault(record.turn, []).append(record.command)
    out = []
    for number, (turn, message) in enumerate(starts, 1):
        files = tuple(
            file
            for (t, file), before in befores.items()
            if t == turn and (t, file) in afters and afters[(t, file)] != before
        )
        prompt = " ".join(typed_text(message).split())
        out.append(TurnSummary(number, turn, prompt, files, tuple(uncovered.get(turn, ()))))
    return out


def undone_turns(store: CheckpointStore, current: Sequence[str], target: int) -> set[str]:
    """The turns (ids) whose changes came after turn `target` of the conversation whose turns are `current`."""
    undone = set()
    for record in store.records:
        if not isinstance(record, TurnRecord):
            continue
        path = record.history
        shared = 0
        while shared < min(len(path), len(current)) and path[shared] == current[shared]:
            shared += 1
        in_conversation = shared == len(path)
        if (in_conversation and shared > target) or (not in_conversation and target <= shared):
            undone.add(record.turn)
    return undone


async def plan_code(
    store: CheckpointStore,
    current: Sequence[str],
    target: int,
    hash_now: Callable[[Path], str | None],
    hash_of: Callable[[Before], Awaitable[str | None]],
) -> CodePlan:
    """What to put back for the state right after turn `target`."""
    undone = undone_turns(store, current, target)
    records = store.records
    firsts: dict[str, ChangeRecord] = {}
    chains: dict[str, list[int]] = {}
    for index, record in enumerate(records):
        if isinstance(record, ChangeRecord) and record.turn in undone:
            firsts.setdefault(record.file, record)
            chains.setdefault(record.file, []).append(index)
    steps: list[FileStep] = []
    untracked: list[tuple[str, str]] = []
    for file, first in firsts.items():
        if isinstance(first.before, Untracked):
            untracked.append((file, first.before.why))
            continue
        target_hash = await hash_of(first.before)
        now = hash_now(Path(file))
        if now == target_hash:
            continue  # already as it was
        conflict = await _conflict(records, file, chains[file], now, hash_of)
        steps.append(FileStep(file, first.before, conflict))
    commands = tuple(r.command for r in records if isinstance(r, UncoveredRecord) and r.turn in undone)
    return CodePlan(target, tuple(steps), commands, tuple(untracked))


async def _conflict(
    records: Sequence[object],
    file: str,
    changes: list[int],
    now: str | None,
    hash_of: Callable[[Before], Awaitable[str | None]],
) -> str:
    """Why the file holds someone else's change, or ""."""
    left = _last_left(records, file, len(records))
    if left is not _UNKNOWN and now != left:
        return "it was changed after the agent last changed it"
    for earlier, later in itertools.pairwise(changes):
        between = _last_left(records, file, later, since=earlier)
        record = records[later]
        assert isinstance(record, ChangeRecord)
        if between is not _UNKNOWN and between != await hash_of(record.before):
            return "it was changed by someone else between two of the turns being undone"
    return ""


_UNKNOWN = object()


def _last_left(records: Sequence[object], file: str, end: int, since: int = -1) -> object:
    """The hash the agent (or a rewind) last left in `file` before index `end` (and after `since`)."""
    for index in range(end - 1, since, -1):
        record = records[index]
        if isinstance(record, (AfterRecord, RestoredRecord)) and record.file == file:
            return record.hash
    return _UNKNOWN


def _listed_hash(before: Before) -> str | None:
    if isinstance(before, (Blob, GitBlob)):
        return state_key(before.id, before.mode)
    if isinstance(before, Absent):
        return None
    return f"untracked:{before.why}"
