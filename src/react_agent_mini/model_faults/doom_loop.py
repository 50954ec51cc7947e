"""A model stuck making the same call again and again (a "doom loop"): after a few repeats the run stops, or, where
someone can answer (the REPL), asks them first.

The rule is OpenCode's, with one refinement. OpenCode asks when the same tool gets identical input three times in a
row; here the repeats count only while the result stays the same too. A call whose result changed is no loop: the
world moved between the calls (a file changed between two Reads, a background shell printed more for BashOutput, a
log grew under `tail`), and the model is right to look again. A Read of an unchanged file answers with its
"unchanged" stub (its data says so: `read_result.ReadResult.notice`), which counts as the same result. Anything
else between two calls — another call, a changed argument — ends the run of repeats, so a Read after an Edit after
a Read is never one.

`REPEAT_LIMIT` identical calls in a row, the earlier ones with unchanged results: before the last of them runs, the
run's `confirm` callback is asked (the REPL's `[y/N]` question). Yes: the calls run, and the question comes again
after `REPEAT_LIMIT` more. No, or no one to ask (headless, stream-json, the library, a subagent): none of that
message's calls run (each gets a result saying so) and the run ends as stopped, with one line saying which call was
repeated how often. The same call several times over in one answer counts once: a loop is a model that saw the
result and made the call again (a burst of identical calls in one answer runs, in parallel when it can).

The counting is per run of the loop (one user message), and costs one encoding of each call's input and one
comparison of its result: nothing grows with the history.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import msgspec

from ..messages import ToolResultBlock, ToolUseBlock
from ..read_result import ReadResult
from ..tools.base import ToolRegistry

REPEAT_LIMIT = 3
"""Identical calls in a row (the earlier ones with unchanged results) that make a loop: OpenCode's threshold. Two
are common and fine (a check, then the same check once more); a third with nothing changed is the model not taking
in what it was told."""
LABEL_CHARS = 60
"""The longest call label shown in the question and the stop line."""


class RepeatedCall(msgspec.Struct, frozen=True):
    """A call that makes `times` identical calls in a row."""

    index: int
    """Its position among the calls of its message."""
    use: ToolUseBlock
    times: int
    """Identical calls in a row, this one included."""
    label: str
    """The call as the user sees it: `Bash ls`, `Read src/app.py`."""

    @property
    def stopped(self) -> str:
        """The line ending the run: `the model repeated the same call (Bash ls) 3 times in a row`."""
        return f"the model repeated the same call ({self.label}) {self.times} times in a row"

    def result(self, asked: bool) -> str:
        """What the model reads instead of the call's output."""
        who = "the user stopped the run" if asked else "ram stopped the run"
        return (
            f"Not run: you made this exact call {self.times} times in a row and got the same result each time, so "
            f"{who}. Do not repeat it; try something different or say what is blocking you."
        )


Confirm = Callable[[RepeatedCall], Awaitable[bool]]
"""Asks whether to let the model go on with a repeated call (the REPL's question); True: go on."""


class RepeatGuard:
    """Counts identical calls in a row over the model calls of one run."""

    def __init__(self, tools: ToolRegistry) -> None:
        self.tools = tools
        self._key: bytes | None = None
        self._count = 0
        """Identical calls in a row so far whose results did not change."""
        self._forgiven = 0
        """`_count` when the user last let this run of repeats go on."""
        self._last: ToolResultBlock | None = None

    def check(self, uses: Sequence[ToolUseBlock]) -> RepeatedCall | None:
        """Before the calls of one message run: the first of them that makes `REPEAT_LIMIT` identical calls in a row
        (counting from the last time the user let them go on), or None."""
        key, count, forgiven = self._key, self._count, self._forgiven
        previous: bytes | None = None
        for index, use in enumerate(uses):
            this = _key(use)
            if this == previous:
                continue  # the same call twice in one answer is one step: the model saw no result in between
            previous = this
            if this == key:
                count += 1
            else:
                key, count, forgiven = this, 1, 0
            if count - forgiven >= REPEAT_LIMIT:
                return RepeatedCall(index, use, count, self._label(use))
        return None

    def forgive(self, repeated: RepeatedCall) -> None:
        """The user let the repeated call go on: ask again only after `REPEAT_LIMIT` more."""
        self._forgiven = repeated.times

    def observe(self, uses: Sequence[ToolUseBlock], results: Sequence[ToolResultBlock]) -> None:
        """The calls of one message ran (or were answered): count them, with their results."""
        previous: bytes | None = None
        for use, result in zip(uses, results, strict=False):
            this = _key(use)
            if this == previous:
                continue  # as in `check`: one step
            previous = this
            if this != self._key:
                self._key, self._count, self._forgiven = this, 1, 0
            elif self._last is None or _same(self._last, result):
                self._count += 1
            else:  # the result changed: this call starts the count again
                self._count, self._forgiven = 1, 0
            self._last = result

    def _label(self, use: ToolUseBlock) -> str:
        tool = self.tools.get(use.name)
        try:
            said = tool.describe_call(use.input) if tool is not None else ""
        except Exception:  # a label is never worth a failure
            said = ""
        label = " ".join(f"{use.name} {said}".split())
        return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…"


def _key(use: ToolUseBlock) -> bytes:
    """Name, input and the adapter's parse error: what makes two calls the same call."""
    try:
        encoded = msgspec.json.encode(use.input, order="sorted")
    except (TypeError, ValueError):
        encoded = repr(use.input).encode()
    return b"\x00".join((use.name.encode(), encoded, use.input_error.encode()))


def _same(before: ToolResultBlock, now: ToolResultBlock) -> bool:
    if isinstance(now.details, ReadResult) and now.details.notice == "unchanged":  # Read: the file has not changed
        return True
    return now.is_error == before.is_error and now.content == before.content and now.images == before.images
