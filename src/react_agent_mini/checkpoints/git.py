"""Snapshots of a workspace in a git repository, for seeing what a Bash command changed and putting it back.

`snapshot()` records the workspace's tracked and untracked files (not the ignored ones) as a tree: `git add -A` and
`git write-tree` through a private index. `changes(a, b)` lists what differs between two snapshots; `blob` reads a
file's bytes back exactly as they were on disk.

The repository is treated as hostile: a command (sandboxed or not) may have written anything into it, and git runs
programs a repository names — filter drivers (`filter.*.clean`, `smudge`, `process`) for the paths its
attributes assign them, `core.fsmonitor`, hooks, `diff.external`, textconv, a pager — from `.git/config`, from the
config `.git/commondir` or a `gitdir:` file leads to, and from the system and global config files. Turning each
of those off by name (`-c core.fsmonitor=false`, as this module used to) cannot cover filter drivers, whose names
the repository picks, nor configs reached through `commondir`. So ram's own git never works in the user's
repository at all. It works in a private repository of ours inside the checkpoint store (beside the session's
transcript, outside the workspace): `GIT_DIR` is `<store>/git` and `GIT_WORK_TREE` the repository's root, and git
reads no file of the repository's `.git` — no config, hooks, attributes, `commondir` or alternates. What it reads:
- our config, which ram writes: no filter, diff driver or fsmonitor defined, hooks at `/dev/null`, no transport
  allowed; `GIT_CONFIG_NOSYSTEM=1` and `GIT_CONFIG_GLOBAL=/dev/null` (every `GIT_*` variable of the environment
  dropped first: `isolated_env`) keep the system and global files out, `core.attributesFile=/dev/null` the
  global attributes; the settings that matter are given with `-c` too, which reaches git's own child processes;
- our `info/attributes`, `* -text -crlf -filter -ident -working-tree-encoding !eol -diff`, which outranks every
  `.gitattributes` of the work tree: a file is stored byte for byte (no CRLF normalisation, `ident`, encoding or
  LFS-like filter, even where the user's own config defines one), so what a rewind writes back is exactly what the
  file held; and a `.gitattributes` naming a filter names a driver that does not exist, which runs nothing;
- the work tree's files, `.gitignore`s and `.gitattributes` (data), and a copy ram makes of the repository's
  `info/exclude` (so the same files are ignored as by the user's git, but for a `core.excludesFile` set in a
  config file git no longer reads);
- objects: our own, and — for `git add` and `cat-file` only, through `GIT_ALTERNATE_OBJECT_DIRECTORIES` — the
  repository's, so that unchanged files are not stored twice. ram finds the repository itself (`find`): the
  nearest `.git` directory (a `commondir` in it is ignored: git never writes one there), or for a `.git` file (a
  worktree, a submodule) the `gitdir:` it names and that folder's `commondir`, followed only to find an object
  directory. git sees it through a view of ours (`view`: its loose-object folders and `pack`, linked one by one,
  and no `info`), so it does not follow the repository's own `info/alternates` either. Nothing read from there can
  run anything, nor is it trusted: a blob read back is checked against its id (an object planted under another
  content's id is refused, not written back), and `write-tree` (`--missing-ok`) and `diff-tree` run without it,
  so every tree a snapshot names was written by our own git into our own store and the list of changes cannot be
  forged.
A nested repository (a submodule, or one a command made with `git init`) is recorded as git records it (a gitlink,
which `git add --verbose` names with a trailing `/`) and is then marked skip-worktree in the private index: git
would otherwise run `git status` inside it at every later snapshot, with that repository's own config and
filters. The `git` run is the first on `PATH` that is neither inside the workspace or the repository nor a relative
`PATH` entry (`git_program`), so a command cannot plant the git ram runs.

Cost: the first snapshot of a session hashes every file of the workspace — the user's index is not used as a
starting point, since its entries name what the user's filters made of each file, not its bytes — but writes no
object the repository already has. Later snapshots hash only what changed (the private index stays warm), as
before. Our objects are loose and unreachable; they go with the checkpoint store.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import shutil
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

import msgspec

GIT_OPTIONS = (
    "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.quotePath=false",
    "-c", "protocol.allow=never",
)  # fmt: skip
"""Given on every command line too: `-c` settings reach the git processes git itself starts."""

PRIVATE_CONFIG = """\
# Written by react-agent-mini: the config of its private checkpoint repository (see checkpoints/git.py).
[core]
\trepositoryformatversion = {version}
\tbare = false
\tfilemode = true
\tsymlinks = true
\tignorecase = {ignorecase}
\tprecomposeunicode = {precompose}
\tlogallrefupdates = false
\tfsmonitor = false
\tuntrackedCache = false
\tsplitIndex = false
\tsparseCheckout = false
\thooksPath = /dev/null
\tattributesFile = /dev/null
\tautocrlf = false
\tsafecrlf = false
\tpager = cat
\tquotePath = false
[index]
\tsparse = false
[gc]
\tauto = 0
[maintenance]
\tauto = false
[protocol]
\tallow = never
[advice]
\taddEmbeddedRepo = false
\tdetachedHead = false
{extensions}"""
NO_CONVERSION = "* -text -crlf -filter -ident -working-tree-encoding !eol -diff\n"
"""Our `info/attributes`: outranks the work tree's `.gitattributes`, so files are stored as they are."""
GITLINK = 0o160000
ZERO = "0" * 40
_OBJECT_FORMAT = re.compile(r"^\s*objectformat\s*=\s*sha256\s*$", re.IGNORECASE | re.MULTILINE)


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


