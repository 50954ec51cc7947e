"""What the two ways of running a Bash command share (a call that waits for it, `bash`; one that runs in the
background, `bash_background`): the bash program, the bounded capture of an output stream, signal names, and the
grace between SIGTERM and SIGKILL.
"""

from __future__ import annotations

import codecs
import os
import shutil
import signal

from ...shell_result import StreamCut

OUTPUT_LIMIT = 30_000
"""Characters kept per stream (stdout and stderr each): half from the head, half from the tail."""
KILL_GRACE_S = 1.0
"""Time between SIGTERM and SIGKILL for the process group."""


def bash_path() -> str:
    # /bin/bash is the contract; the fallback only serves systems without it (e.g. NixOS).
    if os.path.exists("/bin/bash"):
        return "/bin/bash"
    return shutil.which("bash") or "/bin/bash"


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class OutputCapture:
    """One stream's text: the first half of the limit, plus a rolling tail, plus a count of the rest."""

    def __init__(self, limit: int = OUTPUT_LIMIT) -> None:
        self._head_room = limit // 2
        self._tail_room = limit - self._head_room
        self._head: list[str] = []
        self._head_len = 0
        self._tail: list[str] = []
        self._tail_len = 0
        self.total = 0
        self.lines = 0
        """Line breaks seen, so the marker can say how many lines it stands for."""
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def take(self, whole_lines: bool = False) -> str:
        """`text()`, and start afresh (a character split across reads stays whole). `whole_lines`: keep what follows
        the last line break for the next take."""
        text = self.text()
        rest = ""
        if whole_lines:
            cut = text.rfind("\n") + 1
            text, rest = text[:cut], text[cut:]
        self._head, self._tail, self._head_len, self._tail_len = [], [], 0, 0
        self.total = self.lines = 0
        self._add(rest)
        return text

    def feed(self, data: bytes) -> None:
        # An incremental decoder: a multi-byte character split across two reads is not mangled.
        self._add(self._decoder.decode(data))

    def finish(self) -> None:
        self._add(self._decoder.decode(b"", final=True))

    def _add(self, text: str) -> None:
        if not text:
            return
        self.total += len(text)
        self.lines += text.count("\n")
        if self._head_len < self._head_room:
            part = text[: self._head_room - self._head_len]
            self._head.append(part)
            self._head_len += len(part)
            text = text[len(part) :]
        if text:
            self._tail.append(text)
            self._tail_len += len(text)
            # Trim only when twice over, so trimming costs O(1) amortised per character.
            if self._tail_len > 2 * self._tail_room:
                kept = "".join(self._tail)[-self._tail_room :]
                self._tail = [kept]
                self._tail_len = len(kept)

    def text(self) -> str:
        """What was kept: the whole stream, or its head and tail around the mark for what was left out."""
        head = "".join(self._head)
        cut = self.cut()
        if cut is None:
            return head + "".join(self._tail)
        return head + cut.mark + "".join(self._tail)[-self._tail_room :]

    def cut(self) -> StreamCut | None:
        """What the capture left out of the middle (None: nothing)."""
        if self.total <= self._head_room + self._tail_room:
            return None
        head = "".join(self._head)
        tail = "".join(self._tail)[-self._tail_room :]
        return StreamCut(self.total - len(head) - len(tail), self.lines - head.count("\n") - tail.count("\n"))
