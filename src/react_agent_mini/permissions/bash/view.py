"""A Bash call as the permission check sees it: every simple command with whether it is read-only, the paths it
names (relative to every directory `cd` may have taken the shell to), the directories it reads recursively, what
reaches outside the workspace, and what is only known when it runs. This is the one entry point of `bash/`: the
rules (`rules/ruleset.py`) and the policy read the `BashView` it returns, and ask `variants` about deny rules.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NamedTuple

import msgspec

from ...tools.paths import inside, resolve
from . import programs
from .analysis import ShellAnalysis, SimpleCommand, analyze, is_read_only_command, usage_of
from .expand import Places, ansi_c_value, real
from .touches import OUTSIDE, Touch, after_cd, describe, effects, program_name, recursive_dirs, stays, touched
from .variants import HIDING_VARIABLES, scripts_of
from .words import UNQUOTED, Word

__all__ = ["BashView", "CommandView", "inspect_command"]

_MAX_DEPTH = 4
_MAX_TAILS = 24
_GLOB_OPTIONS = frozenset({"dotglob", "globstar", "nocaseglob", "extglob", "nullglob", "failglob", "globasciiranges"})


class CommandView(msgspec.Struct, frozen=True):
    """One simple command of a Bash call, with what the permission check needs to know about it."""

    command: SimpleCommand
    """The parsed command."""
    read_only: bool
    """True when the command itself cannot change anything (`analysis.is_read_only_command`)."""
    outside: tuple[str, ...]
    """Arguments naming a place outside the workspace, or one that cannot be known before running (`$HOME/x`)."""
    paths: tuple[Path, ...]
    """Every path it names, resolved (for Read/Edit deny rules)."""
    recursive: tuple[Path, ...] = ()
    """Directories the command reads (or, if it writes, changes) the contents of recursively (`grep -r`, `rg`,
    `git show`, `tar`, `find -exec`, `git checkout`): a Read/Edit deny rule covering any file below them applies."""
    unknown: bool = False
    """Some file it works on is only known when it runs (`cat "$f"`, `xargs sed -i`, names read from data, a
    command line it runs that we cannot read)."""
    inert: bool = False
    """It runs nothing its words name (the program table says so), so a Bash deny rule need not look for a
    program's name inside its text (`echo 'rm -rf x'`)."""
    notes: tuple[str, ...] = ()
    """For each of `outside`, what it is (`touches.Touch.notes`), for the reason shown."""


class BashView(msgspec.Struct, frozen=True):
    """A Bash call, analysed."""

    command: str
    """The command line as given."""
    analysis: ShellAnalysis
    """What `analysis.analyze` found."""
    commands: tuple[CommandView, ...]
    """Each simple command, in order."""
    loose_outside: tuple[str, ...] = ()
    """For a command that did not parse: words of it that look like paths outside the workspace."""

    @property
    def outside(self) -> tuple[str, ...]:
        """Every argument that reaches outside the workspace."""
        return tuple(dict.fromkeys([*self.loose_outside, *(a for c in self.commands for a in c.outside)]))

    @property
    def outside_reason(self) -> str:
        """Why `outside` is not empty, as the reason for asking: what each word or command is (a path outside the
        workspace, a value only known when it runs, code bash evaluates, code read from stdin...)."""
        pairs = [(what, OUTSIDE) for what in self.loose_outside]
        for view in self.commands:
            notes = view.notes if len(view.notes) == len(view.outside) else (OUTSIDE,) * len(view.outside)
            pairs += zip(view.outside, notes, strict=True)
        seen: dict[str, str] = {}
        for what, note in pairs:
            seen.setdefault(what, note)
        return describe(list(seen), list(seen.values()))

    @property
    def read_only(self) -> bool:
        """True when the whole command parsed and cannot change anything."""
        return self.analysis.parsed and self.analysis.read_only and all(c.read_only for c in self.commands)