class Repository(NamedTuple):
    """A git work tree as ram finds it, without asking git."""

    root: Path
    """The folder holding `.git`."""
    objects: Path | None
    """The repository's object directory (read, never written), when there is one."""
    exclude: Path | None
    """Its `info/exclude`."""
    sha256: bool
    """Its objects are named by SHA-256."""


def find(workspace: Path) -> Repository | None:
    """The repository `workspace` is in: the nearest folder at or above it holding a `.git` directory with a `HEAD`,
    or a `.git` file naming one (`gitdir: …`). None when there is none, or the workspace is inside a `.git`."""
    start = Path(os.path.realpath(workspace))
    for folder in (start, *start.parents):
        dotgit = folder / ".git"
        if dotgit.is_dir():
            if not (dotgit / "HEAD").is_file():
                continue
            common = dotgit  # a `commondir` in a `.git` directory is not followed: git never writes one there
        elif dotgit.is_file():
            gitdir = _gitdir_of(dotgit)
            if gitdir is None:
                continue
            common = _common_of(gitdir)
        else:
            continue
        if ".git" in start.relative_to(folder).parts:
            return None
        objects = common / "objects"
        return Repository(
            folder,
            objects if objects.is_dir() else None,
            common / "info" / "exclude",
            _is_sha256(common / "config"),
        )
    return None


def _gitdir_of(dotgit: Path) -> Path | None:
    """The folder a `.git` file names, when it looks like a git directory."""
    try:
        text = dotgit.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    named = Path(text[len("gitdir:") :].strip())
    gitdir = Path(os.path.realpath(dotgit.parent / named))
    return gitdir if (gitdir / "HEAD").is_file() else None


def _common_of(gitdir: Path) -> Path:
    """Where a worktree's shared objects are (its `commondir`), else the git directory itself."""
    try:
        named = (gitdir / "commondir").read_text(encoding="utf-8", errors="replace")[:4096].strip()
    except OSError:
        return gitdir
    common = Path(os.path.realpath(gitdir / named)) if named else gitdir
    return common if (common / "objects").is_dir() else gitdir


def _is_sha256(config: Path) -> bool:
    try:
        return _OBJECT_FORMAT.search(config.read_text(encoding="utf-8", errors="replace")) is not None
    except OSError:
        return False


def isolated_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a git process that must not run anything a repository (or a planted system or global
    config) names: `environ` without any `GIT_*` variable, with the system and global config files off."""
    env = {k: v for k, v in (os.environ if environ is None else environ).items() if not k.startswith("GIT_")}
    env |= {
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_PAGER": "cat",
        "GIT_OPTIONAL_LOCKS": "0",
    }
    return env


def git_program(avoid: Iterable[Path], search: str | None = None) -> str | None:
    """The `git` to run: the first on `search` (default `PATH`) whose folder is absolute and not inside any of
    `avoid` (the workspace, the repository), so that a command cannot plant the git ram runs; None when none is."""
    roots = [Path(os.path.realpath(path)) for path in avoid]
    for entry in (os.environ.get("PATH", os.defpath) if search is None else search).split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        folder = Path(os.path.realpath(entry))
        if any(folder == root or root in folder.parents for root in roots):
            continue
        candidate = folder / "git"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def object_id(data: bytes, sha256: bool = False) -> str:
    """git's id of a blob holding `data`."""
    digest = hashlib.sha256 if sha256 else hashlib.sha1
    return digest(b"blob %d\x00" % len(data) + data, usedforsecurity=False).hexdigest()


