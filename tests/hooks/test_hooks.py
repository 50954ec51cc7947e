"""Hooks (hooks.py) and the places they run — PreToolUse and PostToolUse in the tool runner, Stop in the loop,
UserPromptSubmit in the session — with a scripted model and real tools: Claude Code's output semantics, matchers,
timeouts, concurrency, the permission seams, and invariant 2 (every tool_use gets exactly one tool_result, results
first) in every hook outcome."""

from __future__ import annotations

import asyncio
import itertools
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from react_agent_mini.abort import AbortSignal
from react_agent_mini.events import (
    AssistantTurn,
    Followup,
    Notice,
    QueryEvent,
    Terminal,
    ToolFinished,
    ToolResults,
    ToolStarted,
)
from react_agent_mini.hooks import HookEntry, HookEvent, HookHandler, HookOutput, Hooks, HookVerdict
from react_agent_mini.loop import QueryDeps, QueryParams, query
from react_agent_mini.messages import Message, ToolResultBlock, ToolUseBlock, unanswered_tool_uses, user_text
from react_agent_mini.permissions.policy import (
    NO_INFO,
    REJECT_MESSAGE,
    Allow,
    Answer,
    Decision,
    Deny,
    PermissionPolicy,
    PermissionRequest,
    ToolCallInfo,
)
from react_agent_mini.permissions.rules import RuleSet
from react_agent_mini.session import Session
from react_agent_mini.tools.base import ModelTool, Tool, ToolContext, ToolOutput, ToolRegistry
from react_agent_mini.tools.builtin.echo import EchoTool
from react_agent_mini.tools.builtin.read import ReadTool
from react_agent_mini.tools.runner import SKIPPED, ToolRun, run_tool_calls

from ..scripted import ScriptedModel, call, reply
from ..test_loop import BoomTool, TouchTool, assert_paired_before_each_call, terminal

Seen = list[dict[str, Any]]


def answering(output: HookOutput | Mapping[str, Any], seen: Seen | None = None) -> HookHandler:
    """A handler that records the event JSON it got and answers `output` (Claude Code's JSON, or parsed)."""

    async def handler(payload: dict[str, Any]) -> HookOutput:
        if seen is not None:
            seen.append(payload)
        return output if isinstance(output, HookOutput) else HookOutput.from_json(output)

    return handler


def hook(
    event: HookEvent,
    output: HookOutput | Mapping[str, Any] | None = None,
    matcher: str = "",
    *,
    seen: Seen | None = None,
    timeout: float = 60.0,
    label: str = "hook",
) -> HookEntry:
    return HookEntry(event, answering(output or HookOutput(), seen), matcher, timeout, label)


async def allow_all(tool: Tool, args: Mapping[str, Any], info: ToolCallInfo = NO_INFO, /) -> Decision:
    return Allow()


def tools(*extra: Tool) -> ToolRegistry:
    return ToolRegistry([EchoTool(), TouchTool(), BoomTool(), *extra])


async def drive(
    model: ScriptedModel,
    tmp_path: Path,
    *entries: HookEntry,
    registry: ToolRegistry | None = None,
    can_use_tool: Any = allow_all,
    max_turns: int = 20,
    signal: AbortSignal | None = None,
) -> list[QueryEvent]:
    params = QueryParams(
        messages=[user_text("go")],
        tools=registry or tools(),
        context=ToolContext(cwd=tmp_path),
        max_turns=max_turns,
        signal=signal or AbortSignal(),
    )
    deps = QueryDeps(call_model=model, can_use_tool=can_use_tool, hooks=Hooks(entries))
    return [e async for e in query(params, deps)]


def history(events: Sequence[QueryEvent]) -> list[Message]:
    out = [user_text("go")]
    for e in events:
        if isinstance(e, AssistantTurn | ToolResults | Followup):
            out.append(e.message)
    return out


def results(events: Sequence[QueryEvent]) -> dict[str, ToolResultBlock]:
    return {e.tool_use.id: e.result for e in events if isinstance(e, ToolFinished)}


def notices(events: Sequence[QueryEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, Notice)]


def assert_valid(events: Sequence[QueryEvent], model: ScriptedModel) -> None:
    """Invariant 2 on what the loop produced and on what the model received; one Terminal, last; one
    ToolFinished per call."""
    terminal(list(events))
    messages = history(events)
    assert unanswered_tool_uses(messages) == []
    for i, message in enumerate(messages):
        if message.tool_uses:
            answer = messages[i + 1]
            assert [r.tool_use_id for r in answer.tool_results] == [u.id for u in message.tool_uses]
            assert answer.content[: len(message.tool_uses)] == tuple(answer.tool_results)  # anything else after
    finished = Counter(e.tool_use.id for e in events if isinstance(e, ToolFinished))
    assert finished == Counter(u.id for m in messages for u in m.tool_uses)
    assert set(finished.values()) <= {1}
    assert_paired_before_each_call(model)


async def once_set(event: asyncio.Event, running: asyncio.Future[Any]) -> bool:
    """Wait until `event` is set or `running` ends (so a test whose hook or tool never starts fails instead of
    hanging); whether it was set."""
    waiting = asyncio.ensure_future(event.wait())
    await asyncio.wait([waiting, running], return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()
    return event.is_set()


# ---- Claude Code's hook output JSON ----


def test_from_json_reads_every_field_claude_code_defines() -> None:
    output = HookOutput.from_json(
        {
            "continue": False,
            "stopReason": "enough",
            "decision": "block",
            "reason": "why not",
            "systemMessage": "for the user",
            "suppressOutput": True,  # unknown to us: ignored
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "no writes",
                "updatedInput": {"message": "other"},
                "additionalContext": "for the model",
                "updatedToolOutput": "replaced",
            },
        }
    )
    assert output == HookOutput(
        continue_=False,
        stop_reason="enough",
        block=True,
        reason="why not",
        system_message="for the user",
        permission="deny",
        permission_reason="no writes",
        updated_input={"message": "other"},
        additional_context="for the model",
        updated_output="replaced",
    )


def test_from_json_treats_wrong_types_as_absent() -> None:
    raw: dict[str, Any] = {
        "continue": None,  # only False stops
        "stopReason": 3,
        "decision": "maybe",
        "reason": ["x"],
        "systemMessage": None,
        "hookSpecificOutput": {"permissionDecision": "sure", "updatedInput": "x", "additionalContext": 1},
    }
    assert HookOutput.from_json(raw) == HookOutput()
    assert HookOutput.from_json({"continue": "no"}).continue_
    assert HookOutput.from_json({"hookSpecificOutput": ["not", "an", "object"]}) == HookOutput()
    assert HookOutput.from_json({}) == HookOutput()


