"""What one simple command touches: the paths its words name (expanded as bash will), which of them leave the
workspace, the directories it reads or changes recursively, and whether something it works on is only known when
it runs — a word only known then, or one bash evaluates as code (`Usage.evaluated`: `let 'a[$(cat k)]'`). Each
word that reaches outside the workspace, or anywhere, comes with what it is (`Touch.notes`), which `describe` turns
into the reason the user is shown.

For a read-only command the program table says which words are files (`Usage.paths`: `grep PATTERN FILE` reads
FILE, not PATTERN; `echo` reads nothing); for any other command every word may be a path, including values glued to
options (`-fsecrets/key`, `--file=x`, `if=~/x`). Redirection targets are paths either way.

A git command prints the files of what its operands name (`Spec.shows`): the paths it is limited to (directories
are read whole; a pattern git expands itself, `'secr*'`, reaches anywhere), or the whole tree of a revision, and an
object a revision names whole whatever the format (`git show --stat v1` of a tag naming a blob). What a revision
names is read from the repository (`gitobjects`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from ...tools.paths import inside
from .analysis import SimpleCommand
from .evaluated import LATER
from .expand import Places, expand
from .options import Usage, glued
from .words import UNKNOWN as UNKNOWN_MASK
from .words import Word

SAFE_DEVICES = frozenset({"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr"})
_NAMES_FROM = ("--files0-from", "--files-from", "--exclude-from", "--from-file")

OUTSIDE = "it names paths outside the workspace: {}"
"""What a path outside the workspace is, said to the user (`{}`: the paths; see `describe`). The other kinds of
word that count as reaching outside (they could reach anywhere) say so too."""
UNKNOWN = "it names {}, only known when it runs: any path, outside the workspace too"
SUBSTITUTED = (
    "it uses the output of a command substitution where a path could be, only known when it runs (any path, "
    "outside the workspace too): {}"
)
LATER_VALUE = (
    "it sets a variable whose value is run as code later (`PS4`, `PAGER`, `BASH_ENV`...) to {}, which may reach "
    "outside the workspace"
)
ASSIGNED = "it assigns {}, which later commands may use as a path or expand further (outside the workspace too)"
EVALUATED = (
    "bash evaluates {} as code when it runs (arithmetic evaluates the variables it names, an array subscript runs "
    "the commands in it), so what that runs and reads, outside the workspace too, is only known then"
)


class Touch:
    """The paths of one command, as `touched` found them."""

    __slots__ = ("notes", "outside", "paths", "unknown")

    def __init__(self) -> None:
        self.outside: list[str] = []
        """Words that reach outside the workspace, or anywhere (a value only known when the shell runs)."""
        self.notes: list[str] = []
        """For each of `outside`, what it is, as a clause of the reason the user is shown: a template whose `{}`
        stands for every word of the same kind (`OUTSIDE`, `UNKNOWN`...), or a sentence of its own."""
        self.paths: list[Path] = []
        """Every path its words name, resolved."""
        self.unknown = False
        """Some file it works on is only known when it runs."""

    def add_outside(self, what: str, note: str = OUTSIDE) -> None:
        if what not in self.outside:
            self.outside.append(what)
            self.notes.append(note)


def describe(outside: Sequence[str], notes: Sequence[str], limit: int = 3) -> str:
    """The reason for asking, from what reaches outside the workspace (or anywhere) and what each is: one clause
    per kind, in order, the words of a kind listed together (a word only known when it runs that is part of one
    listed before is left out: the value of `x=$(...)` is its `$(...)`)."""
    clauses: list[str] = []
    grouped: dict[str, list[str]] = {}
    for what, note in zip(outside, notes, strict=True):
        if note not in grouped:
            grouped[note] = []
            clauses.append(note)
        if note == OUTSIDE or not any(what in earlier for earlier in grouped[note]):
            grouped[note].append(what)
    shown = [note.replace("{}", ", ".join(grouped[note][:limit])) for note in clauses[:limit]]
    return "; ".join(shown)


def touched(cmd: SimpleCommand, places: Places, root: Path, *, read_only: bool) -> Touch:
    """The paths `cmd` names (see the module docstring)."""
    touch = Touch()
    usage = cmd.usage
    if usage is not None:
        evaluated(touch, usage)  # first: `[[ $n -eq 1 ]]` is said to evaluate `$n`, more than to name it
    precise = read_only and usage is not None and bool(cmd.words)
    words = list(usage.paths) if precise and usage is not None else _every_word(cmd, places)
    if not precise:
        for name, _, value in (a.partition("=") for a in cmd.assignments):
            # read as loosely as text: what a later command makes of it is not known (`PS4='$(...)'; set -x` runs it)
            note = LATER_VALUE if name.rstrip("+") in LATER else ASSIGNED
            for word in _candidates(_loose(value), places):
                add_word(touch, word, places, root, note=note)
    for word in (*words, *cmd.targets):
        add_word(touch, word, places, root)
    if precise and usage is not None:
        for word in usage.probes:
            add_word(touch, word, places, root, probe=True)
    if usage is not None:
        effects(touch, cmd, usage)
    if not precise:
        names = [w for w in cmd.argv[1:] if w.startswith(_NAMES_FROM)]
        for name in names:
            option = name.split("=", 1)[0]
            touch.add_outside(
                f"{name} (file names only known when it runs)",
                f"{program_name(cmd)} {option} reads the names of the files it works on from a file, only known "
                "when it runs (outside the workspace too)",
            )
            touch.unknown = True
    return touch


def add_word(
    touch: Touch, word: Word, places: Places, root: Path, *, probe: bool = False, note: str | None = None
) -> None:
    """Add what `word` names; a `probe` only looks at whether a file exists (`test -f`), so a value known only when
    it runs is not a file it reads. `note`: what the word is, if it reaches outside (default: what it looks like)."""
    if word.static and (word.value in SAFE_DEVICES or word.value in ("", "-", "--")):
        return
    found = expand(word, places)
    if found is not None and any(p.parts[1:2] == ("proc",) for p in (*found[0], *found[1])):
        found = None  # `/proc/self/cwd/...`, `/proc/<pid>/root/...`: where it leads depends on the process reading it
    if found is None:
        touch.add_outside(word.value, note or _unknown_note(word))  # only the shell knows: it could be anywhere
        touch.unknown = touch.unknown or not probe
        return
    paths, lexical, produced = found
    touch.paths += paths + lexical
    if any(not inside(root, p) for p in paths):
        touch.add_outside(word.value, note or OUTSIDE)
    if any(w.startswith("-") for w in produced):
        touch.add_outside(
            f"{word.value} (a glob matching a name that starts with -, which programs read as an option)",
            f"the glob {word.value} matches a file name that starts with -, which programs read as an option",
        )


def _unknown_note(word: Word) -> str:
    """What a word whose value is only known when it runs is, for the reason shown."""
    if "/proc/" in word.value:
        return "it names {} through /proc, which leads wherever the process reading it is (outside the workspace too)"
    unknown = [c for c, m in zip(word.value, word.mask, strict=False) if m == UNKNOWN_MASK] if word.mask else []
    text = "".join(unknown) if unknown else word.value
    return SUBSTITUTED if "$(" in text or "`" in text else UNKNOWN


def evaluated(touch: Touch, usage: Usage) -> None:
    """Words bash evaluates as code (`let 'a[$(cat k)]'`): what they run, and so read, is only known when it runs."""
    for word in usage.evaluated:
        touch.add_outside(word.value, EVALUATED)
        touch.unknown = True


def effects(touch: Touch, cmd: SimpleCommand, usage: Usage) -> None:
    program = cmd.argv[0] if cmd.argv else usage.name
    evaluated(touch, usage)
    if "follows" in usage.effects:
        touch.add_outside(
            f"{program} following symbolic links",
            f"{program} may follow symbolic links, which may lead outside the workspace",
        )
    if "names" in usage.effects:
        touch.add_outside(
            f"{program} (file names only known when it runs)",
            f"{program} works on files named in what it reads (its input, a file, its script), which are only known "
            "when it runs (outside the workspace too)",
        )
        touch.unknown = True
    if usage.dynamic:
        touch.unknown = True  # `grep $x f`: $x may be `-r`


def _every_word(cmd: SimpleCommand, places: Places) -> list[Word]:
    """Every word of a command that is not read-only, and every value glued to one of its options."""
    words = list(cmd.words[1:]) if cmd.words else [_loose(w) for w in cmd.argv[1:]]
    # (the values of its leading assignments are added by `touched`, which says what they are)
    out: list[Word] = []
    for word in words:
        out += _candidates(word, places)
    return out


def _candidates(word: Word, places: Places) -> list[Word]:
    """The word, the value of `--opt=value` and of `name=value` (`dd if=~/x`: bash expands `~` there too), and every
    tail of a short-option cluster that looks like a path or names an existing file (`-uf/etc/passwd`, `-C/etc`)."""
    value = word.value
    if value in ("", "-", "--"):
        return []
    if not value.startswith("-"):
        return [word, glued(word, value.index("=") + 1)] if "=" in value else [word]
    if "=" in value:
        return [glued(word, value.index("=") + 1)]
    if value.startswith("--"):
        return []
    bases = places.cwds or []
    out: list[Word] = []
    for k in range(2, len(value)):
        tail = value[k:]
        if "/" in tail or tail.startswith(("~", ".")) or any(_exists(b / tail) for b in bases):
            out.append(glued(word, k))
    return out


def _loose(value: str) -> Word:
    """A word known only as text: bash may still expand any of it."""
    return Word(value=value, static=False, operand=False, single=False)


def _exists(path: Path) -> bool:
    """Whether `path` exists, never raising (a word too long to be a path is simply not there)."""
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


# -- recursion


def recursive_dirs(cmd: SimpleCommand, paths: Sequence[Path], places: Places, root: Path) -> tuple[Path, ...]:
    """Directories whose whole contents `cmd` may read (or, if it writes, change): `grep -r`, `rg`, `tar`, `find
    -exec`, `cp -r`, git commands that print or rewrite files anywhere in the repository."""
    usage = cmd.usage
    if usage is None:
        return ()
    bases = places.cwds or [root]
    if usage.name.split()[0] == "git":
        return _git_recursive(cmd, usage, places, root)
    if "contents" in usage.effects:
        return (root,)
    dirs = [p for p in paths if is_dir(p)]
    if "tree" in usage.effects:
        return tuple(dict.fromkeys([*dirs, *bases]))  # `tar -xf x.tar`, `patch -p1 < x.patch`: below `.` too
    if "recursive" not in usage.effects:
        return ()
    if not dirs and usage.paths:
        return ()  # `rm -rf /tmp/gone`: what it names is no directory, so there is nothing below it
    return tuple(dict.fromkeys(dirs or bases))  # `grep -r k`: no file named, so the directory it is in


def _git_recursive(cmd: SimpleCommand, usage: Usage, places: Places, root: Path) -> tuple[Path, ...]:
    """The directories whose files a git command may print (or rewrite): the whole repository, those its paths
    name, or none (`Spec.shows` says what each subcommand prints)."""
    whole = (root,)
    effects = usage.effects
    if effects & {"contents", "hidden"}:
        return whole  # a patch, a blob, a grep; an alias or configuration that could do anything
    if any("%(" in w for w in cmd.argv) or any(":" in w.value for w in usage.revs):
        return whole  # `--format=%(contents)`, `--blob=HEAD:secrets/key`: an object anywhere
    if not usage.shows:
        return ()
    pathspecs = {id(w) for w in usage.pathspecs}
    dirs: list[Path] = []
    limited = unsure = False
    for word in usage.named:
        if ":" in word.value:
            return whole  # `HEAD:secrets/key`, `:secrets/key`, `:(top)secrets`, `:/message`
        found = expand(word, places)
        if found is None:
            return whole
        paths, _, produced = found
        if any(c in word.value for c in "*?[") and (word.static or not produced):
            return whole  # a pattern bash leaves alone is git's own (`'secr*'` matches secrets/key)
        existing = [p for p in paths if is_file(p) or is_dir(p)]
        if existing or id(word) in pathspecs:
            limited = True  # after `--` a name that is not there limits to nothing
            dirs += [p for p in existing if is_dir(p)]
        elif not _commit(word.value, root):
            unsure = True  # an object id, a tag: it may be a blob, which is printed whole whatever the format
    if usage.shows == "paths":
        return tuple(dict.fromkeys(dirs))
    if usage.shows == "objects" and "nocontents" in effects:
        return ()  # `git cat-file -t`, `-s`: the type or size of an object, even a blob's
    if unsure:
        return whole
    if "nocontents" in effects or usage.shows == "objects":
        return ()
    return tuple(dict.fromkeys(dirs)) if limited else whole  # no path: the whole tree of a revision


_SPECIAL_REFS = frozenset({"HEAD", "@", "ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD"})
_REV_SUFFIX = re.compile(r"(?:~\d*|\^\d*|\^\{commit\}|\^[@!]|\^-\d*|@\{[^{}]*\})*$")


def _commit(rev: str, root: Path) -> bool:
    """True when `rev` certainly names commits, whose files git does not print whole: what its name points at is a
    commit (read from the repository: `gitobjects`), or a suffix peels it to one (`v1~0`, `x^2`: git fails on
    anything else). An object id or a tag of a blob is not; one whose object cannot be read is, when its name is
    HEAD's or a branch's (a branch names a commit unless a write made it point elsewhere)."""
    from .gitobjects import rev_type  # only git commands that print what they name need it (zlib, mmap: ~0.5 ms)

    sides = re.split(r"\.\.\.?", rev) if ".." in rev else [rev]
    for side in sides:
        side = side.removeprefix("^")
        if not side and len(sides) > 1:
            continue  # `..main`: HEAD
        suffix = _REV_SUFFIX.search(side)
        name, tail = (side[: suffix.start()], side[suffix.start() :]) if suffix else (side, "")
        if "~" in tail or "^" in tail or name.startswith("@{") or (not name and side.startswith("@")):
            continue  # peeled to a commit; `@{u}`, `@{-1}`: a branch
        kind = rev_type(root / ".git", "HEAD" if name == "@" else name)
        if kind is None and (name in _SPECIAL_REFS or _branch(name, root)):
            continue
        if kind != "commit":
            return False
    return True


def _branch(name: str, root: Path) -> bool:
    """`name` is a local or remote-tracking branch of the workspace's repository, as git resolves a short name
    (`.git/NAME`, `refs/NAME` and `refs/tags/NAME` come first: a tag of that name wins)."""
    if not name or name.startswith(("-", "/")) or ".." in name or "\\" in name:
        return False
    git = root / ".git"
    for candidate in (name, f"refs/{name}", f"refs/tags/{name}"):
        if _has_ref(git, candidate):
            return candidate.startswith(("refs/heads/", "refs/remotes/"))
    return _has_ref(git, f"refs/heads/{name}") or _has_ref(git, f"refs/remotes/{name}")


def _has_ref(git: Path, ref: str) -> bool:
    if is_file(git / ref):
        return True
    try:
        packed = (git / "packed-refs").read_text(encoding="utf-8", errors="replace")
    except (OSError, ValueError):
        return False
    return any(line.endswith(" " + ref) for line in packed.splitlines())


# -- cd


CD_COMMANDS = frozenset({"cd", "pushd", "popd"})


def after_cd(cmd: SimpleCommand, places: Places) -> Places:
    """Where the shell may be after `cmd`: every directory it may have been in, and where a followed `cd` took
    it (a `cd` inside `if` or after `||` may not run); not knowable after one we cannot follow (`cd -`, `cd $X`,
    `popd`, `eval`, CDPATH)."""
    argv = list(cmd.argv)
    while argv[:1] in (["builtin"], ["command"], ["time"]):  # they run `cd` in the shell itself
        argv = [w for w in argv[1:] if not (w.startswith("-") and w != "-")] if argv[0] != "builtin" else argv[1:]
    cwds = places.cwds
    if cwds is None:
        return places
    if any(a.split("=", 1)[0] == "CDPATH" for a in (*cmd.assignments, *argv)):
        return places.moved(None)  # `cd` resolved through CDPATH from now on
    if not argv:
        return places
    if argv[0] in ("eval", "source", "."):
        return places.moved(None)  # code we do not follow
    if argv[0] not in CD_COMMANDS:
        return places
    operands = [w for w in argv[1:] if w == "-" or not w.startswith("-")]
    if argv[0] == "popd" or (argv[0] == "pushd" and not operands) or operands[:1] == ["-"]:
        return places.moved(None)
    if re.fullmatch(r"[+-]\d+", operands[0] if operands else "") or (os.environ.get("CDPATH") and operands):
        return places.moved(None)  # `pushd +1` rotates the stack; a CDPATH in the environment resolves names elsewhere
    words = [w for w in (cmd.words[1:] if cmd.words else ()) if w.value == operands[0]] if operands else []
    target = words[0] if words else (_loose(operands[0]) if operands else Word("~", False, True, True, "g"))
    found = expand(target, places)
    if found is None or len(found[0]) == 0:
        return places.moved(None)
    moved = [p for p in found[0] if is_dir(p)] or found[0]
    # `cd` reads `..` logically, from `$PWD` with its links (`cd lnk/../..` from a link `lnk -> a/b` leaves the
    # workspace, where the kernel would land in it): the directories kept are where `$PWD` may be, links kept
    moved += [p for p in found[1] if is_dir(p)]
    # `$OLDPWD` is where it was, or (if this `cd` did not run) what it was before: known only if that was known
    oldpwd = list(dict.fromkeys([*cwds, *places.oldpwd])) if places.oldpwd is not None else None
    return places.moved(list(dict.fromkeys([*cwds, *moved])), oldpwd)


def stays(cmd: SimpleCommand) -> bool:
    """True when `cmd` cannot change the shell's directory (the common case, checked first)."""
    changers = ("builtin", "command", "time", "eval", "source", ".")
    return not cmd.argv or (cmd.argv[0] not in CD_COMMANDS and cmd.argv[0] not in changers)


def program_name(cmd: SimpleCommand) -> str:
    return os.path.basename(cmd.argv[0]) if cmd.argv else ""
