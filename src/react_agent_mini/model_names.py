"""Tables keyed by model name: the entry for a model is the longest key its name starts with.

`deepseek-chat-v3` finds `deepseek-chat`; a routing prefix such as `anthropic/` (OpenRouter style) is ignored,
and case does not matter. Used for context windows (`compact.tokens`) and list prices (`pricing`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

V = TypeVar("V")


def lookup(table: Mapping[str, V], model: str) -> V | None:
    """The entry of the longest key that `model`'s name starts with, or None."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    best = max((key for key in table if name.startswith(key)), key=len, default="")
    return table[best] if best else None
