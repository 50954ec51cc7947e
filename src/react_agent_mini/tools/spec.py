"""A tool as the model sees it: what `ToolRegistry.specs()` gives each request, and each provider puts on its wire.

A leaf module (msgspec only), so the providers can read it without importing any tool.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec


class ToolSpec(msgspec.Struct, frozen=True):
    """A tool as the model sees it."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    """Full JSON Schema of the input object."""
