"""Configuration read once at startup: which provider, which model, where, with which key.

Precedence: command-line flags, then environment variables, then defaults. The key is held here and in the
provider only; it is never traced, logged, or put in a prompt (`repr` hides it).

Which providers there are, the variables each reads and its defaults are `provider_registry`'s table.

One rule for keys, on every provider that makes requests: a loopback base URL (`localhost`, `127.0.0.1`, `::1`)
needs none — a local server (Ollama, llama.cpp, vLLM, a local Anthropic-compatible proxy) is used as if a key were
set, and is sent a placeholder. Without a flag, the provider is the first of: an OpenAI key, an Anthropic key or
token, a loopback `OPENAI_BASE_URL`, a loopback `ANTHROPIC_BASE_URL` — the registry's order
(`provider_env.default_provider`, which `scripts/run` asks too, to choose between the offline demo and a real run).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

import msgspec

from . import provider_registry
from .provider_env import default_provider, endpoint
from .provider_registry import MOCK
from .providers.base import ModelProvider
from .providers.http import FIRST_BYTE_TIMEOUT, STREAM_IDLE_TIMEOUT

ProviderKind = str
"""A provider's name in `provider_registry` (`openai`, `anthropic`, `mock`, or one registered at run time)."""

DEFAULT_MAX_RETRIES = 4
"""What a loopback server without a key is sent as the key (servers that check none accept anything)."""


class ConfigError(Exception):
    """A setup problem the user must fix; the message is one line saying how."""


class ProviderConfig(msgspec.Struct, frozen=True):
    """Everything needed to build a provider."""

    kind: ProviderKind
    model: str
    base_url: str = ""
    api_key: str = ""
    auth_token: str = ""
    """Anthropic gateways that take `Authorization: Bearer` (ANTHROPIC_AUTH_TOKEN)."""
    max_output_tokens: int | None = None
    max_retries: int = DEFAULT_MAX_RETRIES
    stream_idle_timeout: float = STREAM_IDLE_TIMEOUT
    """Seconds of silence mid-stream before the stream counts as dropped and is retried (RAM_STREAM_IDLE_TIMEOUT)."""
    first_byte_timeout: float = FIRST_BYTE_TIMEOUT
    """Seconds from a request until its answer's first line before the attempt is retried (RAM_FIRST_BYTE_TIMEOUT)."""

    def __repr__(self) -> str:  # never show the key
        return f"ProviderConfig(kind={self.kind!r}, model={self.model!r}, base_url={self.base_url!r})"


def _int_env(env: Mapping[str, str], name: str) -> int | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    if not raw.isdigit():
        raise ConfigError(f"{name} must be a whole number, got {raw!r}")
    return int(raw)


def _seconds_env(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise ConfigError(f"{name} must be a number of seconds above 0, got {raw!r}")
    return value


def resolve_provider(
    env: Mapping[str, str] | None = None,
    *,
    provider: str | None = None,
    model: str | None = None,
    mock: bool = False,
) -> ProviderConfig:
    """Pick the provider from flags and environment, or raise ConfigError."""
    env = os.environ if env is None else env
    max_output = _int_env(env, "RAM_MAX_OUTPUT_TOKENS")
    retries = _int_env(env, "RAM_MAX_RETRIES")
    retries = DEFAULT_MAX_RETRIES if retries is None else retries
    idle = _seconds_env(env, "RAM_STREAM_IDLE_TIMEOUT", STREAM_IDLE_TIMEOUT)
    first_byte = _seconds_env(env, "RAM_FIRST_BYTE_TIMEOUT", FIRST_BYTE_TIMEOUT)
    if mock or env.get("QUERY_MOCK") == "1" or provider == MOCK:
        offline = provider_registry.get(MOCK)
        assert offline is not None  # built in
        return ProviderConfig(MOCK, model or offline.default_model, max_retries=retries)
    if provider is None:
        provider = default_provider(env)
        if provider is None:
            raise ConfigError(no_key_message())
    found = endpoint(env, provider, model)
    if isinstance(found, str):
        if found.startswith("unknown provider"):
            found = f"{found}: use {either([*provider_registry.flag_choices(), '--mock'])}"
        raise ConfigError(found)
    return ProviderConfig(
        found.kind,
        found.model,
        found.base_url,
        api_key=found.api_key,
        auth_token=found.auth_token,
        max_output_tokens=max_output,
        max_retries=retries,
        stream_idle_timeout=idle,
        first_byte_timeout=first_byte,
    )


def key_choices() -> str:
    """The keys that choose a provider, for the messages that say none is set: `OPENAI_API_KEY (DeepSeek by default,
    …) or ANTHROPIC_API_KEY`."""
    return either(
        spec.key_variable + (f" ({spec.key_note})" if spec.key_note else "")
        for spec in provider_registry.providers()
        if not spec.offline
    )


def no_key_message() -> str:
    """The one line for no provider at all: which keys to set, which base URLs may name a local server instead."""
    local = either(
        spec.base_url_variable
        for spec in provider_registry.providers()
        if not spec.offline and spec.loopback_needs_no_key
    )
    return (
        f"No API key found. Set {key_choices()}, point {local} at a local server (no key needed), or run `ram --mock` "
        "for the offline scripted demo."
    )


def either(items: Iterable[str]) -> str:
    """`a`, `a or b`, `a, b or c`: choices in a message."""
    words = list(items)
    return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else "".join(words)


def build_provider(config: ProviderConfig, *, mock_chunk_delay: float = 0.0) -> ModelProvider:
    """The provider for a config; each provider's module is imported only when it is chosen (`ProviderSpec.load`)."""
    spec = provider_registry.get(config.kind)
    if spec is None:
        raise ConfigError(f"unknown provider {config.kind!r}: use {either(provider_registry.names())}")
    provider_class = spec.load()
    if spec.offline:
        built: ModelProvider = provider_class(chunk_delay=mock_chunk_delay, model=config.model)
        return built
    built = provider_class(
        api_key=config.api_key,
        base_url=config.base_url,
        model=config.model,
        max_tokens=config.max_output_tokens,
        auth_token=config.auth_token,
        idle_timeout=config.stream_idle_timeout,
        first_byte_timeout=config.first_byte_timeout,
    )
    return built
