"""A task's workspace: a git clone at the base commit, its setup and test commands, and the patch it ends with.

A clone, not a worktree: a local clone hard-links the objects, so it costs about what a worktree does, and it never
writes into the user's repository (a worktree registers itself in the source's `.git` and is left there as a stale
entry when a batch is killed). A git URL is mirrored once per machine (`repo_cache`), under a lock, and each task
clones the mirror.

The patch is `git diff --binary` of everything in the workspace against the base commit — edits, new files, and
commits the agent made — except what setup left behind (untracked files present right after it) and Python's
bytecode caches. It is taken before the test command runs, so nothing the test writes is in it.

Every repository is treated as hostile — the task's source, and the workspace once the agent's commands have run
in it — so git runs nothing a repository names. Each git process gets an environment without the caller's `GIT_*`
variables, with the system and global config files off (`checkpoints.git.isolated_env`), `core.fsmonitor` and
hooks off and no transport but the local one (`LOCAL`); the clone is made without templates and without a
checkout, so the source's config (its filters, fsmonitor, hooks: a clone never copies them) and the user's
global filters (an LFS install) play no part when the base commit is checked out: a `.gitattributes` naming a
filter names nothing, and runs nothing. Once the clone exists, git is pointed at its `.git` explicitly
(`GIT_DIR`, `GIT_COMMON_DIR`), so a `commondir` or a `.git` file planted since is not followed; the patch is taken
with `--no-ext-diff --no-textconv`, and a nested repository's gitlink is marked skip-worktree first (or `git add`
would run `git status` in it, with its own config). The `git` run is the first on `PATH` outside the workspace.
Only mirroring a URL (the network) keeps the user's global config, where credential helpers, proxies and
`insteadOf` live; it runs in a bare mirror of ours, with hooks off and no `ext::` transport.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
import shutil
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path

import msgspec

from ..checkpoints.git import git_program, isolated_env

OUTPUT_TAIL = 2000
"""Characters of a command's output kept for the results."""
CREDENTIALS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
"""Never given to setup and test commands (they run the repository's code)."""
_NOT_IN_PATCH = (":(exclude,glob)**/__pycache__/**", ":(exclude,glob)**/*.py[co]")
SAFE = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.pager=cat")
"""Given to every git command: nothing a repository's config names for these runs."""
LOCAL = (*SAFE, "-c", "protocol.allow=never", "-c", "protocol.file.allow=always")
"""For everything but the network: only local paths may be read from."""
NETWORK = (*SAFE, "-c", "protocol.ext.allow=never")


class WorkspaceError(Exception):
    """The workspace could not be made (clone, checkout); the message says which command failed and how."""


class CommandResult(msgspec.Struct, frozen=True):
    """How a setup or test command ended."""

    exit_code: int
    output: str
    """The end of what it printed (stdout and stderr together)."""


class Workspace(msgspec.Struct):
    """A clone at the base commit, ready for a session."""

    path: Path
    base: str
    """The base commit's full id."""
    leftovers: tuple[str, ...] = ()
    """Untracked paths setup left (kept out of the patch)."""


async def create(repo: str, base_commit: str | None, path: Path, cache: Path) -> Workspace:
    """Clone `repo` into `path` (which must not exist) and check out `base_commit` (None: its HEAD)."""
    source = repo
    if "://" in repo or "@" in repo.split("/")[0]:
        source = str(await _mirror(repo, cache, base_commit))
    elif not Path(repo, ".git").exists() and not Path(repo, "HEAD").is_file():
        raise WorkspaceError(f"{repo} is not a git repository")
    # git makes the leading directories (another task's clean-up may remove an empty parent meanwhile)
    await git("clone", "--quiet", "--no-checkout", "--template=", source, str(path), cwd=Path(os.sep))
    await git("checkout", "--quiet", "--detach", base_commit or "HEAD", cwd=path, repo=path)
    base = (await git("rev-parse", "HEAD", cwd=path, repo=path)).strip()
    return Workspace(path, base)


async def _mirror(url: str, cache: Path, commit: str | None) -> Path:
    """A bare mirror of `url` in `cache` holding `commit` (made or refreshed by one worker at a time)."""
    cache.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha1(url.encode()).hexdigest()[:16]
    mirror = cache / f"{key}.git"
    lock = await asyncio.to_thread(_lock, cache / f"{key}.lock")
    try:
        if not mirror.exists():
            partial = cache / f"{key}.partial"
            shutil.rmtree(partial, ignore_errors=True)
            await git("clone", "--quiet", "--mirror", "--template=", url, str(partial), cwd=cache, network=True)
            partial.rename(mirror)
        elif commit and not await _has_commit(mirror, commit):
            await git("remote", "update", "--prune", cwd=mirror, network=True)
        return mirror
    finally:
        os.close(lock)


