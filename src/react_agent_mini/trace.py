"""TRACE=1 observability: one `[trace] <event> k=v ...` line per event on stderr.

Callers pass counts, names and ids, never contents or keys. Enabled only when the environment says `TRACE=1`
exactly, read at each call so tests and subprocesses can switch it.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: tracing is on the early first-request path (`early/`)
if TYPE_CHECKING:
    from typing import Any


def enabled() -> bool:
    """Whether trace lines are written."""
    return os.environ.get("TRACE") == "1"


def format_line(event: str, fields: dict[str, Any]) -> str:
    """`[trace] event k=v k=v` in the fields' order; booleans lower-case, spaces inside values escaped."""
    parts = [f"[trace] {event}"]
    for key, value in fields.items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        parts.append(f"{key}={text.replace(' ', '_')}")
    return " ".join(parts)


def trace(event: str, **fields: Any) -> None:
    """Write one trace line when tracing is on."""
    if enabled():
        print(format_line(event, fields), file=sys.stderr, flush=True)
