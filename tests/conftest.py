"""Shared fixtures: the loopback fake LLM server, and a guard that keeps tests off the network."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from .fakes.fake_llm import FakeLLMServer

# CI must be reproducible: property tests use a fixed seed unless a developer asks for fresh exploration
# (`pytest --hypothesis-profile=explore`), which is how new counterexamples get found and turned into tests.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, max_examples=500, print_blob=True)
settings.load_profile("ci")

# An early first request (`early/`) that the session's own first call does not match is an error in every test
# (in use it only costs time): whatever the early lane misses fails here. Subprocesses inherit it.
os.environ.setdefault("REACT_AGENT_MINI_EARLY_CHECK", "1")


@pytest.fixture
def fake_llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(api_key="test-key") as server:
        yield server


_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: Any) -> Any:
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and host not in ("127.0.0.1", "::1", "localhost") and not host.startswith("/"):
        raise OSError(f"tests must not reach the network (tried {host})")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any connection beyond loopback fails loudly (the real API must never be called from tests)."""
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests start without provider keys or switches from the developer's shell, and with their own empty
    user config and data directories (transcripts, user settings), inherited by the subprocesses they start."""
    home = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_MODEL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_MODEL",
        "QUERY_MOCK",
        "TRACE",
        "RAM_MAX_RETRIES",
        "RAM_MAX_OUTPUT_TOKENS",
        "ALLOW_WRITE",
        "MCP_CONFIG",
        "COMPACT",
        "COMPACT_THRESHOLD_CHARS",
        "AUTOCOMPACT",
        "AUTOCOMPACT_PERCENT",
        "CONTEXT_WINDOW_TOKENS",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def trusted(tmp_path: Path) -> Path:
    """The test's folder trusted as its user would (`ram trust --always`): its own hooks, MCP servers, allow rules
    and commands' allowed-tools apply. Without this, a workspace is an untrusted clone (see `trust/`)."""
    from react_agent_mini.trust.store import record_trust

    record_trust(tmp_path, (), always=True)
    return tmp_path