def _lock(path: Path) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


async def _has_commit(repo: Path, commit: str) -> bool:
    try:
        await git("cat-file", "-e", f"{commit}^{{commit}}", cwd=repo)
        return True
    except WorkspaceError:
        return False


async def after_setup(workspace: Workspace) -> None:
    """Note what setup left untracked, so that it stays out of the patch."""
    cwd = workspace.path
    listed = await git("ls-files", "--others", "--exclude-standard", "--directory", "-z", cwd=cwd, repo=cwd)
    workspace.leftovers = tuple(entry for entry in listed.split("\0") if entry)


async def patch(workspace: Workspace) -> str:
    """The workspace's changes against its base commit, new files included, as `git apply` takes them."""
    cwd = workspace.path
    await _hold_nested(cwd)
    await git("add", "--all", "--", ".", *_NOT_IN_PATCH, cwd=cwd, repo=cwd)
    if workspace.leftovers:
        listed = "\0".join(workspace.leftovers) + "\0"
        await git(
            "rm", "--cached", "-r", "-q", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul",
            cwd=cwd, repo=cwd, stdin=listed, env={"GIT_LITERAL_PATHSPECS": "1"},
        )  # fmt: skip
    return await git(
        "diff", "--cached", "--binary", "--no-color", "--no-ext-diff", "--no-textconv", workspace.base,
        cwd=cwd, repo=cwd,
    )  # fmt: skip


async def _hold_nested(cwd: Path) -> None:
    """Mark the index's gitlinks skip-worktree: `git add` would otherwise run `git status` inside each nested
    repository, which reads that repository's own config (a filter or fsmonitor the agent wrote there)."""
    staged = await git("ls-files", "--stage", "-z", cwd=cwd, repo=cwd)
    links = [entry.partition("\t")[2] for entry in staged.split("\0") if entry.startswith("160000 ")]
    if links:
        listed = "".join(f"{link}\0" for link in links)
        await git("update-index", "--skip-worktree", "-z", "--stdin", cwd=cwd, repo=cwd, stdin=listed)


def remove(path: Path) -> None:
    """Delete a workspace (directories the agent made read-only too)."""
    for directory, _dirs, _files in os.walk(path):
        with contextlib.suppress(OSError):
            os.chmod(directory, 0o755)
    shutil.rmtree(path, ignore_errors=True)


async def git(
    *args: str,
    cwd: Path,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
    repo: Path | None = None,
    network: bool = False,
) -> str:
    """Run git; its stdout, or WorkspaceError with the command and the end of its stderr. `repo`: the clone to work
    in, named to git explicitly; `network`: a fetch from a URL (the only kind that reads the user's global config)."""
    if network:
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | {"GIT_TERMINAL_PROMPT": "0"}
    else:
        full_env = isolated_env()
    if repo is not None:
        dotgit = str(repo / ".git")
        full_env |= {"GIT_DIR": dotgit, "GIT_COMMON_DIR": dotgit, "GIT_WORK_TREE": str(repo)}
    full_env |= env or {}
    program = git_program([cwd] if repo is not None else [])
    if program is None:
        raise WorkspaceError("git failed: no git found on PATH")
    process = await asyncio.create_subprocess_exec(
        program, *(NETWORK if network else LOCAL), *args, cwd=cwd, env=full_env, start_new_session=True,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        out, err = await process.communicate(stdin.encode() if stdin is not None else None)
    except asyncio.CancelledError:
        _kill_group(process)
        raise
    if process.returncode != 0:
        detail = err.decode(errors="replace").strip().splitlines()
        raise WorkspaceError(f"git {args[0]} failed: {detail[-1] if detail else f'exit {process.returncode}'}")
    return out.decode(errors="replace")


async def run_commands(commands: Sequence[str], cwd: Path) -> CommandResult:
    """Run `commands` in order with bash in `cwd`, stopping at the first that fails; cancelling kills the running
    one (its whole process group)."""
    from ..tools.shell_env import guard_own_process

    guard_own_process()  # a task's commands may not read the worker's memory or environment (its keys)
    env = {name: value for name, value in os.environ.items() if name not in CREDENTIALS}
    output = ""
    for command in commands:
        process = await asyncio.create_subprocess_exec(
            "/bin/bash", "-c", command, cwd=cwd, env=env, start_new_session=True,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        try:
            out, _ = await process.communicate()
        except asyncio.CancelledError:
            _kill_group(process)
            raise
        output = (output + out.decode(errors="replace"))[-OUTPUT_TAIL:]
        if process.returncode != 0:
            return CommandResult(process.returncode if process.returncode is not None else -1, output)
    return CommandResult(0, output)


def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
