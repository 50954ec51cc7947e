"""Sessions on disk: one JSONL transcript per session, appended and flushed as each message is produced.

Layout: `$XDG_DATA_HOME/react-agent-mini/sessions/<workspace-slug>/<session-id>.jsonl` (default
`~/.local/share/...`), grouped by working directory so `--continue` finds this directory's newest session. Records,
one JSON object per line:
- `{"type": "meta", ...}` first: session id, cwd, model, provider, version, start time;
- `{"type": "message", "message": {...}, "ts": ...}` for every message, as it is appended to the history;
- `{"type": "compact", "messages": [...], "ts": ...}` when a summary rewrote the history: it replaces everything
  before it;
- `{"type": "rewind", "keep": N, "next": "<id>", "ts": ...}` when the conversation was rewound (`ram rewind`,
  `/rewind`): the history is cut before the message whose id is `next` (its first N messages). The file stays
  append-only: what was cut is still in it, before the record.
- `{"type": "call", "kind": ..., "model": ..., "usage": {...}, ..., "ts": ...}` as each model call ends: what it
  cost and what its request carried (call_record.py); loading skips it.
Each record is one write of one line. One process at a time appends to a session: it holds the session's lock
(`session_lock.py`), taken before the transcript is read for resuming or created. A write the disk refused half-way
(ENOSPC, EFBIG) is taken back off, and a last line cut some other way (the process died mid-write) is removed
before anything is appended, so a new record never joins a torn one.

Loading replays the records in order and never moves one: an unreadable line is skipped, and a tool call whose
result is not in the message right after it gets an "interrupted" result there (results nothing waits for are
dropped), so the resumed history is always valid to send.

A tool result is recorded with its data (`details`, `result_details.py`) and its text; a Bash result's text only when
it is not what its data renders (loading renders it again, byte for byte). A result recorded before the tools gave
data gets the data its text shows, once, as `load` reads it (`recorded_results.py`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from .messages import (
    Message,
    ToolResultBlock,
    ToolUseBlock,
    message_from_dict,
    message_to_dict,
    unanswered_tool_uses,
)
from .session_lock import SessionLock

INTERRUPTED_RESULT = "Interrupted: the session ended before this tool call finished. It may or may not have run."


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where react-agent-mini keeps its data (`$XDG_DATA_HOME/react-agent-mini`)."""
    env = os.environ if env is None else env
    base = env.get("XDG_DATA_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "react-agent-mini"


def workspace_slug(cwd: Path) -> str:
    """A directory name for a workspace: its path with separators made safe (`/home/a/proj` → `-home-a-proj`)."""
    return re.sub(r"[^A-Za-z0-9._-]", "-", str(cwd.resolve()))[-200:]


def sessions_dir(cwd: Path, env: Mapping[str, str] | None = None) -> Path:
    """The transcripts of one workspace."""
    return data_dir(env) / "sessions" / workspace_slug(cwd)


class SessionInfo(msgspec.Struct, frozen=True):
    """One saved session, for listing and picking."""

    session_id: str
    path: Path
    modified: float
    """Last write (seconds since the epoch)."""
    preview: str
    """The first thing the user typed, on one line."""
    messages: int
    """The messages the conversation holds once resumed (what `load` gives: after compaction, rewinds and repairs),
    so the listing and the resumed session say the same number."""


class TornTail(msgspec.Struct, frozen=True):
    """What `mend_tail` found after a transcript's last line end."""

    size: int
    """Bytes after the last line end."""
    kept: bool
    """True: they were a whole record and got their line end; False: a record cut mid-write, removed."""


class Transcript:
    """An open transcript whose session this process holds; `append` writes one record per message."""

    def __init__(self, path: Path, fd: int, lock: SessionLock | None = None) -> None:
        self.path = path
        self._fd = fd
        self.lock = lock
        """The session's lock, released on `close`."""
        self.torn_tail: TornTail | None = None
        """What `reopen` found cut off at the end of the file (and mended), if anything."""

    @classmethod
    def create(cls, directory: Path, session_id: str, meta: Mapping[str, Any]) -> Transcript:
        """Start the transcript of a new session (locked first: `ram -c` elsewhere may pick it at once)."""
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{session_id}.jsonl"
        transcript = cls._open(path, SessionLock.acquire(path))
        try:
            transcript._write({"type": "meta", "session_id": session_id, "started": time.time(), **meta})
        except BaseException:
            transcript.close()
            raise
        return transcript

    @classmethod
    def reopen(cls, path: Path, lock: SessionLock | None = None) -> Transcript:
        """Continue appending to a saved transcript: lock its session (`SessionInUse` when another process is
        writing it) unless `lock` holds it already, and mend a last record cut mid-write. Read the transcript only
        after this, so what is loaded is all there is."""
        lock = lock if lock is not None else SessionLock.acquire(path)
        try:
            torn = mend_tail(path)
        except BaseException:
            lock.release()
            raise
        transcript = cls._open(path, lock)
        transcript.torn_tail = torn
        return transcript

    @classmethod
    def _open(cls, path: Path, lock: SessionLock) -> Transcript:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except BaseException:
            lock.release()
            raise
        return cls(path, fd, lock)

    def append(self, message: Message) -> None:
        self._write({"type": "message", "message": message_to_dict(message, details=True), "ts": time.time()})

    def rewound(self, keep: int, next_id: str) -> None:
        """Record that the history was cut to its first `keep` messages (`next_id`: the first one dropped)."""
        self._write({"type": "rewind", "keep": keep, "next": next_id, "ts": time.time()})

    def called(self, fields: Mapping[str, Any]) -> None:
        """Record a model call (`call_record.call_fields`)."""
        self._write({"type": "call", **fields, "ts": time.time()})

    def compacted(self, messages: Sequence[Message]) -> None:
        """Record that the history was rewritten (an LLM summary): it replaces everything before."""
        record = [message_to_dict(m, details=True) for m in messages]
        self._write({"type": "compact", "messages": record, "ts": time.time()})

    def _write(self, record: Mapping[str, Any]) -> None:
        # One line per record, straight to the file (no buffer that could hold half a record back); a crash
        # loses at most the line being written.
        data = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        start = os.fstat(self._fd).st_size
        written = 0
        try:
            while written < len(data):
                written += os.write(self._fd, memoryview(data)[written:])
        except OSError:
            # The disk refused the rest (ENOSPC, EFBIG): take back the part that was written, so the file still
            # ends with a whole record. If even that fails, the next `reopen` removes it.
            if written:
                with contextlib.suppress(OSError):
                    os.ftruncate(self._fd, start)
            raise

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if self.lock is not None:
            self.lock.release()


def mend_tail(path: Path) -> TornTail | None:
    """Make the transcript at `path` end with a whole record before anything is appended to it: a last line cut
    mid-record (the disk filled up, the process died mid-write) is removed, and a whole record that only lacks
    its line end gets one. None when the file already ends with a line end (or is empty)."""
    with path.open("r+b") as handle:
        end = handle.seek(0, os.SEEK_END)
        if end == 0:
            return None
        handle.seek(end - 1)
        if handle.read(1) == b"\n":
            return None
        start = _last_line_start(handle, end)
        handle.seek(start)
        tail = handle.read()
        if _is_record(tail):
            handle.write(b"\n")
            return TornTail(len(tail), kept=True)
        handle.truncate(start)
        return TornTail(len(tail), kept=False)


def _last_line_start(handle: BinaryIO, end: int, chunk: int = 1 << 16) -> int:
    """The offset just after the last line end before `end` (0 when there is none)."""
    position = end
    while position > 0:
        size = min(chunk, position)
        position -= size
        handle.seek(position)
        found = handle.read(size).rfind(b"\n")
        if found >= 0:
            return position + found + 1
    return 0


def _is_record(data: bytes) -> bool:
    try:
        record = json.loads(data)
    except ValueError:
        return False
    return isinstance(record, dict) and "type" in record


class LoadedSession(msgspec.Struct):
    """A transcript read back."""

    session_id: str
    messages: list[Message]
    meta: dict[str, Any]
    repaired: list[Message]
    """Messages added at the end so the history is valid (answers to interrupted tool calls); append them."""
    skipped_lines: int = 0
    """Records that could not be read (a line cut by a crash)."""
    answered_in_place: int = 0
    """Tool calls further up that had no result right after them (a damaged or interleaved file) and got an
    "interrupted" one there; the file is left as it is, and every load does the same."""


def load(path: Path) -> LoadedSession:
    """Replay a transcript, in order, into a valid history (old results given the data their text shows)."""
    from .recorded_results import with_recorded_data

    loaded = _load(path)[0]
    loaded.messages = with_recorded_data(loaded.messages)
    return loaded


def _load(path: Path) -> tuple[LoadedSession, str]:
    """`load`, and the first thing the user typed (on one line, for listings; "" when nothing)."""
    meta: dict[str, Any] = {}
    messages: list[Message] = []
    skipped = 0
    first = ""
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                record = json.loads(line)
                kind = record.get("type")
                if kind == "meta":
                    meta = dict(record)
                elif kind == "message":
                    messages.append(message_from_dict(record["message"]))
                    first = first or _preview(messages[-1])
                elif kind == "compact":
                    messages = [message_from_dict(m) for m in record["messages"]]
                elif kind == "rewind":
                    messages = _rewound(messages, record)
            except (ValueError, KeyError, TypeError, AttributeError):
                skipped += 1
    history, in_place, dangling = answer_in_place(messages)
    repaired = [_interrupted(dangling)] if dangling else []
    session_id = str(meta.get("session_id") or path.stem)
    return LoadedSession(session_id, [*history, *repaired], meta, repaired, skipped, in_place), first


def _rewound(messages: list[Message], record: Mapping[str, Any]) -> list[Message]:
    """The history cut as a rewind record says: before the message `next` names (its position, `keep`, is only
    the fallback for a message without an id). ValueError when the record does not fit this history."""
    keep, next_id = record["keep"], record.get("next") or ""
    if next_id:
        at = [i for i, m in enumerate(messages) if m.id == next_id]
        if not at:
            raise ValueError("rewind record names a message that is not in the history")
        return messages[: at[-1]]
    if not isinstance(keep, int) or not 0 <= keep <= len(messages):
        raise ValueError("rewind record out of range")
    return messages[:keep]


def repair(messages: Sequence[Message]) -> list[Message]:
    """The messages to append so that every tool call has a result (one user message answering them all)."""
    dangling = unanswered_tool_uses(messages)
    return [_interrupted(dangling)] if dangling else []


def answer_in_place(messages: Sequence[Message]) -> tuple[list[Message], int, list[ToolUseBlock]]:
    """`messages` with every tool call answered by the message right after it, nothing moved: a call that
    message does not answer gets an "interrupted" result there, and results no call is waiting for are dropped.
    Returns the history, how many calls were answered so, and the calls of a last assistant message that nothing
    follows yet (the caller decides whether to answer them). A transcript one process wrote needs none of this;
    it keeps a damaged one (a record lost mid-file, two processes' turns interleaved) sendable."""
    out: list[Message] = []
    waiting: list[ToolUseBlock] = []
    answered = 0
    for message in messages:
        if message.role == "user" and message.tool_results:
            ids = {u.id for u in waiting}
            found: dict[str, ToolResultBlock] = {}
            for result in message.tool_results:
                if result.tool_use_id in ids:
                    found.setdefault(result.tool_use_id, result)
            others = tuple(b for b in message.content if not isinstance(b, ToolResultBlock))
            if found:
                content = (*(found.get(u.id) or _interrupted_result(u) for u in waiting), *others)
                answered += len(waiting) - len(found)
                if content != message.content:  # usually equal: the message stays the very same object
                    message = msgspec.structs.replace(message, content=content)
                out.append(message)
                waiting = []
                continue
            if not others:
                continue  # results for calls nobody is waiting for, and nothing else
            message = msgspec.structs.replace(message, content=others)
        if waiting:
            out.append(_interrupted(waiting))
            answered += len(waiting)
        out.append(message)
        waiting = message.tool_uses if message.role == "assistant" else []
    return out, answered, waiting


def _interrupted_result(use: ToolUseBlock) -> ToolResultBlock:
    return ToolResultBlock(use.id, INTERRUPTED_RESULT, is_error=True)


def _interrupted(uses: Sequence[ToolUseBlock]) -> Message:
    return Message("user", tuple(_interrupted_result(u) for u in uses), meta=True)


def session_paths(cwd: Path, env: Mapping[str, str] | None = None) -> list[Path]:
    """This workspace's transcripts, newest first, without reading them (`--continue` and `find_session` need
    no more; `list_sessions` reads each one)."""
    directory = sessions_dir(cwd, env)
    if not directory.is_dir():
        return []
    stamped: list[tuple[float, Path]] = []
    for path in directory.glob("*.jsonl"):
        try:
            stamped.append((path.stat().st_mtime, path))
        except OSError:
            continue
    return [path for _, path in sorted(stamped, key=lambda item: item[0], reverse=True)]


def list_sessions(cwd: Path, env: Mapping[str, str] | None = None) -> list[SessionInfo]:
    """This workspace's sessions, newest first, each read for its preview and message count."""
    found = [_info(p) for p in session_paths(cwd, env)]
    return sorted((i for i in found if i is not None), key=lambda i: i.modified, reverse=True)


def _info(path: Path) -> SessionInfo | None:
    # the whole replay, not a count of message records: compaction, rewinds and repairs change what a resumed
    # session holds, and the listing says that number
    try:
        modified = path.stat().st_mtime
        loaded, preview = _load(path)
    except OSError:
        return None
    return SessionInfo(path.stem, path, modified, preview, len(loaded.messages))


def _preview(message: Message) -> str:
    if message.role != "user" or message.meta:
        return ""
    return " ".join(message.text.split())[:80]


def find_session(cwd: Path, session_id: str, env: Mapping[str, str] | None = None) -> Path | None:
    """A session of this workspace by id or unique id prefix."""
    matches = [path for path in session_paths(cwd, env) if path.stem.startswith(session_id)]
    return matches[0] if len(matches) == 1 else None


def write_all(transcript: Transcript, messages: Iterable[Message]) -> None:
    for message in messages:
        transcript.append(message)
