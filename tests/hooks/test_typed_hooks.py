"""Typed hooks through the library: an `AgentHooks` subclass given as `Agent(hooks=...)` gets each event as the
struct `hooks.spec` declares for it, and its answers steer the session as a command hook's would — against the
fake model server, with the real session, tool runner and Bash tool."""

from __future__ import annotations

from pathlib import Path

import pytest

from react_agent_mini import Agent, AgentHooks, ConfigError, HookOutput
from react_agent_mini.hooks import HOOK_EVENTS
from react_agent_mini.hooks.spec import (
    EVENTS,
    PostToolUseInput,
    PreToolUseInput,
    SessionStartInput,
    StopInput,
    UserPromptSubmitInput,
)
from react_agent_mini.hooks.typed import hook_entries

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall


class Guard(AgentHooks):
    def __init__(self) -> None:
        self.seen: list[object] = []

    async def on_session_start(self, start: SessionStartInput) -> HookOutput | None:
        self.seen.append(start)
        return None

    async def on_user_prompt_submit(self, prompt: UserPromptSubmitInput) -> HookOutput | None:
        self.seen.append(prompt)
        return HookOutput(additional_context="The user's name is Ada.")

    async def on_pre_tool_use(self, call: PreToolUseInput) -> HookOutput | None:
        self.seen.append(call)
        if "rm " in call.tool_input.get("command", ""):
            return HookOutput(block=True, reason="Not here: move the files to trash/ instead.")
        return HookOutput(permission="allow", permission_reason="echo is fine")

    async def on_post_tool_use(self, call: PostToolUseInput) -> HookOutput | None:
        self.seen.append(call)
        return HookOutput(updated_output=call.tool_response.content.upper())

    async def on_stop(self, stop: StopInput) -> HookOutput | None:
        self.seen.append(stop)
        return None


def _tool_results(body: dict[str, object]) -> dict[str, str]:
    messages = body["messages"]
    assert isinstance(messages, list)
    return {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}


async def test_a_typed_hook_class_steers_the_session(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("x")
    fake_llm.enqueue(
        Reply(
            tool_calls=[
                ToolCall("Bash", {"command": "rm keep.txt"}, id="c1"),
                ToolCall("Bash", {"command": "echo hello"}, id="c2"),
            ]
        ),
        Reply(text="Done."),
    )
    guard = Guard()
    async with Agent(cwd=tmp_path, base_url=fake_llm.openai_base_url, api_key="test-key", hooks=guard) as agent:
        result = await agent.run("tidy up")
    assert result.text == "Done."
    results = _tool_results(fake_llm.requests[1].body)
    assert "Not here: move the files to trash/ instead." in results["c1"]
    assert results["c2"] == "HELLO"  # its output replaced by the PostToolUse hook
    assert (tmp_path / "keep.txt").exists()
    assert "The user's name is Ada." in str(fake_llm.requests[0].body["messages"])
    kinds = [type(event).__name__ for event in guard.seen]
    assert kinds[0] == "SessionStartInput" and kinds[-1] == "StopInput"
    assert kinds.count("PreToolUseInput") == 2 and kinds.count("PostToolUseInput") == 1
    call = next(event for event in guard.seen if isinstance(event, PreToolUseInput))
    assert (call.hook_event_name, call.tool_name, call.tool_use_id, call.cwd) == (
        "PreToolUse",
        "Bash",
        "c1",
        str(tmp_path.resolve()),
    )
    assert call.session_id == agent.session_id


def test_only_the_methods_a_subclass_overrides_are_registered() -> None:
    assert [entry.event for entry in hook_entries(Guard())] == [
        "PreToolUse",
        "PostToolUse",
        "UserPromptSubmit",
        "Stop",
        "SessionStart",
    ]
    assert hook_entries(AgentHooks()) == []
    assert tuple(EVENTS) == HOOK_EVENTS  # every point is declared, in order, with a method of AgentHooks
    assert all(callable(getattr(AgentHooks, spec.method)) for spec in EVENTS.values())


def test_hooks_must_be_an_agent_hooks(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^hooks: expected an instance of an AgentHooks subclass"):
        Agent(cwd=tmp_path, provider="mock", hooks=print)  # type: ignore[arg-type]


def test_the_command_hooks_read_the_declarations() -> None:
    from react_agent_mini.hooks.command.run import BLOCKING, CONTEXT_FROM_STDOUT

    assert {"PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop"} == BLOCKING
    assert {"UserPromptSubmit", "SessionStart"} == CONTEXT_FROM_STDOUT
