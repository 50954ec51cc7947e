"""A tool result's data (`ToolResultBlock.details`): what the built-in tools return beside the text the model reads,
and how the transcript keeps it.

- Bash: `shell_result.ShellResult` (its streams, exit, notes and cuts; the text is rendered from it), or, for a result
  recorded before results carried data, `shell_result.RecordedCuts` (the marks its text showed);
- Read: `read_result.ReadResult`; Grep and Glob: `search_result.SearchResult`.

Each is recorded as a JSON object whose `kind` says which (`shell`, `recorded-shell`, `read`, `search`); data
recorded without a kind is a ShellResult (Bash's, recorded before the other tools had data). The text of a result
whose data renders it (a ShellResult whose `text` it is) is not recorded again: `recorded_text` says what to write,
`loaded_text` gives it back when the session is loaded, byte for byte.

A leaf module (msgspec and the data modules only): `messages` builds on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

import msgspec

from .read_result import ReadResult
from .search_result import SearchResult
from .shell_result import RecordedCuts, ShellResult

ToolDetails: TypeAlias = ShellResult | RecordedCuts | ReadResult | SearchResult
"""A tool result's data, by tool."""


def to_record(details: ToolDetails) -> dict[str, Any]:
    """The data as the transcript keeps it (with its `kind`)."""
    record: dict[str, Any] = msgspec.to_builtins(details)
    return record


def from_record(raw: Mapping[str, Any]) -> ToolDetails | None:
    """A recorded result's data; None when it does not fit (the text alone is still the result)."""
    kind: Any = ShellResult if "kind" not in raw else ToolDetails  # without a kind: Bash's, recorded before the others
    try:
        details: ToolDetails = msgspec.convert(raw, kind)
    except msgspec.ValidationError:
        return None
    return details


def rendered_text(details: ToolDetails | None) -> str | None:
    """The text `details` renders (a ShellResult's); None for data that does not render its result's text."""
    return details.text() if isinstance(details, ShellResult) else None


def recorded_text(content: str, details: ToolDetails | None) -> str | None:
    """The text to record beside `details`: `content`, or None when the data renders it exactly (it is not written
    twice)."""
    return None if content == rendered_text(details) else content


def loaded_text(details: ToolDetails | None) -> str:
    """The text of a loaded result that has none recorded (`recorded_text`): rendered from its data."""
    return rendered_text(details) or ""
