"""The sandbox at work: one session's private directories, and what starting one command under bwrap takes.

Per session (made at the first command, removed when ram exits): a private temp dir (the commands' `/tmp`) and the
empty stand-ins hidden paths are covered with. Per command: the Read deny rules are globbed afresh (`masks`) and
the mounts planned (`layout`); a foreground Bash command then runs in the resident sandbox of that plan
(`start_resident`, see `resident`), and otherwise — a background command, or no resident to be had — under a bwrap
of its own, started as `bwrap --args FD -- /bin/bash -c SCRIPT` (`launch`):

- bwrap's own stdout is /dev/null and its stderr a file of ours, so what bwrap itself says (a mount it could not
  make) is told apart from the command's output and reported as the sandbox's;
- the command's pipes reach a small launcher bash as two extra descriptors, which it moves onto 1 and 2; bwrap's
  init (PID 1 of the namespace, which lives as long as a background job does) keeps neither, so the pipes close when
  the command and its own children are done, as without the sandbox;
- the launcher reads the script from a third descriptor and `exec`s `/bin/bash -c SCRIPT`: the command runs exactly
  as without the sandbox (same `$0`, same error messages), and bwrap's own command line — which its init keeps for
  as long as a background job runs — holds only the launcher, never the command;
- bwrap reports a command killed by signal N as exit code 128+N (as a shell does), so where the plain Bash tool
  says `Killed by signal SIGKILL` a command under a bwrap of its own says `Exit code 137` (one in a resident
  sandbox, whose helper reports how it ended, reads as without the sandbox);
- a guarded file (`.mcp.json`, a settings file) that did not exist before the command and does after it was
  created by it (or meanwhile by you): it is moved aside to `NAME.sandbox-blocked`, and the result says so. A
  background job could still create one after its command returned: that is not caught.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

from . import bwrap, layout
from .masks import frozen_paths, hidden_paths
from .resident import Resident, Started, Unavailable
from .settings import SandboxConfig, user_settings_file

if TYPE_CHECKING:
    from ..permissions.rules import RuleSet

BLOCKED_SUFFIX = ".sandbox-blocked"
_ERROR_HINTS = (
    "Read-only file system",
    "Network is unreachable",
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
)
"""Error text that a command hitting the sandbox's walls typically prints."""
RESIDENT = os.environ.get("RAM_SANDBOX_RESIDENT", "1") != "0"
"""Whether foreground commands run in a resident sandbox (`resident`); `RAM_SANDBOX_RESIDENT=0` gives each its own
bwrap, as before (for comparing the two)."""
RESIDENT_FAILURES = 2
"""After this many resident sandboxes failed to start, the session stops trying."""


class Owner(Protocol):
    """What the runtime reads of the sandbox that made it (`handle.Sandbox`, which imports this module, never the
    other way round)."""

    config: SandboxConfig
    workspace: Path
    rules: Callable[[], RuleSet]
    """The permission rules as they are now."""
    env: Mapping[str, str]
    notes_said: set[str]
    """Lines already shown this session (each is shown once)."""
    notify: Callable[[str], None]


class Launch(NamedTuple):
    """How to start one command, and what to look at when it is done."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...]
    stderr: int
    """bwrap's own stderr (a file of ours; -1 in a resident sandbox, whose bwrap is already running)."""
    stderr_path: Path | None
    args_fd: int
    script_fd: int
    missing: list[Path]
    """Guarded files absent before the command."""
    notes: list[str]
    """Status lines known before the command runs."""
    job: Started | None = None
    """The command, when it runs in a resident sandbox."""


class _Prepared(NamedTuple):
    args: list[str]
    """bwrap's namespaces and mounts (all but the working directory)."""
    start: Path
    inside_cwd_file: str
    tmp_inside: str
    missing: list[Path]
    notes: list[str]


