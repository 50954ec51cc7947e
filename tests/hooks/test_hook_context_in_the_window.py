"""What a hook adds to the context, end to end: `ram` as a user runs it, user-level command hooks (no trust needed),
and the loopback fake LLM as a model with a small window that refuses a request longer than it, as the providers
do (a 400 saying the context length was exceeded).

A hook's text enters the history cut to its share of the window (as the newest tool result may have whole), and
old hook context is shrunk like old tool results: cut, then cleared, then dropped with its turn — never the
user's own words. A UserPromptSubmit hook that printed 10 MB once used to put 1 MiB into the history for good:
every later `ram -c` was refused, and the refusal's hint said to set CONTEXT_WINDOW_TOKENS, which was set. A
refusal nothing can answer now says what fills the request.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from react_agent_mini.compact.tokens import estimate_tokens

from ..fakes.fake_llm import FakeLLMServer, HttpError, RecordedRequest, Reply
from ..test_cli import assert_no_traceback, env_for, ram

CONTEXT = "UserPromptSubmit hook additional context: "
WINDOW = 16_000


def user_hook(command: str) -> None:
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "react-agent-mini" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    hook = {"type": "command", "command": command}
    path.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"matcher": "", "hooks": [hook]}]}}))


def request_tokens(body: dict[str, Any]) -> int:
    """The request's size as the model counts it (here: our estimate of everything it carries)."""
    return estimate_tokens(json.dumps([body.get("system", ""), body["messages"], body.get("tools", [])]))


class Model:
    """Answers in order, refusing (without using an answer) every request over `window` tokens."""

    def __init__(self, window: int, answers: list[str], *, states_window: bool = True) -> None:
        self.window = window
        self.answers: Iterator[str] = iter(answers)
        self.states_window = states_window
        self.refused: list[int] = []
        self.accepted: list[int] = []

    def __call__(self, request: RecordedRequest) -> HttpError | Reply:
        size = request_tokens(request.body)
        if size > self.window:
            self.refused.append(size)
            if self.states_window:
                return HttpError(
                    400,
                    f"This model's maximum context length is {self.window} tokens. However, your messages "
                    f"resulted in {size} tokens. Please reduce the length of the messages.",
                )
            return HttpError(400, "Input is too long for requested model.")
        self.accepted.append(size)
        return Reply(text=next(self.answers))


def user_texts(request: RecordedRequest) -> list[str]:
    return [str(m["content"]) for m in request.body["messages"] if m["role"] == "user"]


def test_a_hook_that_printed_10_mb_once_leaves_the_session_usable(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    once = tmp_path / "printed"
    user_hook(f'if [ ! -e {once} ]; then touch {once}; yes "the state of every service" | head -c 10000000; fi')
    model = Model(WINDOW, ["First done.", "Second done."])
    fake_llm.set_responder(model)
    env = env_for("openai", fake_llm, CONTEXT_WINDOW_TOKENS=str(WINDOW))
    first = ram("check the services", env=env, cwd=tmp_path)
    assert_no_traceback(first)
    assert first.returncode == 0, first.stderr
    assert first.stdout == "First done.\n"
    continued = ram("-c", "now restart the broken one", env=env, cwd=tmp_path)
    assert_no_traceback(continued)
    assert continued.returncode == 0, continued.stderr
    assert continued.stdout == "Second done.\n"
    assert model.refused == [] and len(model.accepted) == 2
    last = user_texts(fake_llm.requests[-1])
    assert "check the services" in last and last[-1] == "now restart the broken one"
    (context,) = [text for text in last if text.startswith(CONTEXT)]
    assert context.startswith(f"{CONTEXT}the state of every service\n")
    assert "hook output cut by ram to fit the context window" in context and len(context) < 20_000


def test_old_hook_context_is_shrunk_like_old_tool_results(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    # every prompt gets 4,500 characters of context (~1,650 tokens): each fits its share of the window whole,
    # together they pass the threshold (40% of the window)
    user_hook('yes "status of build $(date +%N): green" | head -c 4500')
    turns = [f"question {i}: what changed?" for i in range(6)]
    model = Model(WINDOW, [f"Answer {i}." for i in range(6)])
    fake_llm.set_responder(model)
    env = env_for("openai", fake_llm, CONTEXT_WINDOW_TOKENS=str(WINDOW), AUTOCOMPACT="0")
    for i, text in enumerate(turns):
        proc = ram(*(["-c"] if i else []), text, env=env, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == f"Answer {i}.\n"
    assert model.refused == []
    first, last = user_texts(fake_llm.requests[0]), user_texts(fake_llm.requests[-1])
    assert first[0].startswith(CONTEXT) and len(first[0]) == len(CONTEXT) + 4500  # whole where it entered
    assert [text for text in last if not text.startswith((CONTEXT, "[Earlier turns"))] == turns  # word for word
    contexts = [text for text in last if text.startswith(CONTEXT)]
    assert len(contexts[-1]) == len(CONTEXT) + 4500  # this turn's: whole
    # the older ones: dropped with their turns, or cut, or cleared — not all kept whole as the user's words are
    older = contexts[:-1]
    assert len(older) < 5 or any("by compaction" in text or "[Old hook context cleared" in text for text in older)
    assert sum(map(len, contexts)) < 3 * 4500


def largest_part_line(stderr: str) -> str:
    (line,) = [line for line in stderr.splitlines() if "API error 400" in line]
    return line


def test_a_refusal_nothing_can_answer_says_what_fills_the_request(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """The user pasted more than the window holds: their words are never cut, so no summary or cut helps."""
    model = Model(WINDOW, ["never sent"])
    fake_llm.set_responder(model)
    pasted = "Please review this log:\n" + "2024-05-01 12:00:00 INFO request served in 12 ms\n" * 2000
    proc = ram(pasted, env=env_for("openai", fake_llm, CONTEXT_WINDOW_TOKENS=str(WINDOW)), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 1 and len(model.refused) >= 1
    line = largest_part_line(proc.stderr)
    assert "the largest part of the request is your own messages (98 KB)" in line
    assert "split the task, or /clear to start afresh" in line
    assert "CONTEXT_WINDOW_TOKENS" not in proc.stderr  # it is set: saying to set it helps nobody


def test_a_refusal_names_the_hook_whose_context_fills_it(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """The window set is wrong (the model's is smaller, and its refusal does not say how small): the hook's context
    is within its share of the window set, but the largest part of a request the model refuses."""
    user_hook('yes "a line of the hook context" | head -c 200000')
    model = Model(6000, ["never sent"], states_window=False)
    fake_llm.set_responder(model)
    proc = ram("hello", env=env_for("openai", fake_llm, CONTEXT_WINDOW_TOKENS="128000"), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 1 and len(model.refused) >= 1
    line = largest_part_line(proc.stderr)
    assert "the largest part of the request is hook context from UserPromptSubmit (" in line
    assert "check what that hook prints" in line and "CONTEXT_WINDOW_TOKENS" not in line


def test_without_a_window_set_the_refusal_still_suggests_setting_it(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    model = Model(WINDOW, ["never sent"], states_window=False)
    fake_llm.set_responder(model)
    pasted = "Please review this log:\n" + "2024-05-01 12:00:00 INFO request served in 12 ms\n" * 2000
    proc = ram(pasted, env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 1
    line = largest_part_line(proc.stderr)
    assert "your own messages" in line and "CONTEXT_WINDOW_TOKENS set to the model's real window" in line
