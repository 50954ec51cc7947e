"""Snapshots of a workspace in a git repository, for seeing what a Bash command changed and putting it back.

`snapshot()` records the workspace's tracked and untracked files (not the ignored ones) as a tree in the
repository's object store: `git add -A` and `git write-tree` with `GIT_INDEX_FILE` pointing at a private index in
the checkpoint store. The user's index, branches, refs and stash are never touched; the objects are unreachable
loose objects, which git keeps at least two weeks (`gc.pruneExpire`) and then may prune. The private index starts
as a copy of the user's (so only files changed since are hashed) and stays warm between snapshots. `changes(a, b)`
lists what differs between two snapshots; `blob` reads a file's content back as the work tree holds it (git's
filters applied for its path, as `git checkout` would).

Every git command runs with `core.fsmonitor` and hooks off: a snapshot must not run a program the repository
configures.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

import msgspec

GIT_OPTIONS = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.quotePath=false")


class GitFailed(Exception):
    """A git command failed; the message is git's last line."""


class TreeChange(msgspec.Struct, frozen=True):
    """One path that differs between two snapshots."""

    rel: str
    """Relative to the repository root."""
    old_mode: int
    old_id: str
    """The blob before (all zeros: the path did not exist)."""
    new_mode: int
    new_id: str


ZERO = "0" * 40


class GitSnapshots:
    """Snapshots of `workspace` through the private index `index` (None until the repository is known)."""

    def __init__(self, workspace: Path, index: Path) -> None:
        self.workspace = workspace
        self.index = index
        self._root: Path | bool | None = False  # False: not looked up yet

    async def root(self) -> Path | None:
        """The repository's work tree root, or None when the workspace is not in a git work tree (or no git)."""
        if self._root is False:
            try:
                top = (await self._git("rev-parse", "--show-toplevel", index=False)).strip()
                self._root = Path(top.decode()).resolve() if top else None
            except (GitFailed, OSError):
                self._root = None
        return self._root if isinstance(self._root, Path) else None

    async def snapshot(self) -> str:
        """The id of a tree holding the workspace as it is now."""
        if not self.index.exists():
            await self._seed_index()
        try:
            await self._git("add", "-A", "--", ".")
        except GitFailed:
            self.index.unlink(missing_ok=True)  # a copied index git does not like (split index, …): start afresh
            await self._git("add", "-A", "--", ".")
        return (await self._git("write-tree")).strip().decode()

    async def changes(self, before: str, after: str) -> list[TreeChange]:
        """The paths under the workspace that differ between two snapshots."""
        raw = await self._git("diff-tree", "-r", "-z", "--no-renames", before, after, "--", ".")
        fields = raw.split(b"\x00")
        out: list[TreeChange] = []
        for meta, path in zip(fields[0::2], fields[1::2], strict=False):
            parts = meta.lstrip(b":").split()
            if len(parts) < 4:
                continue
            old_mode, new_mode, old_id, new_id = (
                int(parts[0], 8),
                int(parts[1], 8),
                parts[2].decode(),
                parts[3].decode(),
            )
            out.append(TreeChange(os.fsdecode(path), old_mode, old_id, new_mode, new_id))
        return out

    async def blob(self, blob_id: str, rel: str) -> bytes:
        """A blob's content as the work tree would hold it at `rel`."""
        return await self._git("cat-file", "--filters", f"--path={rel}", blob_id, index=False)

    async def _seed_index(self) -> None:
        """Start from a copy of the user's index (read, never written), so unchanged files are not hashed again."""
        self.index.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError, GitFailed):
            found = await self._git("rev-parse", "--path-format=absolute", "--git-path", "index", index=False)
            user_index = Path(found.decode().strip())
            if user_index.is_file():
                import shutil

                shutil.copyfile(user_index, self.index)

    async def _git(self, *args: str, index: bool = True) -> bytes:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        if index:
            env["GIT_INDEX_FILE"] = str(self.index)
        env["GIT_OPTIONAL_LOCKS"] = "0"
        process = await asyncio.create_subprocess_exec(
            "git", *GIT_OPTIONS, *args,
            cwd=self.workspace, env=env,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await process.communicate()
        if process.returncode != 0:
            lines = err.decode("utf-8", "replace").strip().splitlines()
            raise GitFailed(lines[-1] if lines else f"git {args[0]} exited {process.returncode}")
        return out
