"""Repositories travel with the task: a local repository reaches a Ray worker on a node that cannot see the driver's
disk as a git bundle in Ray's object store.

On the driver (`pack`), once per repository — a local path or a `file://` URL, both the driver's disk — a bare
clone of ours (`--template=`, ram's safe git settings: nothing of the repository's config or hooks runs) resolves
every base commit its tasks name, exactly as a worker would in its clone, and bundles the history of those commits
only (`refs/ram/<commit>`). The driver puts the bundle in the object store once (`ray.put`) and hands the reference
to each of the repository's tasks inside a list, so Ray does not fetch it for a task: a node fetches it once, for
its first task of that repository, and keeps the unpacked copy for the others.

On the node (`receive`), one worker at a time per bundle (a lock beside it): the bytes are checked against the
SHA-256 and size the driver measured, `git bundle verify` checks them as a bundle, they are fetched into a bare
repository of ours, and every commit the driver resolved must be in it (`cat-file -e`) before the copy is renamed
into place — only a verified copy is ever used. Tasks clone from it as from any local repository
(`workspace.create`). The copies live in `<batch root>/.shipped` on each node; the driver's sweep at the end of the
batch removes them (`remove_shipped`), and a batch run again in the same DIR uses the same root.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import msgspec

from . import workspace as ws
from .tasks import BatchTask

SHIPPED = ".shipped"
"""The folder of a batch's root (on each node) holding the repositories that arrived."""
REF_PREFIX = "refs/ram/"


class Shipment(msgspec.Struct, frozen=True):
    """What a task is told of the bundle its repository travels as (the bundle itself goes by reference)."""

    sha256: str
    size: int
    commits: tuple[str, ...]
    """Every commit the bundle must hold (the base commits of the repository's tasks, resolved)."""


class Packed(msgspec.Struct, frozen=True):
    """A repository packed for the cluster: the bundle, what it holds, and each base commit name's commit."""

    data: bytes
    shipment: Shipment
    resolved: dict[str, str]
    """A task's `base_commit` (`HEAD` for none) → the full commit id it names."""
    unresolved: dict[str, str]
    """A name that names no commit → the task's error, as a worker would say it."""


class ShippingError(Exception):
    """The repository could not be packed, or did not arrive intact; the message says which and why."""


def local_path(repo: str) -> Path | None:
    """The driver's path of `repo` when it is on the driver's disk (a path or a `file://` URL); None for others."""
    if repo.startswith("file://"):
        return Path(unquote(urlparse(repo).path))
    if "://" in repo or "@" in repo.split("/")[0]:
        return None
    return Path(repo)


async def pack(repo: str, names: Iterable[str | None], scratch: Path) -> Packed:
    """Bundle the history of the commits `names` name in `repo` (None: its HEAD), working in `scratch` (removed)."""
    path = local_path(repo)
    if path is None:
        raise ShippingError(f"{repo} is not on this machine's disk")
    if not Path(path, ".git").exists() and not Path(path, "HEAD").is_file():
        raise ShippingError(f"{repo} is not a git repository")
    bare = scratch / "repo.git"
    bundle = scratch / "repo.bundle"
    try:
        try:
            await ws.git(
                "clone", "--quiet", "--bare", "--template=", str(path), str(bare), cwd=Path(os.sep), where=scratch
            )  # fmt: skip
            resolved, unresolved = {}, {}
            for name in dict.fromkeys(name or "HEAD" for name in names):
                commit = await _resolve(bare, name)
                if commit is None:
                    missing = f"base_commit {name} is not a commit in {repo}"
                    unresolved[name] = missing if name != "HEAD" else f"{repo} has no commit yet"
                else:
                    resolved[name] = commit
            commits = tuple(dict.fromkeys(resolved.values()))
            if not commits:
                return Packed(b"", Shipment("", 0, ()), resolved, unresolved)
            for commit in commits:
                await ws.git("update-ref", REF_PREFIX + commit, commit, cwd=bare, env={"GIT_DIR": str(bare)})
            refs = [REF_PREFIX + commit for commit in commits]
            await ws.git("bundle", "create", "--quiet", str(bundle), *refs, cwd=bare, env={"GIT_DIR": str(bare)})
        except ws.WorkspaceError as exc:
            raise ShippingError(f"{repo} could not be packed for the cluster: {exc}") from None
        data = await asyncio.to_thread(bundle.read_bytes)
    finally:
        await asyncio.to_thread(shutil.rmtree, scratch, True)
    shipment = Shipment(hashlib.sha256(data).hexdigest(), len(data), commits)
    return Packed(data, shipment, resolved, unresolved)


async def _resolve(bare: Path, name: str) -> str | None:
    try:
        found = await ws.git(
            "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}", cwd=bare, env={"GIT_DIR": str(bare)}
        )  # fmt: skip
        return found.strip()
    except ws.WorkspaceError as exc:
        if exc.disk:
            raise
        return None


