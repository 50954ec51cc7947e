"""Transcripts stay whole and have one writer: a record the disk cut off is mended before anything is appended,
loading never moves a record, and while one process appends to a session every other one is turned away.

End to end through the CLI (the fake server refuses any request whose tool calls are not answered in place, as
the real APIs do), plus unit tests of the mending and of loading damaged files written before these fixes.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from react_agent_mini import session_lock, transcript
from react_agent_mini.messages import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    assistant_text,
    message_to_dict,
    user_text,
)

from .fakes.fake_llm import FakeLLMServer, Hang, Reply, ToolCall
from .processes import wait_until
from .test_cli import env_for, ram
from .ui.test_repl_minimal import Term

AGENT = [sys.executable, "-m", "react_agent_mini"]
UNDER_FILE_SIZE_LIMIT = (
    "import os, resource, sys; limit = int(sys.argv[1]); resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)); "
    "os.execv(sys.executable, [sys.executable, '-m', 'react_agent_mini', *sys.argv[2:]])"
)
"""Runs the agent with a file size limit: a write past it is cut short and then fails with EFBIG, exactly as a
full disk cuts it and fails with ENOSPC (Python ignores the SIGXFSZ that comes with it)."""


def the_session(cwd: Path) -> Path:
    files = list(transcript.sessions_dir(cwd).glob("*.jsonl"))
    assert len(files) == 1, files
    return files[0]


def held_session(cwd: Path, pid: int, task: str) -> Path:
    """The session process `pid` holds, once it holds it (the lock file names its holder) and has recorded `task`,
    so that it writes nothing more until its model answers. (Its first model request can be on the wire before the
    session is open at all: `early/`.)"""

    def held() -> Path | None:
        directory = transcript.sessions_dir(cwd)
        for lock in directory.glob("*.lock") if directory.is_dir() else ():
            if lock.read_text(errors="replace").split("\n", 1)[0] == str(pid):
                path = lock.with_suffix(".jsonl")
                return path if path.is_file() and task in path.read_text(errors="replace") else None
        return None

    assert wait_until(held, timeout=60), "the session was never held"
    found = held()
    assert found is not None
    return found


def whole_records(path: Path) -> list[dict[str, Any]]:
    """The records of a transcript, asserting it is whole: it ends with a line end and every line is a record."""
    data = path.read_bytes()
    assert data.endswith(b"\n"), data[-200:]
    return [json.loads(line) for line in data.splitlines()]


def conversation(path: Path) -> list[tuple[str, str]]:
    """(role, what) of each message record in file order: the text, or the tool calls / results it holds."""
    out = []
    for record in whole_records(path):
        if record["type"] == "message":
            message = record["message"]
            parts = [b.get("text") or b["type"] for b in message["content"]]
            out.append((message["role"], " ".join(parts)))
    return out


def roles(fake_llm: FakeLLMServer, index: int = -1) -> list[str]:
    return [m["role"] for m in fake_llm.requests[index].body["messages"]]


def assert_sendable(messages: list[Message]) -> None:
    """Every tool call answered by the very next message, and no result anywhere else."""
    waiting: list[str] = []
    for message in messages:
        results = [r.tool_use_id for r in message.tool_results]
        if waiting:
            assert results == waiting, (waiting, message)
            assert all(isinstance(b, ToolResultBlock) for b in message.content[: len(waiting)])
        else:
            assert not results, message
        waiting = [u.id for u in message.tool_uses]
    assert not waiting


# ---- a record cut mid-write ------------------------------------------------------------------------------------


def test_a_record_the_disk_cut_off_is_removed_before_the_next_continue(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(text="Looking.", tool_calls=[ToolCall("Echo", {"message": "ping"})]), Reply(text="pong."))
    first = ram("start", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    path = the_session(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    # meta, the task, the tool call and what that model call cost, its result, the answer and what it cost
    assert [json.loads(line)["type"] for line in lines] == [
        "meta",
        "message",
        "message",
        "call",
        "message",
        "message",
        "call",
    ]
    # The disk filled up while the tool result was written: half of it reached the file, nothing after it.
    path.write_bytes(b"".join(lines[:4]) + lines[4][: len(lines[4]) // 2])

    fake_llm.enqueue(Reply(text="second answer"))
    second = ram("-c", "second", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    fake_llm.enqueue(Reply(text="third answer"))
    third = ram("-c", "third", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert third.returncode == 0, third.stderr  # before: the repair joined the torn line and this request was a 400
    assert second.stderr.count("its last record was cut off mid-write") == 1
    assert third.stderr == ""  # mended once, whole since

    assert roles(fake_llm) == ["system", "user", "assistant", "tool", "user", "assistant", "user"]
    sent = fake_llm.requests[-1].body["messages"]
    assert sent[3]["content"].startswith("Error: Interrupted")
    assert [sent[i]["content"] for i in (1, 4, 5, 6)] == ["start", "second", "second answer", "third"]
    assert conversation(path) == [
        ("user", "start"),
        ("assistant", "Looking. tool_use"),
        ("user", "tool_result"),  # the interrupted result, right after its call
        ("user", "second"),
        ("assistant", "second answer"),
        ("user", "third"),
        ("assistant", "third answer"),
    ]


def test_a_write_the_file_system_refuses_half_way_is_taken_back(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"line {i} of a file too big for the disk\n" for i in range(1000)))
    fake_llm.enqueue(
        Reply(text="Reading it.", tool_calls=[ToolCall("Read", {"file_path": str(tmp_path / "big.txt")})]),
        Reply(text="Read it."),
    )
    limit = 4096  # room for the first records, not for the 40 kB tool result
    first = subprocess.run(
        [sys.executable, "-c", UNDER_FILE_SIZE_LIMIT, str(limit), "read big.txt"],
        env=env_for("openai", fake_llm),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert first.returncode == 0, first.stderr
    assert "warning: the session can no longer be saved: [Errno 27] File too large" in first.stderr
    path = the_session(tmp_path)
    assert path.stat().st_size < limit  # the part of the result that fitted was taken back: the file ends whole
    assert conversation(path) == [("user", "read big.txt"), ("assistant", "Reading it. tool_use")]

    fake_llm.enqueue(Reply(text="Again."))
    again = ram("-c", "again", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stderr == ""  # nothing to mend
    assert roles(fake_llm) == ["system", "user", "assistant", "tool", "user"]


@pytest.mark.parametrize(
    ("tail", "size", "kept", "left"),
    [
        (b"", None, None, b""),  # whole
        (b'{"type": "message", "message": {"role": "us', 43, False, b""),  # cut mid-record: removed
        (b'{"type": "message", "message": {"role": "user", "content": []}}', 63, True, b"\n"),  # only its line end
        (b'{"role": "user"', 15, False, b""),  # not one of our records
    ],
)
def test_mend_tail(tmp_path: Path, tail: bytes, size: int | None, kept: bool | None, left: bytes) -> None:
    path = tmp_path / "s.jsonl"
    head = b'{"type": "meta", "session_id": "s"}\n' + b'{"type": "message", "x": "' + b"y" * 70000 + b'"}\n'
    path.write_bytes(head + tail)
    torn = transcript.mend_tail(path)
    assert (torn.size, torn.kept) == (size, kept) if torn is not None else size is None
    assert path.read_bytes() == head + (tail + left if kept else b"")


def test_mend_tail_of_a_file_that_is_one_cut_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"type": "me')
    assert transcript.mend_tail(path) == transcript.TornTail(12, kept=False)
    assert path.read_bytes() == b""
    assert transcript.mend_tail(path) is None


# ---- loading never moves a record ------------------------------------------------------------------------------


def write_records(path: Path, messages: list[Message | str]) -> None:
    """A transcript as an older version may have left it; a str is written as a raw (damaged) line."""
    lines = ['{"type": "meta", "session_id": "old"}']
    for item in messages:
        if isinstance(item, str):
            lines.append(item)
        else:
            lines.append(json.dumps({"type": "message", "message": message_to_dict(item)}))
    path.write_text("\n".join(lines) + "\n")


def call(id_: str) -> Message:
    return Message("assistant", (TextBlock("running"), ToolUseBlock(id_, "Bash", {"command": "make"})))


def result(*ids: str) -> Message:
    return Message("user", tuple(ToolResultBlock(i, f"ran {i}") for i in ids))


def test_a_file_damaged_by_the_old_append_loads_in_order(tmp_path: Path) -> None:
    # What the old `-c` left: the repair record written onto the torn result's line (so both are unreadable),
    # later turns after it, and the next load's repair at the very end.
    joined = '{"type": "message", "message": {"role": "user", "con{"type": "message", "message": {}}'
    late = Message("user", (ToolResultBlock("t1", transcript.INTERRUPTED_RESULT, is_error=True),), meta=True)
    write_records(
        tmp_path / "old.jsonl",
        [user_text("start"), call("t1"), joined, user_text("second"), assistant_text("ok"), late, user_text("third")],
    )
    loaded = transcript.load(tmp_path / "old.jsonl")
    assert_sendable(loaded.messages)
    assert [m.text or m.tool_results[0].content[:11] for m in loaded.messages] == [
        "start",
        "running",
        "Interrupted",  # in place, not after "second"
        "second",
        "ok",
        "third",
    ]
    assert (loaded.skipped_lines, loaded.answered_in_place, loaded.repaired) == (1, 1, [])


def test_two_processes_turns_interleaved_load_as_a_valid_history(tmp_path: Path) -> None:
    # assistant(tool_calls) assistant(tool_calls) tool tool: what two `ram -c` at once wrote before the lock
    write_records(
        tmp_path / "old.jsonl",
        [user_text("A"), user_text("B"), call("a1"), call("b1"), result("a1"), result("b1"), user_text("next")],
    )
    loaded = transcript.load(tmp_path / "old.jsonl")
    assert_sendable(loaded.messages)
    assert [(m.role, [b.tool_use_id for b in m.tool_results]) for m in loaded.messages] == [
        ("user", []),
        ("user", []),
        ("assistant", []),
        ("user", ["a1"]),  # interrupted: its own result came after the other process's call
        ("assistant", []),
        ("user", ["b1"]),  # the real result; a1's late one is dropped
        ("user", []),
    ]
    assert loaded.messages[5].tool_results[0].content == "ran b1"
    assert loaded.answered_in_place == 1


def test_a_whole_transcript_loads_as_written(tmp_path: Path) -> None:
    written = [user_text("go"), call("t1"), result("t1"), assistant_text("done"), call("t2")]
    write_records(tmp_path / "s.jsonl", list(written))
    loaded = transcript.load(tmp_path / "s.jsonl")
    assert loaded.messages[:-1] == written  # the last call, unanswered, gets its result after it
    assert [r.tool_use_id for r in loaded.repaired[0].tool_results] == ["t2"]
    assert loaded.answered_in_place == 0


# ---- one writer per session ------------------------------------------------------------------------------------


def one_line(text: str) -> str:
    """`text` with its line breaks (a terminal's wrapping) and runs of spaces made single spaces."""
    return " ".join(text.split())


def spawn(*args: str, env: dict[str, str], cwd: Path, stderr: int = subprocess.DEVNULL) -> subprocess.Popen[str]:
    """`ram ARGS` left running (stdin is /dev/null: nothing to wait for there)."""
    return subprocess.Popen(
        [*AGENT, *args], env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr, text=True
    )


def in_use(path: Path, pid: int, command: str) -> str:
    return (
        f"error: session {path.stem[:12]} is in use by process {pid} ({command}); "
        "wait for it to finish or start a new session\n"
    )


@pytest.mark.parametrize("holder_args", [["-c", "slow one"], ["slow one"]], ids=["resumed", "new"])
def test_while_a_session_is_in_use_continue_and_resume_exit_2(
    fake_llm: FakeLLMServer, tmp_path: Path, holder_args: list[str]
) -> None:
    env = env_for("openai", fake_llm)
    if holder_args[0] == "-c":
        fake_llm.enqueue(Reply(text="hello"))
        assert ram("first", env=env, cwd=tmp_path).returncode == 0
    fake_llm.enqueue(Hang())
    calls = len(fake_llm.requests)
    holder = spawn(*holder_args, env=env, cwd=tmp_path)
    try:
        fake_llm.wait_for_requests(calls + 1, timeout=60)  # its model call is under way
        path = held_session(tmp_path, holder.pid, holder_args[-1])
        assert path == the_session(tmp_path)
        before = path.read_bytes()
        fake_llm.enqueue(Reply(text="nobody should ask for this"))
        for args in (["-c", "meanwhile"], ["--resume", path.stem[:8], "meanwhile"], ["-c", "--output-format", "json"]):
            refused = ram(*args, env=env, cwd=tmp_path, stdin="meanwhile")
            assert refused.returncode == 2
            assert refused.stderr == in_use(path, holder.pid, shlex.join(["ram", *holder_args]))
            assert refused.stdout == ""
        assert path.read_bytes() == before and len(fake_llm.requests) == calls + 1
    finally:
        holder.kill()  # kill -9: no cleanup runs, the kernel drops the lock with the process
        holder.wait()
    after = ram("-c", "after", env=env, cwd=tmp_path)
    assert after.returncode == 0, after.stderr
    assert fake_llm.requests[-1].body["messages"][-2:] == [
        {"role": "user", "content": "slow one"},
        {"role": "user", "content": "after"},
    ]
    whole_records(path)


def test_two_continues_started_at_once_one_runs_the_other_exits_2(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    env = env_for("openai", fake_llm)
    fake_llm.enqueue(Reply(text="hello"))
    assert ram("first", env=env, cwd=tmp_path).returncode == 0
    path = the_session(tmp_path)
    fake_llm.enqueue(Hang())  # whichever gets the session first keeps it
    procs = [spawn("-c", f"run {n}", env=env, cwd=tmp_path, stderr=subprocess.PIPE) for n in (1, 2)]
    try:
        assert wait_until(lambda: any(p.poll() is not None for p in procs), timeout=60)
        [loser] = [p for p in procs if p.poll() is not None]
        [winner] = [p for p in procs if p is not loser]
        assert loser.returncode == 2
        assert loser.stderr is not None
        n = procs.index(winner) + 1
        assert loser.stderr.read() == in_use(path, winner.pid, f"ram -c 'run {n}'")
        fake_llm.wait_for_requests(2, timeout=60)
    finally:
        for p in procs:
            p.kill()
            p.wait()
            if p.stderr is not None:
                p.stderr.close()
    assert len(fake_llm.requests) == 2  # only the winner asked the model
    assert [text for role, text in conversation(path)] == ["first", "hello", f"run {n}"]


def test_the_repl_is_turned_away_too_and_resume_leaves_the_conversation_as_it_was(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    env = env_for("openai", fake_llm)
    fake_llm.enqueue(Hang())
    holder = spawn("slow one", env=env, cwd=tmp_path)
    try:
        fake_llm.wait_for_requests(1, timeout=60)
        path = held_session(tmp_path, holder.pid, "slow one")
        before = path.read_bytes()
        with Term("-c", env=env, cwd=tmp_path) as term:  # an interactive `ram -c`: refused before it starts
            assert term.wait() == 2
            assert one_line(in_use(path, holder.pid, "ram 'slow one'")) in one_line(term.text)
        fake_llm.enqueue(Reply(text="Hi there."))
        with Term(env=env, cwd=tmp_path) as term:
            term.prompt()
            term.line("/resume")
            term.expect("Resume which session?")
            term.line("1")
            refused = one_line(term.expect("start a new session"))
            assert f"could not resume {path.stem[:12]}: session {path.stem[:12]} is in use by process {holder.pid}" in (
                refused
            )
            term.prompt()
            term.line("hello")
            term.expect("Hi there.")
            term.send("\x04")
            assert term.wait() == 0
        assert fake_llm.requests[-1].body["messages"][1:] == [{"role": "user", "content": "hello"}]
        assert path.read_bytes() == before
    finally:
        holder.kill()
        holder.wait()
    assert len(transcript.list_sessions(tmp_path)) == 2  # the REPL's conversation went to its own session


def test_the_lock_names_its_holder_and_goes_with_it(tmp_path: Path) -> None:
    path = tmp_path / "abc.jsonl"
    lock = session_lock.SessionLock.acquire(path)
    me = f"process {os.getpid()} (ram"  # then its arguments, if it was given any
    assert (session_lock.holder(path) or "").startswith(me)
    with pytest.raises(session_lock.SessionInUse) as refused:
        transcript.Transcript.reopen(path)  # (a second descriptor conflicts even within one process)
    assert str(refused.value).startswith(f"session abc is in use by {me}")
    lock.release()
    assert session_lock.holder(path) is None
    path.write_text('{"type": "meta"}\n')
    reopened = transcript.Transcript.reopen(path)
    assert session_lock.holder(path) is not None
    reopened.close()
    assert session_lock.holder(path) is None
