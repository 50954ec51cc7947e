"""The knobs of the outbound pipeline, their seed defaults, and how the environment sets them.

Resolution (the seed's): an explicit option wins; otherwise the environment (`COMPACT=0` turns every stage off,
`COMPACT_THRESHOLD_CHARS` sets the threshold when it is all digits); otherwise the default.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import msgspec

DEFAULT_THRESHOLD_CHARS = 80_000
DEFAULT_MAX_TOOL_RESULT_CHARS = 4000
DEFAULT_MICRO_KEEP_RECENT = 4
DEFAULT_MICRO_MIN_CHARS = 500
DEFAULT_MAX_MESSAGES = 40


class CompactOptions(msgspec.Struct, frozen=True):
    """Knobs of the pipeline (defaults are the seed's); build from the environment with `from_env`."""

    enabled: bool = True
    """False turns all three stages into identities (`COMPACT=0`)."""
    threshold_chars: int = DEFAULT_THRESHOLD_CHARS
    """② and ③ act only when the estimate is strictly above this (`COMPACT_THRESHOLD_CHARS`)."""
    max_tool_result_chars: int = DEFAULT_MAX_TOOL_RESULT_CHARS
    """① cuts any tool_result longer than this."""
    micro_keep_recent: int = DEFAULT_MICRO_KEEP_RECENT
    """② keeps this many of the newest tool_results whole."""
    micro_min_chars: int = DEFAULT_MICRO_MIN_CHARS
    """② replaces only results strictly longer than this."""
    max_messages: int = DEFAULT_MAX_MESSAGES
    """③ keeps at most this many messages, and acts only when still over the threshold."""
    low_water_percent: int = 0
    """0 = the seed's behaviour. Otherwise ② and ③, when they must act, cut down to this percent of their
    limits and then hold still until the limit is passed again, so the request prefix (and the provider's
    prompt cache) survives many calls (`COMPACT_LOW_WATER_PERCENT`)."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> CompactOptions:
        """Options from `env` (default: the process environment), then `overrides` (None values ignored)."""
        env = os.environ if env is None else env
        fields: dict[str, Any] = {}
        if env.get("COMPACT") == "0":
            fields["enabled"] = False
        threshold = env.get("COMPACT_THRESHOLD_CHARS", "")
        if threshold.isascii() and threshold.isdigit():
            fields["threshold_chars"] = int(threshold)
        low_water = env.get("COMPACT_LOW_WATER_PERCENT", "")
        if low_water.isascii() and low_water.isdigit():
            fields["low_water_percent"] = min(int(low_water), 100)
        fields.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**fields)

    @property
    def low_water(self) -> bool:
        """Whether the cache-friendly low-water variant is on."""
        return 0 < self.low_water_percent < 100