class Runtime:
    """The session's sandbox directories and the bwrap found to work."""

    def __init__(self, sandbox: Owner, binary: str) -> None:
        self.sandbox = sandbox
        self.binary = binary
        state = Path(tempfile.mkdtemp(prefix="ram-sandbox-"))
        self.state = state
        tmp = state / "tmp"
        tmp.mkdir(mode=0o700)
        hidden_dir, empty_dir, hidden_file = state / "hidden", state / "empty", state / "hidden-file"
        hidden_dir.mkdir(mode=0o000)
        empty_dir.mkdir(mode=0o555)
        hidden_file.touch(mode=0o000)
        self.props = layout.Props(tmp, hidden_dir, hidden_file, empty_dir)
        self._calls = 0
        self._residents: list[Resident] = []
        """The resident sandboxes started, the one in use last (those before it may still hold background jobs)."""
        self._failed = 0
        self._no_resident = not RESIDENT
        self._starting: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        atexit.register(_remove, state, self._residents)  # after `leftovers` (registered later) named what runs

    @property
    def temp_dir(self) -> Path:
        """The private temp dir on the host (where the Bash tool keeps its cwd file)."""
        return self.props.private_tmp

    async def start_resident(
        self, start: Path, env: Mapping[str, str], out_w: int, err_w: int, script: Callable[[str], str], cwd_file: Path
    ) -> tuple[Launch, Started] | None:
        """`script(cwd file as seen inside)` started in the resident sandbox of its mount plan (started or replaced
        first when there is none for it); None when that cannot be done, and the command is to get a bwrap of its
        own (`launch`)."""
        if self._no_resident:
            return None
        prepared = self._prepare(start, cwd_file)
        bash = _bash()
        argv = [bash, "-c", script(prepared.inside_cwd_file)]
        inner = dict(env, TMPDIR=prepared.tmp_inside, PWD=str(prepared.start))
        for _attempt in range(2):  # a resident found stale is replaced once
            try:
                resident = await self._resident(prepared.args)
                job = await resident.run(argv, inner, prepared.start, out_w, err_w)
            except Unavailable:
                continue
            return Launch([], inner, (), -1, None, -1, -1, prepared.missing, prepared.notes, job), job
        return None

    async def _resident(self, plan: list[str]) -> Resident:
        loop = asyncio.get_running_loop()
        if self._starting is None or self._starting[0] is not loop:
            self._starting = (loop, asyncio.Lock())
        async with self._starting[1]:  # commands run at once (subagents) wait for one resident, not start one each
            current = self._residents[-1] if self._residents else None
            if current is not None and current.serves(plan):
                return current
            if current is not None:
                current.retire()  # its commands' background jobs live on in it until they end or ram exits
            self._residents[:] = [old for old in self._residents if not old.ended()]
            return await self._new_resident(plan)

    async def _new_resident(self, plan: list[str]) -> Resident:
        stderr = os.open(self.state / "resident.err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        try:
            resident = await Resident.start(self.binary, plan, {"PATH": os.defpath}, stderr)
        except Unavailable:
            self._failed += 1
            if self._failed >= RESIDENT_FAILURES:
                self._no_resident = True  # this machine cannot run one: stop trying
            raise
        finally:
            os.close(stderr)
        self._residents.append(resident)
        return resident

    def close(self) -> None:
        """The session is over: its residents take no more commands (each ends once the background jobs in it do;
        what is left at exit is stopped then)."""
        for resident in self._residents:
            resident.retire()
        self._residents[:] = [old for old in self._residents if not old.ended()]

    def launch(
        self, start: Path, env: Mapping[str, str], out_w: int, err_w: int, script: Callable[[str], str], cwd_file: Path
    ) -> Launch:
        """bwrap's command line for `script(cwd file as seen inside)`, run in `start` with `env`, writing to the
        pipes `out_w` and `err_w`: a bwrap of the command's own."""
        prepared = self._prepare(start, cwd_file)
        args = [*prepared.args, "--chdir", str(prepared.start)]
        args_fd = bwrap.args_file(args)
        script_fd = bwrap.args_file([script(prepared.inside_cwd_file)])  # NUL-terminated: what `read -d ''` stops at
        self._calls += 1
        stderr_path = self.state / f"bwrap-{self._calls}.err"
        stderr = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        bash = _bash()
        launcher = (
            f"exec 1>&{out_w} 2>&{err_w} {out_w}>&- {err_w}>&-; "
            f"IFS= read -r -d '' __ram_script <&{script_fd}; exec {script_fd}<&- {bash} -c \"$__ram_script\""
        )
        argv = bwrap.command_args(self.binary, args_fd, [bash, "-c", launcher])
        inner = dict(env)
        inner["TMPDIR"] = prepared.tmp_inside
        fds = (out_w, err_w, args_fd, script_fd)
        inner["PWD"] = str(prepared.start)
        return Launch(argv, inner, fds, stderr, stderr_path, args_fd, script_fd, prepared.missing, prepared.notes)

    def guarded_missing(self, roots: list[Path]) -> list[Path]:
        """The guarded files absent before a command (moved aside after it if it created them)."""
        from ..permissions.policy import GUARDED_FILES

        return layout.guarded_missing(roots, sorted(GUARDED_FILES))

    def _prepare(self, start: Path, cwd_file: Path) -> _Prepared:
        """The namespaces and mounts one command gets (planned afresh: deny rules are globbed now), where it starts,
        and what to look at after it."""
        sandbox, config = self.sandbox, self.sandbox.config
        from ..permissions.policy import GUARDED_FILES

        rules = sandbox.rules()
        hidden = hidden_paths(rules, sandbox.workspace)
        frozen = frozen_paths(rules, sandbox.workspace) if config.mode == "workspace-write" else None
        plan = layout.plan(
            config.mode,
            sandbox.workspace,
            config.writable,
            self.props,
            hidden,
            sorted(GUARDED_FILES),
            user_settings_file(sandbox.env).parent,
            frozen,
            home=_home(sandbox.env),
        )
        for note in plan.notes:
            self._say(note)
        roots = layout.writable_roots(config.mode, sandbox.workspace, config.writable)
        missing = self.guarded_missing(roots)
        inside_cwd_file = f"{plan.tmp_inside}/{cwd_file.relative_to(self.temp_dir)}"
        notes: list[str] = []
        if any(start == d or d in start.parents for d in hidden.directories):  # a deny rule now covers the cwd
            start = sandbox.workspace
            notes.append(f"Shell cwd was reset to {start}")
        args = [*bwrap.namespace_args(config.network), *bwrap.base_mounts(config.network), *plan.args]
        return _Prepared(args, start, inside_cwd_file, plan.tmp_inside, missing, notes)

    def started(self, launch: Launch) -> None:
        """bwrap runs (or failed to): our copies of its descriptors can go."""
        for fd in (launch.args_fd, launch.script_fd, launch.stderr):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)

    def finished(self, launch: Launch, output: str, failed: bool, silent: bool) -> list[str]:
        """Status lines about the sandbox for a command that ended with `output` (`failed`: non-zero exit;
        `silent`: it printed nothing)."""
        lines = list(launch.notes)
        said = ""
        if launch.stderr_path is not None:
            try:
                said = launch.stderr_path.read_text(encoding="utf-8", errors="replace").strip()
                launch.stderr_path.unlink()
            except OSError:
                said = ""
        if said:  # bwrap's own words: a mount or namespace it could not make
            ran = not (failed and silent)
            lines.append(f"Sandbox: {said.splitlines()[-1]}" + ("" if ran else " (the command did not run)"))
        if launch.job is not None and launch.job.lost:
            lines.append("Sandbox: how the command ended is not known (the sandbox's helper stopped before it did)")
        for path in launch.missing:
            if os.path.lexists(path):
                lines.append(self._set_aside(path))
        if failed and not said and any(hint in output for hint in _ERROR_HINTS):
            lines.append(self.describe())
        return lines

    def describe(self) -> str:
        """One line telling the model where it runs (added when a command seems to have hit a wall)."""
        config = self.sandbox.config
        if config.mode == "read-only":
            where = "nothing is writable but /tmp"
        else:
            where = "only the workspace" + (", the --add-dir directories" if config.writable else "") + " and /tmp "
            where += "are writable"
        network = "the network is reachable" if config.network else "there is no network"
        return f"(Commands run in an OS sandbox ({config.mode}): {where}; {network}.)"

    def _set_aside(self, path: Path) -> str:
        target = path.with_name(path.name + BLOCKED_SUFFIX)
        number = 1
        while os.path.lexists(target):
            number += 1
            target = path.with_name(f"{path.name}{BLOCKED_SUFFIX}-{number}")
        shown = os.path.relpath(path, self.sandbox.workspace)
        try:
            path.rename(target)
        except OSError as exc:
            return f"Sandbox: the command created {shown}, which the sandbox forbids, and it could not be moved ({exc})"
        return (
            f"Sandbox: the command created {shown}, which can make later sessions or git run programs; it was moved "
            f"to {target.name}. Create it with the Write tool instead (that asks)."
        )

    def _say(self, line: str) -> None:
        if line not in self.sandbox.notes_said:
            self.sandbox.notes_said.add(line)
            self.sandbox.notify(line)


def _remove(state: Path, residents: list[Resident]) -> None:
    for resident in residents:
        resident.stop()
    with contextlib.suppress(OSError):
        (state / "hidden").chmod(0o700)  # or a user other than root could not remove it
    shutil.rmtree(state, ignore_errors=True)


def _bash() -> str:
    return "/bin/bash" if os.path.exists("/bin/bash") else shutil.which("bash") or "/bin/bash"


def _home(env: Mapping[str, str]) -> Path | None:
    """The user's home directory as commands will see `~` (HOME), or None when it is not an absolute path."""
    home = env.get("HOME", "")
    return Path(home) if home and os.path.isabs(home) else None
