"""Models that misbehave, headless, on both wires: what users report, scripted into the loopback fake server.

Each test runs `ram` as a user does (a subprocess against the fake server, real tools and files) and checks what
the user reads (stdout, stderr, the exit code) and what the model is told next (the following request, which the
fake server validates as the real API does: a call without its result is refused).

- arguments that are not JSON, or not what the tool takes: one result saying what was wrong, nothing runs;
- a call the output limit cut: not run, the model told to make it smaller, the complete calls before it run;
- a tool that does not exist: the result names the nearest one;
- the same call again and again: the run stops (exit 1) with one line, unless the result keeps changing;
- tool calls printed as text by a server whose parser is off: read, run as usual, the flag named;
- an empty answer: asked again once with the same request, then an error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .fakes.fake_llm import FakeLLMServer, RecordedRequest, Reply, ToolCall
from .fakes.fake_llm import Usage as FakeUsage
from .test_cli import WIRES, assert_no_traceback, env_for, ram

NO_SANDBOX = ("--sandbox", "off")
"""What these tests look at is the loop's, not the sandbox's."""


def results(request: RecordedRequest) -> list[str]:
    """The tool results a request carries, in order (OpenAI marks an error with `Error: `, Anthropic with a flag)."""
    if request.wire == "openai":
        return [str(m["content"]).removeprefix("Error: ") for m in request.body["messages"] if m["role"] == "tool"]
    return [
        str(block["content"])
        for m in request.body["messages"]
        if isinstance(m["content"], list)
        for block in m["content"]
        if block.get("type") == "tool_result"
    ]


def sent_calls(request: RecordedRequest) -> list[tuple[str, dict[str, Any]]]:
    """The structured tool calls a request's history holds: (name, arguments)."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for m in request.body["messages"]:
        if request.wire == "openai":
            for call in m.get("tool_calls") or []:
                calls.append((call["function"]["name"], json.loads(call["function"]["arguments"])))
        elif isinstance(m["content"], list):
            calls += [(b["name"], b["input"]) for b in m["content"] if b.get("type") == "tool_use"]
    return calls


def roles(request: RecordedRequest) -> list[str]:
    return [str(m["role"]) for m in request.body["messages"] if m["role"] != "system"]


# ---- arguments that are not what the tool takes ----

BAD_ARGUMENTS: list[tuple[str, dict[str, Any] | str, list[str]]] = [
    (
        "not JSON",
        '{"command": "touch ran-1" "x"}',
        ["Invalid input for Bash: arguments were invalid JSON (Expecting ',' delimiter: line 1 column 27 (char 26))"],
    ),
    ("a string, not an object", json.dumps(json.dumps({"command": "touch ran-2"})), ["must be a JSON object"]),
    ("a missing field", {"description": "make a file"}, ["Invalid input for Bash: command: field required"]),
    ("a wrong type", {"command": ["touch", "ran-3"]}, ["Invalid input for Bash: command: expected `str`, got `array`"]),
    (
        "a field Bash does not take",
        {"command": "touch ran-4", "timeout_ms": 5000},
        ["Invalid input for Bash: `timeout_ms` (did you mean `timeout`?) is not a field of Bash."],
    ),
]
TAKES = "Bash takes: command (string, required), timeout (integer), description (string), run_in_background (boolean)"


