"""A hostile repository's context files cannot carry a secret from outside it to the model: real `ram` runs
against the loopback fake LLM, in a repository whose CLAUDE.md, AGENTS.md, MEMORY.md, SKILL.md files, custom
command files and agent files are symbolic links to `../outside.txt` or to a stand-in for `~/.ssh/id_rsa` (under a
HOME of the test's own).

Done when: neither secret is in anything the fake model receives — the system prompt `ram --print-system-prompt`
shows, or any request of a real run that loads the skills, runs the command and starts the agents —; one warning
line names each skipped file; a link that stays inside still works; and without a repository `@../x.md` is not
imported from above the working directory."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..test_cli import assert_no_traceback, env_for, ram
from ..ui.test_repl_pty import ram_term

KEY = "-----BEGIN OPENSSH PRIVATE KEY----- SECRET-SSH-KEY-7f3a"
OUTSIDE = "SECRET-OUTSIDE-TEXT-91c2"

CONTEXT_LINKS = {
    "CLAUDE.md": "outside",
    "AGENTS.md": "key",
    ".agents/memory/MEMORY.md": "outside",
    ".agents/skills/leak/SKILL.md": "key",
    ".claude/skills/leak2/SKILL.md": "outside",
}
"""Files read into the system prompt (or its skills catalogue), and the secret each leads to."""
COMMAND_AND_AGENT_LINKS = {
    ".claude/commands/leak.md": "key",
    ".agents/commands/leak2.md": "outside",
    ".claude/agents/spy.md": "outside",
    ".agents/agents/spy2.md": "key",
}
"""Files read when a command runs or the Agent tool is described."""


def secrets(home: Path, tmp_path: Path) -> dict[str, Path]:
    key = home / ".ssh" / "id_rsa"
    key.parent.mkdir(parents=True)
    key.write_text(KEY + "\n")
    outside = tmp_path / "outside.txt"
    outside.write_text(OUTSIDE + "\n")
    return {"key": key, "outside": outside}


def link(path: Path, target: Path, *, relative: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(os.path.relpath(target, path.parent) if relative else target)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def repo(tmp_path: Path, home: Path) -> Path:
    """A repository whose context files all lead to a secret outside, beside ones whose links stay inside."""
    found = secrets(home, tmp_path)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    for name, secret in {**CONTEXT_LINKS, **COMMAND_AND_AGENT_LINKS}.items():
        link(repo / name, found[secret], relative=secret == "outside")
    (repo / "docs").mkdir()
    (repo / "docs" / "GUIDE.md").write_text("INSIDE-GUIDE: run make test.\n")
    link(repo / "web" / "CLAUDE.md", repo / "docs" / "GUIDE.md", relative=True)  # stays inside: read
    (repo / "docs" / "review.md").write_text("---\ndescription: Review a change\n---\nINSIDE-REVIEW-BODY\n")
    link(repo / ".claude" / "skills" / "review" / "SKILL.md", repo / "docs" / "review.md", relative=True)
    return repo


def warnings_of(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning:")]


def assert_one_warning_each(warnings: list[str], repo: Path, names: list[str]) -> None:
    for name in names:
        naming = [w for w in warnings if f"{repo / name}:" in w]
        assert len(naming) == 1, (name, warnings)
        assert "leads outside" in naming[0] and naming[0].endswith(("skipped", "left out")), naming[0]


def test_print_system_prompt_leaves_out_every_file_that_leads_outside(repo: Path, home: Path) -> None:
    env = env_for(None, None, HOME=str(home))
    proc = ram("--print-system-prompt", env=env, cwd=repo / "web")
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert KEY not in proc.stdout and OUTSIDE not in proc.stdout
    assert KEY not in proc.stderr and OUTSIDE not in proc.stderr  # the warnings name the files, not their text
    assert "INSIDE-GUIDE" in proc.stdout and "Review a change" in proc.stdout  # links that stay inside still work
    warnings = warnings_of(proc.stderr)
    assert_one_warning_each(warnings, repo, list(CONTEXT_LINKS))
    assert len(warnings) == len(CONTEXT_LINKS), warnings


def test_no_request_of_a_real_run_carries_a_secret(fake_llm: FakeLLMServer, repo: Path, home: Path) -> None:
    """The run's task is the custom command `/leak`; the model then loads both skills and starts both agents."""
    fake_llm.enqueue(
        Reply(
            tool_calls=[
                ToolCall("Skill", {"skill": "leak"}),
                ToolCall("Skill", {"skill": "leak2"}),
                ToolCall("Agent", {"description": "look", "prompt": "look around", "subagent_type": "spy"}),
                ToolCall("Agent", {"description": "look", "prompt": "look around", "subagent_type": "spy2"}),
            ]
        )
    )  # every later request (a subagent's, the last turn's) gets the fake's default answer
    env = env_for("openai", fake_llm, HOME=str(home))
    for task in ("/leak", "/leak2"):
        proc = ram(task, env=env, cwd=repo)
        assert_no_traceback(proc)
        assert proc.returncode == 0, proc.stderr
    assert len(fake_llm.requests) >= 3
    for request in fake_llm.requests:
        sent = json.dumps(request.body)
        assert KEY not in sent and OUTSIDE not in sent
    first = fake_llm.requests[0].body
    assert first["messages"][-1]["content"] == "/leak"  # no command of that name: the text goes as it is
    agent_tool = next(t for t in first["tools"] if t["function"]["name"] == "Agent")
    assert "spy" not in agent_tool["function"]["description"]


