"""The paths Read deny rules cover, found on disk so that the sandbox can hide them.

A deny rule is a pattern (`Read(./secrets/**)`, `Read(.env)`, `Read(~/.aws/**)`, `Read(//etc/shadow)`); the
sandbox needs the concrete files and directories it covers now. For each `Read` deny rule with a path, the walk
starts where the pattern's fixed leading part ends (`secrets/` for `secrets/**`; the workspace for a pattern
without a slash, which gitignore-style matches at any depth; the home directory for `~/…`; `/` for `//…`) and
goes as deep as the pattern can reach (unbounded once it has `**`). A name that fits one of the pattern's parts is
checked with the permission rules themselves (`RuleSet.read_verdict`, so the sandbox hides exactly what the checker
denies): a directory the rule covers whole — itself or every name in it — is hidden whole and not entered; a file
is hidden alone. Symbolic links are not followed (what one points at is hidden where it really is); `.git`
directories are not entered.

Edit and Write deny rules are found the same way (`frozen_paths`): what they cover stays read-only in the sandbox.

This runs before every sandboxed command, so a file that starts to match after one command (created by it, or by
you meanwhile) is hidden from the next one on; a command does see what it creates itself while it runs. A hard
link made to a denied file under another name is not covered (the checker does not see it either). The walk
looks at `WALK_LIMIT` names at most per command; past that it stops and says so once.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import NamedTuple

import msgspec

from ..permissions.rules import RuleSet

WALK_LIMIT = 100_000
"""Names looked at per command, over all rules (a walk of ~100,000 names costs ≈0.1 s)."""
_GLOB_CHARS = frozenset("*?[\\")


class Hidden(NamedTuple):
    """What the Read deny rules cover on disk now."""

    directories: list[Path]
    files: list[Path]
    truncated: bool
    """True when the walk stopped at WALK_LIMIT names (something further may be visible)."""


class _Walk(NamedTuple):
    start: Path
    parts: list[str]
    """The pattern's segments below `start` (may hold `**`)."""
    depth: int | None
    """How many levels below `start` can match; None: any."""


def hidden_paths(rules: RuleSet, workspace: Path, limit: int = WALK_LIMIT) -> Hidden:
    """The directories and files that the `Read` deny rules in `rules` cover, as real (resolved) paths."""
    denying = RuleSet()
    walks: list[_Walk] = []
    for _kind, rule in rules.rules("deny"):
        if rule.tool == "Read" and rule.specifier:
            denying.add_rule("deny", rule)
            walks.append(_plan(rule.specifier, workspace, rule.project_root))
    if not walks:
        return Hidden([], [], False)
    finder = _Finder(denying, workspace, limit)
    for walk in walks:
        finder.walk(walk)
    return Hidden(sorted(finder.dirs), sorted(finder.files), finder.seen > limit)


def frozen_paths(rules: RuleSet, workspace: Path, limit: int = WALK_LIMIT) -> Hidden:
    """The directories and files that the `Edit` and `Write` deny rules in `rules` cover now, found as `hidden_paths`
    finds those of Read rules: the sandbox keeps them read-only, so that a program the checker cannot see into
    (`python -c`, a script) cannot change them either."""
    as_read = RuleSet()
    for _kind, rule in rules.rules("deny"):
        if rule.tool in ("Edit", "Write") and rule.specifier:
            as_read.add_rule("deny", msgspec.structs.replace(rule, tool="Read"))
    return hidden_paths(as_read, workspace, limit)


def _plan(spec: str, workspace: Path, project_root: str | None) -> _Walk:
    """Where to look for what `spec` covers, and how deep (as `permissions.rules` anchors its patterns)."""
    pattern = spec
    if pattern.startswith("//"):
        base, pattern, anchored = Path("/"), pattern[2:], True
    elif pattern == "~" or pattern.startswith("~/"):
        base, pattern, anchored = Path.home(), pattern[2:], True
    elif pattern.startswith("/"):
        base, pattern, anchored = Path(project_root) if project_root else workspace, pattern[1:], True
    else:
        base, anchored = workspace, "/" in pattern.rstrip("/")
    while pattern.startswith("./"):
        pattern = pattern[2:]
    pattern = pattern.rstrip("/")
    parts = [part for part in pattern.split("/") if part] if pattern not in ("", ".") else []
    if not anchored:
        return _Walk(workspace, parts, None)
    fixed = 0
    while fixed < len(parts) and not _GLOB_CHARS.intersection(parts[fixed]) and parts[fixed] != "..":
        fixed += 1
    rest = parts[fixed:]
    start = base.joinpath(*parts[:fixed])
    return _Walk(start, rest, None if "**" in rest else len(rest))


class _Finder:
    def __init__(self, rules: RuleSet, workspace: Path, limit: int) -> None:
        self.rules, self.workspace, self.limit = rules, workspace, limit
        self.dirs: set[Path] = set()
        self.files: set[Path] = set()
        self.seen = 0

    def walk(self, plan: _Walk) -> None:
        start = plan.start
        if not os.path.lexists(start):
            return
        if self._check(start, os.path.isdir(start)) or not os.path.isdir(start) or plan.depth == 0:
            return
        names = [part for part in plan.parts if part != "**"]
        # a name matching no part of the pattern cannot be where a match starts; backslash escapes are left to
        # the rules themselves (fnmatch does not know them)
        prefilter = None if any("\\" in part for part in names) else names
        todo: list[tuple[Path, int]] = [(start, 0)]
        while todo:
            directory, level = todo.pop()
            try:
                entries = list(os.scandir(directory))
            except OSError:
                continue
            for entry in entries:
                self.seen += 1
                if self.seen > self.limit:
                    return
                is_dir = entry.is_dir(follow_symlinks=False)
                fits = prefilter is None or any(fnmatch.fnmatchcase(entry.name, part) for part in prefilter)
                if fits and self._check(Path(entry.path), is_dir or (entry.is_symlink() and os.path.isdir(entry.path))):
                    continue
                deeper = plan.depth is None or level + 1 < plan.depth
                if is_dir and deeper and entry.name != ".git":
                    todo.append((Path(entry.path), level + 1))

    def _check(self, path: Path, directory: bool) -> bool:
        """Record `path` when the rules cover it (a directory: whole); True when recorded."""
        real = path.resolve()
        if real in self.dirs or real in self.files:
            return True
        if directory:
            covered = self.rules.read_verdict(path, root=self.workspace, directory=True) == "deny"
            if covered:
                self.dirs.add(real)
            return covered
        if self.rules.read_verdict(path, root=self.workspace) == "deny":
            self.files.add(real)
            return True
        return False
