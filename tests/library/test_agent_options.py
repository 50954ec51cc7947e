"""`Agent(...)` and `run(prompt, ...)` take one list of arguments, `AgentOptions`: as keywords, or as a dict of
them made ahead (the claude-agent-sdk's `ClaudeAgentOptions` style); an argument that is not in it is refused."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import react_agent_mini
from react_agent_mini import Agent, AgentOptions, run
from react_agent_mini.library.options import DEFAULT_MAX_TURNS


async def test_options_made_ahead_open_the_same_session(tmp_path: Path) -> None:
    options = AgentOptions(cwd=tmp_path, provider="mock", max_turns=3, append_system_prompt="Be brief.")
    async with Agent(**options) as agent:
        result = await agent.run("hello")
    assert agent.cwd == tmp_path.resolve() and agent.model == "mock-scripted"
    assert result.stop_reason == "completed" and result.text


def test_an_argument_agent_options_lacks_is_a_type_error(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"^Agent\(\) got an unexpected keyword argument 'max_turn'$"):
        Agent(cwd=tmp_path, provider="mock", max_turn=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'promt'"):
        run("hi", cwd=tmp_path, provider="mock", promt="x")  # type: ignore[call-arg]


def test_agent_and_run_take_agent_options_and_nothing_else() -> None:
    for function in (Agent.__init__, run):
        (options,) = [p for p in inspect.signature(function).parameters.values() if p.kind is p.VAR_KEYWORD]
        assert options.annotation == "Unpack[AgentOptions]"
    keys = AgentOptions.__optional_keys__
    assert AgentOptions.__required_keys__ == frozenset() and len(keys) == 17
    assert {"hooks", "can_use_tool", "trust_project"} <= keys
    assert DEFAULT_MAX_TURNS == 20
    assert react_agent_mini.AgentOptions is AgentOptions