@pytest.mark.parametrize("wire", WIRES)
def test_arguments_that_do_not_fit_get_one_result_saying_why_and_nothing_runs(
    wire: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Bash", arguments) for _, arguments, _ in BAD_ARGUMENTS]),
        Reply(tool_calls=[ToolCall("Bash", {"command": "touch fixed"})]),
        Reply(text="Done."),
    )
    proc = ram(*NO_SANDBOX, "make the files", env=env_for(wire, fake_llm, ALLOW_WRITE="1"), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    told = results(fake_llm.requests[1])
    assert len(told) == len(BAD_ARGUMENTS)  # one result per call
    for (case, _, expected), result in zip(BAD_ARGUMENTS, told, strict=True):
        for part in expected:
            assert part in result, (case, result)
    for unreadable in told[:2]:  # arguments that are no object: what the tool takes, and that nothing ran
        assert "Nothing ran." in unreadable and TAKES in unreadable
    assert TAKES in told[4]  # the unknown field, too
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == ["fixed"]  # only the retry ran
    assert proc.stdout == "Done.\n"


# ---- a call the output limit cut ----


@pytest.mark.parametrize("wire", WIRES)
def test_a_call_cut_by_the_output_limit_is_not_run_and_the_model_is_told_to_split_it(
    wire: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    cut = Reply(
        text="Writing both files.",
        tool_calls=[
            ToolCall("Write", {"file_path": "small.txt", "content": "small\n"}),
            ToolCall("Write", '{"file_path": "big.txt", "content": "part one, part two, part thr'),
        ],
        stop="length",
        usage=FakeUsage(output_tokens=8192),
    )
    fake_llm.enqueue(cut, Reply(text="I will write it in parts."))
    env = env_for(wire, fake_llm, ALLOW_WRITE="1", RAM_MAX_OUTPUT_TOKENS="8192")
    proc = ram(*NO_SANDBOX, "write them", env=env, cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "small.txt").read_text() == "small\n"  # complete before the cut: it ran
    assert not (tmp_path / "big.txt").exists()  # cut: it did not
    ran, cut_off = results(fake_llm.requests[1])
    assert "small.txt" in ran
    assert cut_off == (
        "Not run: your call to Write was cut off by the output token limit (8,192 tokens) before its arguments were "
        "complete, so nothing ran. Split the content into smaller parts: Write the first part, then add the rest "
        "with Edit calls."
    )
    assert (
        "[note] The response was cut off by the output token limit (8,192 tokens) in the middle of a call to Write; "
        "that call was not run" in proc.stderr
    )


# ---- a tool that does not exist ----


@pytest.mark.parametrize("wire", WIRES)
def test_a_tool_that_does_not_exist_gets_the_nearest_name_and_the_session_goes_on(
    wire: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    fake_llm.enqueue(
        Reply(
            tool_calls=[
                ToolCall("read_file", {"path": "a.txt"}),
                ToolCall("shell", {"command": "ls"}),
                ToolCall("run_command", {"command": "ls"}),
                ToolCall("frobnicate", {}),
            ]
        ),
        Reply(tool_calls=[ToolCall("Read", {"file_path": "a.txt"})]),
        Reply(text="It says hello."),
    )
    proc = ram("what does a.txt say", env=env_for(wire, fake_llm), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    read_file, shell, run_command, frobnicate = results(fake_llm.requests[1])
    tools = "Available tools: Read, Write, Edit, Glob, Grep, Bash, BashOutput, KillShell, WebFetch, TodoWrite, Agent."
    assert read_file == f"Unknown tool: read_file. Did you mean Read? {tools}"
    assert shell == f"Unknown tool: shell. Did you mean Bash? {tools}"
    assert run_command == f"Unknown tool: run_command. Did you mean Bash? {tools}"
    assert frobnicate == f"Unknown tool: frobnicate. {tools}"
    assert results(fake_llm.requests[2])[-1] == "1\thello"
    assert proc.stdout == "It says hello.\n"


# ---- the same call again and again ----


@pytest.mark.parametrize("wire", WIRES)
def test_the_same_call_three_times_in_a_row_stops_the_run(wire: str, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    fake_llm.enqueue(*[Reply(text="Let me list.", tool_calls=[ToolCall("Bash", {"command": "ls"})])] * 3)
    proc = ram("what is here", env=env_for(wire, fake_llm), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        "[tool] Bash: ls",
        "[tool] Bash: ls",
        "stopped: the model repeated the same call (Bash ls) 3 times in a row",
    ]
    assert len(fake_llm.requests) == 3  # the third call never ran, and the model was not called again
    # the history stayed whole: continuing sends the third call with its result
    fake_llm.enqueue(Reply(text="Something else, then."))
    again = ram("-c", "try another way", env=env_for(wire, fake_llm), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert results(fake_llm.requests[-1])[-1] == (
        "Not run: you made this exact call 3 times in a row and got the same result each time, so ram stopped the "
        "run. Do not repeat it; try something different or say what is blocking you."
    )


def test_a_stopped_loop_is_an_error_result_in_json(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.set_responder(lambda request: Reply(tool_calls=[ToolCall("Glob", {"pattern": "*.py"})]))
    proc = ram("--output-format", "json", "find code", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 1
    result = json.loads(proc.stdout)
    assert (result["subtype"], result["is_error"], result["num_turns"]) == ("error_during_execution", True, 3)
    assert result["error"] == "the model repeated the same call (Glob *.py) 3 times in a row"


@pytest.mark.parametrize("wire", WIRES)
def test_a_repeat_whose_result_changed_or_with_an_edit_between_is_no_loop(
    wire: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    (tmp_path / "n.txt").write_text("one\n")
    count = ToolCall("Bash", {"command": "echo x >> log.txt && wc -l < log.txt"})  # its output changes each time
    read = ToolCall("Read", {"file_path": "n.txt"})

    def edit(old: str, new: str) -> ToolCall:
        return ToolCall("Edit", {"file_path": "n.txt", "old_string": old, "new_string": new})

    fake_llm.enqueue(
        *[Reply(tool_calls=[count])] * 4,
        Reply(tool_calls=[read]),
        Reply(tool_calls=[edit("one", "two")]),
        Reply(tool_calls=[read]),
        Reply(tool_calls=[edit("two", "three")]),
        Reply(tool_calls=[read]),
        Reply(text="Counted to 4 and edited twice."),
    )
    proc = ram(*NO_SANDBOX, "count and edit", env=env_for(wire, fake_llm, ALLOW_WRITE="1"), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert "stopped" not in proc.stderr
    assert [r.strip() for r in results(fake_llm.requests[4])[-4:]] == ["1", "2", "3", "4"]
    assert (tmp_path / "n.txt").read_text() == "three\n"
    assert proc.stdout == "Counted to 4 and edited twice.\n"


def test_only_read_s_own_unchanged_notice_counts_as_the_same_result(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """A Read of an unchanged file answers with its notice, whose data says so: the same result as before. A command
    that comes to print the notice's very words has a changed result (its data is a command's): no loop yet."""
    from react_agent_mini.tools.builtin.read import UNCHANGED_STUB

    (tmp_path / "a.txt").write_text("one\n")
    (tmp_path / "s.txt").write_text("x")
    (tmp_path / "stub.txt").write_text(UNCHANGED_STUB)
    read = ToolCall("Read", {"file_path": "a.txt"})
    fake_llm.set_responder(lambda request: Reply(tool_calls=[read]))
    proc = ram(*NO_SANDBOX, "read it", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 1 and proc.stderr.count("[tool] Read") == 2  # the content, the notice, stopped
    assert results(fake_llm.requests[2])[-1] == UNCHANGED_STUB
    looks_like_it = ToolCall("Bash", {"command": "cat s.txt; cp stub.txt s.txt"})  # x, then the notice's words
    fake_llm.set_responder(lambda request: Reply(tool_calls=[looks_like_it]))
    proc = ram(*NO_SANDBOX, "run it", env=env_for("openai", fake_llm, ALLOW_WRITE="1"), cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    ran = [line for line in proc.stderr.splitlines() if line.startswith("[tool] Bash")]
    assert len(ran) == 3  # x, the words (changed), the words (the same): the fourth is the third repeat


# ---- tool calls printed as text ----

TEXT_CALLS = {
    "hermes": 'I will read it.\n<tool_call>\n{"name": "Read", "arguments": {"file_path": "a.txt"}}\n</tool_call>',
    "qwen3_coder": (
        "<tool_call>\n<function=Read>\n<parameter=file_path>\na.txt\n</parameter>\n<parameter=limit>\n5\n"
        "</parameter>\n</function>\n</tool_call>"
    ),
    "llama3_json": '<|python_tag|>{"name": "Read", "parameters": {"file_path": "a.txt"}}<|eom_id|>',
    "mistral": '[TOOL_CALLS][{"name": "Read", "arguments": {"file_path": "a.txt"}}]',
}


@pytest.mark.parametrize("form", list(TEXT_CALLS))
@pytest.mark.parametrize("wire", WIRES)
def test_tool_calls_sent_as_text_run_and_the_user_is_told_the_server_flag(
    wire: str, form: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    fake_llm.enqueue(Reply(text=TEXT_CALLS[form]), Reply(text="It says hello."))
    proc = ram("what does a.txt say", env=env_for(wire, fake_llm), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert len(fake_llm.requests) == 2
    second = fake_llm.requests[1]
    assert results(second) == ["1\thello"]
    [(name, arguments)] = sent_calls(second)  # back to the server as a structured call, with its result
    assert name == "Read" and arguments["file_path"] == "a.txt"
    assert arguments.get("limit", 5) == 5  # a number stays a number (the XML's values are text)
    assert f"--enable-auto-tool-choice --tool-call-parser {form}" in proc.stderr
    assert (
        "[note] The server sent the model's tool calls as text" in proc.stderr and "llama.cpp `--jinja`" in proc.stderr
    )
    assert "[tool] Read: a.txt" in proc.stderr
    assert "<tool_call>" not in proc.stdout and "[TOOL_CALLS]" not in proc.stdout
    assert proc.stdout.endswith("It says hello.\n")


def test_a_text_call_in_a_code_block_is_an_example_not_a_call(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    example = (
        'Hermes models call tools like this:\n\n```\n<tool_call>\n{"name": "Bash", "arguments": {"command": '
        '"touch made"}}\n</tool_call>\n```\n'
    )
    fake_llm.enqueue(Reply(text=example))
    proc = ram(
        *NO_SANDBOX, "how do hermes models call tools", env=env_for("openai", fake_llm, ALLOW_WRITE="1"), cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert len(fake_llm.requests) == 1 and proc.stdout == example
    assert proc.stderr == "" and not (tmp_path / "made").exists()


def test_a_text_format_named_in_inline_code_is_prose(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(
        Reply(text="Qwen wraps its calls in `<tool_call>` tags and Mistral starts them with `[TOOL_CALLS]`.")
    )
    proc = ram("how do they call tools", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == "" and len(fake_llm.requests) == 1


@pytest.mark.parametrize("wire", WIRES)
def test_text_calls_several_at_once_and_one_cut_by_the_output_limit(
    wire: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    fake_llm.enqueue(
        Reply(
            text='[TOOL_CALLS]Read[ARGS]{"file_path": "a.txt"}'
            '[TOOL_CALLS]Write[ARGS]{"file_path": "b.txt", "content": "on',
            stop="length",
        ),
        Reply(text="I will write b.txt in parts."),
    )
    proc = ram(*NO_SANDBOX, "read a, write b", env=env_for(wire, fake_llm, ALLOW_WRITE="1"), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    read, write = results(fake_llm.requests[1])
    assert read == "1\thello"
    assert write.startswith("Not run: your call to Write was cut off by the output token limit (20 tokens)")
    assert not (tmp_path / "b.txt").exists()
    assert "--tool-call-parser mistral" in proc.stderr


def test_a_text_call_asks_permission_as_any_call_does(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(
        Reply(text='<tool_call>\n{"name": "Write", "arguments": {"file_path": "x.txt", "content": "x"}}\n</tool_call>'),
        Reply(text="I could not write it."),
    )
    proc = ram("write x", env=env_for("openai", fake_llm), cwd=tmp_path)  # headless, no ALLOW_WRITE: denied
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "x.txt").exists()
    assert "[tool] Write denied" in proc.stderr and "1 action was denied" in proc.stderr
    assert results(fake_llm.requests[1])[0].startswith("Permission denied")


# ---- an empty answer ----


@pytest.mark.parametrize("wire", WIRES)
def test_an_empty_answer_is_asked_for_once_more_with_the_same_request(
    wire: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(Reply(), Reply(text="The second try."))
    proc = ram("say something", env=env_for(wire, fake_llm), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "The second try.\n"
    assert "[retry] the model returned an empty answer — attempt 2/2" in proc.stderr
    first, second = fake_llm.requests
    assert first.body == second.body  # the very same request
    # the empty answer is not in the history: continuing sends user, assistant, user
    fake_llm.enqueue(Reply(text="More."))
    again = ram("-c", "and more", env=env_for(wire, fake_llm), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert roles(fake_llm.requests[-1]) == ["user", "assistant", "user"]


@pytest.mark.parametrize("wire", WIRES)
def test_two_empty_answers_end_the_run_with_an_error(wire: str, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(thinking="Hmm, let me think."), Reply(thinking="Hmm, let me think."))
    proc = ram("say something", env=env_for(wire, fake_llm), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == "error: the model returned reasoning but no answer twice"
    assert len(fake_llm.requests) == 2

    fake_llm.enqueue(Reply(), Reply())
    proc = ram("--output-format", "json", "say something", env=env_for(wire, fake_llm), cwd=tmp_path)
    assert proc.returncode == 1
    result = json.loads(proc.stdout)
    assert result["is_error"] is True and result["result"] == "the model returned an empty answer twice"
