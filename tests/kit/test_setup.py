"""`kit.setup`: the fail-closed rule stated once. A real broken settings file: where nobody can answer, nothing may
run (headless exits 2 saying so); where a person can, every call is asked for and the session goes on."""

from __future__ import annotations

from pathlib import Path

from react_agent_mini.app import SessionOptions
from react_agent_mini.config import ProviderConfig
from react_agent_mini.host import SessionHost
from react_agent_mini.kit.setup import setup_report
from react_agent_mini.permissions.configured import HEADLESS_FAIL_CLOSED, REPL_FAIL_CLOSED

from ..fakes.fake_llm import FakeLLMServer
from ..test_cli import env_for, ram


def broken(root: Path) -> None:
    (root / ".claude").mkdir()
    (root / ".claude/settings.json").write_text('{"permissions": {"allow": [')


async def test_broken_settings_stop_the_unattended_ask_the_attended(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    broken(tmp_path)
    config = ProviderConfig("openai", "deepseek-chat", base_url=fake_llm.openai_base_url, api_key="test-key")
    async with SessionHost.build(config, SessionOptions(tmp_path, strict_mcp=True)) as host:
        unattended, attended = setup_report(host, can_ask=False), setup_report(host, can_ask=True)
    assert unattended.refused.endswith(HEADLESS_FAIL_CLOSED) and "settings.json" in unattended.refused
    assert any(line.startswith("error: ") and line.endswith(HEADLESS_FAIL_CLOSED) for line in unattended.lines)
    assert attended.refused == "" and any(line.endswith(REPL_FAIL_CLOSED) for line in attended.lines)


def test_headless_exits_2_before_any_request(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    broken(tmp_path)
    done = ram("-p", "hello", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert done.returncode == 2 and HEADLESS_FAIL_CLOSED in done.stderr and "Traceback" not in done.stderr
    assert fake_llm.requests == []
