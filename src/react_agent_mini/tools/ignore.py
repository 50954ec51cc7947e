"""Which files a search sees when ripgrep is missing: glob translation, ignore files, rg's file types, a walker.

The pure-Python fallback of Grep and Glob must list exactly the files ripgrep 14 lists when run as
`rg --files --hidden --no-require-git --no-ignore-global -g '!.git'`, so this module mirrors rg's rules:

* Globs follow gitignore syntax: `*` and `?` stay inside one path component, `**` as a whole component spans
  any depth, `[...]`/`[!...]` are classes, `{a,b}` alternates, `\\` escapes. A pattern with no slash (other than
  a trailing one) matches the name at any depth; one with a slash is anchored to its file's directory.
* Each directory may hold `.rgignore`, `.ignore`, `.gitignore`, and (beside `.git`) `.git/info/exclude`. For each
  kind the deepest directory with a matching rule decides (last matching rule of that file wins); kinds rank in
  that order. `.gitignore`/exclude rules above the first directory holding `.git` are not consulted. Ignore
  files in the directories above the search path count too, as in rg.
* Override globs (`-g`) come first: a matching `!glob` skips the entry, a matching glob keeps it whatever the
  ignore files say, and once any positive glob exists, files matching none are skipped.
* Type filters see file names only, and only when no override decided.
* Symbolic links are never followed nor listed; explicit search paths are never filtered.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple

IGNORE = 1
"""A match result: the entry is skipped."""
WHITELIST = 2
"""A match result: the entry is kept (a negated ignore rule, or a positive override glob)."""

_IGNORE_FILES = (".rgignore", ".ignore", ".gitignore")
"""Ignore files by precedence; `.git/info/exclude` ranks after them."""
_GLOB_META = frozenset("*?[]{}\\!")
"""Characters that make an override glob more than a literal name."""


class GlobError(ValueError):
    """A glob that cannot be translated (e.g. an unclosed `{`)."""


def translate_glob(pattern: str) -> str:
    """A regex source that matches (with `fullmatch`) the `/`-separated relative paths `pattern` matches."""
    out: list[str] = []
    i, n, braces = 0, len(pattern), 0
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            whole = (i == 0 or pattern[i - 1] == "/") and (j == n or pattern[j] == "/")
            if j - i >= 2 and whole:
                if j == n:
                    out.append(".*")  # trailing `**`: everything below
                    i = j
                else:
                    out.append("(?:[^/]*/)*")  # `**/`: zero or more directories
                    i = j + 1
                continue
            out.append("[^/]*")
            i = j
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
            cls, i = _translate_class(pattern, i)
            out.append(cls)
            continue
        elif c == "{":
            braces += 1
            out.append("(?:")
        elif c == "," and braces:
            out.append("|")
        elif c == "}" and braces:
            braces -= 1
            out.append(")")
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        else:
            out.append(re.escape(c))
        i += 1
    if braces:
        raise GlobError(f"unclosed '{{' in glob {pattern}")
    return "".join(out)


def _translate_class(pattern: str, start: int) -> tuple[str, int]:
    """`[...]` at `start` as a regex class, and the index after it; an unclosed `[` is a literal."""
    j = start + 1
    negate = j < len(pattern) and pattern[j] in "!^"
    if negate:
        j += 1
    body: list[str] = []
    first = True
    while j < len(pattern):
        c = pattern[j]
        if c == "]" and not first:
            # A negated class never matches the separator (gitignore's FNM_PATHNAME).
            return "[" + ("^/" if negate else "") + "".join(body) + "]", j + 1
        if c == "\\" and j + 1 < len(pattern):
            body.append(re.escape(pattern[j + 1]))
            j += 2
        else:
            body.append("-" if c == "-" else re.escape(c))
            j += 1
        first = False
    return re.escape("["), start + 1


class Rule(NamedTuple):
    """One line of an ignore file (or one override glob)."""

    regex: re.Pattern[str]
    negated: bool
    dir_only: bool


class RuleSet:
    """The rules of one ignore file, matched against paths relative to its directory."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.rules = tuple(rules)
        # One alternation rejects the common case (no rule matches) in a single regex call.
        self._any = re.compile("|".join(f"(?:{r.regex.pattern})" for r in rules)) if rules else None

    def __bool__(self) -> bool:
        return bool(self.rules)

    def matched(self, rel: str, is_dir: bool) -> int:
        """IGNORE, WHITELIST, or 0 when no rule matches; the last matching rule wins."""
        if self._any is None or self._any.fullmatch(rel) is None:
            return 0
        for rule in reversed(self.rules):
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.fullmatch(rel):
                return WHITELIST if rule.negated else IGNORE
        return 0


