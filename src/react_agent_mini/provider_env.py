"""Which provider the environment names without a flag, by the one rule for keys every provider of the registry
(`provider_registry`) shares: a key, or else a base URL on this machine (a local server needs none).

Only the standard library and the registry (which imports nothing) are imported here, so that `scripts/run` can
ask this cheaply (≈25 ms, most of it Python's own start) before it decides between the offline demo and a real
run; `config` resolves the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlparse

from .provider_registry import providers


def is_loopback(url: str) -> bool:
    """True when `url` names this machine (`localhost`, `127.0.0.1`, `::1`, `*.localhost`)."""
    try:
        host = urlparse(url.strip()).hostname or ""
    except ValueError:  # not a URL at all: not a local server (the request says what is wrong with it)
        return False
    return host in ("localhost", "127.0.0.1", "::1") or host.endswith(".localhost")


def default_provider(env: Mapping[str, str]) -> str | None:
    """The provider used without `--provider`: the first of the registry's with a key (or token), else the first
    whose base URL is a loopback server when that needs no key; None when there is neither."""
    online = [spec for spec in providers() if not spec.offline]
    for spec in online:
        if spec.has_credentials(env):
            return spec.name
    for spec in online:
        if spec.loopback_needs_no_key and is_loopback(env.get(spec.base_url_variable, "")):
            return spec.name
    return None
