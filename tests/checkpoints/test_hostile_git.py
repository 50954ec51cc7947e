"""ram's own git in a hostile repository: a checkpoint snapshot and a rewind run nothing the repository (or a planted
system or global config) names, and still put back exactly the bytes a file held.

Each case plants programs that would `touch` a marker — filter drivers, fsmonitor, hooks, diff drivers, a config
reached through `.git/commondir` or a `gitdir:` file, a nested repository's own filter, a `git` on `PATH` — then a
Bash command (through the real tool runner, with checkpoints on) changes files, and a rewind to the start puts
them back. Real git, real files; one case end to end through `ram` and `ram rewind` against the fake model."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from react_agent_mini.abort import AbortSignal
from react_agent_mini.checkpoints.git import GitSnapshots
from react_agent_mini.checkpoints.plan import FileStep
from react_agent_mini.checkpoints.rewind import CodeOutcome, plan_for, rewind_code
from react_agent_mini.checkpoints.store import CheckpointStore
from react_agent_mini.checkpoints.tracker import Checkpoints
from react_agent_mini.events import ToolFinished
from react_agent_mini.messages import Message, ToolUseBlock, user_text
from react_agent_mini.permissions.policy import NO_INFO, Allow, Decision, ToolCallInfo
from react_agent_mini.tools.base import Tool, ToolContext, ToolRegistry
from react_agent_mini.tools.builtin.bash import BashTool
from react_agent_mini.tools.runner import ToolRun, run_tool_calls

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..test_cli import assert_no_traceback, env_for, ram

DATA = b"line one\r\nline two\r\n\x00binary-ish\xff\r\n"
"""What `data.txt` holds: CRLF line ends and bytes no text conversion may touch."""
DRAFT = b"an untracked draft\r\n"
HOOKS = (
    "applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit", "prepare-commit-msg",
    "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge", "pre-push", "pre-receive", "update",
    "proc-receive", "post-receive", "post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc",
    "post-rewrite", "sendemail-validate", "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist",
    "p4-post-changelist", "p4-pre-submit", "post-index-change",
)  # fmt: skip


async def allow_all(tool: Tool, args: Mapping[str, Any], info: ToolCallInfo = NO_INFO, /) -> Decision:
    return Allow()


def plain_git(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    """The test's own git, before anything is planted (and never reading the developer's config)."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    full |= {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_AUTHOR_NAME": "t",
             "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    full |= env or {}
    done = subprocess.run(["git", *args], cwd=cwd, env=full, capture_output=True, text=True, check=True)
    return done.stdout