def parse_rule(line: str) -> Rule | None:
    """One gitignore line as a Rule, or None for blanks and comments."""
    line = line.rstrip("\r")
    if not line or line.startswith("#"):
        return None
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]
    negated = line.startswith("!")
    if negated or line.startswith(("\\!", "\\#")):
        line = line[1:]  # drops the `!`, or the backslash of an escaped leading `!`/`#`
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    # A slash anywhere anchors the pattern to the file's directory; otherwise it matches a name at any depth.
    line = line.lstrip("/") if "/" in line else "**/" + line
    try:
        return Rule(re.compile(translate_glob(line), re.DOTALL), negated, dir_only)
    except (GlobError, re.error):
        return None  # like git, a broken line is skipped rather than failing the search


def parse_rules(text: str) -> RuleSet:
    """All the rules of an ignore file's text."""
    return RuleSet([r for r in map(parse_rule, text.split("\n")) if r is not None])


class Overrides:
    """rg's `-g/--glob` globs, matched against paths relative to the workspace root."""

    def __init__(self, globs: Sequence[str]) -> None:
        rules: list[Rule] = []
        for glob in globs:
            rule = parse_rule(glob)
            if rule is None:
                continue
            # Override globs read the other way round: a plain glob keeps, `!glob` skips.
            rules.append(rule._replace(negated=not rule.negated))
        self.rules = RuleSet(rules)
        self.has_whitelist = any(r.negated for r in rules)
        # The usual case is only `!.git`: a set lookup on the name then replaces a regex per entry.
        literal = all(g.startswith("!") and not _GLOB_META.intersection(g[1:]) and "/" not in g for g in globs)
        self.skip_names: frozenset[str] | None = frozenset(g[1:] for g in globs) if literal else None

    def matched(self, rel: str, is_dir: bool) -> int:
        found = self.rules.matched(rel, is_dir)
        if found:
            return found
        if self.has_whitelist and not is_dir:
            return IGNORE
        return 0


