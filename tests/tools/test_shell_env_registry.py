"""Every registered provider's key and token are withheld from a command, with no list to keep in step: a real
Bash tool run prints each with `printenv`, for the built-in providers and for one registered at run time."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from react_agent_mini import provider_registry
from react_agent_mini.app import withheld_credentials
from react_agent_mini.provider_registry import ProviderSpec
from react_agent_mini.tools.base import ToolContext
from react_agent_mini.tools.builtin.bash import BashTool

TOOL = BashTool()


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
        )
    )
    try:
        yield
    finally:
        provider_registry.unregister("example")


async def _printenv(ctx: ToolContext, names: list[str]) -> str:
    command = "".join(f"printenv {name}; " for name in names) + "printenv KEPT; echo done"
    out = await TOOL.call(TOOL.validate({"command": command}), ctx)
    return out.content


@pytest.mark.usefixtures("registered")
async def test_no_registered_provider_s_credential_reaches_a_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = [name for spec in provider_registry.providers() for name in spec.credentials]
    assert {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "EXAMPLE_API_KEY", "EXAMPLE_TOKEN"} <= set(
        names
    )
    for name in names:
        monkeypatch.setenv(name, f"secret-{name}")
    monkeypatch.setenv("KEPT", "the user's own")
    session = ToolContext(cwd=tmp_path)
    session.shell.withheld = withheld_credentials(tmp_path, {})  # as a session sets it (`app`)
    assert await _printenv(session, names) == "the user's own\ndone"
    assert await _printenv(ToolContext(cwd=tmp_path), names) == "the user's own\ndone"  # the default state too
    session.shell.withheld = frozenset()  # nothing withheld: the command does see them (the test can fail)
    assert "secret-EXAMPLE_TOKEN" in await _printenv(session, names)
