"""Configuration read once at startup: which provider, which model, where, with which key.

Precedence: command-line flags, then environment variables, then defaults. The key is held here and in the
provider only; it is never traced, logged, or put in a prompt (`repr` hides it).

One rule for keys, on both providers: a loopback base URL (`localhost`, `127.0.0.1`, `::1`) needs none — a local
server (Ollama, llama.cpp, vLLM, a local Anthropic-compatible proxy) is used as if a key were set, and is sent a
placeholder. Without a flag, the provider is the first of: an OpenAI key, an Anthropic key or token, a loopback
`OPENAI_BASE_URL`, a loopback `ANTHROPIC_BASE_URL` (`provider_env.default_provider`, which `scripts/run` asks
too, to choose between the offline demo and a real run).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

import msgspec

from .provider_env import default_provider, is_loopback
from .providers.base import ModelProvider
from .providers.http import FIRST_BYTE_TIMEOUT, STREAM_IDLE_TIMEOUT

ProviderKind = Literal["openai", "anthropic", "mock"]

DEFAULT_OPENAI_BASE_URL = "https://api.deepseek.com"
DEFAULT_OPENAI_MODEL = "deepseek-chat"
DEFAULT_ANTHROPIC_BASE_URL = "https://api.anthropic.com"
DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-5"
DEFAULT_MAX_RETRIES = 4
LOCAL_KEY = "local"
"""What a loopback server without a key is sent as the key (servers that check none accept anything)."""

NO_KEY_MESSAGE = (
    "No API key found. Set OPENAI_API_KEY (DeepSeek by default, or any OpenAI-compatible server with "
    "OPENAI_BASE_URL) or ANTHROPIC_API_KEY, point OPENAI_BASE_URL or ANTHROPIC_BASE_URL at a local server "
    "(no key needed), or run `ram --mock` for the offline scripted demo."
)


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
    if mock or env.get("QUERY_MOCK") == "1" or provider == "mock":
        return ProviderConfig("mock", model or "mock-scripted", max_retries=retries)
    openai_key = env.get("OPENAI_API_KEY", "").strip()
    anthropic_key = env.get("ANTHROPIC_API_KEY", "").strip()
    anthropic_token = env.get("ANTHROPIC_AUTH_TOKEN", "").strip()
    if provider is None:
        provider = default_provider(env)
        if provider is None:
            raise ConfigError(NO_KEY_MESSAGE)
    if provider == "openai":
        base_url = env.get("OPENAI_BASE_URL", "").strip() or DEFAULT_OPENAI_BASE_URL
        if not openai_key and not is_loopback(base_url):
            raise ConfigError(f"OPENAI_API_KEY is not set (needed for {base_url}); or use `--mock`.")
        return ProviderConfig(
            "openai",
            model or env.get("OPENAI_MODEL", "").strip() or DEFAULT_OPENAI_MODEL,
            base_url,
            api_key=openai_key or LOCAL_KEY,
            max_output_tokens=max_output,
            max_retries=retries,
            stream_idle_timeout=idle,
            first_byte_timeout=first_byte,
        )
    if provider == "anthropic":
        base_url = env.get("ANTHROPIC_BASE_URL", "").strip() or DEFAULT_ANTHROPIC_BASE_URL
        if not anthropic_key and not anthropic_token and not is_loopback(base_url):
            raise ConfigError(
                f"ANTHROPIC_API_KEY is not set (needed for {base_url}; a gateway may take ANTHROPIC_AUTH_TOKEN "
                "instead); or use `--mock`."
            )
        return ProviderConfig(
            "anthropic",
            model or env.get("ANTHROPIC_MODEL", "").strip() or DEFAULT_ANTHROPIC_MODEL,
            base_url,
            api_key=anthropic_key or ("" if anthropic_token else LOCAL_KEY),
            auth_token=anthropic_token,
            max_output_tokens=max_output,
            max_retries=retries,
            stream_idle_timeout=idle,
            first_byte_timeout=first_byte,
        )
    raise ConfigError(f"unknown provider {provider!r}: use openai, anthropic or --mock")


def build_provider(config: ProviderConfig, *, mock_chunk_delay: float = 0.0) -> ModelProvider:
    """The provider for a config; each adapter module is imported only when chosen."""
    if config.kind == "openai":
        from .providers.openai_compat import OpenAICompatProvider

        return OpenAICompatProvider(
            config.api_key,
            config.base_url,
            config.model,
            config.max_output_tokens,
            idle_timeout=config.stream_idle_timeout,
            first_byte_timeout=config.first_byte_timeout,
        )
    if config.kind == "anthropic":
        from .providers.anthropic import AnthropicProvider

        return AnthropicProvider(
            config.api_key,
            config.base_url,
            config.model,
            config.max_output_tokens,
            config.auth_token,
            idle_timeout=config.stream_idle_timeout,
            first_byte_timeout=config.first_byte_timeout,
        )
    from .providers.mock import MockProvider

    return MockProvider(chunk_delay=mock_chunk_delay, model=config.model)