# rg 14.1.0's definitions (`rg --type-list`) for the common types; rg itself knows ~200.
FILE_TYPES: dict[str, tuple[str, ...]] = {
    "asciidoc": ("*.adoc", "*.asc", "*.asciidoc"),
    "c": ("*.[chH]", "*.[chH].in", "*.cats"),
    "cmake": ("*.cmake", "CMakeLists.txt"),
    "config": ("*.cfg", "*.conf", "*.config", "*.ini"),
    "cpp": (
        *("*.[ChH]", "*.[ChH].in", "*.[ch]pp", "*.[ch]pp.in", "*.[ch]xx", "*.[ch]xx.in"),
        *("*.cc", "*.cc.in", "*.hh", "*.hh.in", "*.inl"),
    ),
    "csharp": ("*.cs",),
    "css": ("*.css", "*.scss"),
    "csv": ("*.csv",),
    "dart": ("*.dart",),
    "docker": ("*Dockerfile*",),
    "elixir": ("*.eex", "*.ex", "*.exs", "*.heex", "*.leex", "*.livemd"),
    "erlang": ("*.erl", "*.hrl"),
    "go": ("*.go",),
    "graphql": ("*.graphql", "*.graphqls"),
    "h": ("*.h", "*.hh", "*.hpp"),
    "haskell": ("*.c2hs", "*.cpphs", "*.hs", "*.hsc", "*.lhs"),
    "html": ("*.ejs", "*.htm", "*.html"),
    "java": ("*.java", "*.jsp", "*.jspx", "*.properties"),
    "js": ("*.cjs", "*.js", "*.jsx", "*.mjs", "*.vue"),
    "json": ("*.json", "*.sarif", "composer.lock"),
    "jsonl": ("*.jsonl",),
    "julia": ("*.jl",),
    "kotlin": ("*.kt", "*.kts"),
    "less": ("*.less",),
    "lua": ("*.lua",),
    "make": (
        *("*.mak", "*.mk", "[Gg][Nn][Uu]makefile", "[Gg][Nn][Uu]makefile.am", "[Gg][Nn][Uu]makefile.in"),
        *("[Mm]akefile", "[Mm]akefile.am", "[Mm]akefile.in"),
    ),
    "markdown": ("*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mdx", "*.mkd", "*.mkdn"),
    "md": ("*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mdx", "*.mkd", "*.mkdn"),
    "nix": ("*.nix",),
    "ocaml": ("*.ml", "*.mli", "*.mll", "*.mly"),
    "perl": ("*.PL", "*.perl", "*.pl", "*.plh", "*.plx", "*.pm", "*.t"),
    "php": ("*.php", "*.php3", "*.php4", "*.php5", "*.php7", "*.php8", "*.pht", "*.phtml"),
    "protobuf": ("*.proto",),
    "py": ("*.py", "*.pyi"),
    "python": ("*.py", "*.pyi"),
    "r": ("*.R", "*.Rmd", "*.Rnw", "*.r"),
    "rst": ("*.rst",),
    "ruby": ("*.gemspec", "*.rb", "*.rbw", ".irbrc", "Gemfile", "Rakefile", "config.ru"),
    "rust": ("*.rs",),
    "scala": ("*.sbt", "*.scala"),
    "sh": ("*.bash", "*.bashrc", "*.csh", "*.cshrc", "*.ksh", "*.kshrc", "*.sh", "*.tcsh", "*.zsh"),
    "sql": ("*.psql", "*.sql"),
    "svelte": ("*.svelte",),
    "swift": ("*.swift",),
    "tex": ("*.bib", "*.cls", "*.dtx", "*.ins", "*.ltx", "*.sty", "*.tex"),
    "toml": ("*.toml", "Cargo.lock"),
    "ts": ("*.cts", "*.mts", "*.ts", "*.tsx"),
    "txt": ("*.txt",),
    "typescript": ("*.cts", "*.mts", "*.ts", "*.tsx"),
    "vue": ("*.vue",),
    "xml": ("*.dtd", "*.rng", "*.sch", "*.xhtml", "*.xjb", "*.xml", "*.xml.dist", "*.xsd", "*.xsl", "*.xslt"),
    "yaml": ("*.yaml", "*.yml"),
    "zig": ("*.zig",),
}
"""Type name → file-name globs. `sh` omits rg's dotfile names (`.bashrc`, `zshrc`...) for brevity."""


class UnknownType(ValueError):
    """A `type` the fallback does not know."""


class TypeFilter:
    """rg's `-t`: keeps files whose name matches one of the selected types' globs."""

    def __init__(self, names: Sequence[str]) -> None:
        globs: list[str] = []
        for name in names:
            if name not in FILE_TYPES:
                raise UnknownType(name)
            globs.extend(FILE_TYPES[name])
        self._regex = re.compile("|".join(f"(?:{translate_glob(g)})" for g in globs), re.DOTALL)

    def matched(self, name: str) -> int:
        return WHITELIST if self._regex.fullmatch(name) else IGNORE


class _Dir(NamedTuple):
    """The ignore rules a directory contributes (by kind), and whether it holds `.git`."""

    prefix: str
    """The directory's absolute path plus a separator: stripped from a path to get the path relative to it."""
    kinds: tuple[RuleSet | None, ...]
    """`.rgignore`, `.ignore`, `.gitignore`, `.git/info/exclude`."""
    has_git: bool


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return None


