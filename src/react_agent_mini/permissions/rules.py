"""Permission rules in Claude Code's syntax, kept in allow / ask / deny lists that remember where each came from.

A rule is `Tool` (every use of the tool) or `Tool(specifier)`:
- `Bash(npm run test:*)` a prefix, `Bash(git status)` an exact command, `Bash(git * main)` a wildcard. A Bash call
  is judged per simple command (split across `;` `&&` `||` `|` `$()` by `shell.analyze`), so an allowed prefix
  never carries a second command along with it.
- `Read(...)`, `Edit(...)`, `Write(...)`: a gitignore-style path pattern, matched against the RESOLVED path (`..`
  and symlinks followed), so a rule cannot be dodged by `a/../secrets/x` or a link. Read rules also govern the
  other reading tools (Glob, Grep); Edit rules govern every file-editing tool (Write included).
- `mcp__server` / `mcp__server__*` every tool of an MCP server, `mcp__server__tool` one tool, `WebFetch(domain:x)`.

Verdicts go deny > ask > allow. A rule string that does not parse becomes a warning and is ignored.

Deny and ask rules on Bash fail closed. `Bash(rm:*)` applies when some form of some simple command matches it
(quotes and `$'...'` decoded, wrappers such as `env -u X` / `sudo -u u` / `xargs -a f` peeled by trying every tail
of their arguments, `sh -c` / `eval` / `find -exec` / `trap` / `su -c` scripts parsed), when its program is named
anywhere in the line (`split --filter='rm f'`), and whenever a command runs something we cannot read: a command
name known only at run time (`$x`, `rm{,}`), a shell fed from stdin, a device or `<(...)`, `BASH_ENV=`, `git -c`,
a git alias, `sed e`, or a line the parser refuses. Read/Edit rules see every path a command names — relative to
every directory `cd` may have taken it to, globs expanded, `~` forms and `$'...'` resolved, values glued to
options or after `=` — plus the whole tree below directories that recursive readers and writers work on (`grep
-r`, `rg`, `git show`, `tar`, `find -exec`, `git checkout`), and they apply to any file a command reaches through
an expansion (`cat "$f"`, `xargs`). Out of reach: what programs do once started from script files (`bash build.sh`,
`make`) or code in other languages (`python -c`).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias
from urllib.parse import urlsplit

import msgspec

from ..tools.paths import inside, resolve

if TYPE_CHECKING:
    from .shell import ShellAnalysis, SimpleCommand

RuleKind: TypeAlias = Literal["allow", "ask", "deny"]
Verdict: TypeAlias = RuleKind
PermissionMode: TypeAlias = Literal["default", "acceptEdits", "plan", "bypassPermissions"]
PERMISSION_MODES: tuple[PermissionMode, ...] = ("default", "acceptEdits", "plan", "bypassPermissions")
RULE_KINDS: tuple[RuleKind, ...] = ("allow", "ask", "deny")

READ_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead"})
"""Tools governed by Read rules."""
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
"""Tools governed by Edit rules."""
_PATH_RULE_TOOLS = {"Read": READ_TOOLS, "Edit": EDIT_TOOLS, "Write": frozenset({"Write"})}
_SEARCH_TOOLS = frozenset({"Glob", "Grep", "LS"})
_TOOL_NAME = re.compile(r"^(?:mcp__[A-Za-z0-9_.-]+?(?:__\*)?|[A-Za-z][A-Za-z0-9_-]*)$")
_PROBE = "\x00probe"
"""A child name no literal pattern matches: "does this rule cover everything inside a directory?"."""
_SAFE_DEVICES = frozenset({"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
_WRAPPERS = frozenset(
    {
        "env", "command", "builtin", "exec", "nohup", "time", "sudo", "doas", "su", "nice", "ionice", "timeout",
        "xargs", "stdbuf", "setsid", "unbuffer", "flock", "chrt", "taskset", "watch", "strace", "ltrace", "chroot",
        "parallel", "ssh", "runuser", "systemd-run", "firejail", "nsenter", "unshare", "prlimit", "cgexec",
        "setpriv", "fakeroot", "busybox", "capsh", "sg", "catchsegv", "valgrind", "torsocks", "proxychains",
    }
)  # fmt: skip
"""Programs that run another command given in their arguments. Their options are too varied to parse, so a deny
rule is checked against every tail of their arguments (`env -u X rm f` is seen as `rm f`)."""
_MAX_TAILS = 24
_SHELL_OPTIONS_WITH_ARG = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})


class RuleError(ValueError):
    """A rule string that does not parse; the message says why."""


class Rule(msgspec.Struct, frozen=True):
    """One parsed rule."""

    tool: str
    """Tool name or MCP server pattern: `Bash`, `Edit`, `mcp__github`, `mcp__github__*`."""
    specifier: str | None = None
    """The text inside the parentheses; None when the rule covers every use of the tool."""
    source: str = "session"
    """Where the rule came from: a settings file path, "cli" or "session"."""
    project_root: str | None = None
    """Base of `/path` patterns (the project the settings file belongs to); None: the workspace."""

    @property
    def text(self) -> str:
        """The rule as written in settings: `Tool` or `Tool(specifier)`."""
        return self.tool if self.specifier is None else f"{self.tool}({self.specifier})"


class RuleMatch(msgspec.Struct, frozen=True):
    """The verdict the rules give a call, and the rule that gave it."""

    verdict: Verdict
    """deny, ask or allow."""
    rule: Rule
    """The deciding rule (for allow: the first rule that contributed)."""


class PathTarget(msgspec.Struct, frozen=True):
    """A path a call touches."""

    raw: str
    """As the model wrote it."""
    path: Path
    """Absolute, `..` and symlinks resolved: what the call really touches."""
    lexical: Path
    """Absolute with `..` collapsed but symlinks kept (deny rules are checked against both)."""
    directory: bool
    """True for a search root (Glob/Grep): the call reads what is inside it."""
    inside: bool
    """True when `path` is the workspace or below it."""


class CommandView(msgspec.Struct, frozen=True):
    """One simple command of a Bash call, with what the permission check needs to know about it."""

    command: SimpleCommand
    """The parsed command."""
    read_only: bool
    """True when the command itself cannot change anything (`shell.is_read_only_command`)."""
    outside: tuple[str, ...]
    """Arguments naming a place outside the workspace, or one that cannot be known before running (`$HOME/x`)."""
    paths: tuple[Path, ...]
    """Every argument read as a resolved path (for Read/Edit deny rules)."""
    recursive: tuple[Path, ...] = ()
    """Directories the command reads (or, if it writes, changes) the contents of recursively (`grep -r`, `rg`,
    `git show`, `tar`, `find -exec`, `git checkout`): a Read/Edit deny rule covering any file below them applies."""
    unknown: bool = False
    """Some file it works on is only known when it runs (`cat "$f"`, `xargs sed -i`, names read from data)."""


class BashView(msgspec.Struct, frozen=True):
    """A Bash call, analysed."""

    command: str
    """The command line as given."""
    analysis: ShellAnalysis
    """What `shell.analyze` found."""
    commands: tuple[CommandView, ...]
    """Each simple command, in order."""
    loose_outside: tuple[str, ...] = ()
    """For a command that did not parse: words of it that look like paths outside the workspace."""

    @property
    def outside(self) -> tuple[str, ...]:
        """Every argument that reaches outside the workspace."""
        return tuple(dict.fromkeys([*self.loose_outside, *(a for c in self.commands for a in c.outside)]))

    @property
    def read_only(self) -> bool:
        """True when the whole command parsed and cannot change anything."""
        return self.analysis.parsed and self.analysis.read_only and all(c.read_only for c in self.commands)


class CallView(msgspec.Struct, frozen=True):
    """What a tool call touches, computed once and shared by the rules and the built-in judgement."""

    tool: str
    """The tool's name."""
    args: Mapping[str, Any]
    """The raw arguments."""
    targets: tuple[PathTarget, ...] = ()
    """Paths the call reads or writes."""
    bash: BashView | None = None
    """Set for Bash calls."""

    @property
    def outside(self) -> bool:
        """True when the call reaches outside the workspace."""
        if self.bash is not None:
            return bool(self.bash.outside)
        return any(not t.inside for t in self.targets)