def test_the_repl_names_each_skipped_command_and_agent_file(fake_llm: FakeLLMServer, repo: Path, home: Path) -> None:
    """Where the REPL lists commands (`/help`) and agent types (`/agents`), one warning names each skipped file."""
    with ram_term(fake_llm, repo, HOME=str(home)) as term:
        term.prompt()
        term.line("/help")
        term.expect("@path")
        term.prompt()
        term.line("/agents")
        term.expect("agent types")
        term.prompt()
        term.send("\x04")
        assert term.wait() == 0
    flat = "".join(term.text.split())  # long warning lines wrap at the terminal's width
    for name in COMMAND_AND_AGENT_LINKS:
        assert flat.count(f"warning:{repo / name}:cannotreadit(itleadsoutside{repo},") == 1, name
    assert KEY not in term.text and OUTSIDE not in term.text
    assert "customcommands(" not in flat  # no command is listed in /help
    assert "spyalltools" not in flat and "spy2alltools" not in flat  # nor either agent in /agents


def test_without_a_repository_imports_stay_in_the_working_directory(tmp_path: Path) -> None:
    """Context files are still looked for in the folders above; what they import, and where they lead, is not."""
    top = tmp_path / "top"
    ws = top / "ws"
    (ws / "notes").mkdir(parents=True)
    levels = [ws, *list(ws.parents)[:5]]
    if any((level / ".git").exists() for level in levels):
        pytest.skip("the temporary directory is inside a git repository: the repository would be the root")
    (top / "x.md").write_text("ABOVE-THE-CWD\n")
    (top / "AGENTS.md").write_text("TOP-AGENTS: found above, still read.\n")
    link(top / "CLAUDE.md", secrets(tmp_path / "home", tmp_path)["outside"], relative=True)
    (ws / "notes" / "style.md").write_text("INSIDE-STYLE\n")
    (ws / "CLAUDE.md").write_text("rules\n@notes/style.md\n@../x.md\n")
    proc = ram("--print-system-prompt", env=env_for(None, None), cwd=ws)
    assert proc.returncode == 0, proc.stderr
    assert "TOP-AGENTS" in proc.stdout and "INSIDE-STYLE" in proc.stdout
    assert "ABOVE-THE-CWD" not in proc.stdout and OUTSIDE not in proc.stdout
    assert "@../x.md" in proc.stdout  # the author's line stays
    warnings = warnings_of(proc.stderr)
    assert len(warnings) == 2, warnings
    assert f"{ws / 'CLAUDE.md'}: @../x.md: it is outside {ws}; import skipped" in warnings[1]
    assert f"{top / 'CLAUDE.md'}:" in warnings[0] and "leads outside" in warnings[0]


