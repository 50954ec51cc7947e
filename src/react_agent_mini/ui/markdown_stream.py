"""Streaming Markdown: split an answer that is still arriving into finished blocks and the block still growing.

A top-level Markdown block (paragraph, list, fenced code, table, heading...) is finished once another block has
started after it: text that arrives later can only change the last block. So the REPL prints each finished
block once, rendered, and keeps only the last one in the live area, re-rendering it as it grows. Rendering
each finished block on its own gives the same result as rendering the whole answer (blocks do not affect one
another, reference-style links aside). The parser is markdown-it (the one rich renders with); only the
unfinished tail is parsed again, and only when a line ends.
"""

from __future__ import annotations

from typing import Any


def _parser() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt().enable("strikethrough").enable("table")


class MarkdownStream:
    """Feed deltas; get back finished blocks (Markdown source) to print; `tail` is the unfinished rest."""

    def __init__(self) -> None:
        self.tail = ""
        """Source not yet handed out as finished blocks."""
        self._parser: Any = None

    def feed(self, delta: str) -> list[str]:
        """Add `delta`; the blocks it finished, in order (usually none)."""
        self.tail += delta
        if "\n" not in delta:
            return []
        return self._split()

    def flush(self) -> str:
        """The answer is complete: whatever is left, as one last chunk (stripped of trailing blank lines)."""
        rest, self.tail = self.tail, ""
        return rest.strip("\n")

    def reset(self) -> None:
        """Forget the unfinished tail (the stream starts over)."""
        self.tail = ""

    def _split(self) -> list[str]:
        if self._parser is None:
            self._parser = _parser()
        # Only whole lines: a partial last line ("2" of "2. y") could look like the start of a new block.
        complete = self.tail[: self.tail.rfind("\n") + 1]
        starts = sorted(
            {
                token.map[0]
                for token in self._parser.parse(complete)
                if token.level == 0 and token.nesting >= 0 and token.map is not None
            }
        )
        if len(starts) < 2:
            return []
        lines = self.tail.split("\n")
        cut = starts[-1]
        done = "\n".join(lines[:cut]).strip("\n")
        self.tail = "\n".join(lines[cut:])
        return [done] if done else []
