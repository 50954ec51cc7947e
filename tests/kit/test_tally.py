"""`kit.tally.key_source`: `system/init`'s `apiKeySource` names the variable the provider's key (or token) came from,
read from `provider_registry`, so a provider registered there is covered with no table of its own to extend."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from react_agent_mini import provider_registry
from react_agent_mini.config import resolve_provider
from react_agent_mini.kit.tally import key_source
from react_agent_mini.provider_registry import ProviderSpec


@pytest.fixture
def registered() -> Iterator[None]:
    provider_registry.register(
        ProviderSpec(
            "example",
            "react_agent_mini.providers.openai_compat.OpenAICompatProvider",
            key_variable="EXAMPLE_API_KEY",
            token_variable="EXAMPLE_TOKEN",
            base_url_variable="EXAMPLE_BASE_URL",
            default_base_url="https://api.example.com/v1",
            default_model="example-1",
            loopback_needs_no_key=True,
        )
    )
    try:
        yield
    finally:
        provider_registry.unregister("example")


@pytest.mark.parametrize(
    ("provider", "env", "source"),
    [
        ("openai", {"OPENAI_API_KEY": "sk-1"}, "OPENAI_API_KEY"),
        ("openai", {"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"}, "none"),  # a local server, no key
        ("anthropic", {"ANTHROPIC_API_KEY": "sk-ant"}, "ANTHROPIC_API_KEY"),
        ("anthropic", {"ANTHROPIC_AUTH_TOKEN": "tok"}, "ANTHROPIC_AUTH_TOKEN"),
        ("anthropic", {"ANTHROPIC_API_KEY": "sk-ant", "ANTHROPIC_AUTH_TOKEN": "tok"}, "ANTHROPIC_API_KEY"),
        ("anthropic", {"ANTHROPIC_BASE_URL": "http://localhost:4000"}, "none"),  # was ANTHROPIC_API_KEY, unset
        ("mock", {}, "none"),
    ],
)
def test_the_built_in_providers(provider: str, env: dict[str, str], source: str) -> None:
    assert key_source(resolve_provider(env, provider=provider)) == source


@pytest.mark.usefixtures("registered")
def test_a_registered_provider_is_named_by_its_own_variables() -> None:
    assert key_source(resolve_provider({"EXAMPLE_API_KEY": "k"}, provider="example")) == "EXAMPLE_API_KEY"
    assert key_source(resolve_provider({"EXAMPLE_TOKEN": "t"}, provider="example")) == "EXAMPLE_TOKEN"
    local = {"EXAMPLE_BASE_URL": "http://localhost:9000/v1"}
    assert key_source(resolve_provider(local, provider="example")) == "none"