def test_legacy_decisions_and_non_text_tool_output() -> None:
    assert HookOutput.from_json({"decision": "approve"}).permission == "allow"
    assert HookOutput.from_json({"decision": "block"}).block
    # the newer field wins over the legacy one
    assert (
        HookOutput.from_json({"decision": "approve", "hookSpecificOutput": {"permissionDecision": "ask"}}).permission
        == "ask"
    )
    structured = HookOutput.from_json({"hookSpecificOutput": {"updatedMCPToolOutput": {"sum": 3}}})
    assert structured.updated_output == '{"sum": 3}'


# ---- matchers ----


@pytest.mark.parametrize(
    ("matcher", "tool", "matches"),
    [
        ("", "Bash", True),
        ("*", "mcp__srv__echo", True),
        ("Edit|Write", "Write", True),
        ("Edit|Write", "Edit", True),
        ("Edit|Write", "MultiEdit", False),  # alternatives are exact names
        ("Bash", "Bash", True),
        ("Bash", "BashOutput", False),  # a plain name is exact
        ("mcp__srv__echo", "mcp__srv__echo", True),
        ("mcp__srv__echo", "mcp__srv__echo2", False),
        ("mcp__my-srv__echo", "mcp__my-srv__echo", True),
        ("mcp__srv__.*", "mcp__srv__echo", True),
        ("mcp__srv__.*", "mcp__srv2__echo", False),
        ("mcp__srv__.*", "Echo", False),
        ("mcp__.*__write.*", "mcp__fs__write_file", True),
        ("mcp__.*__write.*", "mcp__fs__read_file", False),
        ("^mcp__", "mcp__srv__echo", True),  # a regex is searched for, as Claude Code's RegExp.test does
        ("^mcp__", "Echo", False),
        ("Notebook.*", "NotebookEdit", True),
        ("^(Edit|Write)$", "MultiEdit", False),
        ("[", "[", False),  # a pattern that does not compile matches nothing (never raises)
    ],
)
def test_matcher(matcher: str, tool: str, matches: bool) -> None:
    assert hook("PreToolUse", matcher=matcher).matches(tool) is matches


def test_events_without_a_tool_ignore_the_matcher() -> None:
    assert hook("Stop", matcher="Bash").matches(None)


# ---- combining several answers ----


@pytest.mark.parametrize("order", list(itertools.permutations(["allow", "ask", "deny", ""])))
def test_deny_beats_ask_beats_allow_in_any_order(order: tuple[str, ...]) -> None:
    verdict = HookVerdict()
    for decision in order:
        verdict.add(
            HookOutput.from_json(
                {"hookSpecificOutput": {"permissionDecision": decision, "permissionDecisionReason": f"{decision}!"}}
            )
        )
    assert (verdict.permission, verdict.permission_reason) == ("deny", "deny!")
    assert verdict.ran == 4 and not verdict.block


def test_ask_beats_allow() -> None:
    verdict = HookVerdict()
    for decision in ("allow", "ask", "allow"):
        verdict.add(HookOutput(permission=decision))
    assert verdict.permission == "ask"


def test_any_block_blocks_and_only_blocking_answers_explain_it() -> None:
    verdict = HookVerdict()
    verdict.add(HookOutput.from_json({"decision": "approve", "reason": "looks fine to me"}))
    verdict.add(HookOutput.from_json({"decision": "block", "reason": "not on Fridays"}))
    verdict.add(HookOutput.from_json({"reason": "a reason nobody acted on"}))
    assert verdict.block
    assert verdict.reason == "not on Fridays"


def test_stop_keeps_the_first_reason_and_messages_accumulate() -> None:
    verdict = HookVerdict()
    verdict.add(HookOutput(continue_=False, stop_reason="first", system_message="one"))
    verdict.add(HookOutput(continue_=False, stop_reason="second", system_message="two"))
    verdict.add(HookOutput(additional_context="a"))
    verdict.add(HookOutput(additional_context="b"))
    assert (verdict.stop, verdict.stop_reason) == (True, "first")
    assert verdict.messages == ["one", "two"] and verdict.context == ["a", "b"]


# ---- running hooks ----


async def test_each_matching_hook_gets_the_event_json_and_no_other_runs() -> None:
    seen: Seen = []
    others: Seen = []
    hooks = Hooks(
        [
            hook("PreToolUse", matcher="Echo", seen=seen),
            hook("PreToolUse", matcher="Edit|Write", seen=others),
            hook("PostToolUse", matcher="Echo", seen=others),
            hook("PreToolUse", seen=seen),
        ],
        base=lambda: {"session_id": "s1", "cwd": "/w", "hook_event_name": "overridden"},
    )
    assert hooks.active("PreToolUse", "Echo") and not hooks.active("Stop")
    verdict = await hooks.run("PreToolUse", {"tool_name": "Echo", "tool_input": {"message": "hi"}}, "Echo")
    assert verdict.ran == 2 and others == []
    expected = {
        "session_id": "s1",
        "cwd": "/w",
        "hook_event_name": "PreToolUse",
        "tool_name": "Echo",
        "tool_input": {"message": "hi"},
    }
    assert seen == [expected, expected]
    assert (await hooks.run("Stop", {})).ran == 0


async def test_matching_hooks_of_one_event_run_concurrently() -> None:
    # each waits for the other to have started: run one after the other, the first would time out
    a_started, b_started = asyncio.Event(), asyncio.Event()

    async def a(payload: dict[str, Any]) -> HookOutput:
        a_started.set()
        await b_started.wait()
        return HookOutput(block=True, reason="a")

    async def b(payload: dict[str, Any]) -> HookOutput:
        b_started.set()
        await a_started.wait()
        return HookOutput(additional_context="b")

    hooks = Hooks([HookEntry("PreToolUse", a, timeout=60), HookEntry("PreToolUse", b, timeout=60)])
    verdict = await hooks.run("PreToolUse", {}, "Echo")
    assert verdict.messages == []
    assert (verdict.ran, verdict.block, verdict.reason, verdict.context) == (2, True, "a", ["b"])


async def test_a_failing_hook_costs_one_warning_and_has_no_effect() -> None:
    async def broken(payload: dict[str, Any]) -> HookOutput:
        raise ValueError("bad config")

    hooks = Hooks([HookEntry("PreToolUse", broken, label="SDK hook hook_0"), hook("PreToolUse", {"reason": "x"})])
    verdict = await hooks.run("PreToolUse", {}, "Echo")
    assert verdict.messages == ["warning: PreToolUse SDK hook hook_0 failed: ValueError: bad config"]
    assert verdict.ran == 1 and not verdict.block and verdict.permission == ""