def object_id(data: bytes) -> str:
    """git's id of a blob holding `data`."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


def loose_object(data: bytes) -> bytes:
    """A loose blob object as git stores one, holding `data` (whatever id its file is named by)."""
    return zlib.compress(b"blob %d\x00" % len(data) + data)


class Markers:
    """Programs that leave a file behind when they run, and the check that none did."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir()

    def program(self, name: str) -> str:
        """A shell command line that leaves the marker `name` (and passes its stdin through, as a filter does)."""
        return f"touch {self.folder / name}; cat"

    def script(self, path: Path, name: str) -> Path:
        """An executable script at `path` that leaves the marker `name`."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"#!/bin/sh\ntouch {self.folder / name}\ncat >/dev/null 2>&1 </dev/null\nexit 0\n")
        path.chmod(0o755)
        return path

    def left(self) -> list[str]:
        return sorted(p.name for p in self.folder.iterdir())


def filter_config(markers: Markers, name: str = "x") -> str:
    """A config defining the filter driver `name` three ways, and an fsmonitor, each leaving a marker."""
    return (
        f'[filter "{name}"]\n\tclean = {markers.program("clean")}\n\tsmudge = {markers.program("smudge")}\n'
        f"\tprocess = {markers.program('process')}\n\trequired = false\n"
        f"[core]\n\tfsmonitor = {markers.program('fsmonitor')}\n"
    )


class Agent:
    """A conversation whose Bash calls run through the real runner, with checkpoints on."""

    def __init__(self, cwd: Path, store: CheckpointStore) -> None:
        self.cwd = cwd
        self.history: list[Message] = []
        self.store = store
        self.checkpoints = Checkpoints(lambda: self.history, lambda: self.store)
        self.context = ToolContext(cwd=cwd, changes=self.checkpoints)
        self.registry = ToolRegistry([BashTool()])
        self._calls = 0

    async def bash_turn(self, *commands: str) -> list[str]:
        self.history.append(user_text("do it", id=f"u{len(self.history)}"))
        outputs = []
        for command in commands:
            self._calls += 1
            use = ToolUseBlock(f"call_{self._calls}", "Bash", {"command": command})
            run = ToolRun(self.registry, self.context, allow_all, AbortSignal())
            async for event in run_tool_calls([use], run):
                if isinstance(event, ToolFinished):
                    assert not event.result.is_error, event.result.content
                    outputs.append(event.result.content)
            self.history.append(Message("assistant", (use,), id=f"a{self._calls}"))
        return outputs

    async def rewind_to_start(self) -> CodeOutcome:
        async def never(step: FileStep) -> bool:
            return False

        plan = await plan_for(self.store, self.history, 0)
        return await rewind_code(self.store, plan, never, workspace=self.cwd)


def restored(outcome: CodeOutcome, cwd: Path) -> list[str]:
    """The files a rewind put back, after checking it put back every one it planned to."""
    assert not outcome.failed and not outcome.kept and not outcome.plan.uncovered, outcome
    return sorted(os.path.relpath(done.file, cwd) for done in outcome.restored)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with a committed `data.txt` (CRLF and binary bytes) and an untracked `draft.txt`."""
    ws = tmp_path / "ws"
    ws.mkdir()
    plain_git(ws, "init", "-q", "-b", "main")
    (ws / "data.txt").write_bytes(DATA)
    (ws / "keep.txt").write_text("unchanged\n")
    plain_git(ws, "add", "-A")
    plain_git(ws, "commit", "-q", "-m", "start")
    (ws / "draft.txt").write_bytes(DRAFT)
    return ws


@pytest.fixture
def markers(tmp_path: Path) -> Markers:
    return Markers(tmp_path / "markers")


def evil_copy(repo: Path, markers: Markers, name: str) -> Path:
    """A copy of `repo/.git` beside the repository, whose config defines the filter `x` and an fsmonitor."""
    copy = repo.parent / name
    shutil.copytree(repo / ".git", copy, symlinks=True)
    with (copy / "config").open("a") as handle:
        handle.write(filter_config(markers))
    return copy


def plant_repository_filter(repo: Path, markers: Markers, monkeypatch: pytest.MonkeyPatch) -> None:
    with (repo / ".git" / "config").open("a") as handle:
        handle.write(filter_config(markers))
    (repo / ".gitattributes").write_text("* filter=x\n")


def plant_fsmonitor(repo: Path, markers: Markers, monkeypatch: pytest.MonkeyPatch) -> None:
    script = markers.script(repo.parent / "fsmonitor.sh", "fsmonitor")
    plain_git(repo, "config", "core.fsmonitor", str(script))
    plain_git(repo, "config", "core.untrackedCache", "true")


def plant_hooks(repo: Path, markers: Markers, monkeypatch: pytest.MonkeyPatch) -> None:
    hooks = repo.parent / "all-hooks"
    for name in HOOKS:
        markers.script(hooks / name, f"hook-{name}")
        markers.script(repo / ".git" / "hooks" / name, f"default-hook-{name}")
    plain_git(repo, "config", "core.hooksPath", str(hooks))


def plant_diff_drivers(repo: Path, markers: Markers, monkeypatch: pytest.MonkeyPatch) -> None:
    plain_git(repo, "config", "diff.external", str(markers.script(repo.parent / "external.sh", "external")))
    plain_git(repo, "config", "diff.x.textconv", markers.program("textconv"))
    plain_git(repo, "config", "diff.x.command", markers.program("diff-command"))
    plain_git(repo, "config", "core.pager", markers.program("pager"))
    (repo / ".gitattributes").write_text("* diff=x\n")


def plant_config_variables(repo: Path, markers: Markers, monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("GIT_CONFIG_SYSTEM", "GIT_CONFIG_GLOBAL"):
        planted = repo.parent / f"{variable}.config"
        planted.write_text(filter_config(markers))
        monkeypatch.setenv(variable, str(planted))
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "filter.x.clean")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", markers.program("config-count"))
    (repo / ".gitattributes").write_text("* filter=x\n")