async def receive(shipment: Shipment, fetch: Callable[[], Awaitable[bytes]], root: Path) -> Path:
    """The node's verified copy of the shipped repository under `root` (a batch's root), fetching the bundle with
    `fetch` when this node has no copy yet; ShippingError when what arrived is not what the driver sent."""
    folder = root / SHIPPED
    final = folder / f"{shipment.sha256}.git"
    await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
    lock = await asyncio.to_thread(_lock, folder / f"{shipment.sha256}.lock")
    try:
        if final.is_dir():
            return final
        data = await fetch()
        digest = hashlib.sha256(data).hexdigest()
        if len(data) != shipment.size or digest != shipment.sha256:
            raise ShippingError(
                f"the repository's bundle arrived damaged ({len(data)} bytes, sha256 {digest[:12]}; "
                f"sent: {shipment.size} bytes, sha256 {shipment.sha256[:12]})"
            )
        partial = folder / f"{shipment.sha256}.partial"
        bundle = folder / f"{shipment.sha256}.bundle"
        await asyncio.to_thread(shutil.rmtree, partial, True)
        await asyncio.to_thread(bundle.write_bytes, data)
        del data
        try:
            env = {"GIT_DIR": str(partial)}
            await ws.git("init", "--quiet", "--bare", "--template=", str(partial), cwd=folder)
            await ws.git("bundle", "verify", "--quiet", str(bundle), cwd=folder, env=env)
            await ws.git("fetch", "--quiet", str(bundle), f"{REF_PREFIX}*:refs/heads/ram/*", cwd=folder, env=env)
            for commit in shipment.commits:
                await ws.git("cat-file", "-e", f"{commit}^{{commit}}", cwd=folder, env=env)
            await ws.git("symbolic-ref", "HEAD", f"refs/heads/ram/{shipment.commits[0]}", cwd=folder, env=env)
        except ws.WorkspaceError as exc:
            await asyncio.to_thread(shutil.rmtree, partial, True)
            if exc.disk:
                raise
            raise ShippingError(f"the repository's bundle did not verify on this node: {exc}") from None
        finally:
            with contextlib.suppress(OSError):
                bundle.unlink()
        partial.rename(final)
        return final
    finally:
        os.close(lock)


def _lock(path: Path) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def remove_shipped(root: Path) -> None:
    """Remove the repositories that arrived for the batch whose root is `root` (and the root, when that empties it)."""
    shutil.rmtree(root / SHIPPED, ignore_errors=True)
    with contextlib.suppress(OSError):
        root.rmdir()


def scratch_dir() -> Path:
    """A fresh folder on the driver for packing one repository."""
    return Path(tempfile.mkdtemp(prefix="ram-ship-"))


class Shipper:
    """The driver's side: each local repository of the batch packed and put in the object store once, when its
    first task is about to start, and let go of when its last task is done."""

    def __init__(self, tasks: Iterable[BatchTask], put: Callable[[bytes], Any]) -> None:
        self.put = put
        self._names: dict[str, list[str | None]] = {}
        self._left: Counter[str] = Counter()
        for task in tasks:
            if local_path(task.repo) is not None:
                self._names.setdefault(task.repo, []).append(task.base_commit)
                self._left[task.repo] += 1
        self._packed: dict[str, tuple[Any, Packed] | str] = {}
        self.repositories = 0
        """Repositories packed and put so far."""
        self.sent_bytes = 0
        """Their bundles' bytes, all together."""
        self.packing_s = 0.0
        """Seconds spent packing them (on the driver)."""

    async def ready(self, task: BatchTask) -> tuple[BatchTask, Shipment | None, Any]:
        """The task as it is sent (its base commit resolved), what its bundle is, and the bundle's reference (None
        for a repository that is not on this disk: a URL); ShippingError with the task's error."""
        if task.repo not in self._names:
            return task, None, None
        entry = self._packed.get(task.repo)
        if entry is None:
            started = time.monotonic()
            try:
                packed = await pack(task.repo, self._names[task.repo], scratch_dir())
            except ShippingError as exc:
                entry = str(exc)
            else:
                ref = self.put(packed.data) if packed.shipment.commits else None
                self.repositories += 1
                self.sent_bytes += packed.shipment.size
                entry = (ref, msgspec.structs.replace(packed, data=b""))
            self.packing_s += time.monotonic() - started
            self._packed[task.repo] = entry
        if isinstance(entry, str):
            raise ShippingError(entry)
        ref, packed = entry
        name = task.base_commit or "HEAD"
        if name in packed.unresolved:
            raise ShippingError(packed.unresolved[name])
        return msgspec.structs.replace(task, base_commit=packed.resolved[name]), packed.shipment, ref

    def done(self, task: BatchTask) -> None:
        """The task will not be sent again: its repository's bundle goes once no task of it is left."""
        if task.repo in self._left:
            self._left[task.repo] -= 1
            if self._left[task.repo] <= 0:
                del self._left[task.repo]
                self._packed.pop(task.repo, None)
