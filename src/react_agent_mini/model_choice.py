"""The model a command's or an agent's `model:` field means, on the session's provider.

Claude Code's files say `inherit` or an alias (`sonnet`, `opus`, `haiku`) more often than a model id. On the
Anthropic API an alias becomes the current model of that family; on an OpenAI-compatible endpoint (DeepSeek, a local
server) it means nothing, so the session's own model is used — as for a `claude-…` model id there, unless the
session's model is a Claude model too (a gateway that serves them). Anything else is taken as a model id of the
session's provider.
"""

from __future__ import annotations

ANTHROPIC_ALIASES = {
    "sonnet": "claude-sonnet-4-5",
    "opus": "claude-opus-4-1",
    "haiku": "claude-haiku-4-5",
}
INHERIT = "inherit"


def chosen_model(provider_kind: str, current: str, wanted: str) -> str:
    """The model to use when a file asks for `wanted` and the session uses `current` on `provider_kind`."""
    wanted = wanted.strip()
    if not wanted or wanted == INHERIT:
        return current
    alias = wanted.lower()
    if provider_kind != "anthropic" and alias in ANTHROPIC_ALIASES:
        return current
    if provider_kind != "anthropic" and alias.startswith("claude-") and not current.lower().startswith("claude"):
        return current  # a gateway that serves Claude models under their names is used with one already
    return ANTHROPIC_ALIASES.get(alias, wanted)
