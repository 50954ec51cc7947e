"""Where a task's commands run: this machine (the default), or a container started from the task's `image`.

Two kinds behind one seam (`TaskEnvironment`): `LocalMachine` runs setup, test and the agent's Bash commands on the
worker's machine as before (under the OS sandbox when the session has one); `Container` starts the image with
podman (`podman run -d --network none`) with the workspace bind-mounted at the same path, so that every path the
agent and the permission rules see is the same inside and out, and runs each command in it with `podman exec`:
setup and test commands, and the Bash tool's commands (foreground and background: `ContainerRuntime` takes the place
of the sandbox's bwrap launcher). Read, Write, Edit, Glob and Grep work on the same files, through the bind mount,
from the host side.

What applies where: the permission policy decides every tool call on the host as it does without a container (the
command text and the paths are the same). The OS sandbox (bwrap) does not apply inside a container — the container
is the boundary: its own root filesystem, no network, and of the host only the workspace and a private temp dir
(where the Bash tool keeps its cwd file). A Bash call stopped at its time limit kills `podman exec` on the host;
what it started inside goes with the container at the end of the task.

The container's name is derived from the workspace's path (`container_name`), so a worker killed mid-task leaves
nothing for long: the sweep that removes its workspace removes its container too (`remove_containers`), and the
next run of the same task removes it before starting its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Protocol

from ..permissions.rules.ruleset import RuleSet
from ..sandbox.handle import Sandbox
from ..sandbox.runtime import Launch, Runtime
from ..sandbox.settings import SandboxConfig
from ..tools.builtin.bash_common import bash_path

PODMAN = "podman"
START_LIMIT = 120.0
"""Seconds `podman run` may take (an image on a slow disk) before the task fails."""
PASSED_INTO = ("PAGER", "GIT_PAGER", "GIT_TERMINAL_PROMPT", "LC_ALL", "LANG")
"""Variables of a command's environment that are passed into the container (besides ram's own mark)."""


class EnvironmentError_(Exception):
    """The environment could not be started; the message says why in one line."""


class TaskEnvironment(Protocol):
    """Where one task's commands run."""

    async def start(self, workspace: Path) -> None:
        """Make it ready for commands in `workspace`."""
        ...

    def command(self, command: str, cwd: Path) -> list[str]:
        """The argv that runs the shell `command` in `cwd` there."""
        ...

    def bash_sandbox(self, workspace: Path) -> Sandbox | None:
        """What the Bash tool runs its commands through there; None: as the session set it up."""
        ...

    def close(self) -> None:
        """Stop it and remove what it made (never raises)."""
        ...


class LocalMachine:
    """The worker's own machine."""

    async def start(self, workspace: Path) -> None:
        return None

    def command(self, command: str, cwd: Path) -> list[str]:
        return ["/bin/bash", "-c", command]

    def bash_sandbox(self, workspace: Path) -> Sandbox | None:
        return None

    def close(self) -> None:
        return None


def container_name(workspace: Path) -> str:
    """The name of the container of the task working in `workspace` (the same in every run)."""
    return "ram-batch-" + hashlib.sha1(str(workspace).encode()).hexdigest()[:16]


def podman() -> str | None:
    return shutil.which(PODMAN)


class Container:
    """A podman container started from `image`, with the workspace and a private temp dir bind-mounted."""

    def __init__(self, image: str) -> None:
        self.image = image
        self.name = ""
        self.temp: Path | None = None

    async def start(self, workspace: Path) -> None:
        program = podman()
        if program is None:
            raise EnvironmentError_(f"the task's image {self.image} needs podman, and there is none on PATH")
        self.name = container_name(workspace)
        self.temp = Path(tempfile.mkdtemp(prefix="ram-container-"))
        await asyncio.to_thread(_remove, [self.name])  # what a killed run of the same task left
        argv = [program, "run", "--detach", "--name", self.name, "--network", "none", "--workdir", str(workspace)]
        argv += ["--volume", f"{workspace}:{workspace}", "--volume", f"{self.temp}:{self.temp}"]
        argv += [self.image, "sleep", "infinity"]
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        try:
            _, err = await asyncio.wait_for(process.communicate(), START_LIMIT)
        except TimeoutError:
            process.kill()
            raise EnvironmentError_(f"podman run {self.image} did not start within {START_LIMIT:g} s") from None
        if process.returncode != 0:
            lines = err.decode(errors="replace").strip().splitlines()
            raise EnvironmentError_(f"podman run {self.image} failed: {lines[-1] if lines else process.returncode}")

    def command(self, command: str, cwd: Path) -> list[str]:
        return [podman() or PODMAN, "exec", "--workdir", str(cwd), self.name, "/bin/bash", "-c", command]

    def bash_sandbox(self, workspace: Path) -> Sandbox | None:
        assert self.temp is not None, "start() first"
        return ContainerSandbox(workspace, ContainerRuntime(self.name, self.temp))

    def close(self) -> None:
        if self.name:
            _remove([self.name])
        if self.temp is not None:
            shutil.rmtree(self.temp, ignore_errors=True)


