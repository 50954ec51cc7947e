"""Checkpoints through the real tool runner, on real files and real git repositories under tmp: what each turn
changed is kept, and a rewind to after turn 1 puts exactly those bytes back — with and without git, Bash-made
changes too in a repository —, never overwriting a change someone else made without being told to."""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from react_agent_mini.abort import AbortSignal
from react_agent_mini.checkpoints.plan import FileStep, summarize, undone_turns
from react_agent_mini.checkpoints.rewind import listing, plan_for, rewind_code
from react_agent_mini.checkpoints.store import CheckpointStore
from react_agent_mini.checkpoints.tracker import Checkpoints, turn_ids
from react_agent_mini.events import ToolFinished
from react_agent_mini.messages import Message, ToolUseBlock, user_text
from react_agent_mini.permissions.policy import NO_INFO, Allow, Decision, ToolCallInfo
from react_agent_mini.tools.base import Tool, ToolContext, ToolRegistry
from react_agent_mini.tools.builtin.bash import BashTool
from react_agent_mini.tools.builtin.edit import EditTool
from react_agent_mini.tools.builtin.read import ReadTool
from react_agent_mini.tools.builtin.write import WriteTool
from react_agent_mini.tools.runner import ToolRun, run_tool_calls


async def allow_all(tool: Tool, args: Mapping[str, Any], info: ToolCallInfo = NO_INFO, /) -> Decision:
    return Allow()


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout


class Agent:
    """A conversation whose turns run tool calls through the real runner, with checkpoints on."""

    def __init__(self, cwd: Path, store: CheckpointStore) -> None:
        self.cwd = cwd
        self.history: list[Message] = []
        self.store = store
        self.checkpoints = Checkpoints(lambda: self.history, lambda: self.store)
        self.context = ToolContext(cwd=cwd, changes=self.checkpoints)
        self.registry = ToolRegistry([ReadTool(), WriteTool(), EditTool(), BashTool()])
        self._calls = 0
        self._turns = 0

    async def turn(self, prompt: str, *calls: tuple[str, dict[str, Any]]) -> list[str]:
        self._turns += 1
        self.history.append(user_text(prompt, id=f"u{self._turns}"))
        outputs = []
        for name, args in calls:
            self._calls += 1
            use = ToolUseBlock(f"call_{self._calls}", name, args)
            run = ToolRun(self.registry, self.context, allow_all, AbortSignal())
            async for event in run_tool_calls([use], run):
                if isinstance(event, ToolFinished):
                    assert not event.result.is_error, event.result.content
                    outputs.append(event.result.content)
            self.history.append(Message("assistant", (use,), id=f"a{self._calls}"))
        return outputs

    async def rewind(self, turn: int, *, overwrite: bool = False) -> tuple[list[str], list[FileStep]]:
        asked: list[FileStep] = []

        async def confirm(step: FileStep) -> bool:
            asked.append(step)
            return overwrite

        plan = await plan_for(self.store, self.history, turn)
        outcome = await rewind_code(self.store, plan, confirm, workspace=self.cwd)
        assert not outcome.failed, outcome.failed
        return sorted(os.path.relpath(r.file, self.cwd) for r in outcome.restored), asked


def read(path: str) -> tuple[str, dict[str, Any]]:
    return ("Read", {"file_path": path})


def write(path: str, content: str) -> tuple[str, dict[str, Any]]:
    return ("Write", {"file_path": path, "content": content})


def edit(path: str, old: str, new: str) -> tuple[str, dict[str, Any]]:
    return ("Edit", {"file_path": path, "old_string": old, "new_string": new})


def bash(command: str) -> tuple[str, dict[str, Any]]:
    return ("Bash", {"command": command})


def tree(root: Path) -> dict[str, tuple[str, bool]]:
    """Every file under `root` (not .git): its bytes' digest and whether it is executable."""
    out = {}
    for path in sorted(root.rglob("*")):
        if ".git" in path.relative_to(root).parts or not path.is_file():
            continue
        out[str(path.relative_to(root))] = (hashlib.sha256(path.read_bytes()).hexdigest(), os.access(path, os.X_OK))
    return out


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_bytes(b"def add(a, b):\r\n    return a - b\r\n")  # CRLF, kept byte for byte
    (root / "notes.md").write_text("# Notes\n\ncafé ☕\n")
    return root