async def test_a_hook_past_its_timeout_is_stopped_with_one_warning() -> None:
    never = asyncio.Event()
    stopped: list[bool] = []

    async def hangs(payload: dict[str, Any]) -> HookOutput:
        try:
            await never.wait()
        except asyncio.CancelledError:
            stopped.append(True)
            raise
        return HookOutput(block=True)

    hooks = Hooks([HookEntry("PreToolUse", hangs, timeout=0.2, label="slow"), hook("PreToolUse", {"reason": "ok"})])
    verdict = await hooks.run("PreToolUse", {}, "Echo")
    assert verdict.messages == ["warning: PreToolUse slow took longer than 0.2 s and was stopped"]
    assert stopped == [True] and not verdict.block and verdict.ran == 1


async def test_a_hook_that_answers_with_something_else_is_a_failed_hook() -> None:
    async def says_nothing(payload: dict[str, Any]) -> HookOutput:
        return None  # type: ignore[return-value]  # e.g. a library hook that only logs

    async def raw_json(payload: dict[str, Any]) -> HookOutput:
        return {"decision": "block"}  # type: ignore[return-value]

    hooks = Hooks([HookEntry("PreToolUse", says_nothing, label="a"), HookEntry("PreToolUse", raw_json, label="b")])
    verdict = await hooks.run("PreToolUse", {}, "Echo")
    assert verdict.messages == [
        "warning: PreToolUse a failed: it answered NoneType, not a HookOutput",
        "warning: PreToolUse b failed: it answered dict, not a HookOutput",
    ]
    assert verdict.ran == 0 and not verdict.block


async def test_a_hook_whose_own_work_was_cancelled_is_a_failed_hook_not_a_cancelled_turn() -> None:
    async def cancelled_inside(payload: dict[str, Any]) -> HookOutput:
        raise asyncio.CancelledError  # e.g. the SDK's answer future was cancelled by its channel closing

    hooks = Hooks([HookEntry("Stop", cancelled_inside, label="sdk")])
    verdict = await hooks.run("Stop", {})
    assert verdict.messages == ["warning: Stop sdk failed: it was cancelled"]


async def test_cancelling_a_run_cancels_every_hook() -> None:
    started = [asyncio.Event(), asyncio.Event()]
    cancelled: list[int] = []

    def waiting(n: int) -> HookHandler:
        async def handler(payload: dict[str, Any]) -> HookOutput:
            started[n].set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.append(n)
                raise
            return HookOutput()

        return handler

    hooks = Hooks([HookEntry("Stop", waiting(0)), HookEntry("Stop", waiting(1))])
    task = asyncio.ensure_future(hooks.run("Stop", {}))
    assert await once_set(started[0], task) and await once_set(started[1], task)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sorted(cancelled) == [0, 1]


class ListArgs(msgspec.Struct):
    items: list[str]


class CollectTool(ModelTool[ListArgs]):
    """An MCP-style tool name with nested input; records what it ran with."""

    name = "mcp__srv__collect"
    description = "collect"
    args_model = ListArgs
    read_only = True

    def __init__(self) -> None:
        self.ran: list[list[str]] = []

    async def call(self, args: ListArgs, ctx: ToolContext) -> ToolOutput:
        self.ran.append(list(args.items))
        return ToolOutput(",".join(args.items))


async def test_a_hook_that_changes_its_event_json_changes_nothing_else(tmp_path: Path) -> None:
    # hooks get JSON, as command hooks do: what one handler does to its copy reaches neither the other hooks nor
    # the history (which is on disk already) nor the tool
    seen: Seen = []

    async def meddles(payload: dict[str, Any]) -> HookOutput:
        payload["tool_input"]["items"].append("smuggled")
        payload["tool_input"]["extra"] = True
        return HookOutput()

    async def looks(payload: dict[str, Any]) -> HookOutput:
        await asyncio.sleep(0)  # after `meddles` ran
        seen.append(payload)
        return HookOutput()

    collect = CollectTool()
    model = ScriptedModel([reply(call("mcp__srv__collect", "c1", items=["a"])), reply("done")])
    events = await drive(
        model,
        tmp_path,
        HookEntry("PreToolUse", meddles),
        HookEntry("PreToolUse", looks),
        HookEntry("PostToolUse", meddles),
        HookEntry("PostToolUse", looks),
        registry=tools(collect),
    )
    assert_valid(events, model)
    assert [p["tool_input"] for p in seen] == [{"items": ["a"]}, {"items": ["a"]}]
    assert collect.ran == [["a"]]
    assert history(events)[1].tool_uses[0].input == {"items": ["a"]}
    assert model.requests[1].messages[1].tool_uses[0].input == {"items": ["a"]}


# ---- PreToolUse in the loop ----


async def test_pre_tool_use_block_refuses_the_call_and_the_turn_goes_on(tmp_path: Path) -> None:
    seen: Seen = []
    model = ScriptedModel(
        [reply(call("Touch", "t1", file_path="x.txt"), call("Echo", "e1", message="hi")), reply("ok")]
    )
    events = await drive(
        model, tmp_path, hook("PreToolUse", {"decision": "block", "reason": "no files today"}, "Touch", seen=seen)
    )
    assert_valid(events, model)
    assert terminal(events) == Terminal("completed", 2)
    assert not (tmp_path / "x.txt").exists()
    got = results(events)
    assert got["t1"] == ToolResultBlock("t1", "Blocked by a PreToolUse hook: no files today", is_error=True)
    assert got["e1"] == ToolResultBlock("e1", "hi")
    assert [(p["tool_name"], p["tool_input"], p["tool_use_id"]) for p in seen] == [
        ("Touch", {"file_path": "x.txt"}, "t1")
    ]
    assert model.requests[1].messages[-1].tool_results[0].content.endswith("no files today")


async def test_pre_tool_use_deny_refuses_with_its_reason(tmp_path: Path) -> None:
    model = ScriptedModel([reply(call("Touch", "t1", file_path="x.txt")), reply("ok")])
    deny = {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "read-only hour"}}
    events = await drive(model, tmp_path, hook("PreToolUse", deny))
    assert_valid(events, model)
    assert results(events)["t1"].content == "Blocked by a PreToolUse hook: read-only hour"
    assert not (tmp_path / "x.txt").exists()