def inspect_command(command: str, root: Path, cwd: Path | None = None) -> BashView:
    """Analyse a Bash command line: its simple commands, which are read-only, what they touch, which reach outside
    `root`. `cwd`: where the shell starts (default: `root`)."""
    root = root.resolve()
    start = resolve(root, str(cwd)) if cwd is not None else root
    # the Bash tool starts over at the workspace root when its remembered directory is outside or gone
    here = start if inside(root, start) and start.is_dir() else root
    analysis = analyze(command)
    assigned = _assigned(analysis)
    places = Places([here], home="HOME" not in assigned, pwd=not assigned & {"PWD", "OLDPWD"})
    git = _git_dir_for(root)
    views = _views(analysis, places, _Context(root, git, _partial_clone(git)), 0)
    loose: tuple[str, ...] = ()
    if not analysis.parsed:
        loose = _loose_outside(command, here, root)
    return BashView(command, analysis, tuple(views), loose)


class _Context(NamedTuple):
    root: Path
    """The workspace."""
    git: Path | None
    """Its git directory: the one repository whose configuration is trusted."""
    partial: bool
    """That repository is a partial clone: reading objects may fetch them over the network."""


def _views(analysis: ShellAnalysis, places: Places, ctx: _Context, depth: int) -> list[CommandView]:
    views: list[CommandView] = []
    globbing_changed = linked = False
    for cmd in analysis.commands:
        after = places if stays(cmd) else after_cd(cmd, places)
        lost = places.cwds is not None and after.cwds is None  # `cd -`, `cd $X`, `popd`: gone where we cannot see
        view = _view(cmd, places, ctx, depth, globbing_changed=globbing_changed, lost=lost)
        if linked and not view.unknown and any(not _lexists(p) for p in view.paths):
            # `ln -s . x && cat x/secrets/key`: a name that is not there yet may be a link made on this line
            view = msgspec.structs.replace(view, unknown=True)
        views.append(view)
        globbing_changed = globbing_changed or _changes_globbing(cmd)
        linked = linked or (not view.read_only and _makes_links(cmd))
        places = after
    if analysis.targets:
        # redirections of compound commands: judged from every directory the shell may have been in
        holder = SimpleCommand(argv=(), text="", targets=analysis.targets)
        touch = touched(holder, places, ctx.root, read_only=True)
        views.append(
            CommandView(
                holder, True, tuple(touch.outside), tuple(touch.paths), (), touch.unknown, True, tuple(touch.notes)
            )
        )
    return views


def _view(
    cmd: SimpleCommand, places: Places, ctx: _Context, depth: int, *, globbing_changed: bool, lost: bool
) -> CommandView:
    root = ctx.root
    read_only = is_read_only_command(cmd)
    git = program_name(cmd) == "git"
    if read_only and git and not _trusted_git(places, ctx.git):
        read_only = False  # a repository the agent may have written itself: its config can run programs
    touch = touched(cmd, places, root, read_only=read_only)
    if read_only and git and ctx.partial:
        read_only = False
        partial = "git in a partial clone (it fetches missing objects over the network)"
        touch.add_outside(partial, "git in a partial clone fetches the objects it lacks over the network")
    if cmd.words and not cmd.words[0].static:
        touch.unknown = True  # `$(echo rm) -rf x`: the program is only known when it runs, and so what it touches
    program = program_name(cmd) or cmd.text
    if places.cwds is None:
        where = f"{program} runs in a directory only known when it runs"
        touch.add_outside(where, f"{where}, which may be outside the workspace")
        touch.unknown = True
    elif elsewhere := [c for c in places.cwds if not inside(root, real(c, "."))]:
        # `cd; ls` lists $HOME
        touch.add_outside(
            f"{program} runs in {elsewhere[0]}", f"{program} runs in {elsewhere[0]}, outside the workspace"
        )
    if lost:
        touch.add_outside(f"{cmd.text} goes to a directory only known when it runs", _lost(cmd))
    if globbing_changed and any(_globs(w) for w in cmd.words[1:]):
        changed = "a glob under changed glob options"
        touch.add_outside(changed, f"{changed} (`shopt`, `GLOBIGNORE`) may match any file, outside the workspace too")
        touch.unknown = True
    recursive = list(recursive_dirs(cmd, touch.paths, places, root))
    if cmd.usage is not None and cmd.usage.runs == "argv":
        recursive += _wrapped(cmd, touch, places, root)
    scripts = _nested(cmd, touch, recursive, places, ctx, depth)
    # a program given by path (`./ls`) is a file of the workspace, not the program the table knows
    by_path = "/" in (cmd.argv[0] if cmd.argv else "")
    inert = cmd.usage is not None and cmd.usage.inert and not scripts and not by_path
    paths, dirs = tuple(dict.fromkeys(touch.paths)), tuple(dict.fromkeys(recursive))
    return CommandView(cmd, read_only, tuple(touch.outside), paths, dirs, touch.unknown, inert, tuple(touch.notes))