def plant_home_config(repo: Path, markers: Markers, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's own global files (what an LFS install writes there): a filter, and attributes naming it."""
    home = repo.parent / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(filter_config(markers, "lfs"))
    xdg = Path(os.environ["XDG_CONFIG_HOME"]) / "git"
    xdg.mkdir(parents=True, exist_ok=True)
    (xdg / "config").write_text(filter_config(markers, "lfs"))
    (xdg / "attributes").write_text("*.txt filter=lfs\n")
    monkeypatch.setenv("HOME", str(home))
    (repo / ".gitattributes").write_text("* filter=lfs\n")


def plant_commondir(repo: Path, markers: Markers, monkeypatch: pytest.MonkeyPatch) -> None:
    evil_copy(repo, markers, "evilgit")
    (repo / ".git" / "commondir").write_text("../../evilgit\n")
    (repo / ".gitattributes").write_text("* filter=x\n")


def plant_gitdir_file(repo: Path, markers: Markers, monkeypatch: pytest.MonkeyPatch) -> None:
    evil = evil_copy(repo, markers, "evil-gitdir")
    shutil.rmtree(repo / ".git")
    (repo / ".git").write_text(f"gitdir: {os.path.relpath(evil, repo)}\n")
    (repo / ".gitattributes").write_text("* filter=x\n")


def plant_alternates(repo: Path, markers: Markers, monkeypatch: pytest.MonkeyPatch) -> None:
    """An alternate object directory holding a forged object under the id of `draft.txt`'s bytes: git takes the
    id as stored already, and reading it back would give the forged content."""
    evil = repo.parent / "evil-objects"
    draft_id = object_id(DRAFT)
    forged = b"forged by the alternate\n"
    (evil / draft_id[:2]).mkdir(parents=True)
    (evil / draft_id[:2] / draft_id[2:]).write_bytes(loose_object(forged))
    (repo / ".git" / "objects" / "info" / "alternates").write_text(f"{evil}\n")


def plant_nested_repository(repo: Path, markers: Markers, monkeypatch: pytest.MonkeyPatch) -> None:
    """A repository inside the work tree (a vendored checkout, or one a command made): git runs `git status` in
    it, with its own config, when it looks at the outer one's gitlink."""
    nested = repo / "vendor" / "lib"
    nested.mkdir(parents=True)
    plain_git(nested, "init", "-q")
    (nested / "lib.txt").write_text("library\n")
    (nested / ".gitattributes").write_text("* filter=x\n")
    plain_git(nested, "add", "-A")
    plain_git(nested, "commit", "-q", "-m", "lib")
    with (nested / ".git" / "config").open("a") as handle:
        handle.write(filter_config(markers))
    plain_git(repo, "add", "vendor/lib")
    plain_git(repo, "commit", "-q", "-m", "vendor it")


def plant_nested_repository_and_a_newline(repo: Path, markers: Markers, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same, with a file whose name holds a newline (so `git add --verbose` cannot be read line by line, and
    the snapshot compares trees to find the gitlink)."""
    plant_nested_repository(repo, markers, monkeypatch)
    (repo / "odd\nname.txt").write_text("odd\n")


def plant_git_on_path(repo: Path, markers: Markers, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `git` in the workspace, first on PATH (an activated `.venv/bin`, a `node_modules/.bin`)."""
    real = shutil.which("git")
    assert real is not None
    fake = repo / ".venv" / "bin" / "git"
    fake.parent.mkdir(parents=True)
    fake.write_text(f'#!/bin/sh\ntouch {markers.folder / "planted-git"}\nexec {real} "$@"\n')
    fake.chmod(0o755)
    (repo / ".gitignore").write_text(".venv/\n")
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")


Plant = Callable[[Path, Markers, pytest.MonkeyPatch], None]
CASES: dict[str, Plant] = {
    "filter in .git/config": plant_repository_filter,
    "core.fsmonitor": plant_fsmonitor,
    "every hook": plant_hooks,
    "diff.external, textconv, pager": plant_diff_drivers,
    "GIT_CONFIG_SYSTEM, GIT_CONFIG_GLOBAL, GIT_CONFIG_COUNT": plant_config_variables,
    "HOME/.gitconfig and XDG config": plant_home_config,
    ".git/commondir to an evil copy": plant_commondir,
    ".git as a gitdir: file": plant_gitdir_file,
    "objects/info/alternates": plant_alternates,
    "a nested repository": plant_nested_repository,
    "a nested repository and a newline in a name": plant_nested_repository_and_a_newline,
    "a git on PATH in the workspace": plant_git_on_path,
}


@pytest.mark.parametrize("plant", CASES.values(), ids=list(CASES))
async def test_a_snapshot_and_a_rewind_run_nothing_the_repository_names(
    plant: Plant, repo: Path, markers: Markers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plant(repo, markers, monkeypatch)
    attributes = (repo / ".gitattributes").read_bytes() if (repo / ".gitattributes").exists() else None
    agent = Agent(repo, CheckpointStore(tmp_path / "session.checkpoints"))
    await agent.bash_turn(
        "printf 'changed\\n' > data.txt && rm draft.txt && echo new > new.txt",
        "touch vendor/lib/lib.txt 2>/dev/null; printf 'more\\n' >> data.txt",
    )
    assert (repo / "data.txt").read_bytes() == b"changed\nmore\n"

    outcome = await agent.rewind_to_start()

    assert markers.left() == []
    assert restored(outcome, repo) == ["data.txt", "draft.txt", "new.txt"]
    assert (repo / "data.txt").read_bytes() == DATA  # byte for byte: CRLF, NUL, 0xff
    assert (repo / "draft.txt").read_bytes() == DRAFT and not (repo / "new.txt").exists()
    assert (repo / "keep.txt").read_text() == "unchanged\n"
    if attributes is not None:
        assert (repo / ".gitattributes").read_bytes() == attributes


async def test_crlf_files_under_text_attributes_come_back_byte_for_byte(repo: Path, tmp_path: Path) -> None:
    """`* text` (and `eol=crlf`) would have git store LF and write back what its eol settings say: a snapshot
    keeps the bytes themselves."""
    (repo / ".gitattributes").write_text("* text\n*.bat text eol=crlf\n*.sh text eol=lf\n")
    mixed = b"unix\nwindows\r\nold mac\rend"
    (repo / "run.bat").write_bytes(b"@echo off\r\necho hi\r\n")
    (repo / "tool.sh").write_bytes(b"echo crlf in a shell script\r\n")
    (repo / "mixed.txt").write_bytes(mixed)
    plain_git(repo, "add", "-A")
    plain_git(repo, "commit", "-q", "-m", "attributes")
    for name in ("data.txt", "run.bat", "tool.sh"):
        assert (repo / name).read_bytes().count(b"\r\n")  # still CRLF on disk (git normalised only its copy)
    before = {p.name: p.read_bytes() for p in repo.iterdir() if p.is_file()}
    agent = Agent(repo, CheckpointStore(tmp_path / "session.checkpoints"))
    await agent.bash_turn("for f in data.txt run.bat tool.sh mixed.txt draft.txt; do echo gone > $f; done")

    outcome = await agent.rewind_to_start()

    assert restored(outcome, repo) == ["data.txt", "draft.txt", "mixed.txt", "run.bat", "tool.sh"]
    assert {p.name: p.read_bytes() for p in repo.iterdir() if p.is_file()} == before


async def test_a_planted_object_in_the_repository_is_refused_not_written_back(repo: Path, tmp_path: Path) -> None:
    """A command may write loose objects into `.git/objects`: one planted under the id of a file's bytes, with
    other content, is caught when the blob is read back (the rewind names the file rather than writing it)."""
    draft_id = object_id(DRAFT)
    forged = b"forged\n"
    loose = repo / ".git" / "objects" / draft_id[:2] / draft_id[2:]
    loose.parent.mkdir(exist_ok=True)
    loose.write_bytes(loose_object(forged))
    agent = Agent(repo, CheckpointStore(tmp_path / "session.checkpoints"))
    await agent.bash_turn("rm draft.txt")
    outcome = await agent.rewind_to_start()
    assert [(os.path.relpath(f, repo), "does not hold what its id says" in why) for f, why in outcome.failed] == [
        ("draft.txt", True)
    ]
    assert not (repo / "draft.txt").exists()  # not the forged bytes


async def test_the_private_repository_is_ours_and_the_users_git_is_untouched(repo: Path, tmp_path: Path) -> None:
    index_before = (repo / ".git" / "index").read_bytes()
    listing_before = sorted(p.relative_to(repo).as_posix() for p in (repo / ".git").rglob("*"))
    snapshots = GitSnapshots(repo, tmp_path / "store" / "git-index")
    first = await snapshots.snapshot()
    (repo / "data.txt").write_bytes(b"other\r\n")
    second = await snapshots.snapshot()
    changes = await snapshots.changes(first, second)
    assert [(c.rel, c.old_mode, c.new_mode) for c in changes] == [("data.txt", 0o100644, 0o100644)]
    assert await snapshots.blob(changes[0].old_id, "data.txt") == DATA
    private = tmp_path / "store" / "git"
    assert (private / "info" / "attributes").read_text().startswith("* -text -crlf -filter")
    assert "fsmonitor = false" in (private / "config").read_text()
    assert (repo / ".git" / "index").read_bytes() == index_before
    assert sorted(p.relative_to(repo).as_posix() for p in (repo / ".git").rglob("*")) == listing_before


async def test_what_only_a_snapshot_kept_is_read_back_even_once_the_repository_is_gone(
    repo: Path, tmp_path: Path
) -> None:
    snapshots = GitSnapshots(repo, tmp_path / "store" / "git-index")
    first = await snapshots.snapshot()
    (repo / "draft.txt").unlink()
    changes = await snapshots.changes(first, await snapshots.snapshot())
    assert [(c.rel, c.new_mode) for c in changes] == [("draft.txt", 0)]
    shutil.rmtree(repo / ".git")  # the draft was never committed: only our store holds it
    again = GitSnapshots(repo, tmp_path / "store" / "git-index")
    assert await again.root() is None
    assert await again.blob(changes[0].old_id, "draft.txt") == DRAFT


def test_the_repository_is_found_without_asking_git(repo: Path, tmp_path: Path) -> None:
    from react_agent_mini.checkpoints.git import find

    (repo / "sub" / "deeper").mkdir(parents=True)
    found = find(repo / "sub" / "deeper")
    assert found is not None and found.root == repo and found.objects == repo / ".git" / "objects"
    assert find(repo / ".git") is None and find(tmp_path) is None
    worktree = tmp_path / "wt"
    plain_git(repo, "worktree", "add", "-q", str(worktree))
    linked = find(worktree)
    assert linked is not None and linked.root == worktree
    assert linked.objects == (repo / ".git" / "objects").resolve()
    (repo / ".git" / "commondir").write_text("../../elsewhere\n")  # not followed in a .git directory
    assert find(repo) == found
    (tmp_path / "bogus").mkdir()
    (tmp_path / "bogus" / ".git").write_text("gitdir: /nonexistent\n")
    assert find(tmp_path / "bogus") is None


def test_end_to_end_a_hostile_repository_checkpointed_and_rewound_by_ram(
    fake_llm: FakeLLMServer, repo: Path, markers: Markers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The repository arrives with a filter in its config, a `commondir` to an evil copy, hooks and an fsmonitor;
    a session's Bash command changes files and `ram rewind 0` puts them back: no marker anywhere."""
    plant_repository_filter(repo, markers, monkeypatch)
    plant_hooks(repo, markers, monkeypatch)
    plant_commondir(repo, markers, monkeypatch)
    env = env_for("openai", fake_llm)
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Bash", {"command": "printf 'changed\\n' > data.txt && rm draft.txt"})]),
        Reply(text="Changed."),
    )
    proc = ram("--permission-mode", "bypassPermissions", "change it", env=env, cwd=repo)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert (repo / "data.txt").read_bytes() == b"changed\n"
    rewound = ram("rewind", "0", "--code", env=env, cwd=repo)
    assert_no_traceback(rewound)
    assert markers.left() == []
    assert rewound.returncode == 0, rewound.stdout + rewound.stderr
    assert "  restored data.txt" in rewound.stdout and "  restored draft.txt" in rewound.stdout
    assert (repo / "data.txt").read_bytes() == DATA and (repo / "draft.txt").read_bytes() == DRAFT


def test_the_marker_programs_do_run_under_the_users_own_git(
    repo: Path, markers: Markers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plants are live: git itself, in the user's repository, runs them (so the tests above can fail)."""
    plant_repository_filter(repo, markers, monkeypatch)
    (repo / "data.txt").write_bytes(b"touched\n")
    with contextlib.suppress(subprocess.CalledProcessError):  # the `process` driver fails git's handshake
        plain_git(repo, "add", "-A")
    assert "process" in markers.left()
