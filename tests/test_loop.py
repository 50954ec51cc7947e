"""The ReAct loop driven with a scripted model and real tools: outcomes, pairing, aborts, limits."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec
import pytest

from react_agent_mini.abort import AbortSignal
from react_agent_mini.events import (
    AssistantTurn,
    Notice,
    QueryEvent,
    Terminal,
    TextDelta,
    ToolFinished,
    ToolResults,
    ToolStarted,
)
from react_agent_mini.loop import QueryDeps, QueryParams, query
from react_agent_mini.messages import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    unanswered_tool_uses,
    user_text,
)
from react_agent_mini.permissions.policy import Allow, Decision, Deny, PermissionPolicy
from react_agent_mini.providers.errors import BadRequestError
from react_agent_mini.tools.base import ModelTool, Tool, ToolContext, ToolOutput, ToolRegistry
from react_agent_mini.tools.builtin.echo import EchoTool
from react_agent_mini.tools.builtin.read import ReadTool
from react_agent_mini.tools.runner import INTERRUPTED, SKIPPED

from .scripted import ScriptedModel, call, reply


class WaitArgs(msgspec.Struct):
    seconds: float


class WaitTool(ModelTool[WaitArgs]):
    """Read-only, parallel-safe; records when it ran so tests can see overlap."""

    name = "Wait"
    description = "wait"
    args_model = WaitArgs
    read_only = True
    concurrency_safe = True

    def __init__(self) -> None:
        self.running = 0
        self.max_running = 0

    async def call(self, args: WaitArgs, ctx: ToolContext) -> ToolOutput:
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            await asyncio.sleep(args.seconds)
        finally:
            self.running -= 1
        return ToolOutput(f"waited {args.seconds}")


class BoomArgs(msgspec.Struct):
    pass


class BoomTool(ModelTool[BoomArgs]):
    name = "Boom"
    description = "raises"
    args_model = BoomArgs
    read_only = True

    async def call(self, args: BoomArgs, ctx: ToolContext) -> ToolOutput:
        raise RuntimeError("kaboom")


class TouchArgs(msgspec.Struct):
    file_path: str


class TouchTool(ModelTool[TouchArgs]):
    """Not read-only: writes a file, so permission matters."""

    name = "Touch"
    description = "create a file"
    args_model = TouchArgs

    async def call(self, args: TouchArgs, ctx: ToolContext) -> ToolOutput:
        (ctx.cwd / args.file_path).write_text("touched")
        return ToolOutput(f"created {args.file_path}")


def registry(*extra: Tool) -> ToolRegistry:
    return ToolRegistry([EchoTool(), *extra])


async def run(
    model: ScriptedModel,
    tmp_path: Path,
    *,
    tools: ToolRegistry | None = None,
    max_turns: int = 20,
    deps: QueryDeps | None = None,
    signal: AbortSignal | None = None,
    history: list[Message] | None = None,
) -> list[QueryEvent]:
    params = QueryParams(
        messages=history or [user_text("go")],
        tools=tools or registry(),
        context=ToolContext(cwd=tmp_path),
        system="sys",
        max_turns=max_turns,
        signal=signal or AbortSignal(),
    )
    return [e async for e in query(params, deps or QueryDeps(call_model=model))]


def terminal(events: list[QueryEvent]) -> Terminal:
    last = events[-1]
    assert isinstance(last, Terminal)
    assert sum(isinstance(e, Terminal) for e in events) == 1
    return last


def appended(events: list[QueryEvent]) -> list[Message]:
    out: list[Message] = []
    for e in events:
        if isinstance(e, AssistantTurn | ToolResults):
            out.append(e.message)
    return out


def assert_paired_before_each_call(model: ScriptedModel) -> None:
    """Invariant 2, checked on what the model actually received."""
    for request in model.requests:
        assert unanswered_tool_uses(request.messages) == []
        for i, message in enumerate(request.messages):
            if message.tool_uses:
                following = request.messages[i + 1]
                assert [r.tool_use_id for r in following.tool_results] == [u.id for u in message.tool_uses]


async def test_text_answer_completes_and_streams_deltas(tmp_path: Path) -> None:
    model = ScriptedModel([reply("Hello, world")])
    events = await run(model, tmp_path)
    assert terminal(events) == Terminal("completed", 1)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello, world"
    assert model.requests[0].system == "sys"
    assert [t.name for t in model.requests[0].tools] == ["Echo"]


async def test_tool_round_trip_sends_call_and_result_to_the_next_request(tmp_path: Path) -> None:
    model = ScriptedModel([reply("Let me echo.", call("Echo", "t1", message="ping")), reply("done")])
    events = await run(model, tmp_path)
    assert terminal(events) == Terminal("completed", 2)
    second = model.requests[1].messages
    assert [m.role for m in second] == ["user", "assistant", "user"]
    # text written alongside the tool call stays in the assistant message
    assert second[1].content == (TextBlock("Let me echo."), ToolUseBlock("t1", "Echo", {"message": "ping"}))
    assert second[2].content == (ToolResultBlock("t1", "ping"),)
    assert [type(e).__name__ for e in events if not isinstance(e, TextDelta)] == [
        "AssistantTurn",
        "ToolStarted",
        "ToolFinished",
        "ToolResults",
        "AssistantTurn",
        "Terminal",
    ]


async def test_two_calls_in_one_message_run_in_parallel_and_answer_in_order(tmp_path: Path) -> None:
    wait = WaitTool()
    model = ScriptedModel(
        [
            reply(
                call("Wait", "slow", seconds=0.2), call("Wait", "fast", seconds=0.01), call("Echo", "e", message="x")
            ),
            reply("ok"),
        ]
    )
    events = await run(model, tmp_path, tools=registry(wait))
    assert wait.max_running == 2
    finished = [e.tool_use.id for e in events if isinstance(e, ToolFinished)]
    assert sorted(finished) == ["e", "fast", "slow"]
    assert finished.index("fast") < finished.index("slow")  # reported as they complete
    results = model.requests[1].messages[-1].tool_results
    assert [r.tool_use_id for r in results] == ["slow", "fast", "e"]  # but answered in call order
    assert results[0].content == "waited 0.2"


async def test_every_failure_kind_gets_exactly_one_error_result(tmp_path: Path) -> None:
    bad_json = ToolUseBlock("j", "Echo", {}, input_error="arguments were invalid JSON (Expecting value)")
    model = ScriptedModel(
        [
            reply(
                call("Nope", "u"),
                call("Echo", "v", msg="wrong field"),
                bad_json,
                call("Boom", "b"),
                call("Echo", "ok", message="fine"),
            ),
            reply("done"),
        ]
    )
    events = await run(model, tmp_path, tools=registry(BoomTool()))
    assert terminal(events).reason == "completed"
    results = {r.tool_use_id: r for r in model.requests[1].messages[-1].tool_results}
    assert list(results) == ["u", "v", "j", "b", "ok"]
    assert results["u"].is_error and "Unknown tool: Nope" in results["u"].content and "Echo" in results["u"].content
    assert results["v"].is_error and "message: field required" in results["v"].content
    assert results["j"].is_error and "invalid JSON" in results["j"].content
    assert results["b"].is_error and "RuntimeError: kaboom" in results["b"].content
    assert results["ok"] == ToolResultBlock("ok", "fine")
    assert_paired_before_each_call(model)


async def test_nul_characters_and_a_failing_permission_check_are_error_results(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    policy = PermissionPolicy(tmp_path, mode="bypassPermissions")
    model = ScriptedModel(
        [
            reply(
                call("Read", "r", file_path="app\0.py"),
                call("Touch", "t", file_path="x\0y"),
                call("Read", "ok", file_path="app.py"),
                call("Echo", "e", message="nul \0 in free text is fine"),
            ),
            reply(call("Touch", "p", file_path="fine.txt")),
            reply("done"),
        ]
    )
    calls = 0

    async def policy_then_broken(tool: Tool, args: Mapping[str, Any], info: object = None) -> Decision:
        nonlocal calls
        calls += 1
        if calls > 2:  # the first turn checks only the two valid calls
            raise ValueError("embedded null byte")
        return await policy(tool, args)

    deps = QueryDeps(call_model=model, can_use_tool=policy_then_broken)
    events = await run(model, tmp_path, tools=registry(ReadTool(), TouchTool()), deps=deps)
    assert terminal(events).reason == "completed"
    results = {r.tool_use_id: r for r in model.requests[1].messages[-1].tool_results}
    assert results["r"].is_error and "file_path: contains a NUL character" in results["r"].content
    assert results["t"].is_error and "file_path: contains a NUL character" in results["t"].content
    assert not results["ok"].is_error and "x = 1" in results["ok"].content  # the siblings keep their results
    assert results["e"] == ToolResultBlock("e", "nul \0 in free text is fine")
    broken = model.requests[2].messages[-1].tool_results[0]
    assert broken.is_error and broken.content.startswith("Permission check failed for Touch: ValueError")
    assert not (tmp_path / "fine.txt").exists()
    assert_paired_before_each_call(model)


async def test_denied_call_is_not_run_and_model_reads_why(tmp_path: Path) -> None:
    async def deny_writes(tool: Tool, args: object, info: object = None) -> Decision:
        return Allow() if tool.read_only else Deny("writes are off")

    model = ScriptedModel([reply(call("Touch", "w", file_path="f.txt")), reply("ok")])
    deps = QueryDeps(call_model=model, can_use_tool=deny_writes)
    events = await run(model, tmp_path, tools=registry(TouchTool()), deps=deps)
    assert terminal(events).reason == "completed"
    assert not (tmp_path / "f.txt").exists()
    assert model.requests[1].messages[-1].tool_results == [ToolResultBlock("w", "writes are off", is_error=True)]


async def test_refusal_that_ends_the_turn_skips_the_rest(tmp_path: Path) -> None:
    async def user_says_no(tool: Tool, args: object, info: object = None) -> Decision:
        return Allow() if tool.read_only else Deny("The user refused.", end_turn=True)

    model = ScriptedModel([reply(call("Touch", "w", file_path="f.txt"), call("Echo", "e", message="later"))])
    deps = QueryDeps(call_model=model, can_use_tool=user_says_no)
    events = await run(model, tmp_path, tools=registry(TouchTool()), deps=deps)
    assert terminal(events) == Terminal("aborted", 1)
    last = appended(events)[-1]
    assert last.tool_results == [
        ToolResultBlock("w", "The user refused.", is_error=True),
        ToolResultBlock("e", SKIPPED, is_error=True),
    ]
    assert len(model.requests) == 1


async def test_default_policy_denies_non_read_only_tools(tmp_path: Path) -> None:
    model = ScriptedModel([reply(call("Touch", "w", file_path="f.txt")), reply("ok")])
    await run(model, tmp_path, tools=registry(TouchTool()))
    result = model.requests[1].messages[-1].tool_results[0]
    assert result.is_error and "Permission denied: Touch" in result.content
    assert not (tmp_path / "f.txt").exists()


async def test_abort_during_the_stream_appends_nothing(tmp_path: Path) -> None:
    model = ScriptedModel([reply("never finished")], stream_delay=5)
    signal = AbortSignal()
    asyncio.get_running_loop().call_later(0.05, signal.abort)
    events = await run(model, tmp_path, signal=signal)
    assert terminal(events).reason == "aborted"
    assert appended(events) == []


async def test_abort_during_a_tool_answers_every_call(tmp_path: Path) -> None:
    model = ScriptedModel(
        [reply(call("Echo", "e", message="x"), call("Wait", "w", seconds=5), call("Touch", "t", file_path="a"))]
    )

    async def allow_all(tool: Tool, args: object, info: object = None) -> Decision:
        return Allow()

    signal = AbortSignal()
    asyncio.get_running_loop().call_later(0.1, signal.abort)
    # Echo and Wait run together and Echo finishes; Wait is interrupted; Touch (a later batch) never starts.
    events = await run(
        model,
        tmp_path,
        tools=registry(TouchTool(), WaitTool()),
        deps=QueryDeps(call_model=model, can_use_tool=allow_all),
        signal=signal,
    )
    assert terminal(events).reason == "aborted"
    history = [user_text("go"), *appended(events)]
    assert unanswered_tool_uses(history) == []
    results = history[-1].tool_results
    assert [r.content for r in results] == ["x", INTERRUPTED, SKIPPED]
    assert [r.is_error for r in results] == [False, True, True]
    assert not (tmp_path / "a").exists()


async def test_max_turns_stops_an_endless_tool_user(tmp_path: Path) -> None:
    model = ScriptedModel([lambda request: reply(call("Echo", "again", message=f"x{len(request.messages)}"))])
    events = await run(model, tmp_path, max_turns=3)
    assert terminal(events) == Terminal("max_turns", 3)
    assert len(model.requests) == 3
    assert isinstance(events[-2], ToolResults)  # the last calls were still answered


async def test_output_limit_never_runs_a_cut_tool_call(tmp_path: Path) -> None:
    touched = TouchTool()
    cut = ToolUseBlock("w", "Touch", {}, input_error="arguments were cut off by the output limit")
    model = ScriptedModel([reply("Writing", cut, stop="max_tokens"), reply("retry later")])

    async def allow_all(tool: Tool, args: object, info: object = None) -> Decision:
        return Allow()

    events = await run(
        model, tmp_path, tools=registry(touched), deps=QueryDeps(call_model=model, can_use_tool=allow_all)
    )
    assert terminal(events) == Terminal("completed", 2)
    assert not any(isinstance(e, ToolStarted) for e in events)
    assert any(isinstance(e, Notice) and "output token limit" in e.text for e in events)
    [result] = model.requests[1].messages[-1].tool_results
    assert result.tool_use_id == "w" and result.is_error
    assert result.content.startswith("Not run: your call to Touch was cut off by the output token limit (5 tokens)")


async def test_output_limit_on_text_says_so_and_stops(tmp_path: Path) -> None:
    model = ScriptedModel([reply("The answer is", stop="max_tokens")])
    events = await run(model, tmp_path)
    assert terminal(events).reason == "completed"
    assert any(isinstance(e, Notice) and "cut off" in e.text for e in events)


async def test_provider_error_ends_with_its_message(tmp_path: Path) -> None:
    model = ScriptedModel([BadRequestError("openai API error 400: bad things")])
    events = await run(model, tmp_path)
    assert terminal(events) == Terminal("error", 1, "openai API error 400: bad things")


async def test_outbound_copy_goes_through_microcompact_and_history_keeps_everything(tmp_path: Path) -> None:
    seen: list[int] = []

    def drop_all_but_last(messages, options):
        seen.append(len(messages))
        return list(messages)[-1:]

    history = [user_text("first"), reply("one").message, user_text("second")]
    model = ScriptedModel([reply("two")])
    events = await run(
        model, tmp_path, history=history, deps=QueryDeps(call_model=model, microcompact=drop_all_but_last)
    )
    assert seen == [3]
    assert model.requests[0].messages == [history[-1]]
    assert terminal(events).reason == "completed"
    assert len(history) == 3  # the caller's list is untouched


@pytest.mark.parametrize("trace_on", [True, False])
async def test_trace_lines(
    tmp_path: Path, trace_on: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TRACE", "1" if trace_on else "0")
    model = ScriptedModel([reply(call("Echo", "t1", message="secret-content")), reply("done")])
    await run(model, tmp_path)
    err = capsys.readouterr().err
    if not trace_on:
        assert "[trace]" not in err
        return
    lines = [line for line in err.splitlines() if line.startswith("[trace]")]
    assert lines == [
        "[trace] query.turn_start turn=1",
        "[trace] tool.start name=Echo id=t1",
        "[trace] tool.end name=Echo id=t1 ok=true",
        "[trace] query.turn_start turn=2",
        "[trace] query.turn_end reason=completed turn=2",
    ]
    assert "secret-content" not in err


async def test_validation_messages_name_the_field(tmp_path: Path) -> None:
    from react_agent_mini.tools.base import ToolInputError

    wait = WaitTool()
    assert wait.validate({"seconds": "0.5", "extra": 1}).seconds == 0.5  # lax and tolerant, like models need
    cases: list[tuple[dict[str, object], str]] = [
        ({}, "seconds: field required"),
        ({"seconds": "soon"}, "seconds: expected `float`, got `str`"),
        ({"seconds": [1]}, "seconds: expected `float`, got `array`"),
    ]
    for raw, expected in cases:
        with pytest.raises(ToolInputError) as caught:
            wait.validate(raw)
        assert str(caught.value) == expected


async def test_parallel_calls_are_bounded_and_a_failure_does_not_cancel_siblings(tmp_path: Path) -> None:
    from react_agent_mini.tools.runner import MAX_PARALLEL

    class SafeBoom(BoomTool):
        concurrency_safe = True

    wait = WaitTool()
    calls = [call("Wait", f"w{i}", seconds=0.05) for i in range(MAX_PARALLEL + 5)]
    model = ScriptedModel([reply(call("Boom", "b"), *calls), reply("ok")])
    await run(model, tmp_path, tools=registry(wait, SafeBoom()))
    assert wait.max_running == MAX_PARALLEL
    results = model.requests[1].messages[-1].tool_results
    assert results[0].is_error and "kaboom" in results[0].content
    assert [r.content for r in results[1:]] == ["waited 0.05"] * (MAX_PARALLEL + 5)