_STDIN = frozenset({"", "-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})


def _lost(cmd: SimpleCommand) -> str:
    """What a command after which the shell's directory is not known does, for the reason shown: code read from
    stdin, a script or code we do not follow (which may `cd` anywhere), or a `cd` we cannot follow."""
    argv = list(cmd.argv)
    while argv[:1] in (["builtin"], ["command"], ["time"]):
        argv = argv[1:]
    text = " ".join(cmd.text.split())
    name = argv[0] if argv else ""
    if name in ("source", "."):
        source = next((w for w in argv[1:] if w != "--"), "")
        if source in _STDIN:
            return f"`{text}` runs code read from stdin, which cannot be checked (it may go outside the workspace)"
        if source.startswith(("/dev/", "/proc/", "<(")):
            return f"`{text}` runs code read from {source}, which cannot be checked (it may go outside the workspace)"
        return f"`{text}` runs the script {source}, which is not checked (it may go outside the workspace)"
    if name == "eval":
        return f"`{text}` runs code that may change to a directory only known when it runs, outside the workspace too"
    return f"`{text}` goes to a directory only known when it runs, which may be outside the workspace"


def _nested(
    cmd: SimpleCommand, touch: Touch, recursive: list[Path], places: Places, ctx: _Context, depth: int
) -> list[str]:
    """What the command lines `cmd` runs touch (`bash -c '...'`, `su -c '...'`, `eval`), added to its own; the
    scripts themselves. A command line we cannot read may touch anything."""
    scripts, hidden = scripts_of([ansi_c_value(w) for w in cmd.argv], cmd.usage)
    if hidden or any(a.split("=", 1)[0] in HIDING_VARIABLES for a in cmd.assignments):
        touch.unknown = True
    for script in scripts:
        inner = analyze(script)
        if depth >= _MAX_DEPTH or not inner.parsed:
            touch.unknown = True
            continue
        for view in _views(inner, places, ctx, depth + 1):
            touch.paths += view.paths
            recursive += view.recursive
            touch.unknown = touch.unknown or view.unknown
            for what, note in zip(view.outside, view.notes, strict=True):
                touch.add_outside(what, note)
    return scripts


def _wrapped(cmd: SimpleCommand, touch: Touch, places: Places, root: Path) -> list[Path]:
    """What the command a wrapper runs reads recursively or through links (`timeout 5 grep -r k .`): every tail of
    its words may be that command, as for deny rules."""
    recursive: list[Path] = []
    for start in range(1, min(len(cmd.words), _MAX_TAILS)):
        usage = usage_of(cmd.words[start:])
        if usage is None:
            continue
        inner = SimpleCommand(argv=cmd.argv[start:], text="", words=cmd.words[start:], usage=usage)
        recursive += recursive_dirs(inner, touch.paths, places, root)
        effects(touch, inner, usage)
    return recursive


def _makes_links(cmd: SimpleCommand) -> bool:
    """Whether `cmd` may make symbolic links (`Spec` effect `links`: `ln`, `cp`, `tar`, `git checkout`), itself or
    through a program it runs (`sudo ln ...`, `sh -c 'ln ...'`): every word naming such a program counts."""
    if cmd.usage is not None and "links" in cmd.usage.effects:
        return True
    for word in cmd.argv:
        for token in _TOKENS.split(ansi_c_value(word)):
            program = programs.lookup(token.rsplit("/", 1)[-1]) if token else None
            if program is not None and "links" in program.effects:
                return True
    return False


_TOKENS = re.compile(r"[\s;&|()<>`'\"{}$]+")


def _lexists(path: Path) -> bool:
    try:
        return os.path.lexists(path)
    except (OSError, ValueError):
        return False


def _assigned(analysis: ShellAnalysis) -> set[str]:
    """The variables among HOME, PWD and OLDPWD that some command of the line may assign (`HOME=x`, `export
    HOME=x`, `read HOME`, `printf -v HOME`): tildes cannot be expanded from what they were."""
    names = {"HOME", "PWD", "OLDPWD"}
    found: set[str] = set()
    for cmd in analysis.commands:
        for word in (*cmd.assignments, *cmd.argv[1:]):
            name = word.split("=", 1)[0].rstrip("+")
            if name in names:
                found.add(name)
    return found


def _globs(word: Word) -> bool:
    return not word.static and any(m == UNQUOTED and c in "*?[" for c, m in zip(word.value, word.mask, strict=False))


def _changes_globbing(cmd: SimpleCommand) -> bool:
    """`shopt -s dotglob` and friends, or `GLOBIGNORE=...`: globs after it expand as we do not model."""
    if any(a.split("=", 1)[0] == "GLOBIGNORE" for a in (*cmd.assignments, *cmd.argv)):
        return True
    return bool(cmd.argv) and cmd.argv[0] in ("shopt", "set") and bool(_GLOB_OPTIONS & set(cmd.argv[1:]))


def _loose_outside(command: str, here: Path, root: Path) -> tuple[str, ...]:
    """Words of a command that did not parse that look like paths outside the workspace (for the reason shown)."""
    import shlex

    from .touches import Touch, add_word

    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:
        words = command.split()
    touch = Touch()
    for text in words:
        if text.strip("();<>|&"):
            add_word(touch, Word(value=text, static=False, operand=False, single=False), Places([here]), root)
    return tuple(touch.outside)


# -- git


def _probe(path: Path, kind: str) -> bool:
    try:
        return path.is_dir() if kind == "dir" else path.is_file() if kind == "file" else path.exists()
    except (OSError, ValueError):
        return False


def _git_dir_for(start: Path) -> Path | None:
    """The git directory git would use from `start` (a `.git` entry, or a bare repository's own directory)."""
    for directory in (start, *start.parents):
        dot_git = directory / ".git"
        if _probe(dot_git, "any"):
            return dot_git.resolve()
        bare = _probe(directory / "objects", "dir") and _probe(directory / "refs", "dir")
        if bare and _probe(directory / "HEAD", "file"):
            return directory.resolve()
    return None


def _trusted_git(places: Places, trusted: Path | None) -> bool:
    """True when every directory the shell may be in finds the workspace's own repository."""
    return places.cwds is not None and all(_git_dir_for(real(c, ".")) == trusted for c in places.cwds)


def _partial_clone(git: Path | None) -> bool:
    """True when the repository is a partial clone (`git clone --filter=...`): git fetches the objects it lacks."""
    if git is None:
        return False
    try:
        config = (git / "config").read_text(errors="replace").lower()
    except (OSError, ValueError):
        return False
    return "partialclone" in config or re.search(r"promisor\s*=\s*true", config) is not None