# ---------------------------------------------------------------- parsing


def parse_rule(text: str, source: str = "session", project_root: Path | None = None) -> Rule:
    """The rule `text` denotes, or RuleError."""
    text = text.strip()
    if not text:
        raise RuleError("empty rule")
    tool, specifier = text, None
    if "(" in text or ")" in text:
        open_at = text.find("(")
        if open_at <= 0 or not text.endswith(")"):
            raise RuleError("expected Tool or Tool(specifier)")
        tool, specifier = text[:open_at].strip(), text[open_at + 1 : -1].strip()
        if not specifier:
            raise RuleError("empty specifier; write the bare tool name to cover every use")
        if specifier in ("*", ":*"):
            specifier = None
    if not _TOOL_NAME.match(tool):
        raise RuleError(f"invalid tool name {tool!r}")
    rule = Rule(tool, specifier, source, str(project_root) if project_root else None)
    _compile(rule)  # the specifier's own errors surface now, not at the first call
    return rule


def split_rule_list(value: str) -> list[str]:
    """Rules in a CLI value, separated by commas or whitespace outside parentheses: `"Bash(git diff:*),Edit"`."""
    rules: list[str] = []
    current: list[str] = []
    depth = 0
    for char in value:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        if depth == 0 and (char == "," or char.isspace()):
            if "".join(current).strip():
                rules.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    if "".join(current).strip():
        rules.append("".join(current).strip())
    return rules


def escape_pattern(path: str) -> str:
    """`path` as a pattern matching only itself (glob characters escaped)."""
    return re.sub(r"([*?\[\]\\])", r"\\\1", path)


class _PathPattern:
    """A compiled gitignore-style pattern with the base it is relative to."""

    __slots__ = ("base", "regex")

    def __init__(self, spec: str) -> None:
        pattern = spec
        if pattern.startswith("//"):
            self.base, pattern = "abs", pattern[2:]
        elif pattern == "~" or pattern.startswith("~/"):
            self.base, pattern = "home", pattern[2:]
        elif pattern.startswith("/"):
            self.base, pattern = "project", pattern[1:]
        else:
            self.base = "workspace"
        # gitignore: a pattern with no slash (other than a trailing one) matches at any depth
        anchored = self.base != "workspace" or "/" in pattern.rstrip("/")
        while pattern.startswith("./"):
            pattern = pattern[2:]
        pattern = pattern.rstrip("/")
        if pattern in ("", "."):
            pattern = "**"
        if ".." in pattern.split("/"):
            raise RuleError("'..' is not allowed in a path pattern; write //absolute/path instead")
        body = _glob_regex(pattern)
        self.regex = re.compile(body if anchored else f"(?:.*/)?{body}", re.DOTALL)

    def matches(self, path: Path, directory: bool, workspace: Path, project_root: str | None) -> bool:
        """True when the pattern covers `path` (or an ancestor of it, like gitignore)."""
        if self.base == "abs":
            base = Path("/")
        elif self.base == "home":
            base = Path.home().resolve()
        elif self.base == "project" and project_root:
            base = Path(project_root).resolve()
        else:
            base = workspace.resolve()
        try:
            parts = path.relative_to(base).parts
        except ValueError:
            return False
        candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))] or [""]
        if directory:
            candidates.append("/".join((*parts, _PROBE)))
        return any(self.regex.fullmatch(c) for c in candidates)


def _glob_regex(pattern: str) -> str:
    """Regex for a slash-separated glob: `**` any depth, `*` `?` `[..]` within one name, `\\x` literal."""
    segments = pattern.split("/")
    out: list[str] = []
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == "**":
            out.append(".*" if last else "(?:.*/)?")
            continue
        out.append(_segment_regex(segment))
        if not last:
            out.append("/")
    return "".join(out)


