"""Provider selection from flags and environment."""

from __future__ import annotations

import pytest

from react_agent_mini.config import ConfigError, ProviderConfig, resolve_provider


def test_openai_is_chosen_first_with_deepseek_defaults() -> None:
    config = resolve_provider({"OPENAI_API_KEY": "sk-1", "ANTHROPIC_API_KEY": "ak"})
    assert (config.kind, config.base_url, config.model) == ("openai", "https://api.deepseek.com", "deepseek-chat")
    assert "sk-1" not in repr(config)


def test_anthropic_when_only_its_key_is_set() -> None:
    config = resolve_provider({"ANTHROPIC_API_KEY": "ak", "ANTHROPIC_MODEL": "claude-x"})
    assert (config.kind, config.base_url, config.model) == ("anthropic", "https://api.anthropic.com", "claude-x")


def test_flags_override_environment() -> None:
    env = {"OPENAI_API_KEY": "sk", "ANTHROPIC_API_KEY": "ak", "OPENAI_MODEL": "gpt-x"}
    assert resolve_provider(env, provider="anthropic").kind == "anthropic"
    assert resolve_provider(env, model="deepseek-reasoner").model == "deepseek-reasoner"


def test_mock_needs_no_key() -> None:
    assert resolve_provider({}, mock=True).kind == "mock"
    assert resolve_provider({"QUERY_MOCK": "1"}).kind == "mock"


def test_local_server_needs_no_key() -> None:
    config = resolve_provider({"OPENAI_BASE_URL": "http://localhost:11434/v1", "OPENAI_MODEL": "qwen3"})
    assert config == ProviderConfig("openai", "qwen3", "http://localhost:11434/v1", api_key="local")


@pytest.mark.parametrize(
    ("env", "provider", "message"),
    [
        ({}, None, "No API key found"),
        ({"ANTHROPIC_API_KEY": "ak"}, "openai", "OPENAI_API_KEY is not set"),
        ({"OPENAI_API_KEY": "sk"}, "anthropic", "ANTHROPIC_API_KEY is not set"),
        ({"OPENAI_API_KEY": "sk", "RAM_MAX_RETRIES": "lots"}, None, "RAM_MAX_RETRIES must be a whole number"),
    ],
)
def test_setup_errors_say_what_to_do(env: dict[str, str], provider: str | None, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        resolve_provider(env, provider=provider)


def test_numeric_settings() -> None:
    config = resolve_provider({"OPENAI_API_KEY": "sk", "RAM_MAX_RETRIES": "0", "RAM_MAX_OUTPUT_TOKENS": "1024"})
    assert (config.max_retries, config.max_output_tokens) == (0, 1024)