async def test_a_block_is_explained_by_the_hook_that_blocked(tmp_path: Path) -> None:
    model = ScriptedModel([reply(call("Touch", "t1", file_path="x.txt")), reply("ok")])
    trusting = {"hookSpecificOutput": {"permissionDecision": "allow", "permissionDecisionReason": "trusted tool"}}
    events = await drive(
        model,
        tmp_path,
        hook("PreToolUse", trusting),
        hook("PreToolUse", {"decision": "block", "reason": "not on Fridays"}),
    )
    assert results(events)["t1"].content == "Blocked by a PreToolUse hook: not on Fridays"
    assert not (tmp_path / "x.txt").exists()


async def test_pre_tool_use_continue_false_ends_the_turn_and_skips_the_rest(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            reply(
                call("Echo", "e1", message="first"),
                call("Touch", "t1", file_path="x.txt"),
                call("Touch", "t2", file_path="y.txt"),
            ),
            reply("never"),
        ]
    )
    stop = {"continue": False, "stopReason": "budget spent", "systemMessage": "stopping now"}
    events = await drive(model, tmp_path, hook("PreToolUse", stop, "Touch"))
    assert_valid(events, model)
    assert terminal(events).reason == "aborted" and len(model.requests) == 1
    got = results(events)
    assert got["e1"].content == "first"
    assert got["t1"] == ToolResultBlock("t1", "Stopped by a PreToolUse hook: budget spent", is_error=True)
    assert got["t2"] == ToolResultBlock("t2", SKIPPED, is_error=True)
    assert not (tmp_path / "x.txt").exists() and not (tmp_path / "y.txt").exists()
    assert notices(events) == ["stopping now", "Stopped by a PreToolUse hook: budget spent"]  # the user sees why


async def test_updated_input_is_validated_and_run_and_the_history_keeps_the_models(tmp_path: Path) -> None:
    post: Seen = []
    model = ScriptedModel([reply(call("Touch", "t1", file_path="asked.txt")), reply("ok")])
    update = {"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"file_path": "safe.txt"}}}
    events = await drive(model, tmp_path, hook("PreToolUse", update), hook("PostToolUse", seen=post))
    assert_valid(events, model)
    assert (tmp_path / "safe.txt").exists() and not (tmp_path / "asked.txt").exists()
    assert results(events)["t1"].content == "created safe.txt"
    assert post[0]["tool_input"] == {"file_path": "safe.txt"}
    assert history(events)[1].tool_uses[0].input == {"file_path": "asked.txt"}


async def test_updated_input_that_fails_validation_is_an_error_result(tmp_path: Path) -> None:
    model = ScriptedModel([reply(call("Touch", "t1", file_path="x.txt")), reply("ok")])
    events = await drive(model, tmp_path, hook("PreToolUse", {"hookSpecificOutput": {"updatedInput": {"path": "y"}}}))
    assert_valid(events, model)
    result = results(events)["t1"]
    assert result.is_error
    assert result.content.startswith("Invalid input for Touch (the input a PreToolUse hook gave): ")
    assert "file_path" in result.content
    assert list(tmp_path.iterdir()) == []
    assert terminal(events) == Terminal("completed", 2)


async def test_hook_allow_skips_asking_but_not_deny_rules_or_plan_mode(tmp_path: Path) -> None:
    allow = {"hookSpecificOutput": {"permissionDecision": "allow"}}

    async def attempt(policy: PermissionPolicy, name: str) -> str:
        model = ScriptedModel([reply(call("Touch", "t1", file_path=name)), reply("ok")])
        events = await drive(model, tmp_path, hook("PreToolUse", allow), can_use_tool=policy)
        assert_valid(events, model)
        return results(events)["t1"].content

    headless = PermissionPolicy(tmp_path)  # nobody to ask: a Touch would be denied
    assert await attempt(headless, "a.txt") == "created a.txt"
    rules = RuleSet()
    assert rules.add("deny", "Touch", "cli") is None
    assert "deny rule Touch" in await attempt(PermissionPolicy(tmp_path, rules=rules), "b.txt")
    assert (await attempt(PermissionPolicy(tmp_path, "plan"), "c.txt")).startswith("Plan mode is read-only")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]
    # and without the hook the same headless policy denies
    model = ScriptedModel([reply(call("Touch", "t1", file_path="d.txt")), reply("ok")])
    events = await drive(model, tmp_path, can_use_tool=headless)
    assert "needs approval" in results(events)["t1"].content


async def test_hook_ask_asks_even_for_a_call_that_needs_no_asking(tmp_path: Path) -> None:
    asked: list[PermissionRequest] = []

    async def asker(request: PermissionRequest) -> Answer:
        asked.append(request)
        return "no"

    model = ScriptedModel(
        [reply(call("Echo", "e1", message="hi"), call("Echo", "e2", message="there")), reply("never")]
    )
    ask = {"hookSpecificOutput": {"permissionDecision": "ask"}}
    events = await drive(model, tmp_path, hook("PreToolUse", ask), can_use_tool=PermissionPolicy(tmp_path, asker=asker))
    assert_valid(events, model)
    assert [(r.tool, r.reason, r.tool_use_id) for r in asked] == [("Echo", "a PreToolUse hook asks for it", "e1")]
    got = results(events)
    assert got["e1"] == ToolResultBlock("e1", REJECT_MESSAGE, is_error=True)
    assert got["e2"].content == SKIPPED
    assert terminal(events).reason == "aborted"


async def test_pre_tool_use_context_comes_after_the_result(tmp_path: Path) -> None:
    model = ScriptedModel([reply(call("Echo", "e1", message="hi")), reply("ok")])
    context = {"hookSpecificOutput": {"additionalContext": "remember the style guide"}}
    events = await drive(model, tmp_path, hook("PreToolUse", context), hook("PreToolUse", {"systemMessage": "noted"}))
    assert_valid(events, model)
    assert results(events)["e1"] == ToolResultBlock("e1", "hi\n\nremember the style guide")
    assert notices(events) == ["noted"]
    kinds = [type(e).__name__ for e in events if isinstance(e, ToolStarted | Notice | ToolFinished)]
    assert kinds == ["ToolStarted", "Notice", "ToolFinished"]


