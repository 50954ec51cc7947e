"""Tool results' data in transcripts (`result_details`, `recorded_results`): a Bash result's text is recorded once
(its data renders it) and resumed byte for byte; a transcript written before the tools gave data (Read, Grep and
Glob results without it, Bash's data without a kind, Bash results older still with only their text) loads,
resumes and compacts as it did.

Real files, a real `ram` against the loopback fake model for the resumed requests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from react_agent_mini import transcript
from react_agent_mini.compact.budget import TRUNCATION_NOTE
from react_agent_mini.compact.options import CompactOptions
from react_agent_mini.compact.pipeline import apply_tool_result_budget
from react_agent_mini.read_result import ReadResult
from react_agent_mini.search_result import SearchResult
from react_agent_mini.shell_result import RecordedCut, RecordedCuts, ShellResult

from .fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from .test_cli import env_for, ram

READ_TEXT = "\n".join(f"{n}\tline {n} of the file" for n in range(101, 401))
READ_TEXT += "\n\n[File has 1000 lines; showing lines 101-400. Read more with offset=401.]"
GREP_TEXT = "\n".join(f"src/m{n}.py:{n}:    return value_{n}" for n in range(51, 351))
GREP_TEXT += "\n[Showing results 51..350 of 900. Use offset=350 to see more.]"
GLOB_TEXT = "\n".join(f"src/pkg/module_{n}.py" for n in range(100))
GLOB_TEXT += "\n(Showing 100 of 900 matches, newest first. Narrow the pattern or the path to see the rest.)"
MARKED = "a\n" * 3000 + "\n[... 123456 characters (77 lines) omitted ...]\n" + "z\n" * 3000
SHELL = {"stdout": "out\n", "stderr": "err\n", "exit_code": 3, "status": ["Exit code 3"]}  # no kind: Bash's data
SHELL_TEXT = "out\n\nstderr:\nerr\n\nExit code 3"

CALLS = [
    ("r", "Read", {"file_path": "big.py", "offset": 101, "limit": 300}, READ_TEXT, None),
    ("g", "Grep", {"pattern": "return", "path": "src", "offset": 50}, GREP_TEXT, None),
    ("l", "Glob", {"pattern": "src/pkg/*.py"}, GLOB_TEXT, None),
    ("b", "Bash", {"command": "make"}, MARKED, None),  # recorded before Bash results had data
    ("s", "Bash", {"command": "make check"}, SHELL_TEXT, SHELL),  # Bash's data, recorded before it had a kind
]


def old_transcript(path: Path, cwd: Path) -> None:
    """A transcript as ram wrote it before the tools other than Bash gave data (and, for one Bash result, before
    Bash did): each result's text in full, and Bash's data without a `kind`."""
    records: list[dict[str, Any]] = [{"type": "meta", "session_id": path.stem, "cwd": str(cwd), "started": 1.0}]

    def message(raw: dict[str, Any]) -> None:
        records.append({"type": "message", "message": raw, "ts": 1.0})

    message({"role": "user", "content": [{"type": "text", "text": "look around"}], "id": "m0"})
    for call_id, name, args, text, details in CALLS:
        use = {"type": "tool_use", "id": call_id, "name": name, "input": args}
        message({"role": "assistant", "content": [use]})
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "content": text}
        if details is not None:
            result["details"] = details
        if name == "Bash" and details is not None:
            result["is_error"] = True
        message({"role": "user", "content": [result]})
    message({"role": "assistant", "content": [{"type": "text", "text": "Looked."}]})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def results_of(messages: Any) -> dict[str, Any]:
    return {r.tool_use_id: r for m in messages for r in m.tool_results}


def test_an_old_transcript_loads_with_the_data_its_text_shows(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    old_transcript(path, tmp_path)
    loaded = results_of(transcript.load(path).messages)
    assert [loaded[c].content for c, *_ in CALLS] == [text for *_, text, _ in CALLS]  # the text, unchanged
    assert loaded["r"].details == ReadResult(101, 300)
    assert loaded["g"].details == SearchResult(300, 900, 50)
    assert loaded["l"].details == SearchResult(100, 900, mode="glob")
    assert loaded["b"].details == RecordedCuts((RecordedCut(123456, 77),))
    assert loaded["s"].details == ShellResult("out\n", "err\n", 3, status=("Exit code 3",))


def test_an_old_transcript_compacts_as_it_did(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    old_transcript(path, tmp_path)
    history = transcript.load(path).messages
    seed = results_of(apply_tool_result_budget(history, CompactOptions.v4(max_tool_result_chars=2000)))
    kept, note = seed["r"].content.split(TRUNCATION_NOTE)
    last_whole = int(kept.split("\n")[-2].split("\t")[0])  # the line before the one cut mid-way
    assert note.endswith(f"To see the rest, Read big.py with offset={last_whole + 1}.]")
    line = seed["b"].content.split("[… ", 1)[1].split(" characters", 1)[0]
    assert int(line.replace(",", "")) > 123456  # Bash's own mark counted for what it stood for
    v2 = results_of(apply_tool_result_budget(history, CompactOptions.from_env({}, fresh_result_tokens=400)))
    grep_note = v2["g"].content.rsplit("\n", 1)[1]
    shown = v2["g"].content.count("\n")
    assert f"{shown} of these 300 entries shown (results 51..{50 + shown} of 900)" in grep_note
    assert f"call Grep again with offset={50 + shown}" in grep_note
    glob_shown = v2["l"].content.count("\n")
    assert f"{glob_shown} of these 100 entries shown (results 1..{glob_shown} of 900)" in v2["l"].content


def test_an_old_transcript_resumes_byte_for_byte(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    old_transcript(transcript.sessions_dir(tmp_path) / "0123456789abcdef.jsonl", tmp_path)
    fake_llm.enqueue(Reply(text="Going on."))
    proc = ram("-c", "go on", env=env_for("openai", fake_llm, COMPACT="0"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    sent = [m["content"] for m in fake_llm.requests[0].body["messages"] if m["role"] == "tool"]
    error = "Error: "  # the OpenAI-compatible wire's mark on a failed call's result
    assert sent == [(error if details else "") + text for *_, text, details in CALLS]


def test_a_bash_result_s_text_is_recorded_once_and_resumed_byte_for_byte(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    command = "seq 1 200000; echo done >&2; exit 3"  # long enough for Bash to cut its middle
    calls = [ToolCall("Bash", {"command": command}), ToolCall("Read", {"file_path": "a.txt"})]
    fake_llm.enqueue(Reply(tool_calls=calls), Reply(text="Ran it."), Reply(text="Still here."))
    env = env_for("openai", fake_llm, ALLOW_WRITE="1", COMPACT="0")
    first = ram("run it", env=env, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    second = ram("-c", "and now?", env=env, cwd=tmp_path)
    assert second.returncode == 0, second.stderr

    def tool_contents(index: int) -> list[str]:
        return [m["content"] for m in fake_llm.requests[index].body["messages"] if m["role"] == "tool"]

    assert tool_contents(2) == tool_contents(1)  # resumed: what the model reads, byte for byte
    bash_text, read_text = tool_contents(1)
    assert bash_text.endswith("stderr:\ndone\n\nExit code 3") and "characters (" in bash_text  # cut by Bash
    (path,) = transcript.sessions_dir(tmp_path).glob("*.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    results = {
        b["tool_use_id"]: b
        for r in records
        if r["type"] == "message"
        for b in r["message"]["content"]
        if b["type"] == "tool_result"
    }
    bash, read = results.values()
    assert "content" not in bash and bash["details"]["kind"] == "shell"  # its data renders its text: not twice
    assert path.read_text().count("199999\\n200000") == 1  # the tail of stdout, once (in the data)
    assert read["content"] == read_text == "1\tone\n2\ttwo" and read["details"] == {
        "kind": "read",
        "lines": 2,
        "total": 2,
    }


def test_a_result_whose_text_is_not_what_its_data_renders_keeps_its_text(tmp_path: Path) -> None:
    from react_agent_mini.messages import Message, ToolResultBlock, message_from_dict, message_to_dict

    shell = ShellResult("out\n", "", 0)
    hooked = ToolResultBlock("t", shell.text() + "\n\nA hook's note.", details=shell)  # context added after the run
    plain = ToolResultBlock("u", shell.text(), details=shell)
    message = Message("user", (hooked, plain))
    raw = message_to_dict(message, details=True)
    assert [("content" in b) for b in raw["content"]] == [True, False]
    assert message_from_dict(json.loads(json.dumps(raw))) == message