def _load_dir(path: str, names: set[str] | None) -> _Dir | None:
    """The ignore rules of directory `path`; `names` are its entries when already listed (saves stats)."""

    def has(name: str) -> bool:
        return name in names if names is not None else os.path.lexists(os.path.join(path, name))

    kinds: list[RuleSet | None] = []
    for name in _IGNORE_FILES:
        text = _read(os.path.join(path, name)) if has(name) else None
        rules = parse_rules(text) if text else None
        kinds.append(rules or None)
    has_git = has(".git")
    exclude = _read(os.path.join(path, ".git", "info", "exclude")) if has_git else None
    excluded = parse_rules(exclude) if exclude else None
    kinds.append(excluded or None)
    if not has_git and not any(kinds):
        return None
    return _Dir(path.rstrip(os.sep) + os.sep, tuple(kinds), has_git)


def _ignored(chain: Sequence[_Dir], path: str, is_dir: bool) -> int:
    """What the ignore files say about absolute `path`; `chain` runs from the deepest directory up."""
    results = [0, 0, 0, 0]
    saw_git = False
    for level in chain:
        rel: str | None = None
        for kind, rules in enumerate(level.kinds):
            if rules is None or results[kind] or (kind >= 2 and saw_git):
                continue
            if rel is None:
                rel = path[len(level.prefix) :].replace(os.sep, "/")
            results[kind] = rules.matched(rel, is_dir)
        saw_git = saw_git or level.has_git
    for result in results:
        if result:
            return result
    return 0


def _parents(start: str) -> list[_Dir]:
    """Ignore rules of the directories above `start` (its ancestors), deepest first."""
    chain: list[_Dir] = []
    current = os.path.dirname(start)
    while True:
        level = _load_dir(current, None)
        if level is not None:
            chain.append(level)
        parent = os.path.dirname(current)
        if parent == current:
            return chain
        current = parent


def walk_files(
    start: str,
    *,
    root: str,
    overrides: Overrides | None = None,
    types: TypeFilter | None = None,
    max_depth: int | None = None,
    stop: Callable[[], bool] | None = None,
) -> Iterator[str]:
    """Absolute paths of the files rg would search under `start` (absolute, resolved); any order.

    `root` is the workspace root that override globs are relative to; `max_depth` counts `start`'s own
    files as depth 1, like `rg --max-depth`; `stop` is polled once per directory to abandon the walk."""
    try:
        mode = os.lstat(start).st_mode
    except OSError:
        return
    if not stat.S_ISDIR(mode):
        if stat.S_ISREG(mode):
            yield start  # an explicit file is always searched
        return
    root_prefix = root.rstrip(os.sep) + os.sep
    stack: list[tuple[str, int, tuple[_Dir, ...]]] = [(start, 1, tuple(_parents(start)))]
    while stack:
        if stop is not None and stop():
            return
        directory, depth, chain = stack.pop()
        try:
            with os.scandir(directory) as listing:
                entries = list(listing)
        except OSError:
            continue  # unreadable directories are skipped, as `rg --no-messages` does
        level = _load_dir(directory, {e.name for e in entries})
        if level is not None:
            chain = (level, *chain)
        skip_names = overrides.skip_names if overrides is not None else None
        for entry in entries:
            if skip_names is not None and entry.name in skip_names:
                continue
            try:
                if entry.is_symlink():
                    continue  # never followed: a link may point outside the workspace
                is_dir = entry.is_dir(follow_symlinks=False)
                if not is_dir and not entry.is_file(follow_symlinks=False):
                    continue
            except OSError:
                continue
            path = entry.path
            verdict = 0
            if overrides is not None and skip_names is None:
                rel = path[len(root_prefix) :] if path.startswith(root_prefix) else path.lstrip(os.sep)
                verdict = overrides.matched(rel.replace(os.sep, "/"), is_dir)
                if verdict == IGNORE:
                    continue
            if not verdict:
                if chain and _ignored(chain, path, is_dir) == IGNORE:
                    continue
                # Types apply even to entries an ignore file whitelists, as in rg.
                if not is_dir and types is not None and types.matched(entry.name) == IGNORE:
                    continue
            if is_dir:
                if max_depth is None or depth < max_depth:
                    stack.append((path, depth + 1, chain))
            else:
                yield path
