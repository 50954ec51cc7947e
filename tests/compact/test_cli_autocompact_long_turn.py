"""An automatic summary comes at the configured share of the window, even within one long headless turn: `ram` as
a user runs it, the loopback fake LLM as a model that reports what each request costs, refuses one longer than
its window, and answers the summary call (the request that offers no tools) with a scripted summary.

With `AUTOCOMPACT_PERCENT=50` and the pipeline's threshold set out of reach (`COMPACT_THRESHOLD_CHARS`), only the
summary can keep the request in the window. It used to never come in a headless run: the summary kept the
current turn whole, and a headless task is one turn, so there was nothing older to summarise; the requests grew
until the model refused one, and only the refusal's clearing of old results rescued the run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from react_agent_mini.compact.tokens import estimate_tokens

from ..fakes.fake_llm import FakeLLMServer, HttpError, RecordedRequest, Reply, ToolCall, Usage
from ..test_cli import assert_no_traceback, env_for, ram

WINDOW = 40_000
READS = 16
TASK = "Read every module and tell me what they share."


def request_tokens(body: dict[str, Any]) -> int:
    return estimate_tokens(json.dumps([body["messages"], body.get("tools", [])]))


class Model:
    def __init__(self) -> None:
        self.steps = 0
        self.sizes: list[tuple[bool, int]] = []
        """(a summary call, its size) of every request, in order."""
        self.refused = 0

    def __call__(self, request: RecordedRequest) -> HttpError | Reply:
        size = request_tokens(request.body)
        summary = "tools" not in request.body
        self.sizes.append((summary, size))
        if size > WINDOW:
            self.refused += 1
            return HttpError(
                400, f"This model's maximum context length is {WINDOW} tokens. However, you requested {size}."
            )
        usage = Usage(input_tokens=size, output_tokens=30)
        if summary:
            return Reply(text="SUMMARY: modules 0-9 were read; each defines numbered functions.", usage=usage)
        self.steps += 1
        if self.steps > READS:
            return Reply(text="They all define numbered functions.", usage=usage)
        return Reply(tool_calls=[ToolCall("Read", {"file_path": f"mod{self.steps - 1}.py"})], usage=usage)


def test_a_summary_comes_at_the_configured_share_within_one_turn(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    for i in range(READS):  # ~2,000 tokens each: whole under the fresh cap (12% of the window)
        (tmp_path / f"mod{i}.py").write_text(
            "".join(f"def function_{i}_{n}(x):\n    return x + {n}\n" for n in range(160))
        )
    model = Model()
    fake_llm.set_responder(model)
    env = env_for(
        "openai",
        fake_llm,
        CONTEXT_WINDOW_TOKENS=str(WINDOW),
        AUTOCOMPACT_PERCENT="50",
        COMPACT_THRESHOLD_CHARS="100000000",
    )
    proc = ram("--max-turns", "40", TASK, env=env, cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("They all define numbered functions.")
    assert model.refused == 0, model.sizes
    summaries = [i for i, (summary, _size) in enumerate(model.sizes) if summary]
    assert summaries, model.sizes
    # the summary came once the context passed half the window, not much later: the request before it was over
    # the trigger by at most one Read (~2,500 tokens with its framing), and no request got near the window
    before = model.sizes[summaries[0] - 1][1]
    assert before + 2600 > WINDOW // 2 and before < WINDOW // 2 + 2600, model.sizes
    assert max(size for _summary, size in model.sizes) < 0.7 * WINDOW, model.sizes
    # the request after it: the summary, the task word for word, the latest Reads
    after = fake_llm.requests[summaries[0] + 1].body["messages"]
    texts = [str(m.get("content")) for m in after if m["role"] == "user"]
    assert any("SUMMARY: modules 0-9 were read" in text for text in texts)
    assert TASK in texts
    assert [m for m in after if m["role"] == "tool"], after  # the tail: the latest Reads and their results