@pytest.mark.parametrize("failure", ["raises", "hangs", "answers None"])
async def test_a_broken_pre_tool_use_hook_costs_a_warning_and_the_call_runs(tmp_path: Path, failure: str) -> None:
    async def broken(payload: dict[str, Any]) -> HookOutput:
        if failure == "raises":
            raise RuntimeError("hook crashed")
        if failure == "hangs":
            await asyncio.Event().wait()  # never set: the entry's timeout stops it
        return None  # type: ignore[return-value]

    model = ScriptedModel([reply(call("Touch", "t1", file_path="x.txt")), reply("ok")])
    events = await drive(model, tmp_path, HookEntry("PreToolUse", broken, timeout=0.2, label="guard"))
    assert_valid(events, model)
    assert results(events)["t1"].content == "created x.txt"
    [warning] = notices(events)
    assert warning.startswith("warning: PreToolUse guard ")


class LookupArgs(msgspec.Struct):
    key: str


def mcp_style(name: str) -> Tool:
    class Lookup(ModelTool[LookupArgs]):
        description = "look a key up"
        args_model = LookupArgs
        read_only = True
        concurrency_safe = True

        async def call(self, args: LookupArgs, ctx: ToolContext) -> ToolOutput:
            return ToolOutput(f"{self.name}: {args.key}")

    Lookup.name = name
    return Lookup()


async def test_matchers_on_mcp_tool_names(tmp_path: Path) -> None:
    pre: Seen = []
    model = ScriptedModel(
        [
            reply(
                call("mcp__srv__lookup", "a", key="1"),
                call("mcp__other__lookup", "b", key="2"),
                call("Echo", "c", message="3"),
            ),
            reply("ok"),
        ]
    )
    events = await drive(
        model,
        tmp_path,
        hook("PreToolUse", {"decision": "block", "reason": "srv is off limits"}, "mcp__srv__.*", seen=pre),
        hook("PostToolUse", {"hookSpecificOutput": {"additionalContext": "from another server"}}, "mcp__other__.*"),
        registry=tools(mcp_style("mcp__srv__lookup"), mcp_style("mcp__other__lookup")),
    )
    assert_valid(events, model)
    got = results(events)
    assert got["a"].content == "Blocked by a PreToolUse hook: srv is off limits"
    assert got["b"].content == "mcp__other__lookup: 2\n\nfrom another server"
    assert got["c"].content == "3"
    assert [p["tool_name"] for p in pre] == ["mcp__srv__lookup"]


async def test_abort_while_a_pre_tool_use_hook_runs_skips_the_call(tmp_path: Path) -> None:
    signal = AbortSignal()

    async def interrupts(payload: dict[str, Any]) -> HookOutput:
        signal.abort("interrupted")  # the user presses Ctrl+C while the hook works
        await asyncio.Event().wait()
        return HookOutput()

    model = ScriptedModel([reply(call("Touch", "t1", file_path="x.txt"), call("Echo", "e1", message="hi"))])
    events = await drive(model, tmp_path, HookEntry("PreToolUse", interrupts, "Touch"), signal=signal)
    assert_valid(events, model)
    assert terminal(events).reason == "aborted"
    assert notices(events) == []  # the hook was stopped at once, not when its timeout came
    assert [r.content for r in results(events).values()] == [SKIPPED, SKIPPED]
    assert not (tmp_path / "x.txt").exists()


# ---- PostToolUse ----


async def test_post_tool_use_replaces_adds_to_and_objects_to_the_result(tmp_path: Path) -> None:
    seen: Seen = []
    model = ScriptedModel([reply(call("Echo", "e1", message="secret=42")), reply("ok")])
    events = await drive(
        model,
        tmp_path,
        hook("PreToolUse", {"hookSpecificOutput": {"additionalContext": "pre note"}}),
        hook("PostToolUse", {"hookSpecificOutput": {"updatedToolOutput": "secret=[redacted]"}}, "Echo", seen=seen),
        hook("PostToolUse", {"hookSpecificOutput": {"additionalContext": "post note"}}),
        hook("PostToolUse", {"decision": "block", "reason": "do not print secrets", "systemMessage": "redacted"}),
    )
    assert_valid(events, model)
    assert results(events)["e1"] == ToolResultBlock(
        "e1", "secret=[redacted]\n\npost note\n\nA PostToolUse hook objects: do not print secrets\n\npre note"
    )
    assert seen[0]["tool_response"] == {"content": "secret=42", "is_error": False}
    assert seen[0]["tool_input"] == {"message": "secret=42"} and seen[0]["hook_event_name"] == "PostToolUse"
    assert notices(events) == ["redacted"]
    assert terminal(events) == Terminal("completed", 2)


async def test_post_tool_use_continue_false_keeps_the_result_and_ends_the_turn(tmp_path: Path) -> None:
    model = ScriptedModel(
        [reply(call("Touch", "t1", file_path="x.txt"), call("Touch", "t2", file_path="y.txt")), reply("never")]
    )
    events = await drive(model, tmp_path, hook("PostToolUse", {"continue": False, "stopReason": "one is enough"}))
    assert_valid(events, model)
    got = results(events)
    assert got["t1"].content == "created x.txt\n\nStopped by a PostToolUse hook: one is enough"
    assert got["t2"].content == SKIPPED
    assert (tmp_path / "x.txt").exists() and not (tmp_path / "y.txt").exists()
    assert terminal(events).reason == "aborted" and len(model.requests) == 1
    assert notices(events) == ["Stopped by a PostToolUse hook: one is enough"]


async def test_post_tool_use_runs_only_for_calls_that_succeeded(tmp_path: Path) -> None:
    seen: Seen = []

    async def deny_touch(tool: Tool, args: Mapping[str, Any], info: ToolCallInfo = NO_INFO, /) -> Decision:
        return Deny("no") if tool.name == "Touch" else Allow()

    model = ScriptedModel(
        [
            reply(
                call("Boom", "b1"),
                call("Nope", "n1"),
                call("Echo", "bad", message=5),
                call("Touch", "t1", file_path="x"),
                call("Read", "r1", file_path=str(tmp_path / "missing.txt")),  # an error result, not a raise
                call("Echo", "ok", message="fine"),
            ),
            reply("done"),
        ]
    )
    events = await drive(
        model,
        tmp_path,
        hook("PostToolUse", {"hookSpecificOutput": {"updatedToolOutput": "X"}}, seen=seen),
        can_use_tool=deny_touch,
        registry=tools(ReadTool()),
    )
    assert_valid(events, model)
    assert [p["tool_use_id"] for p in seen] == ["ok"]
    got = results(events)
    assert got["ok"].content == "X"
    assert all(got[i].is_error and got[i].content != "X" for i in ("b1", "n1", "bad", "t1", "r1"))


