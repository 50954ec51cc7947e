"""Allow, ask and deny rules from every source, and the verdict they give a call.

Verdicts go deny > ask > allow. A Bash call is judged per simple command (split across `;` `&&` `||` `|` `$()` by
the shell analysis), so an allowed prefix never carries a second command along with it.

Deny and ask rules on Bash fail closed. `Bash(rm:*)` applies when some form of some simple command matches it
(`bash/variants.py`: wrappers peeled, nested scripts parsed, `HIDDEN` when a command runs something we cannot
read), and when its program is named anywhere in a line that runs a command the program table does not know to
be inert (`split --filter='rm f'`; `echo 'rm -rf x'` only prints). Read/Edit rules see every path a command
names — relative to every directory `cd` may have taken it to, braces, globs, `~` forms and `$'...'` expanded as
bash will, values glued to options or after `=` — plus the whole tree below directories that recursive readers and
writers work on (`grep -r`, `rg`, `git show`, `tar`, `find -exec`, `git checkout`), and they apply to any command
working on something only known when it runs (`cat "$f"`, `xargs`, a brace or glob too big to expand, `~-`).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ...tools.declared import Family, family_of, touches_of
from ...tools.paths import inside, resolve
from .grammar import (
    PATH_RULE_TOOLS,
    RULE_KINDS,
    BashPattern,
    Domain,
    FetchTarget,
    PathPattern,
    Rule,
    RuleError,
    RuleKind,
    RuleMatch,
    Verdict,
    compile_rule,
    governs,
    parse_rule,
)

if TYPE_CHECKING:
    from ..bash.view import BashView

LEGACY_PATH_NAMES = ("file_path", "notebook_path", "path")
"""The argument names taken as paths for a tool that declares none of its own (an MCP tool)."""


class PathTarget(msgspec.Struct, frozen=True):
    """A path a call touches."""

    raw: str
    """As the model wrote it."""
    path: Path
    """Absolute, `..` and symlinks resolved: what the call really touches."""
    lexical: Path
    """Absolute with `..` collapsed but symlinks kept (deny rules are checked against both)."""
    directory: bool
    """True for a folder searched (a `search` tool's): the call reads what is inside it."""
    inside: bool
    """True when `path` is the workspace or below it."""


class CallView(msgspec.Struct, frozen=True):
    """What a tool call touches, computed once and shared by the rules and the built-in judgement."""

    tool: str
    """The tool's name."""
    args: Mapping[str, Any]
    """The raw arguments."""
    targets: tuple[PathTarget, ...] = ()
    """Paths the call reads or writes."""
    bash: BashView | None = None
    """Set for calls that run a shell command (Bash)."""
    family: Family = "other"
    """The tool's family (`tools.declared`): which path rules govern it."""
    reaches: tuple[str, ...] = ()
    """The URLs it fetches (WebFetch rules' `domain:` judge their hosts)."""

    @property
    def outside(self) -> bool:
        """True when the call reaches outside the workspace."""
        if self.bash is not None:
            return bool(self.bash.outside)
        return any(not t.inside for t in self.targets)


# ---------------------------------------------------------------- what a call touches


def inspect_call(tool: object, args: Mapping[str, Any], root: Path, cwd: Path | None = None) -> CallView:
    """The paths (or, for a shell command, the simple commands) a call of `tool` touches, as the tool declares
    them (`tools.declared.touches_of`; for a tool that declares nothing, its arguments named like paths).
    `cwd`: where a shell command starts (default: root)."""
    root = root.resolve()
    name, family = str(getattr(tool, "name", "")), family_of(tool)
    touches = touches_of(tool, args)
    if touches is not None and touches.command is not None:
        from ..bash.view import inspect_command  # the shell parser is imported on the first Bash call, not at startup

        return CallView(name, args, bash=inspect_command(touches.command, root, cwd), family=family)
    if touches is None:
        guessed = (args.get(key) for key in LEGACY_PATH_NAMES)
        targets = [_target(value, root, root, directory=False) for value in guessed if isinstance(value, str) and value]
        return CallView(name, args, tuple(targets), family=family)
    files = [_target(raw, root, root, directory=False) for raw in (*touches.reads, *touches.writes)]
    folders = [_target(raw, root, root, directory=True) for raw in touches.searches]
    return CallView(name, args, (*files, *folders), family=family, reaches=touches.reaches)


def read_view(path: Path, root: Path, *, directory: bool = False) -> CallView:
    """A call reading `path` (a folder's contents when `directory`), as Read rules see one."""
    root = root.resolve()
    family: Family = "search" if directory else "read"
    return CallView("Read", {}, (_target(str(path), root, root, directory=directory),), family=family)


def _target(raw: str, base: Path, root: Path, *, directory: bool) -> PathTarget:
    path = resolve(base, raw)
    lexical = Path(os.path.normpath(base / os.path.expanduser(raw)))
    return PathTarget(raw, path, lexical, directory, inside(root, path))


# ---------------------------------------------------------------- rule sets


class _Entry:
    __slots__ = ("matcher", "rule")

    def __init__(self, rule: Rule) -> None:
        self.rule = rule
        self.matcher = compile_rule(rule)


class RuleSet:
    """Allow, ask and deny rules from every source, merged. Mutable: session rules come and go."""

    def __init__(self) -> None:
        self._entries: dict[RuleKind, list[_Entry]] = {kind: [] for kind in RULE_KINDS}

    def add(self, kind: RuleKind, text: str, source: str, project_root: Path | None = None) -> str | None:
        """Add a rule; a warning naming the source instead when it does not parse."""
        try:
            rule = parse_rule(text, source, project_root)
        except RuleError as exc:
            return f"{source}: ignored the {kind} rule {text!r}: {exc}"
        self.add_rule(kind, rule)
        return None

    def add_rule(self, kind: RuleKind, rule: Rule) -> None:
        """Add a parsed rule (a duplicate from the same source is not added twice)."""
        if not any(e.rule == rule for e in self._entries[kind]):
            self._entries[kind].append(_Entry(rule))

    def remove(self, kind: RuleKind, text: str, source: str) -> bool:
        """Remove the rule `text` from `source`; True when there was one."""
        try:
            wanted = parse_rule(text).text
        except RuleError:
            wanted = text.strip()
        entries = self._entries[kind]
        keep = [e for e in entries if not (e.rule.source == source and e.rule.text == wanted)]
        self._entries[kind] = keep
        return len(keep) != len(entries)

    def rules(self, kind: RuleKind | None = None) -> list[tuple[RuleKind, Rule]]:
        """Every rule with its kind, deny first (what a `/permissions` listing shows)."""
        kinds: tuple[RuleKind, ...] = (kind,) if kind else ("deny", "ask", "allow")
        return [(k, e.rule) for k in kinds for e in self._entries[k]]

    def copy(self) -> RuleSet:
        """An independent copy (adding to it leaves this one unchanged)."""
        other = RuleSet()
        for kind in RULE_KINDS:
            other._entries[kind] = list(self._entries[kind])
        return other

    def __len__(self) -> int:
        return sum(len(v) for v in self._entries.values())

    def evaluate(
        self, tool: object, args: Mapping[str, Any], *, root: Path, cwd: Path | None = None, read_only: bool = False
    ) -> Verdict | None:
        """deny, ask or allow for this call of `tool` by the rules alone; None when no rule decides."""
        found = self.match(inspect_call(tool, args, root, cwd), root, read_only=read_only)
        return found.verdict if found else None

    def read_verdict(self, path: Path, *, root: Path, directory: bool = False) -> Verdict | None:
        """deny, ask or allow for reading `path` (a folder's contents when `directory`) by the rules alone."""
        found = self.match(read_view(path, root, directory=directory), root)
        return found.verdict if found else None

    def match(self, call: CallView, root: Path, *, read_only: bool = False) -> RuleMatch | None:
        """The deciding rule, deny > ask > allow. `read_only`: the tool only reads, so paths inside the workspace
        need no allow rule of their own."""
        fetch = FetchTarget(call.reaches[0]) if call.reaches else None
        for kind in ("deny", "ask"):
            if rule := self._first_hit(kind, call, root, fetch):
                if kind == "ask" and fetch is not None:
                    fetch.pin()  # if the user says yes, the fetch goes where the rules looked
                return RuleMatch(kind, rule)
        if fetch is not None:
            fetch.pin()  # not denied: the fetch connects to the addresses judged (if a rule made us resolve them)
        if rule := self._allowed(call, root, read_only, fetch):
            return RuleMatch("allow", rule)
        return None

    def _first_hit(self, kind: RuleKind, call: CallView, root: Path, fetch: FetchTarget | None = None) -> Rule | None:
        """The first `kind` rule touching any part of the call (any target, any simple command)."""
        for entry in self._entries[kind]:
            if call.bash is not None and entry.rule.tool in PATH_RULE_TOOLS:
                if _bash_touches(entry, call.bash, root):
                    return entry.rule
                continue
            if not governs(entry.rule.tool, call.tool, call.family):
                continue
            matcher = entry.matcher
            if matcher is None:
                return entry.rule
            if isinstance(matcher, BashPattern) and call.bash is not None:
                if _bash_hit(matcher, call.bash):
                    return entry.rule
            elif isinstance(matcher, PathPattern):
                project = entry.rule.project_root
                for t in call.targets:
                    if any(matcher.matches(p, t.directory, root, project) for p in (t.path, t.lexical)):
                        return entry.rule
            elif isinstance(matcher, Domain) and fetch is not None and matcher.covers(fetch):
                return entry.rule
        return None

    def _allowed(self, call: CallView, root: Path, read_only: bool, fetch: FetchTarget | None) -> Rule | None:
        entries = [e for e in self._entries["allow"] if governs(e.rule.tool, call.tool, call.family)]
        if whole := next((e.rule for e in entries if e.matcher is None), None):
            return whole
        if call.bash is not None:
            return _bash_allowed(entries, call.bash)
        if fetch is not None:  # an allow rule grants the host it names (deny and ask rules cover hosts below)
            domains = (e.rule for e in entries if isinstance(e.matcher, Domain) and e.matcher.grants(fetch))
            if domain := next(domains, None):
                return domain
        first: Rule | None = None
        for target in call.targets:
            hit = next(
                (
                    e.rule
                    for e in entries
                    if isinstance(e.matcher, PathPattern)
                    and e.matcher.matches(target.path, target.directory, root, e.rule.project_root)
                ),
                None,
            )
            if hit is None and not (read_only and target.inside):
                return None
            first = first or hit
        return first


def _bash_hit(matcher: BashPattern, bash: BashView) -> bool:
    """True when a deny/ask rule may apply: some form of some simple command matches it, or a command runs a
    command line we cannot read (fail closed: `echo rm x | bash` may well be `rm x`)."""
    from ..bash.expand import ansi_c_value
    from ..bash.variants import HIDDEN, variants

    if not bash.analysis.parsed:
        return True  # we cannot tell what a command we could not parse runs: fail closed
    if matcher.kind == "exact" and bash.command.strip() == matcher.exact:
        return True
    if not all(view.inert for view in bash.commands):
        # named anywhere in a line that runs a program we do not know to be inert (an option value such as
        # `--filter='rm f'`, a git alias, code in a here-document): fail closed
        dequoted = re.sub(r"[\\'\"]", "", ansi_c_value(bash.command))
        if matcher.mentioned_in(bash.command) or matcher.mentioned_in(dequoted):
            return True
    return any(words == HIDDEN or matcher.matches(words) for view in bash.commands for words in variants(view.command))


def _bash_touches(entry: _Entry, bash: BashView, root: Path) -> bool:
    """Read rules see every path a command names (`cat .env`); Edit/Write rules those of commands that write."""
    matcher = entry.matcher
    if not isinstance(matcher, PathPattern):
        return False  # a bare Read/Edit rule governs the file tools, not Bash
    if not bash.analysis.parsed:
        return True  # we cannot tell what a command we could not parse reads or writes: fail closed
    project = entry.rule.project_root
    for view in bash.commands:
        if entry.rule.tool != "Read" and view.read_only and not bash.analysis.writes:
            continue
        if any(matcher.matches(p, True, root, project) for p in view.paths):
            return True
        if any(_denied_below(matcher, d, root, project) for d in view.recursive):
            return True
        if view.unknown:
            return True  # `cat "$f"`, `xargs sed -i`, `cat {a..z}{a..z}/*`: the file is only known when it runs
        if entry.rule.tool != "Read" and bash.analysis.writes and view.outside:
            return True  # `echo x > "$f"`: a redirection to a place only known when it runs
    return False


def _bash_allowed(entries: list[_Entry], bash: BashView) -> Rule | None:
    """Allowed only when every simple command is covered by an allow rule or is read-only and stays inside; a
    writing redirection needs a rule for the whole command line."""
    if not bash.analysis.parsed:
        return None
    patterns = [(e.rule, e.matcher) for e in entries if isinstance(e.matcher, BashPattern)]
    # an exact rule for the whole line is exactly what the user approved, redirections and all
    exact = next((r for r, m in patterns if m.kind == "exact" and m.exact == bash.command.strip()), None)
    if exact is not None or bash.analysis.writes:
        return exact
    first: Rule | None = None
    for view in bash.commands:
        words = (*view.command.assignments, *view.command.argv)
        usage = view.command.usage
        hidden_code = usage is not None and bool(usage.evaluated)
        # `Bash(let:*)` names a program, not the code bash evaluates in its words (`let 'a[$(rm x)]'`): only a rule
        # for exactly this command allows one of those
        hit = next((r for r, m in patterns if m.matches(words) and not (hidden_code and m.kind != "exact")), None)
        if hit is None and not (view.read_only and not view.outside):
            return None
        first = first or hit
    return first


def _denied_below(matcher: PathPattern, directory: Path, root: Path, project: str | None) -> bool:
    """True when `matcher` covers some file or folder inside `directory` (a bounded walk, links not followed)."""
    anchor = matcher.anchor(root, project)
    forms = [directory]
    with contextlib.suppress(OSError, RuntimeError, ValueError):
        forms.append(directory.resolve())
    if not any(p == anchor or anchor in p.parents for p in forms):
        # nothing outside the pattern's base matches: a walk of `/` or `~` for `./secrets/**` starts at the workspace
        if not any(p in anchor.parents for p in forms):
            return False
        if matcher.matches(anchor, True, root, project):
            return True
        directory = anchor
    seen = 0
    for current, dirnames, filenames in os.walk(directory):
        base = Path(current)
        for name, is_dir in (*((d, True) for d in dirnames), *((f, False) for f in filenames)):
            seen += 1
            # a folder the rule covers whole counts before its files are walked (`secrets/` for `secrets/**`)
            if seen > _WALK_LIMIT or matcher.matches(base / name, is_dir, root, project):
                return True  # past the bound, assume the worst
        dirnames[:] = [d for d in dirnames if d != ".git"]
    return False


_WALK_LIMIT = 20_000
