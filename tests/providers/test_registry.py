"""The provider registry (`provider_registry`) is the one list of providers: the `--provider` choices of every
command, `Agent(provider=...)`, the choice without a flag, the error hints and the credentials withheld all read
it, so a provider registered there (here, one named `example`) is everywhere at once; and reading it imports no
provider class."""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from react_agent_mini import provider_registry
from react_agent_mini.acp.main import build_parser as acp_parser
from react_agent_mini.batch.cli import build_parser as batch_parser
from react_agent_mini.cli import build_parser as ram_parser
from react_agent_mini.config import ConfigError, build_provider, no_key_message, resolve_provider
from react_agent_mini.credentials import own_credentials
from react_agent_mini.library.options import provider_config
from react_agent_mini.mcp_serve.main import build_parser as mcp_serve_parser
from react_agent_mini.provider_env import default_provider
from react_agent_mini.provider_registry import ProviderSpec
from react_agent_mini.providers.errors import error_for_status
from react_agent_mini.providers.openai_compat import OpenAICompatProvider

EXAMPLE = ProviderSpec(
    "example",
    "react_agent_mini.providers.openai_compat.OpenAICompatProvider",
    key_variable="EXAMPLE_API_KEY",
    token_variable="EXAMPLE_TOKEN",
    base_url_variable="EXAMPLE_BASE_URL",
    default_base_url="https://api.example.com/v1",
    model_variable="EXAMPLE_MODEL",
    default_model="example-1",
    endpoint_kind="an Example endpoint",
)


@pytest.fixture
def example() -> Iterator[ProviderSpec]:
    provider_registry.register(EXAMPLE)
    try:
        yield EXAMPLE
    finally:
        provider_registry.unregister(EXAMPLE.name)


def _provider_choices(parser: argparse.ArgumentParser) -> tuple[str, ...]:
    (action,) = [a for a in parser._actions if "--provider" in a.option_strings]
    return tuple(action.choices or ())


def test_every_provider_flag_offers_the_registry_s_providers(example: ProviderSpec) -> None:
    for build in (ram_parser, acp_parser, batch_parser, mcp_serve_parser):
        assert _provider_choices(build()) == ("openai", "anthropic", "example") == provider_registry.flag_choices()
    assert provider_registry.names() == ("openai", "anthropic", "mock", "example")


def test_the_type_checkers_names_are_the_built_in_ones() -> None:
    source = Path(provider_registry.__file__).read_text(encoding="utf-8")
    (alias,) = [
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "ProviderName"
    ]
    assert isinstance(alias, ast.Subscript) and isinstance(alias.slice, ast.Tuple)
    names = tuple(ast.literal_eval(element) for element in alias.slice.elts)
    assert names == tuple(spec.name for spec in provider_registry.BUILT_IN)


def test_a_registered_provider_is_resolved_built_and_hinted_at(example: ProviderSpec) -> None:
    assert default_provider({"EXAMPLE_TOKEN": "t"}) == "example"
    assert default_provider({"EXAMPLE_TOKEN": "t", "OPENAI_API_KEY": "sk"}) == "openai"  # the table's order
    config = resolve_provider({"EXAMPLE_API_KEY": "ek", "EXAMPLE_MODEL": "example-2"})
    assert (config.kind, config.base_url, config.model, config.api_key) == (
        "example",
        "https://api.example.com/v1",
        "example-2",
        "ek",
    )
    built = build_provider(config)
    assert isinstance(built, OpenAICompatProvider)
    assert (built.base_url, built.model, built.api_key) == ("https://api.example.com/v1", "example-2", "ek")
    with pytest.raises(ConfigError, match=r"^EXAMPLE_API_KEY is not set \(.*may take EXAMPLE_TOKEN instead\)"):
        resolve_provider({}, provider="example")
    hint = str(error_for_status(404, "no such model", provider="example", retry_after=None, model="m"))
    assert "EXAMPLE_MODEL" in hint
    hint = str(error_for_status(404, "", provider="example", retry_after=None, base_url="https://x.example"))
    assert "an Example endpoint" in hint and "EXAMPLE_BASE_URL" in hint
    given = provider_config({}, provider="example", model=None, base_url="https://other.example", api_key="k")
    assert (given.kind, given.base_url, given.api_key) == ("example", "https://other.example", "k")
    assert {"EXAMPLE_API_KEY", "EXAMPLE_TOKEN"} <= own_credentials()
    assert "EXAMPLE_API_KEY" in no_key_message()


def test_the_messages_and_defaults_of_the_built_in_providers_are_unchanged() -> None:
    assert no_key_message() == (
        "No API key found. Set OPENAI_API_KEY (DeepSeek by default, or any OpenAI-compatible server with "
        "OPENAI_BASE_URL) or ANTHROPIC_API_KEY, point OPENAI_BASE_URL or ANTHROPIC_BASE_URL at a local server "
        "(no key needed), or run `ram --mock` for the offline scripted demo."
    )
    with pytest.raises(ConfigError, match=r"^unknown provider 'bogus': use openai, anthropic or --mock$"):
        resolve_provider({"OPENAI_API_KEY": "k"}, provider="bogus")
    local = resolve_provider({"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    assert (local.kind, local.api_key, local.model) == ("anthropic", "local", "claude-sonnet-4-5")
    with pytest.raises(ValueError, match="built-in"):
        provider_registry.unregister("openai")
    with pytest.raises(ValueError, match="registered already"):
        provider_registry.register(EXAMPLE.__class__("openai", "x.Y", default_model="m"))


def test_reading_the_registry_imports_no_provider_class() -> None:
    code = (
        "import sys\n"
        "from react_agent_mini import config, provider_env, provider_registry, credentials\n"
        "from react_agent_mini.provider_env import default_provider\n"
        "assert default_provider({'OPENAI_API_KEY': 'k'}) == 'openai'\n"
        "names = provider_registry.flag_choices(), credentials.own_credentials()\n"
        "print(sorted(m for m in sys.modules if m.rsplit('.', 1)[-1] in ('openai_compat', 'anthropic', 'mock')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stderr
