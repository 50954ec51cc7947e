"""A change whose checkpoint cannot be saved still goes ahead — as in Claude Code, whose file history lets the edit
go ahead when its backup fails — but never silently: the tool result the model reads and a line the user sees say
that rewind will not cover it, and a rewind later names the file it cannot restore.

Two ways a store fails, end to end through `ram`: its folder cannot be made (a file is where it should be), and a
file size limit (RLIMIT_FSIZE, set in the child before it runs `ram`) refuses the copy of a 56 KB file with EFBIG,
exactly as a full disk refuses it with ENOSPC. And the store's index stays whole lines: a record the disk cut short
is taken back off, and one a killed process left cut short never swallows the next."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

from react_agent_mini import transcript

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..test_cli import assert_no_traceback, env_for, ram

BIG = "".join(f"line {n:05d} of a file the user cares about\n" for n in range(1400))  # 56 KB
UNDER_FILE_SIZE_LIMIT = (
    "import os, resource, sys; limit = int(sys.argv[1]); resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)); "
    "os.execv(sys.executable, [sys.executable, '-m', 'react_agent_mini', *sys.argv[2:]])"
)


def overwrite_big(path: str = "big.txt") -> list[Reply]:
    return [
        Reply(tool_calls=[ToolCall("Read", {"file_path": path, "limit": 2})]),
        Reply(tool_calls=[ToolCall("Write", {"file_path": path, "content": "short\n"})]),
        Reply(text="Replaced it."),
    ]


def results(fake_llm: FakeLLMServer) -> list[str]:
    """What the model read back from each tool call of the last request."""
    return [str(m["content"]) for m in fake_llm.requests[-1].body["messages"] if m["role"] == "tool"]


def test_a_store_that_cannot_be_made_is_said_in_the_result_and_to_the_user(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    assert len(BIG) > 56_000
    (tmp_path / "big.txt").write_text(BIG)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)  # Bash commands are checkpointed too
    session = str(uuid.uuid4())
    sessions = transcript.sessions_dir(tmp_path)
    sessions.mkdir(parents=True)
    (sessions / f"{session}.checkpoints").write_text("a file where the checkpoint store's folder goes\n")
    replies = overwrite_big()
    replies.insert(2, Reply(tool_calls=[ToolCall("Bash", {"command": "echo made > made.txt"})]))
    fake_llm.enqueue(*replies)
    env = env_for("openai", fake_llm, ALLOW_WRITE="1")
    proc = ram("--session-id", session, "replace big.txt", env=env, cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "big.txt").read_text() == "short\n" and (tmp_path / "made.txt").exists()  # both went ahead
    wrote = "rewind will not cover this change to big.txt: its checkpoint could not be saved ("
    ran = "rewind will not cover what this command changes: its checkpoint could not be saved ("
    notes = [line for line in proc.stderr.splitlines() if line.startswith("[note] ")]
    assert len(notes) == 2, proc.stderr
    assert notes[0].startswith(f"[note] {wrote}") and notes[1].startswith(f"[note] {ran}")
    read, written, command = results(fake_llm)
    assert "Note:" not in read
    assert f"\n\nNote: {wrote}" in written and f"\n\nNote: {ran}" in command  # the model knows too


def test_a_copy_the_disk_refuses_is_said_and_a_rewind_names_the_file(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text(BIG)
    env = env_for("openai", fake_llm, ALLOW_WRITE="1")
    fake_llm.enqueue(*overwrite_big())
    proc = subprocess.run(
        [sys.executable, "-c", UNDER_FILE_SIZE_LIMIT, "30000", "replace big.txt"],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "big.txt").read_text() == "short\n"
    assert "no longer be saved" not in proc.stderr  # the transcript's records fit: only the copy was refused
    said = "rewind will not cover this change to big.txt: its checkpoint could not be saved (File too large)"
    assert f"[note] {said}" in proc.stderr.splitlines(), proc.stderr
    assert f"Note: {said}." in results(fake_llm)[-1]

    listed = ram("rewind", env=env, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[1].endswith("big.txt")  # the turn changed it, and the listing says so
    rewound = ram("rewind", "0", env=env, cwd=tmp_path)
    assert_no_traceback(rewound)
    assert "  cannot restore big.txt: its content then could not be saved (File too large)" in rewound.stdout
    assert rewound.returncode == 1 and "conversation not rewound" in rewound.stdout
    assert (tmp_path / "big.txt").read_text() == "short\n"


def test_a_record_the_disk_cuts_short_is_taken_back_so_the_next_one_is_whole(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    """The store's index is 20 bytes under the file size limit: the first record of the turn is cut there. It is
    taken back off, so the next session's records (here the turn that a rewind must undo) are whole lines."""
    session = str(uuid.uuid4())
    store = transcript.sessions_dir(tmp_path) / f"{session}.checkpoints"
    store.mkdir(parents=True)
    limit = 30_000
    filler = b'{"type": "a record this ram does not know"}\n' * ((limit - 20) // 44)
    (store / "index.jsonl").write_bytes(filler + b"#" * (limit - 20 - len(filler) - 1) + b"\n")  # 20 bytes left
    before = (store / "index.jsonl").read_bytes()
    env = env_for("openai", fake_llm, ALLOW_WRITE="1")
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Write", {"file_path": "one.txt", "content": "1\n"})]),
        Reply(text="One."),
        Reply(tool_calls=[ToolCall("Write", {"file_path": "two.txt", "content": "2\n"})]),
        Reply(text="Two."),
    )
    first = subprocess.run(
        [sys.executable, "-c", UNDER_FILE_SIZE_LIMIT, str(limit), "--session-id", session, "write one"],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert first.returncode == 0, first.stderr
    assert "[note] rewind will not cover this change to one.txt" in first.stderr
    assert (store / "index.jsonl").read_bytes() == before  # the cut record was taken back off
    second = ram("-c", "write two", env=env, cwd=tmp_path)
    assert second.returncode == 0 and "[note]" not in second.stderr, second.stderr
    rewound = ram("rewind", "1", "--code", env=env, cwd=tmp_path)
    assert_no_traceback(rewound)
    assert "  removed two.txt (it did not exist then)" in rewound.stdout, rewound.stdout
    assert not (tmp_path / "two.txt").exists()


def test_a_line_a_killed_process_left_cut_short_does_not_swallow_the_next_record(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    session = str(uuid.uuid4())
    store = transcript.sessions_dir(tmp_path) / f"{session}.checkpoints"
    store.mkdir(parents=True)
    (store / "index.jsonl").write_bytes(b'{"type":"turn","turn":"#0","hist')  # killed mid-write, long ago
    env = env_for("openai", fake_llm, ALLOW_WRITE="1")
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Write", {"file_path": "one.txt", "content": "1\n"})]), Reply(text="."))
    assert ram("--session-id", session, "write one", env=env, cwd=tmp_path).returncode == 0
    rewound = ram("rewind", "0", "--code", env=env, cwd=tmp_path)
    assert_no_traceback(rewound)
    assert "  removed one.txt (it did not exist then)" in rewound.stdout, rewound.stdout
