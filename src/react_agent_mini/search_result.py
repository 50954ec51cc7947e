"""What a Grep or a Glob listed, as data: how many lines of its text are the listing, and where that page sits in
the whole (its first entry, how many there are in all, whether the search stopped early).

The tools return one of these with their result (`ToolOutput.details`, kept on the `ToolResultBlock` and in the
transcript); the text stays what the model reads: one entry per line, then the notes (the page line, the early
stop). Compaction reads the fields to cut the listing at whole entries and say which of how many it kept
(`compact/shape.cut_entries`), never the page line in the text. A result recorded before results carried their data
gets its SearchResult from its text once, when its session is loaded (`recorded_results.py`).

A leaf module (msgspec only), beside `shell_result`.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

import msgspec

Mode: TypeAlias = Literal["files_with_matches", "content", "count", "glob"]
"""Grep's output modes, and Glob's listing."""


class SearchResult(msgspec.Struct, frozen=True, omit_defaults=True, tag="search", tag_field="kind"):
    """One page of a search's findings."""

    lines: int
    """How many lines the text starts with that are the listing (the notes follow them)."""
    total: int
    """Entries found in all (a lower bound when `truncated`)."""
    first: int = 0
    """Entries before this page (Grep's offset)."""
    separators: tuple[int, ...] = ()
    """Which of the listing's lines (0-based) are no entry: the `--` between groups of Grep's content with context."""
    truncated: bool = False
    """True when the search stopped early (too much output): `total` counts only what it found until then."""
    mode: Mode = "files_with_matches"

    @property
    def shown(self) -> int:
        """Entries on this page."""
        return self.lines - len(self.separators)

    def entries_in(self, lines: int) -> int:
        """How many entries the first `lines` lines of the listing hold."""
        return lines - sum(1 for at in self.separators if at < lines)
