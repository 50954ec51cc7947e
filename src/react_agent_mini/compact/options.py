"""The knobs of the outbound pipeline, the two profiles that set their defaults, and how the environment sets them.

Two profiles (`COMPACT_PROFILE`):

* `v2` (the default) — results shaped per tool and sized to the model's window, cuts quantised to a low-water
  mark so the request prefix (and the provider's prompt cache) moves rarely, and every user message kept
  verbatim when old turns are dropped (economy.py). It measures estimated tokens (tokens.py), so Chinese text
  counts what it costs; its `threshold_chars` counts `CHARS_PER_TOKEN` characters per token.
* `seed` — the v4 pipeline exactly, as the seed describes it (the package docstring says what the seed is): its
  constants, placeholder, trace lines and characters.

Resolution (the v4 pipeline's): an explicit option wins; otherwise the environment (`COMPACT=0` turns every stage off,
`COMPACT_THRESHOLD_CHARS` sets the threshold when it is all digits, `COMPACT_PROFILE` picks the profile);
otherwise the profile's default. A knob left at `AUTO` (-1) takes its profile's default when the options are
made; `window_tokens` sizes v2's defaults.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

import msgspec

Profile: TypeAlias = Literal["v2", "seed"]
PROFILES: tuple[Profile, ...] = ("v2", "seed")
DEFAULT_PROFILE: Profile = "v2"

AUTO = -1
"""A knob's value meaning "the profile's default" (resolved when the options are made)."""

# The v4 pipeline's constants (profile `seed`).
DEFAULT_THRESHOLD_CHARS = 80_000
DEFAULT_MAX_TOOL_RESULT_CHARS = 4000
DEFAULT_MICRO_KEEP_RECENT = 4
DEFAULT_MICRO_MIN_CHARS = 500
DEFAULT_MAX_MESSAGES = 40

# Profile `v2` (chosen with benchmarks/context_economy_reactive.py; the figures are in economy.py).
DEFAULT_WINDOW_TOKENS = 128_000
"""The window assumed when none is given (tokens.DEFAULT_CONTEXT_WINDOW)."""
V2_THRESHOLD_PERCENT = 40
"""v2 acts when the request's messages pass this share of the window..."""
V2_THRESHOLD_MAX_TOKENS = 60_000
"""...or this many tokens, whichever is less: a bigger window does not make every call dearer."""
V2_FRESH_RESULT_PERCENT = 12
"""A result is sent whole up to this share of the window (Claude Code's Read: 25k tokens of a 200k window)..."""
V2_FRESH_RESULT_SHARE = 40
"""...and up to this share of the threshold, so the newest results always fit under it."""
V2_LOW_WATER_PERCENT = 40
"""When v2 must act it cuts down to this share of the threshold, then holds still until it is passed again."""
CHARS_PER_TOKEN = 4
"""v2 reads `threshold_chars` (COMPACT_THRESHOLD_CHARS, a refusal's tightening) as this many per token."""


