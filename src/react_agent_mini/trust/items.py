"""One part of a project's configuration that needs the user's trust, and its digest.

The digest covers the part's kind, the file it is in and everything it says (a hook's event, matcher, command and
timeout; a server's whole entry, environment and headers included), so changing any of it makes a new part that
was never approved. It is a BLAKE2b of canonical JSON: an attacker who can read the approved parts
(they are in the repository) cannot make a different part with the same digest. `_blake2` is imported directly:
`hashlib` would first load OpenSSL's bindings (≈4 ms here), and this runs on the way to the first request.
"""

from __future__ import annotations

import json
from typing import Literal, TypeAlias

import msgspec

try:
    from _blake2 import blake2b
except ImportError:  # another Python implementation
    from hashlib import blake2b

ItemKind: TypeAlias = Literal["hook", "mcp", "allow", "mode", "command"]

KIND_NAMES: dict[ItemKind, tuple[str, str]] = {
    "hook": ("hook", "hooks"),
    "mcp": ("MCP server", "MCP servers"),
    "allow": ("allow rule", "allow rules"),
    "mode": ("default mode", "default modes"),
    "command": ("command's allowed-tools", "commands' allowed-tools"),
}
"""How each kind is named in the lines a user reads (one, many)."""


class TrustItem(msgspec.Struct, frozen=True):
    """A part of the project's configuration that can run code, reach the network or widen permissions."""

    kind: ItemKind
    source: str
    """The file it is in, relative to the workspace (`.claude/settings.json`, `.mcp.json`)."""
    label: str
    """What it does, as the user reads it: `PreToolUse(Bash): sh scripts/fmt.sh`, `time: uvx mcp-server-time`."""
    key: str
    """The digest of everything it says (see the module docstring)."""


def make_item(kind: ItemKind, source: str, label: str, content: object) -> TrustItem:
    """The item for `content` (any JSON value) of `kind` in the file `source`."""
    canonical = json.dumps([kind, source, content], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    digest = blake2b(canonical.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    return TrustItem(kind, source, label, digest)


def counted(kind: ItemKind, number: int) -> str:
    """`1 hook`, `3 MCP servers`."""
    one, many = KIND_NAMES[kind]
    return f"{number} {one if number == 1 else many}"
