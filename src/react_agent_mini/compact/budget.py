"""Stage ① of the v4 pipeline: no single tool_result may exceed `max_tool_result_chars`.

Runs before every model call, whatever the total: one huge Read must not wait for the history to overflow.
How a result is cut depends on the tool that produced it (named by the matching tool_use in the history):

- Bash keeps its head and its tail around one line saying how much of the middle was cut (folding in what
  Bash itself already left out), all within the cap: a test run's summary, the error at the end and the exit
  status are at the end of a command's output. 40% of the room goes to the head, 60% to the tail, each cut at
  a line boundary when one is near.
- Everything else keeps its first `max_tool_result_chars` characters (UTF-16 units, as the v4 pipeline counts them)
  and gets a note saying it was cut and how to get the rest — for a Read, the offset to continue from, from the
  result's data (`read_result.ReadResult`: its first line and how many lines it shows), not from its text. Read,
  Grep and Glob page from the start (offset, head_limit), so their head is what the next call continues; an MCP
  tool's output has no known shape (often JSON or a document), where a head reads better than two fragments.

Either way running the stage again changes nothing (a head+tail result fits the cap; a head-only note
depends only on the kept text, the call and the result's data), and a result's cut is computed once: the same
result block gives the same cut block on every call, so the outbound copy stays the same objects from call to call.
What Bash itself left out comes from the result's data too (`shell_result.omissions`), and a head+tail copy says
where its own line is (`ToolResultBlock.cut`), so cutting it again (profile v2) reads no text either.

Profile v2's stage ① (shape.py) builds on these cuts and runs in the same frame, `rewrite_each_result`;
pipeline.py picks the profile.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeAlias

import msgspec

from ..memo import IdentityMemo, PrefixMemo
from ..messages import Message, ToolResultBlock, ToolUseBlock
from ..read_result import ReadResult
from ..result_details import ToolDetails
from ..shell_result import Omission, RecordedCuts, ShellResult, omissions
from ..trace import enabled, trace
from .common import Rewrite, call_for, family_of_call, path_hint, rewrite_results, same_messages
from .estimate import utf16_len, utf16_prefix, utf16_suffix
from .options import CompactOptions

TRUNCATION_NOTE = "\n…[tool_result truncated by compaction"
"""How every head-only truncation note starts (the rest says how much was kept and how to get the rest)."""
PLACEHOLDER_PREFIX = "[Old tool result content cleared] tool="
"""How ②'s placeholders start (micro.py builds them; spelled here too to keep the modules free of a cycle)."""
MIDDLE_CUT = "cut from the middle by compaction"
"""What the line between a head and a tail says (after how many characters and lines it replaces)."""
HEAD_TAIL_FAMILY = "shell"
"""The tool family whose cut results keep their head and their tail (Bash); every other result keeps its head."""
HEAD_PERCENT = 40
"""The head's share of a head+tail result's room; the tail, where commands put their verdict, gets the rest."""
SNAP_PERCENT = 25
"""A head or tail is cut back to a line boundary when that costs at most this share of it."""


def truncation_note(kept: str, limit: int, tool_use: ToolUseBlock | None, details: ToolDetails | None = None) -> str:
    """The note appended to a result cut to its head `kept`: what happened, and how the model can see the rest
    (for a Read, the offset its data, `details`, says the rest starts at)."""
    head = f"{TRUNCATION_NOTE} to its first {limit} characters."
    if tool_use is None:
        return head + "]"
    if family_of_call(tool_use) == "read":
        resume = details.resume_line(kept) if isinstance(details, ReadResult) else None
        if resume is not None:
            target = path_hint(tool_use.input) or "the file"
            return f"{head} To see the rest, Read {target} with offset={resume}.]"
    if family_of_call(tool_use) == HEAD_TAIL_FAMILY:  # a cap too small for head and tail
        return (
            f"{head} To see the rest, run the command again with its output filtered (grep, head, tail) "
            "or redirected to a file you Read in parts.]"
        )
    return f"{head} To see the rest, call {tool_use.name} again with narrower arguments.]"


def middle_cut_line(chars: int, lines: int | None) -> str:
    """The line between the head and the tail of a cut result: how much of the original is missing there, and
    how to see it. `lines` is None when it is not known (an old Bash marker without a line count)."""
    size = f"{chars:,} characters" + ("" if lines is None else f" ({lines:,} lines)")
    return (
        f"[… {size} {MIDDLE_CUT}; to see them, run the command again with its output filtered "
        "(grep, head, tail, sed -n) or redirected to a file you Read in parts …]"
    )