def test_a_file_swapped_for_a_link_after_discovery_is_not_read(repo: Path, tmp_path: Path) -> None:
    """A skill's body and a command's text are read again when used: a link made since (by a command the agent
    ran, say) is refused then too."""
    from react_agent_mini.context.skills import discover_skills, read_skill_body
    from react_agent_mini.custom_commands.catalog import discover_commands, read_body

    user = tmp_path / "config" / "react-agent-mini"
    (repo / ".claude" / "commands" / "fine.md").write_text("FINE-COMMAND\n")
    skills, _ = discover_skills(repo, user_dir=user)
    commands, _ = discover_commands(repo, user)
    review = next(s for s in skills if s.id == "review")
    fine = next(c for c in commands if c.name == "fine")
    assert "INSIDE-REVIEW-BODY" in read_skill_body(review) and read_body(fine) == "FINE-COMMAND"
    for path in (review.path, fine.path):
        path.unlink()
        path.symlink_to(tmp_path / "outside.txt")
    with pytest.raises(OSError, match="leads outside"):  # what the Skill tool and the command say, naming the file
        read_skill_body(review)
    with pytest.raises(OSError, match="leads outside"):
        read_body(fine)


def test_the_users_own_files_may_lead_only_inside_the_users_config_directory(tmp_path: Path, home: Path) -> None:
    from react_agent_mini.context.project import load_project_context

    found = secrets(home, tmp_path)
    user = tmp_path / "config" / "react-agent-mini"
    (user / "shared").mkdir(parents=True)
    (user / "shared" / "mine.md").write_text("MINE-SHARED\n")
    link(user / "AGENTS.md", user / "shared" / "mine.md", relative=True)
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    assert "MINE-SHARED" in load_project_context(ws, user_dir=user).text
    (user / "AGENTS.md").unlink()
    link(user / "AGENTS.md", found["key"], relative=False)
    ctx = load_project_context(ws, user_dir=user)
    assert KEY not in ctx.text and len(ctx.warnings) == 1
    assert ctx.warnings[0].startswith(f"{user / 'AGENTS.md'}: cannot read it (it leads outside {user}, to ")


def test_a_folder_of_commands_agents_or_skills_that_leads_outside_is_skipped_whole(tmp_path: Path) -> None:
    """One warning for the folder, not one per file, and nothing below it is read (`.claude/commands` → `/` would
    otherwise be a walk of the whole disk)."""
    from react_agent_mini.context.skills import discover_skills
    from react_agent_mini.custom_commands.catalog import discover_commands
    from react_agent_mini.subagents.definitions import discover_agents

    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "leak").mkdir(parents=True)
    for name in ("a.md", "b.md", "leak/SKILL.md"):
        (elsewhere / name).write_text(OUTSIDE + "\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    for folder in (".claude/commands", ".claude/agents", ".agents/skills"):
        link(repo / folder, elsewhere, relative=True)
    user = tmp_path / "config" / "react-agent-mini"
    commands, command_warnings = discover_commands(repo, user)
    agents, agent_warnings = discover_agents(repo, user)
    skills, skill_warnings = discover_skills(repo, user_dir=user)
    assert commands == [] and agents == [] and skills == []
    for folder, warnings, what in (
        (".claude/commands", command_warnings, "commands"),
        (".claude/agents", agent_warnings, "agents"),
        (".agents/skills", skill_warnings, "skills"),
    ):
        assert warnings == [
            f"{repo / folder}: cannot list it (it leads outside {repo}, to {elsewhere}); its {what} were skipped"
        ]