def for_task(image: str | None) -> TaskEnvironment:
    """The environment a task asks for: its `image` in a container, else this machine."""
    return Container(image) if image else LocalMachine()


def remove_containers(workspaces: Iterable[Path]) -> None:
    """Remove the containers of tasks whose workspaces were swept (their workers died)."""
    names = [container_name(path) for path in workspaces]
    if names and podman() is not None:
        _remove(names)


def _remove(names: list[str]) -> None:
    program = podman()
    if program is None:
        return
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(
            [program, "rm", "--force", "--ignore", "--time", "0", *names],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
        )  # fmt: skip


class ContainerRuntime(Runtime):
    """The Bash tool's launcher for a container: `podman exec` in place of bwrap, the command's pipes its output."""

    def __init__(self, name: str, temp: Path) -> None:  # not Runtime's: it makes bwrap's directories
        self.name = name
        self.temp = temp
        self._calls = 0

    @property
    def temp_dir(self) -> Path:
        """Bind-mounted at the same path: the cwd file the command writes inside is read outside."""
        return self.temp

    async def start_resident(
        self, start: Path, env: Mapping[str, str], out_w: int, err_w: int, script: Callable[[str], str], cwd_file: Path
    ) -> None:
        """Never: each command is a `podman exec` (the container is what stays)."""
        return None

    def launch(
        self, start: Path, env: Mapping[str, str], out_w: int, err_w: int, script: Callable[[str], str], cwd_file: Path
    ) -> Launch:
        passed = [f"--env={name}={value}" for name, value in env.items() if name in PASSED_INTO or "RAM" in name]
        podman_argv = [podman() or PODMAN, "exec", "--workdir", str(start), *passed, self.name]
        podman_argv += ["/bin/bash", "-c", script(str(cwd_file))]
        self._calls += 1
        stderr_path = self.temp / f".podman-{self._calls}.err"
        stderr = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        launcher = f'exec 1>&{out_w} 2>&{err_w} {out_w}>&- {err_w}>&-; exec "$@"'
        argv = [bash_path(), "-c", launcher, "ram-container", *podman_argv]
        return Launch(argv, dict(env), (out_w, err_w), stderr, stderr_path, -1, -1, [], [])

    def started(self, launch: Launch) -> None:
        with contextlib.suppress(OSError):
            os.close(launch.stderr)

    def finished(self, launch: Launch, output: str, failed: bool, silent: bool) -> list[str]:
        said = ""
        if launch.stderr_path is not None:
            with contextlib.suppress(OSError):
                said = launch.stderr_path.read_text(encoding="utf-8", errors="replace").strip()
                launch.stderr_path.unlink()
        return [f"Container: {said.splitlines()[-1]}"] if said else []

    def describe(self) -> str:
        return f"(Commands run in the task's container {self.name}: no network; the workspace is shared.)"


class ContainerSandbox(Sandbox):
    """What the Bash tool holds for a task in a container: its runtime is always the container's."""

    def __init__(self, workspace: Path, runtime: ContainerRuntime) -> None:
        super().__init__(SandboxConfig(mode="off"), workspace, RuleSet)
        self._container = runtime

    def runtime(self) -> tuple[Runtime | None, str]:
        return self._container, ""
