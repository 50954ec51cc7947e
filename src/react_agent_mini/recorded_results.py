"""Results recorded before the built-in tools gave their data (an old session): their data, read from their text
once, when the session is loaded (`transcript.load`), so they resume and compact as they did.

While a session runs nothing reads a tool's text back (compaction, the REPL and the doom-loop guard read
`ToolResultBlock.details`); only here is the text of an old result taken apart, with the patterns the old
compaction read it with:

- Read: its lines numbered from the first one (`<n>\\t<line>`) → `read_result.ReadResult` (first line, how many);
- Grep and Glob: the page line after the listing (`[Showing results a..b of n.`, `(Showing n of m matches`) →
  `search_result.SearchResult`; a listing without one keeps no data (every line an entry, as before);
- Bash: the cut marks its capture left (`[... N characters (M lines) omitted ...]`) → `shell_result.RecordedCuts`.

A result that already has data, an error of Read, Grep or Glob, and any other tool's result are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

from .builtin_tools import family_named
from .messages import ContentBlock, Message, ToolResultBlock
from .read_result import ReadResult
from .result_details import ToolDetails
from .search_result import SearchResult
from .shell_result import recorded_cuts

_NUMBERED_LINE = re.compile(r"(\d+)\t")
"""A line as Read numbers it."""
_GREP_PAGE = re.compile(r"^\[Showing results (\d+)\.\.(\d+) of (\d+)\.")
_GLOB_PAGE = re.compile(r"^\(Showing (\d+) of (\d+) matches")


def with_recorded_data(messages: Sequence[Message]) -> list[Message]:
    """`messages` with each result of Read, Grep, Glob and Bash that carries no data given the data its text shows
    (a message with none to give stays the very same object)."""
    out: list[Message] = []
    names: dict[str, str] = {}
    for message in messages:
        if message.role == "assistant":
            names = {use.id: use.name for use in message.tool_uses}
        elif message.tool_results:
            message = _given_data(message, names)
        out.append(message)
    return out


def _given_data(message: Message, names: dict[str, str]) -> Message:
    blocks: list[ContentBlock] = []
    changed = False
    for block in message.content:
        if isinstance(block, ToolResultBlock) and block.details is None:
            details = recorded_details(block, names.get(block.tool_use_id, ""))
            if details is not None:
                block = msgspec.structs.replace(block, details=details)
                changed = True
        blocks.append(block)
    return msgspec.structs.replace(message, content=tuple(blocks)) if changed else message


def recorded_details(block: ToolResultBlock, tool: str) -> ToolDetails | None:
    """The data the text of `block`, a result of the built-in tool `tool` recorded without data, shows; None when
    it shows none."""
    family = family_named(tool)
    if family == "shell":
        return recorded_cuts(block.content)
    if block.is_error:
        return None
    if family == "read":
        return _read(block.content)
    if family == "search":
        return _page(block.content)
    return None


def _read(text: str) -> ReadResult | None:
    """The numbered lines `text` starts with: the first one's number and how many follow it in order."""
    lines = text.split("\n")
    first = _NUMBERED_LINE.match(lines[0])
    if first is None:
        return None
    number = int(first.group(1))
    count = 0
    for line in lines:
        numbered = _NUMBERED_LINE.match(line)
        if numbered is None or int(numbered.group(1)) != number + count:
            break
        count += 1
    return ReadResult(number, count)


def _page(text: str) -> SearchResult | None:
    """The page its last line describes (`[Showing results a..b of n.` or `(Showing n of m matches`)."""
    lines = text.split("\n")
    if grep := _GREP_PAGE.match(lines[-1]):
        return SearchResult(len(lines) - 1, int(grep.group(3)), int(grep.group(1)) - 1)
    if glob := _GLOB_PAGE.match(lines[-1]):
        return SearchResult(len(lines) - 1, int(glob.group(2)), mode="glob")
    return None
