"""`ram view` on the command line, without a browser: what it writes (one file, no script anywhere, the policy at
the top), how it finds a session, and one clear line (exit 2) for whatever it cannot show."""

from __future__ import annotations

import base64
import hashlib
import os
import re
from pathlib import Path

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..test_cli import assert_no_traceback, env_for, ram
from ..usage.sessions import markup_session


def view(cwd: Path, *args: str) -> tuple[int, str, str]:
    proc = ram("view", *args, env=env_for(None, None), cwd=cwd)
    assert_no_traceback(proc)
    return proc.returncode, proc.stdout, proc.stderr


def test_the_page_is_one_file_with_no_script_and_a_policy_that_forbids_loading(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    session_id = markup_session(fake_llm, tmp_path)
    code, out, err = view(tmp_path)  # this directory's newest session, into ram-<id>.html here
    assert code == 0, err
    page = tmp_path / f"ram-{session_id[:8]}.html"
    assert out == f"wrote ram-{session_id[:8]}.html ({max(1, round(page.stat().st_size / 1024))} KB)\n"
    text = page.read_text()
    assert re.search(r"<\s*script", text, re.IGNORECASE) is None  # what the tool printed is escaped text
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in text
    assert "<img" not in text and "onerror=" not in text.replace("onerror=window.pwned=2&gt;", "")
    head = text[: text.index("</head>")]
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', head)
    assert policy is not None and head.index(policy.group(0)) < head.index("<style>")  # before anything it governs
    rules = dict(rule.strip().split(" ", 1) for rule in policy.group(1).replace("&#x27;", "'").split(";"))
    style = head[head.index("<style>") + len("<style>") : head.index("</style>")]
    digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    assert rules == {
        "default-src": "'none'",
        "style-src": f"'sha256-{digest}'",
        "base-uri": "'none'",
        "form-action": "'none'",
    }
    assert not re.search(r"\s(href|src)=\"(https?:)?//", text)  # no address outside the file
    assert " style=" not in text  # the policy would refuse inline styles


def test_a_session_is_found_by_id_start_or_path(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    ids = ["abcd1111-0000-4000-8000-000000000001", "abcd2222-0000-4000-8000-000000000002"]
    for session_id in ids:
        fake_llm.enqueue(Reply(text=f"I am {session_id}."))
        proc = ram("--session-id", session_id, "hi", env=env_for("openai", fake_llm), cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    code, _out, err = view(tmp_path, "abcd2", "-o", "two.html")
    assert code == 0, err
    assert f"I am {ids[1]}." in (tmp_path / "two.html").read_text()
    code, _out, err = view(tmp_path, "abcd")
    assert (code, err) == (2, "error: 'abcd' is the start of 2 sessions of this directory: give more of its id\n")
    code, _out, err = view(tmp_path, "ffff")
    assert (code, err) == (2, "error: no session of this directory starts with 'ffff' (ram --resume lists them)\n")
    saved = next((Path(os.environ["XDG_DATA_HOME"]) / "react-agent-mini" / "sessions").glob(f"*/{ids[0]}.jsonl"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, _out, err = view(elsewhere, str(saved), "-o", "one.html")  # a transcript by its path, from anywhere
    assert code == 0, err
    assert f"I am {ids[0]}." in (elsewhere / "one.html").read_text()


def test_what_cannot_be_shown_is_one_line(tmp_path: Path) -> None:
    code, out, err = view(tmp_path)
    assert (code, out) == (2, "") and err == (
        "error: this directory has no saved session (ram view PATH.jsonl shows any transcript)\n"
    )
    (tmp_path / "notes.jsonl").write_text("just some text\nand more\n")
    code, _out, err = view(tmp_path, "notes.jsonl")
    assert (code, err) == (2, "error: notes.jsonl is not a ram transcript (no record in it could be read)\n")
    code, _out, err = view(tmp_path, "missing.jsonl")
    assert (code, err) == (2, "error: missing.jsonl: no such transcript\n")
    (tmp_path / "out").mkdir()
    code, _out, err = view(tmp_path, "out")
    assert (code, err) == (2, "error: out is not a ram batch --out folder (it has no results.jsonl)\n")
    code, _out, err = view(tmp_path, "--frobnicate")
    assert code == 2 and err.count("\n") == 1 and "--frobnicate" in err


def test_a_damaged_transcript_is_shown_with_a_note(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Echo", {"message": "kept"})]), Reply(text="Fine."))
    assert ram("echo something", env=env_for("openai", fake_llm), cwd=tmp_path).returncode == 0
    saved = next((Path(os.environ["XDG_DATA_HOME"]) / "react-agent-mini" / "sessions").glob("*/*.jsonl"))
    with saved.open("a") as handle:
        handle.write('{"type": "message", "message": {"role": "assistant", "cont')  # cut by a crash
    code, _out, err = view(tmp_path, "-o", "page.html")
    assert code == 0, err
    text = (tmp_path / "page.html").read_text()
    assert "1 line(s) of the transcript could not be read and are left out." in text
    assert "Fine." in text and "kept" in text
