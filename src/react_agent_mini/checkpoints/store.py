"""The checkpoint store beside a session's transcript: `<session-id>.checkpoints/` next to `<session-id>.jsonl`.

    index.jsonl     one record a line, appended (never rewritten), read back in order:
                    turn      a turn's first change: its id and the ids of the turns before it in the history
                    change    a file's state before a turn first changed it (a blob of ours, a git blob, or absent)
                    after     a file's hash after the agent changed it (the latest one counts)
                    restored  a file's hash after a rewind put it back
                    uncovered a Bash command whose changes could not be seen (no git repository)
                    command   a Bash command about to run, with the snapshot taken just before it (written before
                              it starts: if ram is killed while it runs, what differs from that snapshot is still
                              found, `commands.settle`)
                    ended     that command's changes are all recorded
    blobs/ab/cdef…  file contents, named by their hash (`content.py`), written before the record naming them
    git-index       the private git index snapshots go through (`git.py`)

One process writes a session's store: the one holding the session's lock (`session_lock.py`), as for the
transcript. A record is one write of one line, there once the write returns (in the kernel's hands: a process
killed with kill -9 has written it; a power cut may lose the last ones). A write the disk refused half-way (ENOSPC,
EFBIG) is taken back off; a line cut some other way is skipped when read, and the next record starts a line of its
own.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path
from typing import Literal, TypeAlias

import msgspec

from .content import content_hash


class Blob(msgspec.Struct, frozen=True, tag="blob"):
    """Kept in this store's `blobs/`."""

    id: str
    mode: int


class GitBlob(msgspec.Struct, frozen=True, tag="git"):
    """Kept in a git repository's object store (a Bash snapshot)."""

    id: str
    mode: int
    repo: str
    """The repository's work tree root."""
    rel: str
    """The path inside it (git applies its filters for that path when the blob is read back)."""


class Absent(msgspec.Struct, frozen=True, tag="absent"):
    """Nothing was there: going back removes the file."""


class Untracked(msgspec.Struct, frozen=True, tag="untracked"):
    """Could not be kept (too large, not a regular file): going back cannot restore it."""

    why: str


Before: TypeAlias = Blob | GitBlob | Absent | Untracked


class TurnRecord(msgspec.Struct, frozen=True, tag="turn"):
    turn: str
    """The id of the user message that started the turn."""
    history: list[str]
    """The ids of the turns of the conversation at that time, this one last."""
    prompt: str = ""


class ChangeRecord(msgspec.Struct, frozen=True, tag="change"):
    turn: str
    file: str
    """Absolute path."""
    before: Before


class AfterRecord(msgspec.Struct, frozen=True, tag="after"):
    turn: str
    file: str
    hash: str | None
    """The file's hash after the change (None: the change removed it)."""


class RestoredRecord(msgspec.Struct, frozen=True, tag="restored"):
    file: str
    hash: str | None


class UncoveredRecord(msgspec.Struct, frozen=True, tag="uncovered"):
    turn: str
    command: str


class CommandRecord(msgspec.Struct, frozen=True, tag="command"):
    """A Bash command about to run, and the snapshot of the workspace taken just before it."""

    id: str
    """Unique in the store: the `ended` record names it."""
    turn: str
    command: str
    tree: str
    """The snapshot (a tree in the private repository, `git.py`)."""
    workspace: str
    """The folder snapshotted (the session's working directory)."""
    root: str
    """The repository's work tree root (the paths of the changes are relative to it)."""


class EndedRecord(msgspec.Struct, frozen=True, tag="ended"):
    """The command `id` names has ended and its changes are recorded (or said to be not covered)."""

    id: str


Record: TypeAlias = (
    TurnRecord | ChangeRecord | AfterRecord | RestoredRecord | UncoveredRecord | CommandRecord | EndedRecord
)
RecordType: TypeAlias = Literal["turn", "change", "after", "restored", "uncovered", "command", "ended"]
_decoder = msgspec.json.Decoder(Record)
_encoder = msgspec.json.Encoder()


class NotKept(Exception):
    """A checkpoint could not be kept (the store's folder cannot be written, the disk is full, git failed): the call
    still runs, and the message — one line for the model and for the user — says what rewind will not cover."""


class CheckpointStore:
    """One session's checkpoints; the directory is made on the first write."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._records: list[Record] | None = None
        self.marked: set[str] = set()
        """Turns that have a turn record."""
        self.changed: set[tuple[str, str]] = set()
        """(turn, file) pairs that have a change record (or whose state before could not be recorded)."""
        self._torn = False
        """The index ends with a line cut short (a crash): the next record starts on a line of its own."""

    @property
    def index(self) -> Path:
        return self.directory / "index.jsonl"

    @property
    def records(self) -> list[Record]:
        """Every record, in the order written."""
        return self._loaded()

    def _loaded(self) -> list[Record]:
        if self._records is None:
            records, self._torn = _load(self.index)
            self._records = []
            for record in records:
                self._note(record)
        return self._records

    def append(self, record: Record) -> None:
        """Write `record` (OSError when it cannot be: then it is not in `records` either)."""
        self._loaded()  # what is on disk comes first
        self.directory.mkdir(parents=True, exist_ok=True)
        line = (b"\n" if self._torn else b"") + _encoder.encode(record) + b"\n"
        fd = os.open(self.index, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            size = os.fstat(fd).st_size
            try:
                if os.write(fd, line) != len(line):  # cut short by a file size limit or a full disk
                    raise OSError(errno.EFBIG, os.strerror(errno.EFBIG))
            except OSError:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)  # no half line for the next record to join
                raise
        finally:
            os.close(fd)
        self._torn = False
        self._note(record)

    def _note(self, record: Record) -> None:
        assert self._records is not None
        self._records.append(record)
        if isinstance(record, TurnRecord):
            self.marked.add(record.turn)
        elif isinstance(record, ChangeRecord):
            self.changed.add((record.turn, record.file))

    def put_blob(self, data: bytes) -> str:
        """Keep `data`; its hash."""
        blob_id = content_hash(data)
        path = self._blob_path(blob_id)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_suffix(f".tmp{os.getpid()}")
            try:
                temporary.write_bytes(data)
                os.replace(temporary, path)
            except OSError:
                temporary.unlink(missing_ok=True)  # a full disk keeps no half blob
                raise
        return blob_id

    def blob(self, blob_id: str) -> bytes:
        return self._blob_path(blob_id).read_bytes()

    def _blob_path(self, blob_id: str) -> Path:
        return self.directory / "blobs" / blob_id[:2] / blob_id[2:]

    def exists(self) -> bool:
        return self.index.exists()


def _load(path: Path) -> tuple[list[Record], bool]:
    """The records in `path`, and whether its last line was cut short."""
    records: list[Record] = []
    torn = False
    with contextlib.suppress(FileNotFoundError), path.open("rb") as handle:
        for line in handle:
            torn = not line.endswith(b"\n")
            try:
                records.append(_decoder.decode(line))
            except msgspec.DecodeError:
                continue  # a line cut by a crash
    return records, torn


def store_dir(transcript_path: Path) -> Path:
    """Where the checkpoints of the session whose transcript is `transcript_path` live."""
    return transcript_path.with_suffix(".checkpoints")