class CompactOptions(msgspec.Struct, frozen=True):
    """Knobs of the pipeline; build from the environment with `from_env`. Knobs left at `AUTO` take the
    profile's defaults (the v4 pipeline's constants for `seed`)."""

    profile: Profile = DEFAULT_PROFILE
    """`v2` (default) or `seed` (the v4 pipeline exactly; `COMPACT_PROFILE`)."""
    enabled: bool = True
    """False turns all three stages into identities (`COMPACT=0`)."""
    threshold_chars: int = AUTO
    """② and ③ act only when the estimate is strictly above this (`COMPACT_THRESHOLD_CHARS`). v2 measures
    tokens and reads this as `CHARS_PER_TOKEN` characters per token (`threshold_tokens`)."""
    max_tool_result_chars: int = DEFAULT_MAX_TOOL_RESULT_CHARS
    """v4: ① cuts any tool_result longer than this. v2: the cap older results fall to when it must act."""
    micro_keep_recent: int = DEFAULT_MICRO_KEEP_RECENT
    """② keeps this many of the newest tool_results whole (v2: as far as they fit in half its low-water mark;
    the newest message's results always)."""
    micro_min_chars: int = DEFAULT_MICRO_MIN_CHARS
    """② replaces only results strictly longer than this."""
    max_messages: int = DEFAULT_MAX_MESSAGES
    """v4: ③ keeps at most this many messages, and acts only when still over the threshold (v2: unused)."""
    low_water_percent: int = AUTO
    """0 = the v4 pipeline's behaviour (its default). Otherwise ② and ③, when they must act, cut down to this percent
    of their limits and then hold still until the limit is passed again, so the request prefix (and the
    provider's prompt cache) survives many calls (`COMPACT_LOW_WATER_PERCENT`; v2's default: 40)."""
    window_tokens: int = DEFAULT_WINDOW_TOKENS
    """The model's context window in tokens; sizes v2's threshold and fresh-result cap."""
    fresh_result_tokens: int = AUTO
    """v2: ① sends a result whole up to this many (estimated) tokens and shapes a longer one per tool; never
    more than its share of the threshold (`fresh_tokens`). v4: unused."""

    def __post_init__(self) -> None:
        v4 = self.profile == "seed"
        if self.threshold_chars == AUTO:
            msgspec.structs.force_setattr(
                self,
                "threshold_chars",
                DEFAULT_THRESHOLD_CHARS if v4 else v2_threshold(self.window_tokens) * CHARS_PER_TOKEN,
            )
        if self.low_water_percent == AUTO:
            msgspec.structs.force_setattr(self, "low_water_percent", 0 if v4 else V2_LOW_WATER_PERCENT)
        if self.fresh_result_tokens == AUTO:
            fresh = 0 if v4 else v2_fresh_tokens(self.window_tokens, self.threshold_chars // CHARS_PER_TOKEN)
            msgspec.structs.force_setattr(self, "fresh_result_tokens", fresh)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> CompactOptions:
        """Options from `env` (default: the process environment), then `overrides` (None values ignored)."""
        env = os.environ if env is None else env
        fields: dict[str, Any] = {}
        profile = env.get("COMPACT_PROFILE", "").strip().lower()
        if profile in PROFILES:
            fields["profile"] = profile
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

    @classmethod
    def v4(cls, **overrides: Any) -> CompactOptions:
        """The v4 pipeline, exactly (`COMPACT_PROFILE=seed`), with `overrides`."""
        return cls(profile="seed", **overrides)

    @property
    def is_v4(self) -> bool:
        """Whether this is the v4 pipeline (`COMPACT_PROFILE=seed`)."""
        return self.profile == "seed"

    @property
    def low_water(self) -> bool:
        """Whether the v4 pipeline's cache-friendly low-water option is on (v2 always cuts to a low water)."""
        return self.is_v4 and 0 < self.low_water_percent < 100

    @property
    def threshold_tokens(self) -> int:
        """v2's threshold in estimated tokens."""
        return self.threshold_chars // CHARS_PER_TOKEN

    @property
    def fresh_tokens(self) -> int:
        """v2's cap on a fresh result as it applies: `fresh_result_tokens`, and never more than its share of the
        threshold (a refusal that stated a smaller window lowers the threshold, and so this)."""
        return max(1, min(self.fresh_result_tokens, self.threshold_tokens * V2_FRESH_RESULT_SHARE // 100))


def v2_threshold(window_tokens: int) -> int:
    """v2's default threshold in tokens for a window."""
    return min(V2_THRESHOLD_MAX_TOKENS, max(1, window_tokens) * V2_THRESHOLD_PERCENT // 100)


def v2_fresh_tokens(window_tokens: int, threshold_tokens: int) -> int:
    """v2's default cap on a fresh result, in tokens."""
    return max(
        1, min(max(1, window_tokens) * V2_FRESH_RESULT_PERCENT // 100, threshold_tokens * V2_FRESH_RESULT_SHARE // 100)
    )
