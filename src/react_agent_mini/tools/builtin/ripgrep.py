"""Finding the `rg` binary and running it: the engine behind Grep and Glob, which need it.

`rg` is looked for next to the running interpreter first (the `ripgrep` wheel, a required dependency, installs it
into the venv's `bin/`, which is not always on PATH), then on PATH; without it both tools answer with
`not_found`. It runs as an asyncio subprocess, never through a shell, with `--no-config` so a user's
RIPGREP_CONFIG_PATH cannot change what the model sees. Output has a ceiling, and the process is killed if the
caller is cancelled or the ceiling is reached.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import BinaryIO

import msgspec

COMMON_ARGS = (
    "--no-config",
    "--hidden",
    "--no-require-git",
    "--no-ignore-global",
    "--no-messages",
    "--null",
    "--color=never",
)
"""What every search passes: hidden files yes, .gitignore even outside a git repository, no global gitignore
(what the model sees does not depend on the user's git config), no per-file error noise, NUL after each path."""

SKIP_GIT = "--glob=!.git"
"""Passed after the caller's options: the last matching glob wins, so no user glob can re-include `.git/`."""

MAX_OUTPUT_BYTES = 256 * 1024 * 1024
"""rg is killed past this much output and the rest ignored: a search that large needs narrowing anyway."""
SIZE_POLL_SECONDS = 0.05
"""How often the output's size is checked against MAX_OUTPUT_BYTES."""


class RgResult(msgspec.Struct, frozen=True):
    """What one rg run produced."""

    returncode: int
    stdout: bytes
    stderr: str
    truncated: bool = False
    """True when the output ceiling was reached and rg was killed: stdout is incomplete."""


@functools.cache
def find_rg() -> str | None:
    """The path of an executable `rg`: beside `sys.executable`, else on PATH, else None."""
    name = "rg.exe" if os.name == "nt" else "rg"
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which(name)


def not_found(tool: str) -> str:
    """What Grep or Glob answers when there is no rg to run."""
    return (
        f"{tool} needs ripgrep (rg), which was found neither beside the Python interpreter nor on PATH. It comes "
        "with react-agent-mini (the ripgrep==14.1.0 package): reinstall react-agent-mini, or put rg on PATH."
    )


def not_started(tool: str, rg: str, exc: OSError) -> str:
    """What Grep or Glob answers when rg is there but cannot be started."""
    return f"{tool} could not start ripgrep ({rg}): {exc.strerror or exc}"


async def _watch_size(output: BinaryIO, limit: int, process: asyncio.subprocess.Process) -> None:
    """Polls the output file's size and kills rg once it passes `limit` (runs until then or cancelled)."""
    while True:
        await asyncio.sleep(SIZE_POLL_SECONDS)
        if os.fstat(output.fileno()).st_size > limit:
            _kill(process)
            return


async def run_rg(rg: str, options: list[str], paths: list[str], cwd: Path, *, limit: int | None = None) -> RgResult:
    """Run `rg <COMMON_ARGS> <options> --glob=!.git -- <paths>` in `cwd`. OSError if it cannot start.

    With no paths rg searches `cwd` and the paths in the output are relative to it, without a `./` prefix. rg is
    always given a path (`.` for `cwd`): given none, it searches its stdin instead whenever stdin is a regular file
    or a pipe, which is what a machine whose /dev/null is a plain file hands it (and it gets /dev/null anyway,
    never our own stdin). Its stdout goes to an unlinked temporary file rather than a pipe: rg then never waits
    for us to drain a 64 KiB pipe, which on a broad search made the whole call ~15% slower than rg alone."""
    limit = limit or MAX_OUTPUT_BYTES
    here = not paths
    if here:
        paths = ["."]
    with tempfile.TemporaryFile(prefix="ram-rg-") as output:
        process = await asyncio.create_subprocess_exec(
            rg,
            *COMMON_ARGS,
            *options,
            SKIP_GIT,
            "--",
            *paths,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=output,
            stderr=asyncio.subprocess.PIPE,
        )
        assert process.stderr is not None
        watcher = asyncio.ensure_future(_watch_size(output, limit, process))
        try:
            stderr = await process.stderr.read()  # small: --no-messages leaves only usage and pattern errors
            returncode = await process.wait()
        except BaseException:
            # Cancelled (the user interrupted the turn) or failed: never leave rg running behind us.
            if process.returncode is None:
                _kill(process)
                await asyncio.shield(process.wait())
            raise
        finally:
            watcher.cancel()
        truncated = os.fstat(output.fileno()).st_size > limit  # killed by the watcher, or done before it looked
        output.seek(0)
        stdout = output.read(limit) if truncated else output.read()
    if here:
        stdout = _without_dot_slash(stdout)
    return RgResult(returncode, stdout, stderr.decode("utf-8", "replace"), truncated)


def _without_dot_slash(stdout: bytes) -> bytes:
    """rg's output for the path `.` with the `./` taken off every path.

    With `--null`, a path starts the output, a line, or follows the NUL that ends the previous path; content lines
    never start with `./` (they start with a line number, or are `--`), so these are the only places it occurs."""
    if stdout.startswith(b"./"):
        stdout = stdout[2:]
    return stdout.replace(b"\n./", b"\n").replace(b"\0./", b"\0")


def _kill(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):  # it may have exited on its own meanwhile
        process.kill()
