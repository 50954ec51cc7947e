"""Project context, skills and memory end to end: what reaches the model in `system`, and the Skill tool's
body arriving right after its tool result, through the CLI and the fake server."""

from __future__ import annotations

from pathlib import Path

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..test_cli import env_for, ram


def make_repo(root: Path) -> Path:
    (root / ".git").mkdir()
    (root / "AGENTS.md").write_text("ROOT-AGENTS: run tests with make test.\n")
    sub = root / "web"
    sub.mkdir()
    (sub / "CLAUDE.md").write_text("WEB-CLAUDE: use tabs in web/.\n")
    for skill, text in {
        "review": "---\nname: Code review\ndescription: Review a change for bugs\n---\n# REVIEW-BODY\nCheck tests.\n",
        "deploy": "---\ndescription: Ship it\n---\nDEPLOY-BODY\n",
        "broken": "---\nname: [unclosed\n---\nBROKEN-BODY\n",
    }.items():
        (root / ".agents" / "skills" / skill).mkdir(parents=True)
        (root / ".agents" / "skills" / skill / "SKILL.md").write_text(text)
    (root / ".agents" / "memory").mkdir(parents=True)
    (root / ".agents" / "memory" / "MEMORY.md").write_text("- MEMORY-FACT: the user likes short answers\n")
    return sub


def test_system_prompt_order_and_skill_body_after_its_result(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    sub = make_repo(tmp_path)
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Skill", {"skill": "review", "args": "src/app.py"})]), Reply(text="ok"))
    env = env_for("openai", fake_llm, XDG_CONFIG_HOME=str(tmp_path / "config"))
    proc = ram("review my change", env=env, cwd=sub)
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "broken" in warnings[0] and "SKILL.md" in warnings[0]

    first = fake_llm.requests[0].body
    system = first["messages"][0]["content"]
    order = [system.find(marker) for marker in ("# Environment", "ROOT-AGENTS", "WEB-CLAUDE", "MEMORY-FACT", "review")]
    assert -1 not in order and order == sorted(order), order
    assert "Review a change for bugs" in system and "deploy" in system
    assert "REVIEW-BODY" not in system  # only the catalogue, not the bodies
    assert "Skill" in [t["function"]["name"] for t in first["tools"]]

    second = fake_llm.requests[1].body["messages"]
    tool_at = next(i for i, m in enumerate(second) if m["role"] == "tool")
    assert second[tool_at]["content"] == "Launching skill: review"
    body = second[tool_at + 1]
    assert body["role"] == "user" and "REVIEW-BODY" in body["content"]
    assert "Arguments: src/app.py" in body["content"] and "Base directory for this skill:" in body["content"]


def test_print_system_prompt_needs_no_key(tmp_path: Path) -> None:
    sub = make_repo(tmp_path)
    proc = ram("--print-system-prompt", env=env_for(None, None, XDG_CONFIG_HOME=str(tmp_path / "c")), cwd=sub)
    assert proc.returncode == 0
    assert "ROOT-AGENTS" in proc.stdout and "WEB-CLAUDE" in proc.stdout and "MEMORY-FACT" in proc.stdout
    assert proc.stdout.index("ROOT-AGENTS") < proc.stdout.index("WEB-CLAUDE")


def test_memory_is_reread_when_it_changes_between_turns(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """The minimal terminal loop runs two turns; the memory file changes in between."""
    import os
    import pty
    import sys

    from ..ui.test_repl_minimal import read_until

    sub = make_repo(tmp_path)
    memory = tmp_path / ".agents" / "memory" / "MEMORY.md"
    fake_llm.enqueue(Reply(text="one"), Reply(text="two"))
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(sub)
        os.execve(sys.executable, [sys.executable, "-m", "react_agent_mini"], env_for("openai", fake_llm))
    read_until(fd, "> ")
    os.write(fd, b"first\n")
    read_until(fd, "one")
    memory.write_text("- NEW-FACT: deploy on Fridays is banned\n")
    os.write(fd, b"second\n")
    read_until(fd, "two")
    os.write(fd, b"\x04")
    os.waitpid(pid, 0)
    systems = [r.body["messages"][0]["content"] for r in fake_llm.requests]
    assert "MEMORY-FACT" in systems[0] and "NEW-FACT" not in systems[0]
    assert "NEW-FACT" in systems[1] and "MEMORY-FACT" not in systems[1]