async def test_abort_while_a_post_tool_use_hook_runs_keeps_what_the_tool_produced(tmp_path: Path) -> None:
    signal = AbortSignal()

    async def interrupts(payload: dict[str, Any]) -> HookOutput:
        signal.abort()
        await asyncio.Event().wait()
        return HookOutput(updated_output="never")

    model = ScriptedModel([reply(call("Touch", "t1", file_path="x.txt"), call("Touch", "t2", file_path="y.txt"))])
    events = await drive(model, tmp_path, HookEntry("PostToolUse", interrupts), signal=signal)
    assert_valid(events, model)
    got = results(events)
    assert (got["t1"].content, got["t2"].content) == ("created x.txt", SKIPPED)
    assert terminal(events).reason == "aborted" and notices(events) == []


async def test_post_tool_use_on_parallel_calls_answers_each_in_order(tmp_path: Path) -> None:
    async def tag(payload: dict[str, Any]) -> HookOutput:
        return HookOutput(updated_output=f"{payload['tool_response']['content']}!")

    model = ScriptedModel([reply(*(call("Echo", f"e{i}", message=str(i)) for i in range(4))), reply("ok")])
    events = await drive(model, tmp_path, HookEntry("PostToolUse", tag))
    assert_valid(events, model)
    assert [r.content for r in model.requests[1].messages[-1].tool_results] == ["0!", "1!", "2!", "3!"]


# ---- Stop ----


async def test_a_stop_hook_continues_once_then_allows_the_stop(tmp_path: Path) -> None:
    seen: Seen = []

    async def wants_tests(payload: dict[str, Any]) -> HookOutput:
        seen.append(payload)
        if payload["stop_hook_active"]:
            return HookOutput()
        return HookOutput(block=True, reason="run the tests first", system_message="Stop hook: not yet")

    model = ScriptedModel([reply("done"), reply(call("Echo", "e1", message="tests pass")), reply("really done")])
    events = await drive(model, tmp_path, HookEntry("Stop", wants_tests))
    assert_valid(events, model)
    assert terminal(events) == Terminal("completed", 3)
    assert [p["stop_hook_active"] for p in seen] == [False, True]
    assert [p["hook_event_name"] for p in seen] == ["Stop", "Stop"]
    [followup] = [e.message for e in events if isinstance(e, Followup)]
    assert (followup.role, followup.meta, followup.text) == ("user", True, "Stop hook feedback: run the tests first")
    assert model.requests[1].messages[-1] == followup
    assert notices(events) == ["Stop hook: not yet"]


async def test_a_stop_hook_never_runs_the_loop_past_max_turns(tmp_path: Path) -> None:
    seen: Seen = []
    model = ScriptedModel([reply("done")])
    events = await drive(model, tmp_path, hook("Stop", {"decision": "block", "reason": "more"}, seen=seen), max_turns=3)
    assert_valid(events, model)
    assert len(model.requests) == 3 and len(seen) == 3  # at the limit it still runs: it may not block
    assert terminal(events) == Terminal("max_turns", 3)  # it did: the work it asks for is not done


async def test_a_stop_hook_that_stops_wins_over_one_that_blocks(tmp_path: Path) -> None:
    model = ScriptedModel([reply("done")])
    events = await drive(
        model, tmp_path, hook("Stop", {"decision": "block", "reason": "more"}), hook("Stop", {"continue": False})
    )
    assert terminal(events) == Terminal("completed", 1) and len(model.requests) == 1


async def test_the_stop_hook_runs_only_when_the_model_stops(tmp_path: Path) -> None:
    seen: Seen = []
    model = ScriptedModel([reply(call("Echo", "e1", message="a")), reply(call("Echo", "e2", message="b")), reply("ok")])
    events = await drive(model, tmp_path, hook("Stop", seen=seen))
    assert terminal(events) == Terminal("completed", 3) and len(seen) == 1


async def test_a_blocking_stop_hook_without_reason_still_says_something(tmp_path: Path) -> None:
    seen: Seen = []

    async def once(payload: dict[str, Any]) -> HookOutput:
        seen.append(payload)
        return HookOutput.from_json({} if payload["stop_hook_active"] else {"decision": "block", "reason": ""})

    model = ScriptedModel([reply("done")])
    events = await drive(model, tmp_path, HookEntry("Stop", once), hook("Stop", {"reason": "ignored: no block"}))
    [followup] = [e.message for e in events if isinstance(e, Followup)]
    assert followup.text == "Stop hook feedback: A Stop hook asked you to continue."


async def test_abort_while_a_stop_hook_runs_ends_the_turn(tmp_path: Path) -> None:
    signal = AbortSignal()

    async def interrupts(payload: dict[str, Any]) -> HookOutput:
        signal.abort()  # Ctrl+C while the hook works: the turn ends now, not when the hook's 60 s are up
        await asyncio.Event().wait()
        return HookOutput(block=True, reason="never")

    model = ScriptedModel([reply("done")])
    events = await drive(model, tmp_path, HookEntry("Stop", interrupts), signal=signal)
    assert terminal(events) == Terminal("aborted", 1)
    assert not any(isinstance(e, Followup) for e in events) and notices(events) == []


# ---- UserPromptSubmit (the session) ----


def session_with(model: ScriptedModel, tmp_path: Path, *entries: HookEntry) -> tuple[Session, list[Message]]:
    """A session with `entries`, and the list its messages are recorded in as they join (as the transcript is)."""
    recorded: list[Message] = []
    session = Session(
        deps=QueryDeps(call_model=model, hooks=Hooks(entries)),
        tools=tools(),
        context=ToolContext(cwd=tmp_path),
        on_message=recorded.append,
    )
    return session, recorded


async def test_a_blocked_prompt_is_never_sent_nor_kept(tmp_path: Path) -> None:
    seen: Seen = []

    async def no_secrets(payload: dict[str, Any]) -> HookOutput:
        seen.append(payload)
        if "password" in payload["prompt"]:
            return HookOutput(block=True, reason="it contains a password", system_message="checked")
        return HookOutput()

    model = ScriptedModel([reply("hello")])
    session, recorded = session_with(model, tmp_path, HookEntry("UserPromptSubmit", no_secrets))
    await collect(session.run_turn("hi"))
    before = list(session.messages)
    events = await collect(session.run_turn("my password is hunter2"))
    assert notices(events) == ["checked", "Your message was blocked by a UserPromptSubmit hook: it contains a password"]
    assert events[-1] == Terminal("aborted", 0, "blocked by a UserPromptSubmit hook: it contains a password")
    assert session.messages == before and len(model.requests) == 1 and not session.turn_in_progress
    assert recorded == before  # nothing of it reached the transcript
    await collect(session.run_turn("next"))
    assert [m.text for m in model.requests[1].messages] == ["hi", "hello", "next"]
    assert [p["prompt"] for p in seen] == ["hi", "my password is hunter2", "next"]
    assert seen[0]["hook_event_name"] == "UserPromptSubmit"