async def three_turns_of_edits(agent: Agent) -> None:
    await agent.turn(
        "fix add",
        read("calc.py"),
        edit("calc.py", "a - b", "a + b"),
        write("README.md", "# Calc\n"),
    )
    await agent.turn(
        "a bad idea",
        edit("calc.py", "return a + b", "return (a + b) * 2"),
        read("notes.md"),
        edit("notes.md", "café ☕", "coffee"),
        write("src/extra.py", "x = 1\n"),
    )
    await agent.turn("more", edit("calc.py", "* 2", "* 3"), write("README.md", "# Calc v2\n"))


async def test_rewinding_to_after_turn_1_restores_exactly_those_bytes_without_git(ws: Path, tmp_path: Path) -> None:
    agent = Agent(ws, CheckpointStore(tmp_path / "s.checkpoints"))
    await agent.turn("look", read("calc.py"))
    after_first = tree(ws)  # nothing changed yet: turn 1 only read
    await three_turns_of_edits(agent)  # turns 2, 3 and 4
    summaries = summarize(agent.history, agent.store)
    assert [(s.number, s.prompt, sorted(os.path.relpath(f, ws) for f in s.files)) for s in summaries] == [
        (1, "look", []),
        (2, "fix add", ["README.md", "calc.py"]),
        (3, "a bad idea", ["calc.py", "notes.md", "src/extra.py"]),
        (4, "more", ["README.md", "calc.py"]),
    ]
    assert listing(summaries, ws)[0].endswith("(no file changes)")
    restored, asked = await agent.rewind(2)
    assert restored == ["README.md", "calc.py", "notes.md", "src/extra.py"] and asked == []
    assert (ws / "calc.py").read_bytes() == b"def add(a, b):\r\n    return a + b\r\n"
    assert (ws / "README.md").read_text() == "# Calc\n" and not (ws / "src" / "extra.py").exists()
    assert (ws / "notes.md").read_text() == "# Notes\n\ncafé ☕\n"
    restored, _ = await agent.rewind(1)
    assert restored == ["README.md", "calc.py"] and tree(ws) == after_first
    assert (await agent.rewind(1))[0] == []  # nothing left to do


async def test_a_file_changed_since_is_not_overwritten_without_asking(ws: Path, tmp_path: Path) -> None:
    agent = Agent(ws, CheckpointStore(tmp_path / "s.checkpoints"))
    await three_turns_of_edits(agent)
    (ws / "calc.py").write_text("# the user's own version\n")
    restored, asked = await agent.rewind(1)
    assert [os.path.relpath(s.file, ws) for s in asked] == ["calc.py"]
    assert asked[0].conflict == "it was changed after the agent last changed it"
    assert restored == ["README.md", "notes.md", "src/extra.py"]
    assert (ws / "calc.py").read_text() == "# the user's own version\n"
    restored, asked = await agent.rewind(1, overwrite=True)
    assert restored == ["calc.py"] and (ws / "calc.py").read_bytes() == b"def add(a, b):\r\n    return a + b\r\n"


async def test_a_change_made_between_the_undone_turns_is_a_conflict_too(ws: Path, tmp_path: Path) -> None:
    agent = Agent(ws, CheckpointStore(tmp_path / "s.checkpoints"))
    await agent.turn("one", read("notes.md"), edit("notes.md", "café", "tea"))
    await agent.turn("two", edit("notes.md", "# Notes", "# My notes"))
    (ws / "notes.md").write_text((ws / "notes.md").read_text() + "the user's line\n")
    await agent.turn("three", read("notes.md"), edit("notes.md", "tea", "water"))
    _, asked = await agent.rewind(1)
    assert [s.conflict for s in asked] == ["it was changed by someone else between two of the turns being undone"]
    assert "the user's line" in (ws / "notes.md").read_text()


