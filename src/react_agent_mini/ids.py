"""Ids: random 128-bit values, as 32 hex digits (messages) or in UUID form (sessions, stream-json lines).

`os.urandom` rather than `uuid` keeps the import off the startup path; the UUIDs are version 4.
"""

from __future__ import annotations

import os

_HEX = frozenset("0123456789abcdef")


def new_hex_id() -> str:
    """32 random hex digits (as `uuid4().hex`)."""
    return os.urandom(16).hex()


def as_uuid(hex_id: str) -> str:
    """A 32-hex-digit id in UUID form (8-4-4-4-12); anything else unchanged."""
    if len(hex_id) == 32 and _HEX.issuperset(hex_id):
        return f"{hex_id[:8]}-{hex_id[8:12]}-{hex_id[12:16]}-{hex_id[16:20]}-{hex_id[20:]}"
    return hex_id


def new_uuid() -> str:
    """A random version-4 UUID, as text."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    return as_uuid(raw.hex())
