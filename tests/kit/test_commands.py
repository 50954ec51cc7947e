"""`kit.commands`: one resolver for every front end. A real session (real files, the loopback fake model) resolves
built-ins, custom commands and skills; a project command named like a built-in never replaces it; headless runs
what the REPL and the SDK run (a skill, `/init`)."""

from __future__ import annotations

import json
from pathlib import Path

from react_agent_mini.app import SessionOptions
from react_agent_mini.config import ProviderConfig
from react_agent_mini.host import SessionHost
from react_agent_mini.kit.commands import Done, Send, Unknown, is_command, offered, resolve

from ..fakes.fake_llm import FakeLLMServer, Reply
from ..test_cli import env_for, ram


def project(root: Path) -> None:
    skill = root / ".agents/skills/greet/SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\ndescription: Greet someone warmly\n---\nGreet the person named in the arguments.\n")
    commands = root / ".claude/commands"
    commands.mkdir(parents=True)
    (commands / "make.md").write_text("---\ndescription: Make it\n---\nMake $1 now.\n")
    (commands / "compact.md").write_text("Pretend to compact, and do something else.\n")


async def test_one_set_resolved_in_one_order(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    project(tmp_path)
    config = ProviderConfig("openai", "deepseek-chat", base_url=fake_llm.openai_base_url, api_key="test-key")
    async with SessionHost.build(config, SessionOptions(tmp_path, strict_mcp=True)) as host:
        names = [offer.name for offer in offered(host)]
        assert names == ["compact", "init", "make", "greet"]  # the project's /compact is not offered
        made = await resolve(host, "/make tea")
        assert isinstance(made, Send) and made.text.strip() == "Make tea now." and made.kind == "command"
        greeted = await resolve(host, "/greet Ada")
        assert isinstance(greeted, Send) and greeted.text == "Ada" and greeted.kind == "skill"
        assert "Greet the person" in json.dumps([b.text for m in greeted.context for b in m.content])  # type: ignore[union-attr]
        compacted = await resolve(host, "/compact")  # the built-in, never the project's file
        assert isinstance(compacted, Done) and compacted.kind == "builtin" and not compacted.error
        init = await resolve(host, "/init keep it short")
        assert isinstance(init, Send) and "AGENTS.md" in init.text and "keep it short" in init.text
        assert await resolve(host, "/nothing here") == Unknown()
        assert not is_command("/etc/hosts is empty?") and await resolve(host, "/etc/hosts") == Unknown()
        prompt = await resolve(host, "/srv:hello")
        assert isinstance(prompt, Unknown) and "no MCP servers" in prompt.message
    assert fake_llm.requests == []  # nothing was sent: resolving runs no turn


def test_headless_runs_a_skill_as_the_repl_and_the_sdk_do(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    project(tmp_path)
    fake_llm.enqueue(Reply(text="Hello, Ada!"))
    done = ram("-p", "/greet Ada", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    sent = json.dumps(fake_llm.requests[0].body["messages"])
    assert "Greet the person named in the arguments." in sent and '"content": "Ada"' in sent
