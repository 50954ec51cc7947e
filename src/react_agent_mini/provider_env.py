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


class Endpoint:
    """Where a provider's requests go and how they are signed: what the flags and environment name."""

    __slots__ = ("api_key", "auth_token", "base_url", "kind", "model")

    def __init__(self, kind: str, model: str, base_url: str, api_key: str, auth_token: str) -> None:
        self.kind = kind
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        """The key, or LOCAL_KEY for a loopback server that needs none ("" when a token is sent instead)."""
        self.auth_token = auth_token


LOCAL_KEY = "local"
"""What a loopback server that needs no key is sent as one."""


def endpoint(env: Mapping[str, str], provider: str, model: str | None) -> Endpoint | str:
    """The endpoint of the registered online provider `provider`, or the one-line reason it cannot be used (an
    unknown provider, a missing key: `config` raises it as its error; `early/` sends nothing early)."""
    from .provider_registry import get

    spec = get(provider)
    if spec is None or spec.offline:
        return f"unknown provider {provider!r}"
    base_url = env.get(spec.base_url_variable, "").strip() or spec.default_base_url
    key = env.get(spec.key_variable, "").strip()
    token = env.get(spec.token_variable, "").strip() if spec.token_variable else ""
    if not key and not token and not (spec.loopback_needs_no_key and is_loopback(base_url)):
        instead = f"; a gateway may take {spec.token_variable} instead" if spec.token_variable else ""
        return f"{spec.key_variable} is not set (needed for {base_url}{instead}); or use `--mock`."
    chosen = model or (env.get(spec.model_variable, "").strip() if spec.model_variable else "") or spec.default_model
    return Endpoint(spec.name, chosen, base_url, key or ("" if token else LOCAL_KEY), token)