async def test_a_prompt_stopped_by_continue_false_is_not_sent(tmp_path: Path) -> None:
    model = ScriptedModel([reply("hello")])
    stop = hook("UserPromptSubmit", {"continue": False, "stopReason": "maintenance"})
    session, _ = session_with(model, tmp_path, stop)
    events = await collect(session.run_turn("hi"))
    assert events[-1] == Terminal("aborted", 0, "blocked by a UserPromptSubmit hook: maintenance")
    assert session.messages == [] and model.requests == []


async def test_prompt_context_goes_before_the_prompt_as_a_meta_message(tmp_path: Path) -> None:
    model = ScriptedModel([reply("hello")])
    context = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "branch: main"}}
    session, _ = session_with(model, tmp_path, hook("UserPromptSubmit", context))
    events = await collect(session.run_turn("status?", inject_before=[user_text("resource", meta=True)]))
    assert events[-1] == Terminal("completed", 1)
    sent = model.requests[0].messages
    said = "UserPromptSubmit hook additional context: branch: main"  # where it comes from, for the model
    assert [(m.text, m.meta) for m in sent] == [("resource", True), (said, True), ("status?", False)]


async def test_an_interrupt_while_the_prompt_hook_runs_ends_the_turn(tmp_path: Path) -> None:
    model = ScriptedModel([reply("hello")])
    seen: list[tuple[bool, bool]] = []
    session: Session

    async def slow(payload: dict[str, Any]) -> HookOutput:
        # the turn is running from the moment it starts: Ctrl+C reaches it, a second turn cannot start
        seen.append((session.turn_in_progress, session.abort_current_turn("interrupted")))
        await asyncio.Event().wait()
        return HookOutput()

    session, _ = session_with(model, tmp_path, HookEntry("UserPromptSubmit", slow, timeout=30))
    events = await collect(session.run_turn("hi"))
    assert seen == [(True, True)]
    assert events[-1] == Terminal("aborted", 0)
    assert session.messages == [] and model.requests == [] and not session.turn_in_progress


async def test_the_stop_hook_feedback_joins_the_session_history(tmp_path: Path) -> None:
    async def once(payload: dict[str, Any]) -> HookOutput:
        return HookOutput(block=not payload["stop_hook_active"], reason="check again")

    model = ScriptedModel([reply("done"), reply("checked")])
    session, recorded = session_with(model, tmp_path, HookEntry("Stop", once))
    events = await collect(session.run_turn("go"))
    assert events[-1] == Terminal("completed", 2)
    assert [(m.role, m.text, m.meta) for m in session.messages] == [
        ("user", "go", False),
        ("assistant", "done", False),
        ("user", "Stop hook feedback: check again", True),
        ("assistant", "checked", False),
    ]
    assert recorded == session.messages


async def collect(events: Any) -> list[Any]:
    return [e async for e in events]


# ---- the asker's whole decisions ----


async def test_an_asker_may_change_the_input_and_it_is_validated(tmp_path: Path) -> None:
    async def rewrites(request: PermissionRequest) -> Decision:
        name = request.args["file_path"]
        return Allow(updated_input={"file_path": f"sandbox-{name}"} if name != "bad" else {"nope": 1})

    model = ScriptedModel(
        [reply(call("Touch", "t1", file_path="a.txt"), call("Touch", "t2", file_path="bad")), reply("ok")]
    )
    events = await drive(model, tmp_path, can_use_tool=PermissionPolicy(tmp_path, asker=rewrites))
    assert_valid(events, model)
    got = results(events)
    assert got["t1"].content == "created sandbox-a.txt"
    assert got["t2"].content.startswith("Invalid input for Touch (the input the permission answer gave): ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sandbox-a.txt"]


async def test_an_asker_deny_may_let_the_turn_go_on_or_end_it(tmp_path: Path) -> None:
    async def refuses(request: PermissionRequest) -> Decision:
        ends = request.args["file_path"] == "stop.txt"
        return Deny(f"not {request.args['file_path']}", end_turn=ends)

    model = ScriptedModel(
        [
            reply(
                call("Touch", "t1", file_path="a.txt"),
                call("Echo", "e1", message="still here"),
                call("Touch", "t2", file_path="stop.txt"),
                call("Echo", "e2", message="skipped"),
            ),
            reply("never"),
        ]
    )
    events = await drive(model, tmp_path, can_use_tool=PermissionPolicy(tmp_path, asker=refuses))
    assert_valid(events, model)
    got = results(events)
    assert [got[i].content for i in ("t1", "e1", "t2", "e2")] == ["not a.txt", "still here", "not stop.txt", SKIPPED]
    denied = [e.tool_use.id for e in events if isinstance(e, ToolFinished) and e.denied]
    assert denied == ["t1", "t2"]
    assert terminal(events).reason == "aborted"


# ---- the runner stops what it started ----


class ParkArgs(msgspec.Struct):
    quick: bool = False


class ParkTool(ModelTool[ParkArgs]):
    """Parallel-safe; a slow call waits until cancelled, and says so."""

    name = "Park"
    description = "park"
    args_model = ParkArgs
    read_only = True
    concurrency_safe = True

    def __init__(self, slow: int) -> None:
        self.slow = slow
        self.running = 0
        self.started = asyncio.Event()
        """Set once every slow call is running."""
        self.cancelled = 0

    async def call(self, args: ParkArgs, ctx: ToolContext) -> ToolOutput:
        if args.quick:
            return ToolOutput("quick")
        self.running += 1
        if self.running == self.slow:
            self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return ToolOutput("never")


def park_run(tmp_path: Path, park: ParkTool) -> ToolRun:
    return ToolRun(ToolRegistry([park]), ToolContext(cwd=tmp_path), allow_all, AbortSignal())


async def test_cancelling_a_parallel_batch_stops_its_running_calls(tmp_path: Path) -> None:
    park = ParkTool(slow=2)
    uses = [ToolUseBlock("p1", "Park", {}), ToolUseBlock("p2", "Park", {})]

    async def consume() -> None:
        async for _ in run_tool_calls(uses, park_run(tmp_path, park)):
            pass

    task = asyncio.ensure_future(consume())
    assert await once_set(park.started, task)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert park.cancelled == 2