def is_placeholder(content: str) -> bool:
    """True for ②'s `[Old tool result content cleared] tool=<Name> <path>` (one line)."""
    return content.startswith(PLACEHOLDER_PREFIX) and "\n" not in content


def _already_cut(content: str, limit: int, tool_use: ToolUseBlock | None, details: ToolDetails | None) -> bool:
    """True when `content` is exactly what this stage produces for some text: cutting again would change it."""
    at = content.rfind(TRUNCATION_NOTE)
    if at < 0:
        return False
    kept = content[:at]
    return utf16_len(kept) <= limit and content[at:] == truncation_note(kept, limit, tool_use, details)


def cut_head_tail(
    content: str, limit: int, *, earlier: Omission | None = None, details: ToolDetails | None = None
) -> str | None:
    """`content` as its head, the line saying how much of the middle was cut, and its tail, all within `limit`
    UTF-16 units; None when the cap leaves too little room for that (the caller then keeps the head alone)."""
    both = head_tail(content, limit, earlier=earlier, details=details)
    return None if both is None else both[0]


def head_tail(
    content: str, limit: int, *, earlier: Omission | None = None, details: ToolDetails | None = None
) -> tuple[str, Omission] | None:
    """`cut_head_tail`, and where its line is in the text it returns and what it stands for (`ToolResultBlock.cut`).

    The count is of the original output: a mark for what Bash itself left out (where the result's data,
    `details`, says its capture cut a stream: `shell_result.omissions`), when it lies in the part cut here, is
    replaced by what it stood for — and so is `earlier`, the line an earlier cut of this stage left in `content`
    (profile v2 cuts an older result further when it needs room; its data, `ToolResultBlock.cut`, says where it is:
    the line and the newline after it, the newline before it belonging to the head — one character and line too
    many when that earlier cut had split a line: heads are cut at line ends when they can)."""
    shell = details if isinstance(details, (ShellResult, RecordedCuts)) else None
    inner = omissions(content, shell)
    if earlier is not None:
        inner = sorted([*inner, earlier], key=lambda o: o.start)
    most_chars = len(content) + sum(o.chars for o in inner)
    most_lines = content.count("\n") + sum(o.lines or 0 for o in inner)
    line_room = utf16_len(middle_cut_line(most_chars, most_lines)) + 2  # the line and a newline on each side
    room = limit - line_room
    if room < line_room:
        return None  # the line would take more than half of what is left: a head says more
    head = _snap_head(utf16_prefix(content, room * HEAD_PERCENT // 100))
    tail = _snap_tail(utf16_suffix(content, room - utf16_len(head)))
    middle_end = len(content) - len(tail)
    chars = middle_end - len(head)
    lines: int | None = content.count("\n", len(head), middle_end)
    for mark in inner:
        if mark.start >= len(head) and mark.end <= middle_end:
            chars += mark.chars - (mark.end - mark.start)
            newlines = content.count("\n", mark.start, mark.end)  # Bash's mark: the two around it; ours: the one after
            lines = None if lines is None or mark.lines is None else lines + mark.lines - newlines
    before = "" if head.endswith("\n") else "\n"
    line = middle_cut_line(chars, lines)
    start = len(head) + len(before)
    return f"{head}{before}{line}\n{tail}", Omission(start, start + len(line) + 1, chars, lines)


def _snap_head(head: str) -> str:
    """`head` cut back to its last line break, when that loses at most SNAP_PERCENT of it."""
    end = head.rfind("\n") + 1
    return head[:end] if end and len(head) - end <= len(head) * SNAP_PERCENT // 100 else head


def _snap_tail(tail: str) -> str:
    """`tail` from its first full line, when that loses at most SNAP_PERCENT of it."""
    start = tail.find("\n") + 1
    return tail[start:] if start and start <= len(tail) * SNAP_PERCENT // 100 else tail


def cut_result(block: ToolResultBlock, limit: int, tool_use: ToolUseBlock | None) -> ToolResultBlock | None:
    """`block` cut to `limit`, or None when it needs no cut; computed once per block, limit and call."""
    return _cuts(block, lambda b: _cut(b, limit, tool_use), key=(limit, tool_use))


def _cut(block: ToolResultBlock, limit: int, tool_use: ToolUseBlock | None) -> ToolResultBlock | None:
    content = block.content
    if utf16_len(content) <= limit:
        return None
    if is_placeholder(content):
        return None  # ②'s placeholder is already as small as a result gets; cutting it would lose its hint
    if _already_cut(content, limit, tool_use, block.details):
        return None
    if family_of_call(tool_use) == HEAD_TAIL_FAMILY:
        both = head_tail(content, limit, details=block.details)
        if both is not None:
            return msgspec.structs.replace(block, content=both[0], cut=both[1])
    kept = utf16_prefix(content, limit)
    note = truncation_note(kept, limit, tool_use, block.details)
    return msgspec.structs.replace(block, content=kept + note, cut=None)


_cuts: IdentityMemo[ToolResultBlock | None] = IdentityMemo()
_budgeted: PrefixMemo[Message, Message] = PrefixMemo()


def cut_results(messages: Sequence[Message], options: CompactOptions, *, quiet: bool = False) -> Sequence[Message]:
    """① of the v4 pipeline: cut every tool_result longer than `options.max_tool_result_chars`; the same list
    when none is (pipeline.py runs it for that profile). `quiet`: no trace line (a measurement, not a request)."""
    limit = options.max_tool_result_chars

    def cut(block: ToolResultBlock, index: int) -> ToolResultBlock | None:
        if len(block.content) <= limit // 2:  # cannot be over: a character is at most 2 UTF-16 units
            return None
        return cut_result(block, limit, call_for(messages, index, block.tool_use_id))

    return rewrite_each_result(messages, cut, "truncate", limit, quiet=quiet)


MessageCut: TypeAlias = Callable[[Message], "Message | None"]
"""`cut(message)`: a whole message to put in its place (profile v2's hook context), or None to look at its
tool_results instead."""


class _Last:
    """The last history stage ① ran on, per key, and what it made of it: the context meter measures the history
    as stage ① sends it right before the loop builds the request from the same history, and the stage then runs
    once, not twice (its trace line too)."""

    def __init__(self) -> None:
        self.runs: dict[object, tuple[Sequence[Message], Sequence[Message] | None, int]] = {}

    def get(self, messages: Sequence[Message], key: object) -> tuple[Sequence[Message] | None, int] | None:
        """(what the stage made of `messages`, None when it changed nothing; the results it cut, -1 when not
        counted yet), or None when it last ran on another history."""
        last = self.runs.get(key)
        if last is None or not same_messages(last[0], messages):
            return None
        return last[1], last[2]

    def put(self, messages: Sequence[Message], key: object, out: Sequence[Message] | None, truncated: int) -> None:
        self.runs = {key: (tuple(messages), out, truncated)}  # one history at a time: the one being sent


_last = _Last()


def rewrite_each_result(
    messages: Sequence[Message],
    cut: Rewrite,
    strategy: str,
    key: object,
    *,
    message_cut: MessageCut | None = None,
    quiet: bool = False,
) -> Sequence[Message]:
    """Stage ① for either profile: `messages` with every tool_result `cut` replaces (and every message
    `message_cut` replaces whole); the same list when it replaces none. `key` stands for everything the cuts
    depend on besides the history (a profile's own key keeps its cuts apart from the other's); `strategy` names
    the cut in the trace line, which `quiet` leaves out."""
    found = _last.get(messages, key)
    if found is None:

        def step(items: Sequence[Message], index: int, _done: Sequence[Message]) -> Message:
            if message_cut is not None and (whole := message_cut(items[index])) is not None:
                return whole
            return rewrite_results(items[index], index, cut)[0]

        made = _budgeted(messages, step, key)  # each message's cut depends on it and the calls before it only
        found = (None, 0) if same_messages(made, messages) else (made, -1)  # -1: counted only for a trace line
        _last.put(messages, key, *found)
    out, truncated = found
    if out is None:
        return messages
    if quiet or not enabled():
        return list(out)  # the caller's own copy: what the memo holds must not change
    if truncated < 0:  # counting walks the whole history: once per history, and only for the trace line
        truncated = sum(
            1 if message_cut is not None and message_cut(m) is not None else rewrite_results(m, i, cut)[1]
            for i, m in enumerate(messages)
            if m is not out[i]
        )
        _last.put(messages, key, out, truncated)
    trace(
        "compact.run",
        stage="budget",
        before=len(messages),
        after=len(out),
        truncatedBlocks=truncated,
        strategy=strategy,
    )
    return list(out)
