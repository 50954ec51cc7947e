"""What kind of object a git revision names (commit, tree, blob, tag), read from the repository's files without
running git: a denied file's blob, named by its object id or by a tag, is printed whole by `git show --stat`, where
a commit is not (`touches.py` asks). Loose objects, pack indexes (version 2, SHA-1) and the packed-refs file are
read; anything else (a delta in a pack, alternates, a SHA-256 repository, a ref we cannot follow) is not known,
which callers treat as "may be a blob"."""

from __future__ import annotations

import contextlib
import mmap
import re
import zlib
from collections.abc import Iterator
from pathlib import Path

_HEX = re.compile(r"[0-9a-f]{4,40}")
_TYPES = {1: "commit", 2: "tree", 3: "blob", 4: "tag"}
_MAX_PEEL = 4


def rev_type(git: Path, name: str) -> str | None:
    """The type of the object `name` (a ref name, `HEAD`, or an object id, full or abbreviated) names, with
    annotated tags peeled; None when that cannot be known."""
    sha = resolve_ref(git, name) if not _HEX.fullmatch(name) or len(name) < 40 else name
    if sha is None and _HEX.fullmatch(name):
        sha = _expand(git, name)
    for _ in range(_MAX_PEEL):
        if sha is None:
            return None
        kind, body = _read(git, sha)
        if kind != "tag":
            return kind
        target = re.match(rb"object ([0-9a-f]{40})\n", body or b"")
        sha = target.group(1).decode() if target else None
    return None


def resolve_ref(git: Path, name: str) -> str | None:
    """The object id `name` names as git resolves a short ref name (`.git/NAME`, `refs/NAME`, `refs/tags/NAME`,
    `refs/heads/NAME`, `refs/remotes/NAME`), following `ref:` links; None when none holds it."""
    if not name or name.startswith(("-", "/")) or ".." in name or "\\" in name:
        return None
    for candidate in (name, f"refs/{name}", f"refs/tags/{name}", f"refs/heads/{name}", f"refs/remotes/{name}"):
        found = _ref(git, candidate, 0)
        if found is not None:
            return found
    return None


def _ref(git: Path, ref: str, depth: int) -> str | None:
    try:
        text = (git / ref).read_text(encoding="utf-8", errors="replace").strip()
    except (OSError, ValueError):
        text = _packed(git, ref) or ""
    target = text[5:].strip() if text.startswith("ref: ") else ""
    if target and depth < _MAX_PEEL and ".." not in target and not target.startswith("/"):
        return _ref(git, target, depth + 1)
    return text if re.fullmatch(r"[0-9a-f]{40}", text) else None


def _packed(git: Path, ref: str) -> str | None:
    try:
        lines = (git / "packed-refs").read_text(encoding="utf-8", errors="replace").splitlines()
    except (OSError, ValueError):
        return None
    return next((line.split(" ", 1)[0] for line in lines if line.endswith(" " + ref)), None)


def _expand(git: Path, prefix: str) -> str | None:
    """The one object id starting with `prefix` (loose or packed); None when none or several do."""
    found: set[str] = set()
    try:
        folder = git / "objects" / prefix[:2]
        found |= {prefix[:2] + p.name for p in folder.iterdir() if p.name.startswith(prefix[2:])}
    except OSError:
        pass
    for index in _indexes(git):
        with _Index.open(index) as table:
            if table is None:
                return None
            found |= set(table.starting_with(prefix))
    return found.pop() if len(found) == 1 else None


def _read(git: Path, sha: str) -> tuple[str | None, bytes | None]:
    """The type of object `sha` (and, for a tag, its text)."""
    try:
        data = zlib.decompressobj().decompress((git / "objects" / sha[:2] / sha[2:]).read_bytes(), 4096)
    except (OSError, zlib.error):
        return _packed_object(git, sha)
    header, _, body = data.partition(b"\0")
    kind = header.split(b" ", 1)[0].decode(errors="replace")
    return (kind if kind in _TYPES.values() else None), body


def _indexes(git: Path) -> list[Path]:
    try:
        return sorted((git / "objects" / "pack").glob("*.idx"))
    except OSError:
        return []


class _Index:
    """A pack index (version 2, SHA-1), mapped into memory and searched in place."""

    def __init__(self, data: mmap.mmap) -> None:
        self.data = data
        self.count = int.from_bytes(data[8 + 1020 : 8 + 1024], "big")

    @classmethod
    @contextlib.contextmanager
    def open(cls, path: Path) -> Iterator[_Index | None]:
        try:
            with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
                table = cls(data) if data[:8] == b"\xfftOc\x00\x00\x00\x02" and len(data) >= 1032 else None
                yield table if table is not None and len(data) >= 1032 + 28 * table.count else None
        except (OSError, ValueError):
            yield None

    def name(self, i: int) -> bytes:
        return self.data[1032 + 20 * i : 1052 + 20 * i]

    def position(self, key: bytes) -> int:
        """Where `key` (20 bytes) is or would be."""
        lo, hi = 0, self.count
        while lo < hi:
            mid = (lo + hi) // 2
            if self.name(mid) < key:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def starting_with(self, prefix: str) -> list[str]:
        """The ids starting with `prefix` (two at most: more is ambiguous all the same)."""
        start = self.position(bytes.fromhex(prefix.ljust(40, "0")))
        names = [self.name(i).hex() for i in range(start, min(start + 2, self.count))]
        return [n for n in names if n.startswith(prefix)]

    def offset(self, sha: str) -> int | None:
        i = self.position(bytes.fromhex(sha))
        if i >= self.count or self.name(i).hex() != sha:
            return None
        at = 1032 + 24 * self.count + 4 * i
        offset = int.from_bytes(self.data[at : at + 4], "big")
        return None if offset & 0x80000000 else offset  # a pack over 2 GiB: not followed


def _packed_object(git: Path, sha: str) -> tuple[str | None, bytes | None]:
    for index in _indexes(git):
        with _Index.open(index) as table:
            offset = table.offset(sha) if table is not None else None
        if offset is None:
            continue
        try:
            with index.with_suffix(".pack").open("rb") as pack:
                pack.seek(offset)
                head = pack.read(4096)
        except OSError:
            return None, None
        kind = _TYPES.get((head[0] >> 4) & 7) if head else None  # 6 and 7 are deltas: not followed
        k = 0
        while head and head[k] & 0x80 and k + 1 < len(head):
            k += 1
        body = None
        if kind == "tag":
            try:
                body = zlib.decompressobj().decompress(head[k + 1 :], 4096)
            except zlib.error:
                return None, None
        return kind, body
    return None, None
