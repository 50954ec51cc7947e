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
`insteadOf` live; it runs in a bare mirror of ours, with hooks off and no `ext::` transport. Every git runs in the C
locale, so that its words for a full disk are known (`disk.from_text`).

The base commit must name a commit of the repository (`rev-parse --verify`), and the checkout is of its full id,
so a value git would read as an option or a path never reaches `checkout`.

A worker holds a lock on `<root>/<stem>.workspace-lock` while it works in `<root>/<stem>` (`claim`), and lets go
when the workspace is removed or kept. A worker that was killed lets go too — the kernel drops its locks — so a
lock file nobody holds marks a workspace whose worker is gone: `sweep` removes it, and every task sweeps its root
before it starts (on Ray, every batch's root on that node), as the Ray driver does on every node at the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
import shutil
import signal
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import msgspec

from ..checkpoints.git import git_program, isolated_env
from .disk import describe, from_text

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
LOCK_SUFFIX = ".workspace-lock"
"""`<root>/<stem>.workspace-lock`: held by the worker using `<root>/<stem>`."""
CLAIM_POLL = 0.1
"""Seconds between tries for a workspace's lock while a sweeper holds it."""


class WorkspaceError(Exception):
    """The workspace could not be made (clone, checkout); the message says which command failed and how."""

    def __init__(self, message: str, *, disk: str | None = None) -> None:
        super().__init__(message)
        self.disk = disk
        """Set when git said the disk refused its writes (`disk.describe`): not the task's fault."""


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
    if base_commit is not None and base_commit.startswith("-"):
        raise WorkspaceError(f"base_commit {base_commit} is not a commit (it starts with '-')")
    # git makes the leading directories (another task's clean-up may remove an empty parent meanwhile)
    await git("clone", "--quiet", "--no-checkout", "--template=", source, str(path), cwd=Path(os.sep), where=path)
    base = await _commit(path, base_commit or "HEAD")
    if base is None:
        raise WorkspaceError(
            f"base_commit {base_commit} is not a commit in {repo}" if base_commit else f"{repo} has no commit yet"
        )
    await git("checkout", "--quiet", "--detach", base, cwd=path, repo=path)
    return Workspace(path, base)


async def _commit(clone: Path, name: str) -> str | None:
    """The full id of the commit `name` names in `clone`; None when it names none."""
    try:
        return (await git("rev-parse", "--verify", "--quiet", f"{name}^{{commit}}", cwd=clone, repo=clone)).strip()
    except WorkspaceError as exc:
        if exc.disk:
            raise
        return None


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
            await git(
                "clone", "--quiet", "--mirror", "--template=", url, str(partial), cwd=cache, network=True, where=cache
            )  # fmt: skip
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
    except WorkspaceError as exc:
        if exc.disk:
            raise
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


def lock_path(path: Path) -> Path:
    return path.with_name(path.name + LOCK_SUFFIX)


async def claim(path: Path) -> int:
    """Take the lock of the workspace `path` (making its parent): the descriptor that holds it, for `release`.
    Waits while a sweeper holds the lock (it is removing what a dead worker left at `path`)."""
    lock = lock_path(path)
    while True:
        path.parent.mkdir(parents=True, exist_ok=True)  # a sweeper or a clean-up may remove an empty parent
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except FileNotFoundError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            await asyncio.sleep(CLAIM_POLL)
            continue
        if _same_file(fd, lock):
            return fd
        os.close(fd)  # a sweeper removed the file while we opened it: make a new one


def release(path: Path, fd: int) -> None:
    """Let go of the workspace's lock (after removing or keeping the workspace)."""
    lock = lock_path(path)
    try:
        if _same_file(fd, lock):
            lock.unlink()
    except OSError:
        pass
    finally:
        os.close(fd)


def sweep(root: Path, own: Path | None = None) -> list[Path]:
    """Remove every workspace in `root` whose lock nobody holds (its worker died) but the caller's `own` (where
    `flock` is a POSIX lock, as on NFS, a process's own lock does not keep itself out); the ones removed."""
    removed = []
    try:
        locks = sorted(root.glob("*" + LOCK_SUFFIX))
    except OSError:
        return []
    for lock in locks:
        if own is not None and lock == lock_path(own):
            continue
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its worker is alive
            if not _same_file(fd, lock):
                continue
            workspace = lock.with_name(lock.name.removesuffix(LOCK_SUFFIX))
            remove(workspace)
            lock.unlink()
            removed.append(workspace)
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed


def sweep_area(area: Path, own: Path | None = None) -> list[Path]:
    """`sweep` every folder of `area` (a node's `ram-batch`: one root per batch), removing a root the sweep left
    empty; the workspaces removed."""
    removed: list[Path] = []
    try:
        roots = [entry for entry in area.iterdir() if entry.is_dir()]
    except OSError:
        return []
    for root in roots:
        swept = sweep(root, own)
        if swept:
            with contextlib.suppress(OSError):
                root.rmdir()
        removed += swept
    return removed


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except FileNotFoundError:
        return False


async def git(
    *args: str,
    cwd: Path,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
    repo: Path | None = None,
    network: bool = False,
    where: Path | None = None,
) -> str:
    """Run git; its stdout, or WorkspaceError with the command and the end of its stderr. `repo`: the clone to work
    in, named to git explicitly; `network`: a fetch from a URL (the only kind that reads the user's global config);
    `where`: the folder it writes in, for the message when the disk is full (default: `repo`, else `cwd`)."""
    if network:
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | {"GIT_TERMINAL_PROMPT": "0"}
    else:
        full_env = isolated_env()
    full_env["LC_ALL"] = "C"  # git's words for a full disk, as `disk.from_text` knows them
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
        text = err.decode(errors="replace")
        detail = text.strip().splitlines()
        code = from_text(text)
        raise WorkspaceError(
            f"git {args[0]} failed: {detail[-1] if detail else f'exit {process.returncode}'}",
            disk=describe(code, where or repo or cwd) if code is not None else None,
        )
    return out.decode(errors="replace")


async def run_commands(
    commands: Sequence[str], cwd: Path, argv: Callable[[str, Path], list[str]] | None = None
) -> CommandResult:
    """Run `commands` in order with bash in `cwd` (`argv`: the command line that runs one there, e.g. in the task's
    container), stopping at the first that fails; cancelling kills the running one (its whole process group)."""
    from ..tools.shell_env import guard_own_process

    guard_own_process()  # a task's commands may not read the worker's memory or environment (its keys)
    env = {name: value for name, value in os.environ.items() if name not in CREDENTIALS}
    output = ""
    for command in commands:
        process = await asyncio.create_subprocess_exec(
            *(argv(command, cwd) if argv is not None else ("/bin/bash", "-c", command)), cwd=cwd, env=env,
            start_new_session=True,
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