@pytest.fixture
def repo(ws: Path) -> Path:
    git(ws, "init", "-q", "-b", "main")
    (ws / ".gitignore").write_text("build/\n")
    (ws / "run.sh").write_text("echo run\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "start")
    (ws / "draft.txt").write_text("untracked but not ignored\n")
    (ws / "calc.py").write_bytes(b"def add(a, b):\r\n    return a - b  # staged\r\n")
    git(ws, "add", "calc.py")  # a staged change of the user's
    git(ws, "stash", "list")
    return ws


def git_state(repo: Path) -> tuple[str, str, str, str]:
    index = hashlib.sha256((repo / ".git" / "index").read_bytes()).hexdigest()
    refs = git(repo, "for-each-ref")
    return index, refs, git(repo, "--no-optional-locks", "status", "--porcelain"), git(repo, "stash", "list")


async def test_bash_changes_in_a_git_repository_are_rewound_and_the_users_git_is_untouched(
    repo: Path, tmp_path: Path
) -> None:
    agent = Agent(repo, CheckpointStore(tmp_path / "s.checkpoints"))
    await agent.turn("fix", read("calc.py"), edit("calc.py", "a - b", "a + b"))
    after_first, git_before = tree(repo), git_state(repo)
    await agent.turn(
        "break things",
        bash("sed -i 's/a + b/a * b/' calc.py && rm draft.txt && chmod +x run.sh && mkdir -p build lib"),
        bash("echo 'new' > lib/new.py && echo ignored > build/out.o && ln -s calc.py link.py"),
        bash("git status --short"),  # read-only: no snapshot
    )
    await agent.turn(
        "and more", bash("printf 'x\\ny\\n' >> notes.md"), read("lib/new.py"), edit("lib/new.py", "new", "newer")
    )
    assert os.access(repo / "run.sh", os.X_OK) and not (repo / "draft.txt").exists()
    summaries = summarize(agent.history, agent.store)
    changed = sorted(os.path.relpath(f, repo) for f in summaries[1].files)
    assert changed == ["calc.py", "draft.txt", "lib/new.py", "link.py", "run.sh"]  # build/ is ignored: not kept
    restored, asked = await agent.rewind(1)
    assert asked == [] and restored == ["calc.py", "draft.txt", "lib/new.py", "link.py", "notes.md", "run.sh"]
    assert {k: v for k, v in tree(repo).items() if not k.startswith("build/")} == after_first
    assert not (repo / "link.py").is_symlink() and not os.access(repo / "run.sh", os.X_OK)
    assert (repo / "build" / "out.o").exists()  # ignored by git: not covered, left alone
    assert git_state(repo) == git_before  # index, branches and refs, status and stash as the user left them


async def test_without_git_bash_changes_are_named_as_not_covered(ws: Path, tmp_path: Path) -> None:
    agent = Agent(ws, CheckpointStore(tmp_path / "s.checkpoints"))
    await agent.turn("one", read("calc.py"), edit("calc.py", "a - b", "a + b"))
    await agent.turn("two", bash("echo hi > made-by-bash.txt"), bash("ls"))
    summaries = summarize(agent.history, agent.store)
    assert summaries[1].uncovered == ("echo hi > made-by-bash.txt",)
    assert "1 command(s) not covered" in listing(summaries, ws, git=False)[1]
    plan = await plan_for(agent.store, agent.history, 1)
    assert plan.uncovered == ("echo hi > made-by-bash.txt",) and plan.steps == ()
    assert (ws / "made-by-bash.txt").exists()


async def test_after_a_conversation_rewind_the_dropped_turns_still_count_in_time(ws: Path, tmp_path: Path) -> None:
    agent = Agent(ws, CheckpointStore(tmp_path / "s.checkpoints"))
    await agent.turn("one", write("a.txt", "1\n"))
    await agent.turn("two", write("a.txt", "2\n"))  # dropped below, its change kept (conversation only)
    agent.history = agent.history[:2]
    await agent.turn("two again", write("b.txt", "b\n"))
    ids = turn_ids(agent.history)
    assert undone_turns(agent.store, ids, 2) == set()  # after the new turn 2: the dropped turn came before it
    assert ids == ["u1", "u3"] and undone_turns(agent.store, ids, 1) == {"u2", "u3"}
    restored, _ = await agent.rewind(1)
    assert restored == ["a.txt", "b.txt"] and (ws / "a.txt").read_text() == "1\n" and not (ws / "b.txt").exists()
