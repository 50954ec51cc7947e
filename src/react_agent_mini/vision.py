"""Whether a model takes images: a table of model-id prefixes (the longest match wins, as for prices and windows),
and `RAM_VISION=1` or `0` to say so for a model the table does not know or gets wrong.

A model the table does not know is taken not to see images (most local and OpenAI-compatible servers' models do
not, and an image sent to one is an error or is silently ignored); the user gets one line saying so and how to
send them anyway.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from .model_names import lookup

VISION: Mapping[str, bool] = {
    "claude-": True,
    "claude-2": False,
    "claude-instant": False,
    "gpt-4o": True,
    "gpt-4.1": True,
    "gpt-4-turbo": True,
    "gpt-5": True,
    "o1": True,
    "o1-mini": False,
    "o3": True,
    "o3-mini": False,
    "o4-mini": True,
    "gemini-": True,
    "deepseek-chat": False,
    "deepseek-reasoner": False,
    "llava": True,
    "qwen2.5-vl": True,
    "llama3.2-vision": True,
    "mock": False,
}


def supports_vision(model: str, env: Mapping[str, str] | None = None) -> bool:
    """True when `model` is known (or said, by `RAM_VISION`) to take images."""
    env = os.environ if env is None else env
    said = env.get("RAM_VISION", "").strip()
    if said in ("0", "1"):
        return said == "1"
    return bool(lookup(VISION, model))


NO_VISION = "{model} does not take images (not in ram's vision table; RAM_VISION=1 sends them anyway)"
"""The line for the user when images are left out."""
