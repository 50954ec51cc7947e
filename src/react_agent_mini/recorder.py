"""Sessions written as they happen: the transcript a session appends to, and how a session starts one or
continues (or forks) a saved one.

`TranscriptRecorder` is told every message as it joins the history and writes it at once; a disk problem costs
one warning, never the session. A new session's file is created with its first message (an unused session leaves
no file). Continuing a session takes its lock first (one writer per session), mends a record cut mid-write, and
appends the repair that makes the loaded history valid.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from . import __version__, session_lock, transcript
from .call_record import call_fields
from .events import AssistantTurn
from .messages import Message, Usage
from .providers.base import ModelProvider
from .session import Session
from .terminal_text import visible


def resume(
    session: Session, recorder: TranscriptRecorder, path: Path, lock: session_lock.SessionLock | None = None
) -> list[str]:
    """Make `session` continue the transcript at `path`; warnings to show. The session is locked (and a record cut
    mid-write mended) before the file is read, so nobody appends to it between our reading and our writing;
    `SessionInUse` when another process is writing it."""
    recorder.open(lambda: transcript.Transcript.reopen(path, lock))
    try:
        loaded = transcript.load(path)
    except BaseException:
        recorder.close()  # never append to a transcript whose history was not loaded
        raise
    torn = recorder.transcript.torn_tail if recorder.transcript is not None else None
    session.session_id = loaded.session_id
    session.restore(loaded.messages)
    recorder.write(loaded.repaired)
    warnings = []
    if torn is not None and not torn.kept:
        warnings.append(
            f"{path}: its last record was cut off mid-write (disk full, or the process died?); "
            f"removed those {torn.size} bytes"
        )
    if loaded.skipped_lines:
        warnings.append(f"{path}: {loaded.skipped_lines} unreadable line(s) skipped (cut by a crash?)")
    if loaded.answered_in_place:
        warnings.append(
            f"{path}: {loaded.answered_in_place} tool call(s) had no result after them (was the session written "
            "by two processes at once?); they are marked interrupted"
        )
    return warnings


def start_new(session: Session, recorder: TranscriptRecorder, provider: ModelProvider) -> None:
    """Record `session` in a new transcript, created with its first message (an unused session leaves no file)."""
    cwd = session.context.cwd
    meta = {"cwd": str(cwd), "model": provider.model, "provider": provider.name, "version": __version__}
    directory = transcript.sessions_dir(cwd)
    session_id = session.session_id
    recorder.open(lambda: transcript.Transcript.create(directory, session_id, meta), lazy=True)


def fork(session: Session, recorder: TranscriptRecorder, path: Path, provider: ModelProvider) -> list[str]:
    """Continue the saved session at `path` as a new session (`--fork-session`): its history is copied into a new
    transcript under `session.session_id`; the original is left as it was. Warnings to show."""
    loaded = transcript.load(path)
    session.restore(loaded.messages)
    start_new(session, recorder, provider)
    recorder.write(loaded.messages)
    if loaded.skipped_lines:
        return [f"{path}: {loaded.skipped_lines} unreadable line(s) skipped (cut by a crash?)"]
    return []


class TranscriptRecorder:
    """Writes each message to the session's transcript; a disk problem costs one warning, never the session."""

    def __init__(self, warnings: list[str]) -> None:
        self.transcript: transcript.Transcript | None = None
        self._warnings = warnings
        self._opener: Callable[[], transcript.Transcript] | None = None
        self.saved = False
        """True once the current conversation is on disk (so `ram --continue` can find it)."""
        self._warned = False

    def open(self, opener: Callable[[], transcript.Transcript], *, lazy: bool = False) -> None:
        """Start writing the transcript `opener` opens; `lazy`: open it only when the first message comes."""
        self.transcript = None
        self.saved = False
        self._opener = opener if lazy else None
        if lazy:
            return
        try:
            self.transcript = opener()
            self.saved = True
        except OSError as exc:
            self._warned = True
            self._warnings.append(f"the session will not be saved: {exc}")

    def _warn(self, text: str) -> None:
        """One warning per process: a broken data directory stays broken, saying so once is enough."""
        if not self._warned:
            self._warned = True
            print(f"warning: {visible(text)}", file=sys.stderr)

    def _open_now(self) -> None:
        opener, self._opener = self._opener, None
        if opener is None:
            return
        try:
            self.transcript = opener()
        except (OSError, session_lock.SessionInUse) as exc:  # in use: a new session's id is already taken
            self._warn(f"the session will not be saved: {exc}")

    def append(self, message: Message) -> None:
        self.write([message])

    def write(self, messages: Sequence[Message]) -> None:
        if messages and self.transcript is None:
            self._open_now()
        if self.transcript is None:
            return
        try:
            for message in messages:
                self.transcript.append(message)
            self.saved = self.saved or bool(messages)
        except OSError as exc:
            self._stop(exc)

    def rewound(self, keep: int, next_id: str) -> None:
        """The conversation was rewound: record that the history now ends after its first `keep` messages."""
        if self.transcript is None:
            self._open_now()
        if self.transcript is None:
            return
        try:
            self.transcript.rewound(keep, next_id)
        except OSError as exc:
            self._stop(exc)

    def rewrite(self, messages: Sequence[Message]) -> None:
        """A summary replaced the history: record the boundary and the new history."""
        if self.transcript is None:
            self._open_now()
        if self.transcript is None:
            return
        try:
            self.transcript.compacted(messages)
        except OSError as exc:
            self._stop(exc)

    def called(self, usage: Usage, model: str, turn: AssistantTurn | None = None, kind: str | None = None) -> None:
        """A model call ended: record what it cost (and, for the loop's calls, what its request carried)."""
        if self.transcript is None:
            self._open_now()
        if self.transcript is None:
            return
        try:
            self.transcript.called(call_fields(usage, model, turn, kind))
        except OSError as exc:
            self._stop(exc)

    def _stop(self, exc: OSError) -> None:
        """A write failed (the disk is full): say so once and write no more. The transcript ends with its last
        whole record, and closing it lets another process continue the session from there."""
        self._warn(f"the session can no longer be saved: {exc}")
        if self.transcript is not None:
            with contextlib.suppress(OSError):
                self.transcript.close()
            self.transcript = None

    def close(self) -> None:
        self._opener = None
        if self.transcript is not None:
            self.transcript.close()
            self.transcript = None