def _segment_regex(segment: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == "\\" and i + 1 < len(segment):
            out.append(re.escape(segment[i + 1]))
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (close := segment.find("]", i + 2)) != -1:
            body = segment[i + 1 : close]
            negate = body[:1] in ("!", "^")
            body = body[1:] if negate else body
            body = body.replace("\\", "\\\\").replace("[", "\\[")
            out.append(f"[^/{body}]" if negate else f"[{body}]")
            i = close + 1
            continue
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


class _BashPattern:
    """`prefix:*` (or `prefix *`), an exact command, or a wildcard pattern, compared word by word."""

    __slots__ = ("exact", "kind", "regex", "words")

    def __init__(self, spec: str) -> None:
        self.exact = spec
        self.regex: re.Pattern[str] | None = None
        if spec.endswith(":*") or (spec.endswith(" *") and "*" not in spec[:-2]):
            self.kind, body = "prefix", spec[:-2].rstrip()
            if "*" in body or ":*" in body:
                raise RuleError("use either a trailing :* or * wildcards, not both")
        elif "*" in spec:
            self.kind, body = "glob", spec
            if ":*" in spec:
                raise RuleError(":* is only allowed at the end")
            parts = " ".join(spec.split()).split("*")
            self.regex = re.compile(".*".join(re.escape(p) for p in parts), re.DOTALL)
        else:
            self.kind, body = "exact", spec
        try:
            self.words = tuple(shlex.split(body)) if self.kind != "glob" else ()
        except ValueError as exc:
            raise RuleError(f"cannot split the command: {exc}") from None
        if self.kind != "glob" and not self.words:
            raise RuleError("empty command")

    def matches(self, words: Sequence[str]) -> bool:
        """True when the simple command `words` (assignments first) fits."""
        if self.kind == "exact":
            return tuple(words) == self.words
        if self.kind == "prefix":
            return tuple(words[: len(self.words)]) == self.words
        return self.regex is not None and self.regex.fullmatch(" ".join(words)) is not None

    def mentioned_in(self, text: str) -> bool:
        """Loose check for a command that did not parse: do the rule's words appear anywhere in it?"""
        if self.regex is not None:
            return self.regex.search(text) is not None
        words = r"\s+".join(re.escape(w) for w in self.words)
        return re.search(rf"(?<![\w./-]){words}(?![\w./-])", text) is not None


class _Domain:
    __slots__ = ("host",)

    def __init__(self, spec: str) -> None:
        if not spec.startswith("domain:") or not spec[7:].strip():
            raise RuleError("WebFetch takes domain:<host>")
        self.host = spec[7:].strip().lower()

    def matches(self, url: object) -> bool:
        host = (urlsplit(url).hostname or "") if isinstance(url, str) else ""
        return host == self.host or host.endswith("." + self.host)


_Matcher: TypeAlias = "_PathPattern | _BashPattern | _Domain | None"


def _compile(rule: Rule) -> _Matcher:
    spec = rule.specifier
    if spec is None:
        return None
    if rule.tool == "Bash":
        return _BashPattern(spec)
    if rule.tool in _PATH_RULE_TOOLS:
        return _PathPattern(spec)
    if rule.tool == "WebFetch":
        return _Domain(spec)
    raise RuleError(f"{rule.tool} rules take no specifier; write just {rule.tool}")


def _governs(rule_tool: str, tool: str) -> bool:
    """Does a rule written for `rule_tool` apply to calls of `tool`?"""
    if rule_tool == tool or tool in _PATH_RULE_TOOLS.get(rule_tool, ()):
        return True
    if rule_tool.startswith("mcp__"):
        server = rule_tool.removesuffix("__*")
        # `mcp__server` names a whole server; `mcp__server__tool` (no wildcard) names one tool
        whole_server = rule_tool.endswith("__*") or "__" not in rule_tool[5:]
        return whole_server and tool.startswith(server + "__")
    return False


# ---------------------------------------------------------------- what a call touches


def inspect_call(tool: str, args: Mapping[str, Any], root: Path, cwd: Path | None = None) -> CallView:
    """The paths (or, for Bash, the simple commands) a call touches. `cwd`: where Bash starts (default: root)."""
    root = root.resolve()
    if tool == "Bash":
        command = args.get("command")
        return CallView(tool, args, bash=inspect_command(command if isinstance(command, str) else "", root, cwd))
    targets: list[PathTarget] = []
    if tool in _SEARCH_TOOLS:
        where = args.get("path")
        search = _target(where if isinstance(where, str) and where else ".", root, root, directory=True)
        targets.append(search)
        pattern = args.get("pattern")
        if tool == "Glob" and isinstance(pattern, str) and (prefix := _static_prefix(pattern)):
            targets.append(_target(prefix, search.path, root, directory=True))
    else:
        for key in ("file_path", "notebook_path", "path"):
            value = args.get(key)
            if isinstance(value, str) and value:
                targets.append(_target(value, root, root, directory=False))
    return CallView(tool, args, tuple(targets))


def _target(raw: str, base: Path, root: Path, *, directory: bool) -> PathTarget:
    path = resolve(base, raw)
    lexical = Path(os.path.normpath(base / os.path.expanduser(raw)))
    return PathTarget(raw, path, lexical, directory, inside(root, path))


def _static_prefix(pattern: str) -> str:
    """The leading directories of a glob pattern before its first wildcard (`/etc/*.conf` → `/etc`)."""
    kept: list[str] = []
    for part in pattern.split("/"):
        if any(c in part for c in "*?[{"):
            break
        kept.append(part)
    prefix = "/".join(kept)
    return "/" if not prefix and pattern.startswith("/") else prefix


def inspect_command(command: str, root: Path, cwd: Path | None = None) -> BashView:
    """Analyse a Bash command line: its simple commands, which are read-only, which reach outside `root`."""
    from . import shell  # the shell parser is imported on the first Bash call, not at startup

    root = root.resolve()
    start = resolve(root, str(cwd)) if cwd is not None else root
    # the Bash tool starts over at the workspace root when its remembered directory is outside or gone
    cwd = start if inside(root, start) and start.is_dir() else root
    analysis = shell.analyze(command)
    views = []
    # Where relative paths point: `cd` moves the shell for the commands after it. Every directory the shell may be
    # in is kept (a `cd` inside `if` or after `||` may not run), and after a `cd` we cannot follow (`cd -`, `cd
    # $X`, `popd`) relative paths are unknowable, so they count as outside.
    cwds: list[Path] | None = [cwd]
    trusted_git = _git_dir_for(root)
    globbing_changed = False
    for cmd in analysis.commands:
        outside, paths = _command_paths(cmd, cwds, root)
        read_only = shell.is_read_only_command(cmd)
        if read_only and cmd.argv and cmd.argv[0] == "git" and not _trusted_git(cwds, trusted_git):
            read_only = False  # a repository the agent may have written itself: its config can run programs
        outside += _follows_links(cmd) + _names_from_data(cmd)
        if globbing_changed and any(_is_glob(w) for w in cmd.argv[1:]):
            outside += ("a glob under changed glob options",)
        globbing_changed = globbing_changed or _changes_globbing(cmd)
        unknown = any(_EXPANSION.search(w) for w in cmd.argv[1:]) or bool(_names_from_data(cmd))
        unknown = unknown or os.path.basename(cmd.argv[0] if cmd.argv else "") == "xargs"
        recursive = _recursive_dirs(cmd, cwds, root)
        views.append(CommandView(cmd, read_only, outside, paths, recursive, unknown))
        cwds = _after_cd(cmd, cwds)
    loose: tuple[str, ...] = ()
    if not analysis.parsed:
        loose = _words_outside(_loose_words(command), [cwd], root, live=True)[0]
    return BashView(command, analysis, tuple(views), loose)


_CD_COMMANDS = frozenset({"cd", "pushd", "popd"})


def _after_cd(cmd: SimpleCommand, cwds: list[Path] | None) -> list[Path] | None:
    """The directories the shell may be in after `cmd` (None: not knowable)."""
    argv = list(cmd.argv)
    if argv[:1] == ["builtin"]:
        argv = argv[1:]
    if cwds is None:
        return cwds
    if any(a.split("=", 1)[0] == "CDPATH" for a in (*cmd.assignments, *argv)):
        return None  # `cd` resolved through CDPATH from now on
    if not argv:
        return cwds
    if argv[0] in ("eval", "source", "."):
        return None  # code we do not follow
    if argv[0] not in _CD_COMMANDS:
        return cwds
    operands = [ansi_c_value(w) for w in argv[1:] if w == "-" or not w.startswith("-")]
    if argv[0] == "popd" or (argv[0] == "pushd" and not operands):
        return None
    target = operands[0] if operands else "~"
    candidate = _path_candidate(target, live=True)
    if not candidate or target == "-" or candidate != target:  # `cd -`, `$X`, `$'..'`: we cannot tell where
        return None
    if _is_glob(candidate):  # `cd sec*`: wherever it matches
        expanded = [_glob_matches(c, candidate) for c in cwds]
        moved = [m for matches in expanded if matches is not None for m in matches]
        if not moved or None in expanded:
            return None
    else:
        moved = [resolve(c, candidate) for c in cwds]
    return list(dict.fromkeys([*cwds, *moved]))


_EXPANSION = re.compile(r"\$[A-Za-z_{(@*#?!$-]|`")
_OPERATOR = re.compile(r"^[();<>|&]+$")


def _probe(path: Path, kind: str) -> bool:
    """Whether `path` exists (as a file or directory for `kind`), never raising: a word that is no usable path
    (too long, unreadable) is simply not there."""
    try:
        if kind == "dir":
            return path.is_dir()
        if kind == "file":
            return path.is_file()
        return path.exists()
    except (OSError, ValueError):
        return False


def _git_dir_for(start: Path) -> Path | None:
    """The git directory git would use from `start` (a `.git` entry, or a bare repository's own directory)."""
    for directory in (start, *start.parents):
        dot_git = directory / ".git"
        if _probe(dot_git, "any"):
            return dot_git.resolve()
        if (
            _probe(directory / "HEAD", "file")
            and _probe(directory / "objects", "dir")
            and _probe(directory / "refs", "dir")
        ):
            return directory.resolve()
    return None


def _trusted_git(cwds: list[Path] | None, trusted: Path | None) -> bool:
    """True when every directory the shell may be in finds the workspace's own repository."""
    return cwds is not None and all(_git_dir_for(c) == trusted for c in cwds)


_GREPS = frozenset({"grep", "egrep", "fgrep", "zgrep"})
_LINK_FOLLOWING = {
    "grep": ("-R", "--dereference-recursive"),
    "egrep": ("-R", "--dereference-recursive"),
    "fgrep": ("-R", "--dereference-recursive"),
    "rg": ("-L", "--follow"),
    "find": ("-L", "-follow"),
    "tree": ("-l",),
    "du": ("-L", "--dereference"),
    "ls": ("-L", "--dereference"),
    "diff": ("-r", "--recursive"),  # diff follows symbolic links while it recurses
}
_GIT_CONTENT_FREE = frozenset({"status", "branch", "remote", "config", "rev-parse", "describe", "ls-files",
                               "ls-tree", "--version"})  # fmt: skip
_ARCHIVERS = frozenset({"tar", "zip", "rsync", "scp", "7z", "cpio"})


_GLOB_OPTIONS = frozenset({"dotglob", "globstar", "nocaseglob", "extglob", "nullglob", "failglob", "globasciiranges"})


def _changes_globbing(cmd: SimpleCommand) -> bool:
    """`shopt -s dotglob` and friends, or `GLOBIGNORE=...`: globs after it expand as we do not model."""
    if any(a.split("=", 1)[0] == "GLOBIGNORE" for a in (*cmd.assignments, *cmd.argv)):
        return True
    return bool(cmd.argv) and cmd.argv[0] in ("shopt", "set") and bool(_GLOB_OPTIONS & set(cmd.argv[1:]))


def _names_from_data(cmd: SimpleCommand) -> tuple[str, ...]:
    """Options that take the names of the files to read from data (`--files0-from`, `file -f`), and programs
    that can load files named inside their program text (`jq` modules): where they read is unknowable."""
    argv = list(cmd.argv)
    program = os.path.basename(argv[0]) if argv else ""
    found = [a for a in argv[1:] if a.startswith(("--files0-from", "--files-from", "--exclude-from", "--from-file"))]
    if program == "file" and ("-f" in argv or "f" in _short_flags(argv[1:])):
        found.append("file -f")
    if program == "jq" and any("import" in a or "include" in a or a.startswith(("-L", "--library-path")) for a in argv):
        found.append("jq modules")
    return tuple(f"{f} (file names only known when it runs)" for f in found)


def _short_flags(argv: Sequence[str]) -> str:
    return "".join(w[1:] for w in argv if w.startswith("-") and not w.startswith("--") and len(w) > 1)


def _follows_links(cmd: SimpleCommand) -> tuple[str, ...]:
    """A recursive reader told to follow symbolic links may leave the workspace through any link in it."""
    argv = [ansi_c_value(w) for w in cmd.argv]
    flags = _LINK_FOLLOWING.get(os.path.basename(argv[0])) if argv else None
    if not flags:
        return ()
    short = _short_flags(argv[1:])
    if any(f in argv[1:] for f in flags) or any(f[1] in short for f in flags if len(f) == 2):
        return (f"{argv[0]} following symbolic links",)
    return ()


def _recursive_dirs(cmd: SimpleCommand, cwds: list[Path] | None, root: Path) -> tuple[Path, ...]:
    """Directories whose whole contents `cmd` may read (see `CommandView.recursive`)."""
    argv = [ansi_c_value(w) for w in cmd.argv]
    if not argv:
        return ()
    program = os.path.basename(argv[0])
    args = argv[1:]
    bases = cwds if cwds is not None else [root]
    if program == "git":
        return (root,) if _git_shows_contents(args, bases) else ()
    recursive = program in ("rg", "patch", "unzip") or program in _ARCHIVERS
    if program == "find":
        recursive = bool({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprintf", "-fls"} & set(args))
    if program == "diff":
        recursive = bool({"-r", "--recursive"} & set(args)) or "r" in _short_flags(args)
    if program in _GREPS:
        flags = set(_short_flags(args))
        recursive = (
            bool({"-r", "-R", "--recursive", "--dereference-recursive"} & set(args))
            or bool(set("rR") & flags)
            or any(a.startswith("--directories=rec") or a == "recurse" for a in args)
        )
    elif program in ("cp", "scp"):
        recursive = bool(set("rRa") & set(_short_flags(args))) or "--recursive" in args or "--archive" in args
    if not recursive:
        return ()
    dirs = [resolve(b, a) for b in bases for a in args if not a.startswith("-") and _probe(resolve(b, a), "dir")]
    return tuple(dict.fromkeys(dirs or bases))


_GIT_WRITERS = frozenset(
    [
        "checkout",
        "restore",
        "reset",
        "stash",
        "apply",
        "am",
        "merge",
        "pull",
        "rebase",
        "cherry-pick",
        "revert",
        "clean",
        "switch",
        "mv",
        "rm",
        "checkout-index",
        "read-tree",
    ]
)
_GIT_PATCH_FLAGS = frozenset({"-p", "-u", "--patch", "-v", "-vv", "--verbose", "--blob", "--full-diff"})
_GIT_NO_PATCH_FLAGS = frozenset({"--stat", "--shortstat", "--numstat", "--name-only", "--name-status", "--oneline",
                                 "-s", "--no-patch", "--summary"})  # fmt: skip


def _git_shows_contents(args: Sequence[str], bases: Sequence[Path]) -> bool:
    """True when a git command may print the contents of files anywhere in the repository (a patch, a blob, a
    grep), rather than only of the files it names or none at all."""
    words = [a for a in args if not a.startswith("-")]
    sub = words[0] if words else ("--version" if "--version" in args else "")
    flags = set(args)
    if any("%(" in a for a in args) or any(":" in a for a in words[1:]):
        return True  # `HEAD:secrets/key`, `--format=%(raw)`: an object anywhere
    if sub in _GIT_WRITERS and not (sub == "stash" and words[1:2] in (["list"], ["show"])):
        return True  # it may rewrite any file of the working tree (for Edit rules)
    if sub in _GIT_CONTENT_FREE:
        return bool(_GIT_PATCH_FLAGS & flags)
    if sub in ("log", "reflog", "whatchanged", "shortlog", "stash", "tag"):
        patch = bool(_GIT_PATCH_FLAGS & flags) or (sub == "stash" and "show" in words and "--stat" not in flags)
        if not patch:
            return False
    elif sub == "show" and _GIT_NO_PATCH_FLAGS & flags:
        return False
    # limited to paths it names that exist (`git diff -- src/app.py`, `git blame src/app.py`): those are checked
    named = [a for a in words[1:] if any(_probe(b / a, "file") for b in bases)]
    return not named


def _denied_below(matcher: _PathPattern, directory: Path, root: Path, project: str | None) -> bool:
    """True when `matcher` covers some file or folder inside `directory` (a bounded walk, links not followed)."""
    seen = 0
    for current, dirnames, filenames in os.walk(directory):
        base = Path(current)
        for name in (*dirnames, *filenames):
            seen += 1
            if seen > _WALK_LIMIT or matcher.matches(base / name, False, root, project):
                return True  # past the bound, assume the worst
        dirnames[:] = [d for d in dirnames if d != ".git"]
    return False


_WALK_LIMIT = 20_000


def _command_paths(cmd: SimpleCommand, cwds: list[Path] | None, root: Path) -> tuple[tuple[str, ...], tuple[Path, ...]]:
    words = [a.split("=", 1)[1] for a in cmd.assignments if "=" in a]
    words += cmd.argv[1:]
    text_words = _loose_words(cmd.text)
    if cmd.argv and cmd.argv[0] in text_words:
        text_words.remove(cmd.argv[0])  # the program itself may live anywhere (`/usr/bin/git`)
    words += text_words  # also catches redirection targets, which argv does not hold
    return _words_outside(list(dict.fromkeys(words)), cwds, root, live=_has_live_expansion(cmd.text))


def _loose_words(text: str) -> list[str]:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:
        words = text.split()
    return [w for w in words if not _OPERATOR.match(w)]


def _words_outside(
    words: Sequence[str], cwds: list[Path] | None, root: Path, *, live: bool
) -> tuple[tuple[str, ...], tuple[Path, ...]]:
    """The words that reach outside `root` from any of `cwds` (None: the directory is unknowable, so every
    relative path is), and every path the words name, globs expanded (for Read/Edit deny rules)."""
    outside: list[str] = []
    paths: list[Path] = []
    bases = cwds or [root]
    for word in words:
        for candidate in _path_candidates(word, live, bases):
            if candidate in _SAFE_DEVICES:
                continue
            if candidate == "" or (cwds is None and not os.path.isabs(os.path.expanduser(candidate))):
                if word not in outside:
                    outside.append(word)  # its value is only known when the shell runs: it could be anywhere
                continue
            for base in bases:
                # bash expands a glob (or, when nothing matches, passes the word on as it is): every match counts
                matches = _glob_matches(base, candidate) if _is_glob(candidate) else []
                if matches is None:  # too many matches, or a pattern we cannot expand: it could reach anywhere
                    if word not in outside:
                        outside.append(word)
                    continue
                found = matches or [resolve(base, candidate)]
                paths += found
                if any(not inside(root, path) for path in found) and word not in outside:
                    outside.append(word)
    return tuple(outside), tuple(dict.fromkeys(paths))


_GLOB_LIMIT = 500


def _is_glob(text: str) -> bool:
    return any(c in text for c in "*?[")


def _glob_matches(base: Path, pattern: str) -> list[Path] | None:
    """What a glob word expands to from `base` (as bash would: dotfiles only for a leading dot); None when that is
    unknowable: more matches than the cap, or a pattern we cannot expand."""
    import glob
    import itertools

    try:
        found = list(itertools.islice(glob.iglob(os.path.expanduser(pattern), root_dir=base), _GLOB_LIMIT + 1))
    except (OSError, ValueError, re.error):
        return None
    return None if len(found) > _GLOB_LIMIT else [resolve(base, match) for match in found]


def _path_candidates(word: str, live: bool, bases: Sequence[Path]) -> list[str]:
    """The paths a word may name (`""`: unknowable). Besides the word itself: the value of `--opt=value` and of
    `name=value` (`dd if=~/x`: bash expands `~` there too), and every tail of a short-option cluster that looks like
    a path or names an existing file (`-uf/etc/passwd`, `-C/etc`, `-fsecrets/key`)."""
    if word in ("", "-", "--"):
        return []
    raw: list[str] = []
    if word.startswith("-"):
        if "=" in word:
            raw.append(word.split("=", 1)[1])
        elif not word.startswith("--"):
            for k in range(2, len(word)):
                tail = word[k:]
                if "/" in tail or tail.startswith(("~", ".")) or any(_probe(b / tail, "any") for b in bases):
                    raw.append(tail)
    else:
        raw.append(word)
        if "=" in word:
            raw.append(word.split("=", 1)[1])
    out: list[str] = []
    for text in raw:
        candidate = _path_candidate(text, live)
        if candidate is not None:
            out.append(candidate)
    return out


def _path_candidate(word: str, live: bool) -> str | None:
    """The path one word names — a glob stays a glob — (`""`: unknowable), or None when it names nothing."""
    if word in ("", "-", "--"):
        return None
    if "$'" in word:
        word = ansi_c_value(word)  # `$'\x2fetc'` is `/etc`
    elif '$"' in word:
        return ""  # a translated string: its text depends on the locale's catalogue
    if word.startswith("~") and word != "~" and not word.startswith("~/"):
        return ""  # `~-` (the previous directory), `~+`, `~user`: only the shell knows where
    if live and _EXPANSION.search(word):
        return ""
    if "{" in word and ("," in word or ".." in word):
        return ""  # brace expansion: `{/etc/passwd,x}`
    return word


def _has_live_expansion(text: str) -> bool:
    """True when `text` holds a `$...` or backtick expansion outside single quotes."""
    single = double = escaped = False
    for i, char in enumerate(text):
        if escaped:
            escaped = False
        elif char == "\\" and not single:
            escaped = True
        elif char == "'" and not double:
            single = not single
        elif char == '"' and not single:
            double = not double
        elif not single and _EXPANSION.match(text, i):
            return True
    return False


HIDDEN: tuple[str, ...] = ("\x00hidden",)
"""A variant standing for "this runs a command line we cannot read": every deny and ask rule on Bash applies."""
_HIDING_VARIABLES = frozenset({"BASH_ENV", "ENV", "PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS4", "SHELLOPTS",
                               "BASHOPTS", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_EXTERNAL_DIFF",
                               "GIT_PAGER", "PAGER", "EDITOR", "VISUAL", "LD_PRELOAD", "IFS"})  # fmt: skip
_SCRIPT_ARGUMENTS = _WRAPPERS | {"trap", "script"}
"""Programs that may run one of their arguments as a shell command line (`trap 'rm f' EXIT`, `su -c 'rm f'`,
`env -S 'rm f'`, `watch 'rm f'`): every argument with a space in it is analysed as a script."""


def _variants(cmd: SimpleCommand, depth: int = 0) -> Iterator[tuple[str, ...]]:
    """Ways a deny/ask rule may see a command: as written, without wrappers (`sudo`, `env`, `xargs`), by the
    program's base name, and the commands inside `sh -c '...'`, `eval`, `find -exec`, `trap` and the like; or
    `HIDDEN` when it runs a command line we cannot read. Programs started from script files (`bash build.sh`,
    `make`) and code in other languages (`python -c`) are beyond any rule on Bash."""
    if any(a.split("=", 1)[0] in _HIDING_VARIABLES for a in cmd.assignments):
        yield HIDDEN  # `BASH_ENV=<(echo rm f) bash -c true`
    yield (*cmd.assignments, *cmd.argv)
    yield from _program_variants([ansi_c_value(w) for w in cmd.argv], depth)


def _program_variants(argv: list[str], depth: int) -> Iterator[tuple[str, ...]]:
    if not argv:
        return
    program = os.path.basename(argv[0])
    if _EXPANSION.search(argv[0]) or any(c in argv[0] for c in "*?[{"):
        yield HIDDEN  # `$x f`, `${x:-rm} f`, `$(echo rm) f`, `rm{,} f`, `r? f`: the name is only known when it runs
        return
    yield tuple(argv)
    yield (program, *argv[1:])
    if depth >= 4:
        yield HIDDEN  # nested deeper than we follow
        return
    if program in _WRAPPERS:
        for start in range(1, min(len(argv), _MAX_TAILS)):
            yield from _program_variants(argv[start:], depth + 1)
    if program in _SCRIPT_ARGUMENTS:
        for word in argv[1:]:
            if any(c.isspace() for c in word):
                yield from _script_variants(word, depth + 1)
    if program == "trap" and len(argv) > 1:
        yield from _script_variants(argv[1], depth + 1)
    if program == "git" and _git_unknown_subcommand(argv[1:]):
        yield HIDDEN  # an alias (`git config alias.zz '!rm f'`, then `git zz`) or a `git-zz` program
    if program == "git" and _git_runs_config(argv[1:]):
        yield HIDDEN  # `git -c alias.x='!rm f' x`, `git -c core.pager=...`
    if program == "sed" and _sed_runs_commands(argv[1:]):
        yield HIDDEN  # `sed 'e rm f'`
    if _hidden_input(program, argv[1:]):
        yield HIDDEN
    yield from _nested(argv, depth)


def _script_variants(script: str, depth: int) -> Iterator[tuple[str, ...]]:
    from . import shell

    analysis = shell.analyze(script)
    if not analysis.parsed:
        yield HIDDEN
        return
    for cmd in analysis.commands:
        yield from _variants(cmd, depth)


_GIT_COMMANDS = frozenset(
    [
        "add",
        "am",
        "annotate",
        "apply",
        "archive",
        "bisect",
        "blame",
        "branch",
        "bundle",
        "cat-file",
        "check-attr",
        "check-ignore",
        "checkout",
        "cherry",
        "cherry-pick",
        "clean",
        "clone",
        "commit",
        "commit-tree",
        "config",
        "count-objects",
        "describe",
        "diff",
        "diff-files",
        "diff-index",
        "diff-tree",
        "difftool",
        "fetch",
        "for-each-ref",
        "format-patch",
        "fsck",
        "gc",
        "grep",
        "hash-object",
        "help",
        "init",
        "log",
        "ls-files",
        "ls-remote",
        "ls-tree",
        "merge",
        "merge-base",
        "mergetool",
        "mv",
        "name-rev",
        "notes",
        "pull",
        "push",
        "range-diff",
        "rebase",
        "reflog",
        "remote",
        "repack",
        "replace",
        "reset",
        "restore",
        "rev-list",
        "rev-parse",
        "revert",
        "rm",
        "shortlog",
        "show",
        "show-branch",
        "show-ref",
        "sparse-checkout",
        "stash",
        "status",
        "submodule",
        "switch",
        "symbolic-ref",
        "tag",
        "update-index",
        "update-ref",
        "verify-commit",
        "verify-tag",
        "version",
        "whatchanged",
        "worktree",
        "write-tree",
        "maintenance",
    ]
)


def _git_unknown_subcommand(args: Sequence[str]) -> bool:
    skip = False
    for word in args:
        if skip:
            skip = False
        elif word in ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"):
            skip = True
        elif not word.startswith("-"):
            return word not in _GIT_COMMANDS
    return False


def _git_runs_config(args: Sequence[str]) -> bool:
    for word in args:
        if not word.startswith("-"):
            return False  # the subcommand: global options are over
        if word in ("-c", "--config-env") or word.startswith(("-c", "--config-env=")):
            return True
    return False


def _sed_runs_commands(args: Sequence[str]) -> bool:
    from .shell import sed_script_problem

    scripts = [a for a in args if not a.startswith("-")][:1]
    scripts += [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-e", "--expression")]
    return any("runs a command" in (sed_script_problem(s) or "") for s in scripts) or any(
        a.startswith(("-f", "--file")) for a in args
    )


def _hidden_input(program: str, args: Sequence[str]) -> bool:
    """A shell or `eval` running a command line we cannot read: from stdin, a pipe or a here-string (`echo rm x |
    bash`, `bash <<< "rm x"`), a device or a process substitution (`bash /dev/stdin`, `source <(echo rm x)`)."""
    if program == "eval":
        return any(_EXPANSION.search(w) for w in args)
    if program in ("source", "."):
        return not args or args[0].startswith(("/dev/", "/proc/", "<(", ">("))
    if program in _SHELLS:
        if _shell_reads_stdin(args):
            return True
        operand = next((w for w in args if not w.startswith(("-", "+"))), "")
        return operand.startswith(("/dev/", "/proc/", "<(", ">("))
    return False


def _shell_reads_stdin(args: Sequence[str]) -> bool:
    """A shell with these arguments reads its commands from stdin (no `-c`, no script operand, or `-s`)."""
    skip = False
    for word in args:
        if skip:
            skip = False
            continue
        if word in _SHELL_OPTIONS_WITH_ARG:
            skip = True
            continue
        if word == "--":
            continue
        if word.startswith(("-", "+")):
            if not word.startswith("--") and "s" in word[1:]:
                return True
            if not word.startswith("--") and "c" in word[1:]:
                return False  # `-c script`: analysed by `_nested`
            continue
        return False  # a script file
    return True


_ANSI_C = re.compile(r"\$'((?:[^'\\]|\\.)*)'", re.DOTALL)
_ANSI_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def ansi_c_value(word: str) -> str:
    """`word` with each `$'...'` (bash's ANSI-C quoting) replaced by the text it stands for: `$'\\x2ftmp'` is
    `/tmp`, `$'rm'` is `rm`. Other text is left as it is."""
    if "$'" not in word:
        return word
    return _ANSI_C.sub(lambda m: _ansi_c_decode(m.group(1)), word)


def _ansi_c_decode(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if char != "\\" or i + 1 == len(body):
            out.append(char)
            i += 1
            continue
        code = body[i + 1]
        i += 2
        if code in _ANSI_ESCAPES:
            out.append(_ANSI_ESCAPES[code])
        elif code in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[code]
            digits = re.match(f"[0-9A-Fa-f]{{1,{width}}}", body[i:])
            if digits:
                out.append(chr(min(int(digits.group(0), 16), 0x10FFFF)))
                i += len(digits.group(0))
            else:
                out.append("\\" + code)
        elif code in "01234567":
            digits = re.match(r"[0-7]{1,3}", body[i - 1 :])
            assert digits is not None
            out.append(chr(int(digits.group(0), 8) & 0xFF))
            i += len(digits.group(0)) - 1
        elif code == "c" and i < len(body):
            out.append(chr(ord(body[i]) & 0x1F))
            i += 1
        else:
            out.append(code)  # \\ \' \" \? and unknown escapes
    return "".join(out)


def _nested(argv: list[str], depth: int) -> Iterator[tuple[str, ...]]:
    program = os.path.basename(argv[0])
    scripts: list[str] = []
    if program in _SHELLS:
        options = [w for w in argv[1:] if w.startswith("-") and not w.startswith("--")]
        if any("c" in w[1:] for w in options):
            # `bash -c -e 'rm f'`, `bash -c -- 'rm f'`: we do not model where the script is; every operand may be
            scripts += [w for w in argv[1:] if not w.startswith(("-", "+"))]
    elif program == "eval":
        scripts.append(" ".join(argv[1:]))
    elif program == "find":
        for i, word in enumerate(argv):
            if word in ("-exec", "-execdir", "-ok", "-okdir"):
                inner = []
                for w in argv[i + 1 :]:
                    if w in (";", "+"):
                        break
                    inner.append(w)
                if inner:
                    yield from _program_variants(inner, depth + 1)
    for script in scripts:
        yield from _script_variants(script, depth + 1)


# ---------------------------------------------------------------- rule sets


class _Entry:
    __slots__ = ("matcher", "rule")

    def __init__(self, rule: Rule) -> None:
        self.rule = rule
        self.matcher = _compile(rule)


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
        self, tool: str, args: Mapping[str, Any], *, root: Path, cwd: Path | None = None, read_only: bool = False
    ) -> Verdict | None:
        """deny, ask or allow for this call by the rules alone; None when no rule decides."""
        found = self.match(inspect_call(tool, args, root, cwd), root, read_only=read_only)
        return found.verdict if found else None

    def match(self, call: CallView, root: Path, *, read_only: bool = False) -> RuleMatch | None:
        """The deciding rule, deny > ask > allow. `read_only`: the tool only reads, so paths inside the workspace
        need no allow rule of their own."""
        for kind in ("deny", "ask"):
            if rule := self._first_hit(kind, call, root):
                return RuleMatch(kind, rule)
        if rule := self._allowed(call, root, read_only):
            return RuleMatch("allow", rule)
        return None

    def _first_hit(self, kind: RuleKind, call: CallView, root: Path) -> Rule | None:
        """The first `kind` rule touching any part of the call (any target, any simple command)."""
        for entry in self._entries[kind]:
            if call.bash is not None and entry.rule.tool in _PATH_RULE_TOOLS:
                if _bash_touches(entry, call.bash, root):
                    return entry.rule
                continue
            if not _governs(entry.rule.tool, call.tool):
                continue
            matcher = entry.matcher
            if matcher is None:
                return entry.rule
            if isinstance(matcher, _BashPattern) and call.bash is not None:
                if _bash_hit(matcher, call.bash):
                    return entry.rule
            elif isinstance(matcher, _PathPattern):
                project = entry.rule.project_root
                for t in call.targets:
                    if any(matcher.matches(p, t.directory, root, project) for p in (t.path, t.lexical)):
                        return entry.rule
            elif isinstance(matcher, _Domain) and matcher.matches(call.args.get("url")):
                return entry.rule
        return None

    def _allowed(self, call: CallView, root: Path, read_only: bool) -> Rule | None:
        entries = [e for e in self._entries["allow"] if _governs(e.rule.tool, call.tool)]
        if whole := next((e.rule for e in entries if e.matcher is None), None):
            return whole
        if call.bash is not None:
            return _bash_allowed(entries, call.bash)
        url = call.args.get("url")
        if domain := next((e.rule for e in entries if isinstance(e.matcher, _Domain) and e.matcher.matches(url)), None):
            return domain
        first: Rule | None = None
        for target in call.targets:
            hit = next(
                (
                    e.rule
                    for e in entries
                    if isinstance(e.matcher, _PathPattern)
                    and e.matcher.matches(target.path, target.directory, root, e.rule.project_root)
                ),
                None,
            )
            if hit is None and not (read_only and target.inside):
                return None
            first = first or hit
        return first


def _bash_hit(matcher: _BashPattern, bash: BashView) -> bool:
    """True when a deny/ask rule may apply: some form of some simple command matches it, or a command runs a
    command line we cannot read (fail closed: `echo rm x | bash` may well be `rm x`)."""
    if not bash.analysis.parsed:
        return True  # we cannot tell what a command we could not parse runs: fail closed
    if matcher.kind == "exact" and bash.command.strip() == matcher.exact:
        return True
    if matcher.mentioned_in(bash.command) or matcher.mentioned_in(_dequoted(bash.command)):
        return True  # named anywhere (an option value such as `--filter='rm f'`, a git alias): fail closed
    return any(words == HIDDEN or matcher.matches(words) for view in bash.commands for words in _variants(view.command))


def _dequoted(text: str) -> str:
    """`text` with `$'...'` decoded and quotes and backslashes dropped: `r''m` and `r\\m` read as `rm`."""
    return re.sub(r"[\\'\"]", "", ansi_c_value(text))


def _bash_touches(entry: _Entry, bash: BashView, root: Path) -> bool:
    """Read rules see every path a command names (`cat .env`); Edit/Write rules those of commands that write."""
    matcher = entry.matcher
    if not isinstance(matcher, _PathPattern):
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
        program = os.path.basename(view.command.argv[0]) if view.command.argv else ""
        if view.unknown and program not in _NO_FILES:
            return True  # `cat "$f"`, `xargs sed -i`: the file is only known when it runs
        if entry.rule.tool != "Read" and bash.analysis.writes and view.outside:
            return True  # `echo x > "$f"`: a redirection to a place only known when it runs
    return False


_NO_FILES = frozenset({"echo", "printf", "true", "false", "test", "[", "[[", "export", "local", "declare", "return",
                       "exit", "set", "shift", "basename", "dirname", "seq", "expr"})  # fmt: skip
"""Commands that take words, not files: an expansion among their arguments reads nothing."""


def _bash_allowed(entries: list[_Entry], bash: BashView) -> Rule | None:
    """Allowed only when every simple command is covered by an allow rule or is read-only and stays inside; a
    writing redirection needs a rule for the whole command line."""
    if not bash.analysis.parsed:
        return None
    patterns = [(e.rule, e.matcher) for e in entries if isinstance(e.matcher, _BashPattern)]
    # an exact rule for the whole line is exactly what the user approved, redirections and all
    exact = next((r for r, m in patterns if m.kind == "exact" and m.exact == bash.command.strip()), None)
    if exact is not None or bash.analysis.writes:
        return exact
    first: Rule | None = None
    for view in bash.commands:
        words = (*view.command.assignments, *view.command.argv)
        hit = next((r for r, m in patterns if m.matches(words)), None)
        if hit is None and not (view.read_only and not view.outside):
            return None
        first = first or hit
    return first
