"""Which provider the environment names without a flag, by the one rule for keys both providers share: a key, or
else a base URL on this machine (a local server needs none).

Only the standard library is imported here, so that `scripts/run` can ask this cheaply (≈25 ms, most of it Python's
own start) before it decides between the offline demo and a real run; `config` resolves the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlparse

TYPE_CHECKING = False  # not `typing`'s: importing typing would cost more than this module
if TYPE_CHECKING:
    from typing import Literal


def is_loopback(url: str) -> bool:
    """True when `url` names this machine (`localhost`, `127.0.0.1`, `::1`, `*.localhost`)."""
    try:
        host = urlparse(url.strip()).hostname or ""
    except ValueError:  # not a URL at all: not a local server (the request says what is wrong with it)
        return False
    return host in ("localhost", "127.0.0.1", "::1") or host.endswith(".localhost")


def default_provider(env: Mapping[str, str]) -> Literal["openai", "anthropic"] | None:
    """The provider used without `--provider`: the first with a key, else the first whose base URL is a loopback
    server; None when there is neither."""
    if env.get("OPENAI_API_KEY", "").strip():
        return "openai"
    if env.get("ANTHROPIC_API_KEY", "").strip() or env.get("ANTHROPIC_AUTH_TOKEN", "").strip():
        return "anthropic"
    if is_loopback(env.get("OPENAI_BASE_URL", "")):
        return "openai"
    if is_loopback(env.get("ANTHROPIC_BASE_URL", "")):
        return "anthropic"
    return None