class GitSnapshots:
    """Snapshots of `workspace` through the private index `index`, in the private repository beside it
    (`<index's folder>/git`)."""

    def __init__(self, workspace: Path, index: Path) -> None:
        self.workspace = workspace
        self.index = index
        self.git_dir = index.parent / "git"
        self._repo: Repository | bool | None = False  # False: not looked up yet
        self._program: str | None = None
        self._previous: str | None = None
        """The tree of this object's previous snapshot (what the nested-repository check compares against)."""
        self._viewed = False

    async def root(self) -> Path | None:
        """The repository's work tree root, or None when the workspace is not in a git work tree (or no git)."""
        repo = self._repository()
        return repo.root if repo is not None and self._program is not None else None

    async def snapshot(self) -> str:
        """The id of a tree holding the workspace as it is now."""
        repo = self._ready()
        try:
            listed = await self._git("add", "-A", "--verbose", "--", ".", alternates=True)
        except GitFailed:
            self.index.unlink(missing_ok=True)  # an index git does not like: start afresh
            self._previous = None
            listed = await self._git("add", "-A", "--verbose", "--", ".", alternates=True)
        tree = (await self._git("write-tree", "--missing-ok")).strip().decode()
        await self._hold_nested(repo, tree, listed)
        self._previous = tree
        return tree

    async def changes(self, before: str, after: str) -> list[TreeChange]:
        """The paths under the workspace that differ between two snapshots."""
        self._ready()
        raw = await self._git("diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", before, after, "--", ".")
        return _raw_changes(raw)

    async def blob(self, blob_id: str, rel: str) -> bytes:
        """A blob's bytes, as the file at `rel` held them (stored unfiltered, so read back unfiltered); GitFailed
        when the object's content is not what its id says (a planted object). Our own objects can be read even
        when the repository is gone."""
        if self._repository() is not None or not (self.git_dir / "HEAD").is_file():
            self._ready()
        data = await self._git("cat-file", "blob", blob_id, index=False, alternates=True)
        if object_id(data, sha256=len(blob_id) == 64) != blob_id:
            raise GitFailed(f"object {blob_id} ({rel}) does not hold what its id says")
        return data

    def _repository(self) -> Repository | None:
        if self._repo is False:
            found = find(self.workspace)
            self._repo = found
            self._program = git_program([self.workspace, *([found.root] if found is not None else [])])
        return self._repo if isinstance(self._repo, Repository) else None

    def _ready(self) -> Repository:
        """The repository, with our private git directory made (or brought up to date) for it."""
        repo = self._repository()
        if repo is None or self._program is None:
            raise GitFailed(f"{self.workspace} is not in a git work tree (or no git was found)")
        if not (self.git_dir / "HEAD").is_file():
            self._make_git_dir(repo)
            self.index.unlink(missing_ok=True)  # one an older ram seeded from the user's index (filtered ids)
        if repo.objects is not None and not self._viewed:
            self._make_view(repo.objects)
            self._viewed = True
        self._copy_exclude(repo)
        return repo

    def _make_git_dir(self, repo: Repository) -> None:
        self.git_dir.parent.mkdir(parents=True, exist_ok=True)
        partial = self.git_dir.with_name(f"{self.git_dir.name}.partial-{os.getpid()}")
        shutil.rmtree(partial, ignore_errors=True)
        for folder in ("objects/info", "objects/pack", "refs/heads", "refs/tags", "info"):
            (partial / folder).mkdir(parents=True)
        (partial / "HEAD").write_text("ref: refs/heads/checkpoints\n")
        extensions = "[extensions]\n\tobjectFormat = sha256\n" if repo.sha256 else ""
        insensitive = (repo.root / ".GIT").exists()  # what `git init` probes: a file system that ignores case
        config = PRIVATE_CONFIG.format(
            version=1 if repo.sha256 else 0,
            extensions=extensions,
            ignorecase=str(insensitive).lower(),
            precompose=str(sys.platform == "darwin").lower(),
        )
        (partial / "config").write_text(config)
        (partial / "info" / "attributes").write_text(NO_CONVERSION)
        try:
            os.rename(partial, self.git_dir)
        except OSError:  # made meanwhile by another of ours
            shutil.rmtree(partial, ignore_errors=True)
            if not (self.git_dir / "HEAD").is_file():
                raise

    @property
    def view(self) -> Path:
        """Our view of the repository's object directory: its loose-object folders and `pack`, linked one by one,
        and no `info` (so git does not follow the repository's own `info/alternates`)."""
        return self.git_dir / "repository-objects"

    def _make_view(self, objects: Path) -> None:
        view, pack = self.view, str(objects / "pack")
        with contextlib.suppress(OSError):
            if os.readlink(view / "pack") == pack:
                return
        partial = view.with_name(f"{view.name}.partial-{os.getpid()}")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        for name in [f"{number:02x}" for number in range(256)] + ["pack"]:
            os.symlink(objects / name, partial / name)  # a folder git has not made yet is simply missing
        shutil.rmtree(view, ignore_errors=True)
        os.rename(partial, view)

    def _copy_exclude(self, repo: Repository) -> None:
        """Our `info/exclude` holds what the repository's does (read as text; git never reads theirs)."""
        ours = self.git_dir / "info" / "exclude"
        try:
            wanted = repo.exclude.read_bytes()[: 1 << 20] if repo.exclude is not None else b""
        except OSError:
            wanted = b""
        try:
            if ours.read_bytes() == wanted:
                return
        except OSError:
            pass
        temporary = ours.with_name(f"exclude.tmp{os.getpid()}")
        temporary.write_bytes(wanted)
        os.replace(temporary, ours)

    async def _hold_nested(self, repo: Repository, tree: str, listed: bytes) -> None:
        """Mark the gitlinks this snapshot added skip-worktree, so that no later `git add` runs `git status` in
        them (with their own config: fsmonitor, filters). `git add --verbose` named what it added (a gitlink with
        a `/` at the end); only when a name cannot be read from that (a newline in it) are the trees compared."""
        named = _verbose_paths(listed)
        if named is not None:
            added = [rel.rstrip("/") for rel in named if rel.endswith("/")]
        elif self._previous is None:
            raw = await self._git("ls-tree", "-r", "-z", "--full-tree", tree, cwd=repo.root)
            added = [
                os.fsdecode(path)
                for meta, _, path in (entry.partition(b"\t") for entry in raw.split(b"\x00") if entry)
                if meta.startswith(b"160000 ")
            ]
        elif self._previous == tree:
            return
        else:
            raw = await self._git("diff-tree", "-r", "-z", "--no-renames", self._previous, tree, cwd=repo.root)
            added = [change.rel for change in _raw_changes(raw) if change.new_mode == GITLINK]
        if added:
            listed = b"".join(os.fsencode(rel) + b"\x00" for rel in added)
            await self._git("update-index", "--skip-worktree", "-z", "--stdin", cwd=repo.root, stdin=listed)

    def _env(self, *, index: bool, alternates: bool) -> dict[str, str]:
        repo = self._repository()
        env = isolated_env()
        env["GIT_DIR"] = str(self.git_dir)
        if repo is not None:
            env["GIT_WORK_TREE"] = str(repo.root)
        if index:
            env["GIT_INDEX_FILE"] = str(self.index)
        if alternates and repo is not None and repo.objects is not None:
            env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = _quoted(str(self.view))
        return env

    async def _git(
        self, *args: str, index: bool = True, alternates: bool = False, cwd: Path | None = None, stdin: bytes = b""
    ) -> bytes:
        if self._program is None:
            raise GitFailed("no git found on PATH outside the workspace")
        from ..tools.shell_env import guard_own_process

        guard_own_process()  # nothing git starts may read ram's own memory or environment
        process = await asyncio.create_subprocess_exec(
            self._program, *GIT_OPTIONS, *args,
            cwd=cwd or (self.workspace if self.workspace.is_dir() else self.git_dir),
            env=self._env(index=index, alternates=alternates),
            stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await process.communicate(stdin or None)
        if process.returncode != 0:
            lines = err.decode("utf-8", "replace").strip().splitlines()
            raise GitFailed(lines[-1] if lines else f"git {args[0]} exited {process.returncode}")
        return out


def _raw_changes(raw: bytes) -> list[TreeChange]:
    """`diff-tree -r -z` raw output as changes (an all-zero id, SHA-1 or SHA-256, is `ZERO`)."""
    fields = raw.split(b"\x00")
    out: list[TreeChange] = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        parts = meta.lstrip(b":").split()
        if len(parts) < 4:
            continue
        old_id, new_id = parts[2].decode(), parts[3].decode()
        out.append(
            TreeChange(
                os.fsdecode(path),
                int(parts[0], 8),
                ZERO if not old_id.strip("0") else old_id,
                int(parts[1], 8),
                ZERO if not new_id.strip("0") else new_id,
            )
        )
    return out


def _verbose_paths(listed: bytes) -> list[str] | None:
    """The paths `git add --verbose` printed (`add 'x'`, `remove 'x'`), or None when a line is not one of those."""
    paths: list[str] = []
    for line in listed.splitlines():
        verb, _, rest = line.partition(b" '")
        if verb not in (b"add", b"remove") or not rest.endswith(b"'"):
            return None
        if verb == b"add":
            paths.append(os.fsdecode(rest[:-1]))
    return paths


def _quoted(path: str) -> str:
    """One entry of `GIT_ALTERNATE_OBJECT_DIRECTORIES` (a path with a `:` or `"` is C-quoted)."""
    if ":" not in path and not path.startswith('"'):
        return path
    escaped = path.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'
