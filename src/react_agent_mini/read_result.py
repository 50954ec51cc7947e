"""What a Read showed, as data: which lines of the file, of how many, or which notice instead of lines.

The Read tool returns one of these with its result (`ToolOutput.details`, kept on the `ToolResultBlock` and in the
transcript); its text stays what the model reads (`<n>\\t<line>` per line, then the notes). Compaction reads the
fields to say where a cut Read goes on (`resume_line`) and the doom-loop guard to know a repeated Read's
"unchanged" notice, never the numbers in the text. A result recorded before results carried their data gets its
ReadResult from its text once, when its session is loaded (`recorded_results.py`).

A leaf module (msgspec only), beside `shell_result`.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

import msgspec

Notice: TypeAlias = Literal["", "unchanged", "empty", "image"]
"""What a Read answered instead of lines: "" (lines), the file is unchanged since the model read it, the file is
empty, the file is an image (sent as the image itself)."""


class ReadResult(msgspec.Struct, frozen=True, omit_defaults=True, tag="read", tag_field="kind"):
    """One Read's answer."""

    first: int = 1
    """The number of the first line shown (1-based)."""
    lines: int = 0
    """How many numbered lines the text starts with (0: a notice, no lines)."""
    total: int = 0
    """The lines the file has (0 for a notice)."""
    capped: bool = False
    """True when the page stopped at the output cap before its limit (its last lines were left for the next page)."""
    notice: Notice = ""

    @property
    def next_offset(self) -> int | None:
        """Where the next page starts (the offset the text's note gives); None when this one reached the end."""
        end = self.first + self.lines
        return end if self.lines and end <= self.total else None

    def resume_line(self, kept: str) -> int | None:
        """The first line that `kept`, a prefix of this result's text, does not show whole: the offset a Read of
        the rest starts at. None when `kept` reaches past the numbered lines (into the notes after them) or the
        text has none. Each numbered line is `<n>\\t<line>` and holds no line break, so the line breaks in `kept`
        count the whole lines it shows."""
        if not self.lines:
            return None
        whole = kept.count("\n")
        if whole == 0:  # the first line itself was cut: resume there, once its number is shown
            return self.first if len(kept) > len(str(self.first)) else None
        return self.first + whole if whole <= self.lines else None
