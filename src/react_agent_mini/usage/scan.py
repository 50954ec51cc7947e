"""The usage in one transcript, read fast: the file's lines are scanned as bytes and only the `meta` and `call`
records are decoded, into narrow structs (msgspec skips every other field unparsed into objects), so a 30 MB
transcript costs its reading and one small decode per model call — never its messages as objects.

A record is recognised by how the transcript writes it, `{"type": "call", ...` on one line (transcript.py), the
compact spelling too. A line that is not a whole record (cut by a crash or a full disk) or a call record that
does not hold what a call record holds is counted in `broken`, never fatal: the caller says so once per file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import msgspec

from ..messages import Usage

Count = Annotated[int, msgspec.Meta(ge=0)]

CALL = (b'{"type": "call"', b'{"type":"call"')
META = (b'{"type": "meta"', b'{"type":"meta"')
MESSAGE = (b'{"type": "message"', b'{"type":"message"')
RECORD = (b'{"type": "', b'{"type":"')


class Counts(msgspec.Struct):
    """A call's tokens, under the names the transcript writes (Anthropic's)."""

    input_tokens: Count = 0
    output_tokens: Count = 0
    cache_creation_input_tokens: Count = 0
    cache_read_input_tokens: Count = 0
    cost_usd: float | None = None
    """What the provider billed for the call, when it said (OpenRouter); else the list price applies."""

    def usage(self) -> Usage:
        return Usage(
            self.input_tokens,
            self.output_tokens,
            self.cache_read_input_tokens,
            self.cache_creation_input_tokens,
            cost_usd=self.cost_usd,
        )


class Call(msgspec.Struct):
    """What `ram usage` reads of a call record."""

    usage: Counts
    model: str = ""
    ts: float = 0.0
    """When the call ended (seconds since the epoch)."""
    kind: str = "turn"


class Meta(msgspec.Struct):
    """What `ram usage` reads of a transcript's first record."""

    session_id: str = ""
    cwd: str = ""
    model: str = ""
    started: float = 0.0
    parent_session_id: str = ""
    """Set in a subagent's transcript: the session it belongs to."""


class FileUsage(msgspec.Struct):
    """One transcript's calls."""

    meta: Meta | None
    calls: list[Call]
    messages: int
    """Message records: a file with messages and no call record was saved before calls were recorded."""
    broken: int
    """Lines that are not whole records, and call or meta records that could not be read."""


_call = msgspec.json.Decoder(Call)
_meta = msgspec.json.Decoder(Meta)
_errors = (msgspec.DecodeError, msgspec.ValidationError)


def read_usage(path: Path) -> FileUsage:
    """The calls recorded in the transcript at `path` (OSError when it cannot be read)."""
    meta: Meta | None = None
    calls: list[Call] = []
    messages = broken = 0
    append = calls.append
    with path.open("rb") as handle:
        for line in handle:
            if line.startswith(CALL):
                try:
                    append(_call.decode(line))
                except _errors:
                    broken += 1
            elif line.startswith(MESSAGE):
                messages += 1
                if not line.endswith((b"}\n", b"}")):  # cut mid-record: the rest of the line is gone
                    broken += 1
            elif line.startswith(META):
                try:
                    meta = _meta.decode(line)
                except _errors:
                    broken += 1
            elif not line.startswith(RECORD) or not line.endswith((b"}\n", b"}")):
                broken += not line.isspace()
    return FileUsage(meta, calls, messages, broken)
