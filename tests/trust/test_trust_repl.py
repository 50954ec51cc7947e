"""The REPL's trust question, on a real pseudo-terminal: asked once per folder before anything of the project's
runs, showing what trusting would enable; "no" leaves it all out (and asks again next time), "yes" is kept."""

from __future__ import annotations

import json
from pathlib import Path

from ..fakes.fake_llm import FakeLLMServer, Reply
from ..test_cli import env_for
from ..ui.test_repl_minimal import Term

QUESTION = "Trust this folder? [y/N]"


def project(root: Path) -> None:
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": f"touch {root}/started"}]}]}})
    )
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"tools": {"command": "uvx", "args": ["some-server"]}}}))


def test_the_question_comes_first_and_the_answer_is_kept(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    project(tmp_path)
    env = env_for("openai", fake_llm)
    with Term(env=env, cwd=tmp_path) as term:
        shown = term.expect(QUESTION)
        assert "run these hooks on this machine" in shown and f"SessionStart: touch {tmp_path}/started" in shown
        assert "start these MCP servers" in shown and ".mcp.json  tools: uvx some-server" in shown
        assert not (tmp_path / "started").exists()  # nothing of the project ran before the answer
        term.send("n")
        term.expect("not trusted: those parts are left out")
        term.prompt()
        fake_llm.enqueue(Reply(text="hello there"))
        term.line("hi")
        term.expect("out tokens")
        term.send("\x04")
        assert term.wait() == 0
    assert not (tmp_path / "started").exists()

    with Term(env=env, cwd=tmp_path) as term:
        term.expect(QUESTION)  # asked again
        term.send("y")
        term.expect("trusted: its hooks, MCP servers and rules apply")
        term.prompt()
        fake_llm.enqueue(Reply(text="hello again"))
        term.line("hi")
        term.expect("out tokens")
        term.send("\x04")
        assert term.wait() == 0
    assert (tmp_path / "started").exists()

    (tmp_path / "started").unlink()
    with Term(env=env, cwd=tmp_path) as term:
        term.prompt()  # trusted: no question
        fake_llm.enqueue(Reply(text="third"))
        term.line("hi")
        term.expect("out tokens")
        term.send("\x04")
        assert term.wait() == 0
        assert QUESTION not in term.text
    assert (tmp_path / "started").exists()


def test_a_folder_with_nothing_to_trust_is_not_asked(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("Be brief.\n")
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Read(./x)"]}}))
    with Term(env=env_for("openai", fake_llm), cwd=tmp_path) as term:
        term.prompt()
        term.send("\x04")
        assert term.wait() == 0
        assert QUESTION not in term.text and "not trusted" not in term.text
