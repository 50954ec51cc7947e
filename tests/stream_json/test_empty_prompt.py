"""A user line with no text (`content: ""` or `[]`) is refused as a UserPromptSubmit hook refuses a prompt: an
error result, `subtype: error_during_execution` with its reason in `errors` (never `success` with `is_error`, which
Claude Code reserves for a failed API call), a warning on stderr, no model call — and the session goes on."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..fakes.fake_llm import FakeLLMServer, Reply
from ..test_cli import env_for
from .test_sdk_protocol import Ram, parsed_by_the_sdk


@pytest.mark.parametrize("content", ["", [], "   ", [{"type": "text", "text": ""}]])
def test_a_user_line_without_text_gets_an_error_result_and_the_session_goes_on(
    content: object, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(Reply(text="Here I am."))
    agent = Ram(env=env_for("openai", fake_llm), cwd=tmp_path)
    agent.user(content)
    refused = agent.result()
    assert refused["subtype"] == "error_during_execution" and refused["is_error"] is True
    assert refused["errors"] == ["the user message has no text content; nothing was sent to the model"]
    assert refused["num_turns"] == 0 and fake_llm.requests == []
    agent.user("are you there?")
    assert agent.result()["result"] == "Here I am."
    assert agent.close() == 0  # the last result was not an error
    parsed_by_the_sdk(agent.seen)
    assert [line["subtype"] for line in agent.seen if line["type"] == "system"] == ["init", "init"]
    assert agent.stderr.count("warning: stdin: a user message without text") == 1
    assert "Traceback" not in agent.stderr
