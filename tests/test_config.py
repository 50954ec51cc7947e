"""Provider selection from flags and environment, and `scripts/run` choosing between the demo and a real run by
the same rule."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from react_agent_mini.config import ConfigError, ProviderConfig, resolve_provider
from react_agent_mini.provider_env import default_provider

from .fakes.fake_llm import FakeLLMServer, Reply
from .test_first_hour import checkout, run


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


# ---- one rule for keys: a loopback base URL needs none, on both providers ----


@pytest.mark.parametrize(
    ("env", "chosen"),
    [
        ({"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080"}, "anthropic"),
        ({"ANTHROPIC_BASE_URL": "http://localhost:4000/"}, "anthropic"),
        ({"OPENAI_BASE_URL": "http://[::1]:11434/v1"}, "openai"),
        ({"OPENAI_BASE_URL": "http://localhost:11434/v1", "ANTHROPIC_BASE_URL": "http://127.0.0.1:8080"}, "openai"),
        ({"ANTHROPIC_API_KEY": "ak", "OPENAI_BASE_URL": "http://localhost:11434/v1"}, "anthropic"),  # a key first
        ({"ANTHROPIC_BASE_URL": "https://gateway.example.com"}, None),
        ({"OPENAI_BASE_URL": "not a url at all"}, None),
        ({}, None),
    ],
)
def test_the_default_provider_is_the_first_with_a_key_then_the_first_local_server(
    env: dict[str, str], chosen: str | None
) -> None:
    assert default_provider(env) == chosen


def test_a_local_anthropic_compatible_server_needs_no_key() -> None:
    config = resolve_provider({"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080", "ANTHROPIC_MODEL": "local-claude"})
    assert config == ProviderConfig("anthropic", "local-claude", "http://127.0.0.1:8080", api_key="local")
    chosen = resolve_provider({"ANTHROPIC_BASE_URL": "http://localhost:4000"}, provider="anthropic")
    assert (chosen.kind, chosen.api_key) == ("anthropic", "local")
    token = resolve_provider({"ANTHROPIC_BASE_URL": "http://localhost:4000", "ANTHROPIC_AUTH_TOKEN": "t"})
    assert (token.api_key, token.auth_token) == ("", "t")  # a token given is sent, and no placeholder key


def test_a_remote_endpoint_still_needs_its_key() -> None:
    with pytest.raises(ConfigError, match=r"ANTHROPIC_API_KEY is not set \(needed for https://gateway.example.com"):
        resolve_provider({"ANTHROPIC_BASE_URL": "https://gateway.example.com"}, provider="anthropic")
    with pytest.raises(ConfigError, match="No API key found"):
        resolve_provider({"ANTHROPIC_BASE_URL": "https://gateway.example.com"})


def test_the_first_byte_limit_has_a_default_and_a_variable() -> None:
    assert resolve_provider({"OPENAI_API_KEY": "sk"}).first_byte_timeout == 600.0
    assert resolve_provider({"OPENAI_API_KEY": "sk", "RAM_FIRST_BYTE_TIMEOUT": "90"}).first_byte_timeout == 90.0
    with pytest.raises(ConfigError, match="RAM_FIRST_BYTE_TIMEOUT must be a number of seconds above 0, got 'soon'"):
        resolve_provider({"OPENAI_API_KEY": "sk", "RAM_FIRST_BYTE_TIMEOUT": "soon"})


# ---- scripts/run decides between the demo and a real run by the same rule ----

DEMO_LINE = "running the offline scripted demo"


def checkout_with_venv(tmp_path: Path) -> Path:
    """`test_first_hour.checkout`, whose `.venv/bin/python` is also a working venv's Python (the venv running these
    tests: its `pyvenv.cfg` and `lib/`), as `scripts/run` asks it which provider the environment names."""
    root = checkout(tmp_path)
    shutil.copy2(Path(sys.prefix) / "pyvenv.cfg", root / ".venv" / "pyvenv.cfg")
    (root / ".venv" / "lib").symlink_to(Path(sys.prefix) / "lib")
    return root


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_scripts_run_uses_a_keyless_loopback_server_as_ram_does(wire: str, tmp_path: Path) -> None:
    root = checkout_with_venv(tmp_path)
    with FakeLLMServer(api_key="local") as server:
        server.enqueue(Reply(text="From the local server."), Reply(text="From the local server, again."))
        base = (
            {"OPENAI_BASE_URL": server.openai_base_url}
            if wire == "openai"
            else {"ANTHROPIC_BASE_URL": server.anthropic_base_url}
        )
        script = run([str(root / "scripts/run"), "hi"], tmp_path, **base)
        direct = run([str(root / ".venv/bin/ram"), "hi"], tmp_path, **base)
        assert [request.wire for request in server.requests] == [wire, wire]
    assert (script.returncode, script.stdout) == (0, "From the local server.\n"), script.stderr
    assert DEMO_LINE not in script.stderr
    assert (direct.returncode, direct.stdout) == (0, "From the local server, again.\n"), direct.stderr


def test_scripts_run_without_a_provider_runs_the_demo_and_says_why(tmp_path: Path) -> None:
    root = checkout_with_venv(tmp_path)
    remote = run([str(root / "scripts/run"), "echo hi"], tmp_path, ANTHROPIC_BASE_URL="https://gateway.example.com")
    assert remote.returncode == 0, remote.stderr
    assert DEMO_LINE in remote.stderr and "Echo reply: hi" in remote.stdout