async def test_closing_the_runner_early_stops_its_running_calls(tmp_path: Path) -> None:
    park = ParkTool(slow=1)
    uses = [ToolUseBlock("p1", "Park", {}), ToolUseBlock("q", "Park", {"quick": True})]
    events = run_tool_calls(uses, park_run(tmp_path, park))
    async for event in events:
        if isinstance(event, ToolFinished):
            assert event.tool_use.id == "q"
            break
    await events.aclose()
    assert park.cancelled == 1


# ---- invariant 2 under any mix of hook outcomes ----

PRE = ["none", "allow", "ask", "block", "deny", "stop", "update", "update_invalid", "raise", "hang", "context", "abort"]
POST = ["none", "replace", "block", "stop", "context", "raise"]
TOOLS = ["Echo", "Touch", "Boom", "Nope"]
ENDS_TURN = {"stop", "abort"}


def planned_call(tool: str, n: int) -> ToolUseBlock:
    args: dict[str, Any] = {"Echo": {"message": f"m{n}"}, "Touch": {"file_path": f"c{n}.txt"}}.get(tool, {})
    return ToolUseBlock(f"c{n}", tool, args)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(st.sampled_from(TOOLS), st.sampled_from(PRE), st.sampled_from(POST)), min_size=1, max_size=5
        ),
        min_size=1,
        max_size=3,
    ),
    st.booleans(),
)
def test_every_call_is_answered_once_whatever_the_hooks_do(
    turns: list[list[tuple[str, str, str]]], stop_blocks_once: bool
) -> None:
    counter = itertools.count()
    plan: dict[str, tuple[str, str]] = {}
    steps = []
    for calls in turns:
        uses = []
        for tool, pre, post in calls:
            use = planned_call(tool, next(counter))
            plan[use.id] = (pre, post)
            uses.append(use)
        steps.append(reply(*uses))
    model = ScriptedModel([*steps, reply("done")])
    signal = AbortSignal()
    asked: list[str] = []

    async def pre_hook(payload: dict[str, Any]) -> HookOutput:
        what = plan[payload["tool_use_id"]][0]
        name = payload["tool_name"]
        good = {"message": "updated"} if name == "Echo" else {"file_path": f"{payload['tool_use_id']}-updated.txt"}
        if what == "raise":
            raise RuntimeError("broken hook")
        if what in ("hang", "abort"):
            if what == "abort":
                signal.abort()
            await asyncio.Event().wait()
        outputs: dict[str, dict[str, Any]] = {
            "allow": {"hookSpecificOutput": {"permissionDecision": "allow"}},
            "ask": {"hookSpecificOutput": {"permissionDecision": "ask"}},
            "block": {"decision": "block", "reason": "blocked"},
            "deny": {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "denied"}},
            "stop": {"continue": False, "stopReason": "stopped"},
            "update": {"hookSpecificOutput": {"updatedInput": good}},
            "update_invalid": {"hookSpecificOutput": {"updatedInput": {"wrong": 1}}},
            "context": {"hookSpecificOutput": {"additionalContext": "extra"}},
        }
        return HookOutput.from_json(outputs.get(what, {}))

    async def post_hook(payload: dict[str, Any]) -> HookOutput:
        what = plan[payload["tool_use_id"]][1]
        if what == "raise":
            raise RuntimeError("broken hook")
        outputs: dict[str, dict[str, Any]] = {
            "replace": {"hookSpecificOutput": {"updatedToolOutput": "replaced"}},
            "block": {"decision": "block", "reason": "objection"},
            "stop": {"continue": False},
            "context": {"hookSpecificOutput": {"additionalContext": "extra"}},
        }
        return HookOutput.from_json(outputs.get(what, {}))

    async def stop_hook(payload: dict[str, Any]) -> HookOutput:
        return HookOutput(block=stop_blocks_once and not payload["stop_hook_active"], reason="once more")

    async def policy(tool: Tool, args: Mapping[str, Any], info: ToolCallInfo = NO_INFO, /) -> Decision:
        if info.hook_permission == "ask":
            asked.append(info.tool_use_id)
            return Deny("asked: no")
        return Allow()

    entries = [
        HookEntry("PreToolUse", pre_hook, timeout=0.01),
        HookEntry("PostToolUse", post_hook),
        HookEntry("Stop", stop_hook),
    ]

    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        events = asyncio.run(drive(model, workspace, *entries, can_use_tool=policy, signal=signal))
        files = {p.name for p in workspace.iterdir()}

    assert_valid(events, model)
    got = results(events)
    ended = terminal(events).reason == "aborted"
    for message in history(events):
        ids = [u.id for u in message.tool_uses]
        turn_ends = any(plan[i][0] in ENDS_TURN or plan[i][1] == "stop" for i in ids)
        for use in message.tool_uses:
            pre, post = plan[use.id]
            if use.name == "Boom" and pre.startswith("update"):
                pre = "none"  # Boom takes no arguments: any input is valid for it
            result = got[use.id]
            ran_touch = use.name == "Touch" and (f"{use.id}.txt" in files or f"{use.id}-updated.txt" in files)
            if result.content == SKIPPED:
                assert turn_ends and ended and not ran_touch
                continue
            if use.name == "Nope":
                assert result.content.startswith("Unknown tool")
                continue
            expected_prefix = {
                "block": "Blocked by a PreToolUse hook: blocked",
                "deny": "Blocked by a PreToolUse hook: denied",
                "stop": "Stopped by a PreToolUse hook: stopped",
                "update_invalid": f"Invalid input for {use.name} (the input a PreToolUse hook gave)",
                "ask": "asked: no",
            }.get(pre)
            if expected_prefix is not None:
                assert result.is_error and result.content.startswith(expected_prefix)
                assert not ran_touch
                continue
            if use.name == "Boom":
                assert result.is_error and "kaboom" in result.content
                continue
            assert not result.is_error
            if use.name == "Touch":
                assert (f"{use.id}-updated.txt" if pre == "update" else f"{use.id}.txt") in files
            if post == "replace":
                assert result.content.startswith("replaced")
            elif pre == "update" and use.name == "Echo":
                assert result.content.startswith("updated")
            if pre == "context" or post == "context":
                assert result.content.endswith("extra")
    refused = {i for i, result in got.items() if result.content == "asked: no"}
    assert set(asked) == refused == {i for i in refused if plan[i][0] == "ask"}
    warnings = [n for n in notices(events) if n.startswith("warning:")]
    assert all(" PreToolUse " in w or " PostToolUse " in w for w in warnings)
