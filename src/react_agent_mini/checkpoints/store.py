"""The checkpoint store beside a session's transcript: `<session-id>.checkpoints/` next to `<session-id>.jsonl`.

    index.jsonl     one record a line, appended (never rewritten), read back in order:
                    turn      a turn's first change: its id and the ids of the turns before it in the history
                    change    a file's state before a turn first changed it (a blob of ours, a git blob, or absent)
                    after     a file's hash after the agent changed it (the latest one counts)
                    restored  a file's hash after a rewind put it back
                    uncovered a Bash command whose changes could not be seen (no git repository)
    blobs/ab/cdef…  file contents, named by their hash (`content.py`), written before the record naming them
    git-index       the private git index snapshots go through (`git.py`)

One process writes a session's store: the one holding the session's lock (`session_lock.py`), as for the
transcript. A line cut by a crash is skipped when read.
"""

from __future__ import annotations

import contextlib
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


Record: TypeAlias = TurnRecord | ChangeRecord | AfterRecord | RestoredRecord | UncoveredRecord
RecordType: TypeAlias = Literal["turn", "change", "after", "restored", "uncovered"]
_decoder = msgspec.json.Decoder(Record)
_encoder = msgspec.json.Encoder()


class CheckpointStore:
    """One session's checkpoints; the directory is made on the first write."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._records: list[Record] | None = None
        self.marked: set[str] = set()
        """Turns that have a turn record."""
        self.changed: set[tuple[str, str]] = set()
        """(turn, file) pairs that have a change record."""

    @property
    def index(self) -> Path:
        return self.directory / "index.jsonl"

    @property
    def records(self) -> list[Record]:
        """Every record, in the order written."""
        return self._loaded()

    def _loaded(self) -> list[Record]:
        if self._records is None:
            self._records = []
            for record in _load(self.index):
                self._note(record)
        return self._records

    def append(self, record: Record) -> None:
        self._loaded()  # what is on disk comes first
        self._note(record)
        self.directory.mkdir(parents=True, exist_ok=True)
        line = _encoder.encode(record) + b"\n"
        fd = os.open(self.index, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)

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
            temporary.write_bytes(data)
            os.replace(temporary, path)
        return blob_id

    def blob(self, blob_id: str) -> bytes:
        return self._blob_path(blob_id).read_bytes()

    def _blob_path(self, blob_id: str) -> Path:
        return self.directory / "blobs" / blob_id[:2] / blob_id[2:]

    def exists(self) -> bool:
        return self.index.exists()


def _load(path: Path) -> list[Record]:
    records: list[Record] = []
    with contextlib.suppress(FileNotFoundError), path.open("rb") as handle:
        for line in handle:
            try:
                records.append(_decoder.decode(line))
            except msgspec.DecodeError:
                continue  # a line cut by a crash
    return records


def store_dir(transcript_path: Path) -> Path:
    """Where the checkpoints of the session whose transcript is `transcript_path` live."""
    return transcript_path.with_suffix(".checkpoints")
