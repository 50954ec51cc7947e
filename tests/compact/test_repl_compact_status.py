"""`/compact` and `/status` tell the user one number: in the REPL on a pty, what the summary's notice says the
context fell to is what `/status` says right after. They used to disagree (`~5% → ~3%`, then `~4%`): the notice
estimated the rewritten history as stored, long tool results whole, and rounded down, while the meter behind
`/status` estimates it as stage ① sends it, and rounds."""

from __future__ import annotations

import re
from pathlib import Path

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall, Usage
from ..test_cli import env_for
from ..ui.test_repl_minimal import Term


def test_the_compact_notice_and_status_agree(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    count = ToolCall("Bash", {"command": "seq 1 20000"})  # 30,000 characters kept: far over the fresh cap
    fake_llm.enqueue(
        Reply(tool_calls=[count], usage=Usage(input_tokens=5000)),
        Reply(text="Counted.", usage=Usage(input_tokens=8000)),
        Reply(tool_calls=[count], usage=Usage(input_tokens=8500)),
        Reply(text="Counted again.", usage=Usage(input_tokens=11500)),  # what the provider counts of the request
        Reply(text="SUMMARY: the user counted to 20000 twice."),  # the /compact summary
    )
    env = env_for("openai", fake_llm, CONTEXT_WINDOW_TOKENS="20000", AUTOCOMPACT="0")
    with Term(env=env, cwd=tmp_path) as term:
        term.prompt()
        term.line("count to 20000")
        term.expect("Counted.")
        term.prompt()
        term.line("once more")
        term.expect("Counted again.")
        term.prompt()
        term.line("/compact")
        notice = term.expect("of the context window")
        term.prompt()
        term.line("/status")
        status = term.expect("session ")
        term.line("/exit")
        assert term.wait() == 0
    fell = re.search(r"~(\d+)% → ~(\d+)% of the context window", notice)
    shown = re.search(r"context +~[\d,]+ of 20,000 tokens \(~(\d+)%", status)
    assert fell is not None and shown is not None, (notice, status)
    assert fell.group(2) == shown.group(1), (notice, status)
    assert int(fell.group(2)) < int(fell.group(1))
