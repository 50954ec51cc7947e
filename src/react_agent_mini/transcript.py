"""Sessions on disk: one JSONL transcript per session, appended and flushed as each message is produced.

Layout: `$XDG_DATA_HOME/react-agent-mini/sessions/<workspace-slug>/<session-id>.jsonl` (default
`~/.local/share/...`), grouped by working directory so `--continue` finds this directory's newest session. Records,
one JSON object per line:
- `{"type": "meta", ...}` first: session id, cwd, model, provider, version, start time;
- `{"type": "message", "message": {...}, "ts": ...}` for every message, as it is appended to the history;
- `{"type": "compact", "messages": [...], "ts": ...}` when a summary rewrote the history: it replaces everything
  before it.
Loading replays the records. A line cut by a crash is skipped; a tool call left without its result (the process
died mid-turn) gets an "interrupted" result, so the resumed history is always valid to send.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import msgspec

from .messages import Message, ToolResultBlock, message_from_dict, message_to_dict, unanswered_tool_uses

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


class Transcript:
    """An open transcript; `append` writes and flushes one record per message."""

    def __init__(self, path: Path, handle: IO[str]) -> None:
        self.path = path
        self._handle = handle

    @classmethod
    def create(cls, directory: Path, session_id: str, meta: Mapping[str, Any]) -> Transcript:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{session_id}.jsonl"
        transcript = cls(path, path.open("a", encoding="utf-8"))
        transcript._write({"type": "meta", "session_id": session_id, "started": time.time(), **meta})
        return transcript

    @classmethod
    def reopen(cls, path: Path) -> Transcript:
        """Continue appending to an existing transcript (after a repair record if one was needed)."""
        return cls(path, path.open("a", encoding="utf-8"))

    def append(self, message: Message) -> None:
        self._write({"type": "message", "message": message_to_dict(message), "ts": time.time()})

    def compacted(self, messages: Sequence[Message]) -> None:
        """Record that the history was rewritten (an LLM summary): it replaces everything before."""
        self._write({"type": "compact", "messages": [message_to_dict(m) for m in messages], "ts": time.time()})

    def _write(self, record: Mapping[str, Any]) -> None:
        # one line per record, flushed at once: a crash loses at most the line being written
        self._handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()


class LoadedSession(msgspec.Struct):
    """A transcript read back."""

    session_id: str
    messages: list[Message]
    meta: dict[str, Any]
    repaired: list[Message]
    """Messages added on load so the history is valid (answers to interrupted tool calls); append them."""
    skipped_lines: int = 0
    """Records that could not be read (a line cut by a crash)."""


def load(path: Path) -> LoadedSession:
    """Replay a transcript into a valid history."""
    meta: dict[str, Any] = {}
    messages: list[Message] = []
    skipped = 0
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                record = json.loads(line)
                kind = record.get("type")
                if kind == "meta":
                    meta = dict(record)
                elif kind == "message":
                    messages.append(message_from_dict(record["message"]))
                elif kind == "compact":
                    messages = [message_from_dict(m) for m in record["messages"]]
            except (ValueError, KeyError, TypeError, AttributeError):
                skipped += 1
    repaired = repair(messages)
    session_id = str(meta.get("session_id") or path.stem)
    return LoadedSession(session_id, [*messages, *repaired], meta, repaired, skipped)


def repair(messages: Sequence[Message]) -> list[Message]:
    """The messages to append so that every tool call has a result (one user message answering them all)."""
    dangling = unanswered_tool_uses(messages)
    if not dangling:
        return []
    results = [ToolResultBlock(u.id, INTERRUPTED_RESULT, is_error=True) for u in dangling]
    return [Message("user", tuple(results), meta=True)]


def list_sessions(cwd: Path, env: Mapping[str, str] | None = None) -> list[SessionInfo]:
    """This workspace's sessions, newest first."""
    directory = sessions_dir(cwd, env)
    if not directory.is_dir():
        return []
    found = [_info(p) for p in directory.glob("*.jsonl")]
    return sorted((i for i in found if i is not None), key=lambda i: i.modified, reverse=True)


def _info(path: Path) -> SessionInfo | None:
    try:
        modified = path.stat().st_mtime
        preview, count = "", 0
        with path.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if '"type": "message"' not in line:
                    continue
                count += 1
                if not preview:
                    preview = _preview(line)
    except OSError:
        return None
    return SessionInfo(path.stem, path, modified, preview, count)


def _preview(line: str) -> str:
    try:
        message = message_from_dict(json.loads(line)["message"])
    except (ValueError, KeyError, TypeError):
        return ""
    if message.role != "user" or message.meta:
        return ""
    return " ".join(message.text.split())[:80]


def find_session(cwd: Path, session_id: str, env: Mapping[str, str] | None = None) -> Path | None:
    """A session of this workspace by id or unique id prefix."""
    matches = [i.path for i in list_sessions(cwd, env) if i.session_id.startswith(session_id)]
    return matches[0] if len(matches) == 1 else None


def write_all(transcript: Transcript, messages: Iterable[Message]) -> None:
    for message in messages:
        transcript.append(message)
