"""What a shell command produced, as data: its streams, its exit, its notes, and what was cut from each stream.

The Bash tool returns one of these with its result (`ToolOutput.details`, kept on the `ToolResultBlock` and in the
transcript), and `text` renders it for the model: the one place the model-facing layout is made. The REPL (its
output tail, `/output`) and compaction (Bash's own cut marks) read the fields, never the text; the transcript keeps
the fields alone when the text is what they render (`result_details.py`).

The layout `text` makes (the Bash tool's description states it): stdout; then, after a blank line, `stderr:` and
the stderr text if there was any; `(no output)` when both were empty; then, after a blank line, the status lines
(`Exit code N`, `Killed by signal SIGxxx`, a timeout) and notes (background processes, a reset working directory);
then, after another blank line, what the sandbox has to say. A stream longer than the capture limit keeps its head
and tail around `[... N characters (M lines) omitted ...]` (`omitted_mark`).

A result recorded before results carried their data (an old session) has only its text: `recorded_cuts` reads the
marks it shows, once, when the session is loaded (`recorded_results.py`), into a `RecordedCuts`; nothing reads a
result's text for marks while a session runs.

A leaf module (msgspec only): `messages` reads it to keep results, and the tools and the front ends build on it.
"""

from __future__ import annotations

import re

import msgspec

NO_OUTPUT = "(no output)"
"""What the model reads for a command that printed nothing."""


class StreamCut(msgspec.Struct, frozen=True):
    """What a stream's capture left out of its middle."""

    chars: int
    """Characters left out."""
    lines: int
    """Line breaks among them."""

    @property
    def mark(self) -> str:
        """The line standing in for them, with the line breaks around it, as it appears in the stream's text."""
        return omitted_mark(self.chars, self.lines)


def omitted_mark(chars: int, lines: int) -> str:
    """`\\n[... N characters (M lines) omitted ...]\\n`: where a stream's middle was left out."""
    return f"\n[... {chars} characters ({lines} lines) omitted ...]\n"


class ShellResult(msgspec.Struct, frozen=True, omit_defaults=True, tag="shell", tag_field="kind"):
    """One command's outcome (recorded as `"kind": "shell"`; data recorded without a kind is this too)."""

    stdout: str = ""
    """Its standard output as kept (head, mark, tail when it was cut)."""
    stderr: str = ""
    """Its standard error as kept."""
    exit_code: int | None = None
    """How it exited (negative: killed by that signal); None: not known."""
    timed_out: bool = False
    """True when it ran out of time and its process group was killed."""
    status: tuple[str, ...] = ()
    """Status lines: `Exit code 1`, `Killed by signal SIGKILL`, a timeout and what it stopped."""
    notes: tuple[str, ...] = ()
    """Notes after the status lines: background processes still running, the working directory reset."""
    sandbox: tuple[str, ...] = ()
    """What the OS sandbox says about the run (its own block, last)."""
    stdout_cut: StreamCut | None = None
    """What stdout's capture left out (None: nothing)."""
    stderr_cut: StreamCut | None = None
    """What stderr's capture left out."""

    def streams(self) -> str:
        """The part of `text` the command printed: stdout, then `stderr:` and stderr; `(no output)` for neither."""
        parts: list[str] = []
        stdout, stderr = self.stdout.rstrip("\n"), self.stderr.rstrip("\n")
        if stdout:
            parts.append(stdout)
        if stderr:
            parts.append(f"stderr:\n{stderr}")
        return "\n\n".join(parts) or NO_OUTPUT

    @property
    def silent(self) -> bool:
        """True when the command printed nothing."""
        return not self.stdout.rstrip("\n") and not self.stderr.rstrip("\n")

    def status_lines(self) -> tuple[str, ...]:
        """Every line after what the command printed: status, notes, then the sandbox's."""
        return (*self.status, *self.notes, *self.sandbox)

    def text(self) -> str:
        """What the model reads (the layout above)."""
        text = self.streams()
        if self.status or self.notes:
            text += "\n\n" + "\n".join((*self.status, *self.notes))
        if self.sandbox:
            text = text.rstrip("\n") + "\n\n" + "\n".join(self.sandbox)
        return text

    def cuts(self) -> tuple[StreamCut, ...]:
        """What the capture left out, stdout's first."""
        return tuple(cut for cut in (self.stdout_cut, self.stderr_cut) if cut is not None)


class Omission(msgspec.Struct, frozen=True):
    """A mark in a result's text standing for text the tool left out."""

    start: int
    end: int
    """Where the mark is in the text (its line breaks included)."""
    chars: int
    lines: int | None
    """What it stands for (lines: None when the mark does not say)."""


class RecordedCut(msgspec.Struct, frozen=True):
    """A cut mark as the text of a result recorded before results carried their data shows it."""

    chars: int
    lines: int | None = None
    """None: the mark does not say (the oldest ones)."""

    @property
    def mark(self) -> str:
        """The mark, with the line breaks around it, as that text shows it."""
        if self.lines is None:
            return f"\n[... {self.chars} characters omitted ...]\n"
        return omitted_mark(self.chars, self.lines)


class RecordedCuts(msgspec.Struct, frozen=True, tag="recorded-shell", tag_field="kind"):
    """What is known of a Bash result recorded before results carried their data: the cut marks its text shows,
    read from it once, when its session was loaded (`recorded_cuts`)."""

    marks: tuple[RecordedCut, ...]

    def cuts(self) -> tuple[RecordedCut, ...]:
        return self.marks


def omissions(text: str, result: ShellResult | RecordedCuts | None) -> list[Omission]:
    """The marks in `text` (a result's text, whole or already cut by compaction) that stand for what the command's
    capture left out, as `result` records them (for a result recorded before results carried data, as its text
    showed them when it was loaded); none without data (a hook's text, a command started in the background)."""
    if result is None:
        return []
    found: list[Omission] = []
    after = 0
    for cut in result.cuts():
        at = text.find(cut.mark, after)
        if at >= 0:
            after = at + len(cut.mark)
            found.append(Omission(at, after, cut.chars, cut.lines))
    return found


_RECORDED_MARK = re.compile(r"\n\[\.\.\. (\d+) characters(?: \((\d+) lines\))? omitted \.\.\.\]\n")
"""The mark as results recorded before they carried their data show it (and, older still, without a line count)."""


def recorded_cuts(text: str) -> RecordedCuts | None:
    """The marks in the text of a Bash result recorded before results carried their data (an old session loaded):
    read back from that text once, here, where the mark is made; None when it shows none."""
    marks = tuple(
        RecordedCut(int(m.group(1)), int(m.group(2)) if m.group(2) is not None else None)
        for m in _RECORDED_MARK.finditer(text)
    )
    return RecordedCuts(marks) if marks else None
