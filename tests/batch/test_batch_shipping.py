"""Repositories that travel with their tasks (`batch.shipping`), with real git: the driver packs only the history
the tasks need, a node unpacks it once and uses only a copy that verified, and what arrived damaged or incomplete
is refused in one line."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from react_agent_mini.batch import shipping
from react_agent_mini.batch import workspace as ws

from .batch_support import git, make_repo


def _pack(repo: Path, *names: str | None, scratch: Path) -> shipping.Packed:
    return asyncio.run(shipping.pack(str(repo), names, scratch))


def test_a_repository_travels_as_the_history_its_tasks_need_and_arrives_once(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    base = make_repo(repo, 1)
    head = git("rev-parse", "HEAD", cwd=repo).strip()
    packed = _pack(repo, base, "v-missing", scratch=tmp_path / "scratch")
    assert not (tmp_path / "scratch").exists()
    assert packed.resolved == {base: base} and packed.shipment.commits == (base,)
    assert packed.unresolved == {"v-missing": f"base_commit v-missing is not a commit in {repo}"}
    fetched: list[int] = []

    async def fetch() -> bytes:
        fetched.append(1)
        return packed.data

    root = tmp_path / "node" / "batch"
    copy = asyncio.run(shipping.receive(packed.shipment, fetch, root))
    again = asyncio.run(shipping.receive(packed.shipment, fetch, root))
    assert copy == again and len(fetched) == 1  # the second task of the node uses the first one's copy
    clone = asyncio.run(ws.create(str(copy), base, tmp_path / "work", tmp_path / "cache"))
    assert clone.base == base and "return a - b" in (tmp_path / "work" / "calc.py").read_text()
    with pytest.raises(ws.WorkspaceError):  # the later commit stayed behind: only the needed history travels
        asyncio.run(ws.git("cat-file", "-e", f"{head}^{{commit}}", cwd=copy, env={"GIT_DIR": str(copy)}))
    shipping.remove_shipped(root)
    assert not root.exists()


def test_the_head_of_a_file_url_is_packed_and_a_directory_that_is_no_repository_is_one_line(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_repo(repo, 2)
    head = git("rev-parse", "HEAD", cwd=repo).strip()
    assert _pack(repo, None, scratch=tmp_path / "s1").resolved == {"HEAD": head}
    assert _pack(repo, None, scratch=tmp_path / "s2").shipment.size > 0
    assert shipping.local_path(repo.as_uri()) == repo and shipping.local_path("https://h/x.git") is None
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(shipping.ShippingError, match=f"^{plain} is not a git repository$"):
        _pack(plain, None, scratch=tmp_path / "s3")


def test_what_arrives_damaged_or_without_its_commits_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    base = make_repo(repo, 3)
    packed = _pack(repo, base, scratch=tmp_path / "scratch")
    root = tmp_path / "node"
    damaged = bytearray(packed.data)
    damaged[-30] ^= 0xFF

    async def send(data: bytes) -> bytes:
        return data

    with pytest.raises(shipping.ShippingError, match=r"^the repository's bundle arrived damaged \("):
        asyncio.run(shipping.receive(packed.shipment, lambda: send(bytes(damaged)), root))
    missing = "0" * 40
    claimed = shipping.Shipment(packed.shipment.sha256, packed.shipment.size, (base, missing))
    with pytest.raises(shipping.ShippingError, match=r"^the repository's bundle did not verify on this node: git "):
        asyncio.run(shipping.receive(claimed, lambda: send(packed.data), root))
    assert sorted(p.name for p in (root / shipping.SHIPPED).iterdir()) == [f"{packed.shipment.sha256}.lock"]
